package preprocess

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// RegressionImpute fills the missing entries of feature Target with a
// least-squares prediction x_rᵀβ from the Predictors features (no intercept),
// β = (X_rᵀX_r)⁻¹X_rᵀx_Target fitted on the training rows where the target
// is observed. Training rows must have every predictor observed; on new rows
// whose predictors are missing the target falls back to the training mean of
// the target. Imputed records are projected back onto the unit ball.
//
// Sensitivity (docs/srdp.md#imputation): Δ_∞ = p and Δ_2 =
// 2·(λ_max²/((λ_max+1)· λ_min²) + 1/λ_min), the paper's add-one bound doubled
// for replace-one [DERIVED]; λ_min, λ_max bound the eigenvalues of X_rᵀX_r
// (unnormalised) over the collection, including the n−1 common records alone.
type RegressionImpute struct {
	Target     int
	Predictors []int
}

// Name implements Step.
func (RegressionImpute) Name() string { return "impute_regression" }

// FitTransform implements Step.
func (s RegressionImpute) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	const name = "impute_regression"
	if err := checkRemoved(name, X, removed); err != nil {
		return nil, Result{}, err
	}
	n, d := X.Dims()
	f := &regressFitted{D: d, Target: s.Target, Predictors: append([]int(nil), s.Predictors...)}
	if err := f.checkIndices(); err != nil {
		return nil, Result{}, err
	}
	var rows []int
	var ysum float64
	for _, i := range keptRows(n, removed) {
		for _, j := range s.Predictors {
			if v := X.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, Result{}, fmt.Errorf("%s: predictor %d has a missing or infinite value", name, j)
			}
		}
		if y := X.At(i, s.Target); !math.IsNaN(y) {
			if math.IsInf(y, 0) {
				return nil, Result{}, fmt.Errorf("%s: target %d has an infinite value", name, s.Target)
			}
			rows = append(rows, i)
			ysum += y
		}
	}
	r := len(s.Predictors)
	if len(rows) < r || len(rows) == 0 {
		return nil, Result{}, fmt.Errorf("%s: %d rows with the target observed for %d predictors", name, len(rows), r)
	}
	A := mat.NewDense(len(rows), r, nil)
	y := mat.NewVecDense(len(rows), nil)
	for k, i := range rows {
		for c, j := range s.Predictors {
			A.Set(k, c, X.At(i, j))
		}
		y.SetVec(k, X.At(i, s.Target))
	}
	var AtA mat.SymDense
	AtA.SymOuterK(1, A.T())
	var Aty mat.VecDense
	Aty.MulVec(A.T(), y)
	var chol mat.Cholesky
	if !chol.Factorize(&AtA) {
		return nil, Result{}, fmt.Errorf("%s: predictors are collinear (XᵀX not positive definite)", name)
	}
	var beta mat.VecDense
	if err := chol.SolveVecTo(&beta, &Aty); err != nil {
		return nil, Result{}, fmt.Errorf("%s: %w", name, err)
	}
	f.Beta = make([]float64, r)
	for c := range f.Beta {
		f.Beta[c] = beta.AtVec(c)
	}
	f.Fallback = ysum / float64(len(rows))
	out := mat.DenseCopyOf(X)
	for _, i := range keptRows(n, removed) {
		f.fillRow(out.RawRowView(i))
	}
	return f, Result{X: out, Removed: copyRemoved(removed)}, nil
}

// Sensitivity implements Step.
func (s RegressionImpute) Sensitivity(b Bounds) (Sensitivity, error) {
	lmin, lmax := b.LambdaMin, b.LambdaMax
	if !finitePositive(lmin) || !finitePositive(lmax) || lmax < lmin || b.MaxMissingRecords < 0 {
		return Sensitivity{}, notAccounted("impute_regression", "declare 0 < LambdaMin ≤ LambdaMax and MaxMissingRecords ≥ 0")
	}
	one := lmax*lmax/((lmax+1)*lmin*lmin) + 1/lmin
	return Sensitivity{L2: 2 * one, LInf: float64(b.MaxMissingRecords), Formula: "2·(λmax²/((λmax+1)λmin²) + 1/λmin)"}, nil
}

type regressFitted struct {
	D          int       `json:"d"`
	Target     int       `json:"target"`
	Predictors []int     `json:"predictors"`
	Beta       []float64 `json:"beta"`
	Fallback   float64   `json:"fallback"`
}

func (*regressFitted) Kind() string     { return "impute_regression" }
func (f *regressFitted) InDim() int     { return f.D }
func (f *regressFitted) OutDim(int) int { return f.D }

func (f *regressFitted) checkIndices() error {
	if err := checkDim(f.D); err != nil {
		return fmt.Errorf("impute_regression: %w", err)
	}
	if f.Target < 0 || f.Target >= f.D {
		return fmt.Errorf("impute_regression: target %d outside [0, %d)", f.Target, f.D)
	}
	if len(f.Predictors) == 0 {
		return fmt.Errorf("impute_regression: no predictors")
	}
	seen := map[int]bool{}
	for _, j := range f.Predictors {
		if j < 0 || j >= f.D || j == f.Target || seen[j] {
			return fmt.Errorf("impute_regression: bad predictor %d (target %d, d %d)", j, f.Target, f.D)
		}
		seen[j] = true
	}
	return nil
}

func (f *regressFitted) validate() error {
	if err := f.checkIndices(); err != nil {
		return err
	}
	if len(f.Beta) != len(f.Predictors) {
		return fmt.Errorf("impute_regression: %d coefficients for %d predictors", len(f.Beta), len(f.Predictors))
	}
	if err := checkFiniteVec(append(append([]float64(nil), f.Beta...), f.Fallback)); err != nil {
		return fmt.Errorf("impute_regression: %w", err)
	}
	return nil
}

func (f *regressFitted) fillRow(row []float64) {
	if !math.IsNaN(row[f.Target]) {
		return
	}
	v := 0.0
	for c, j := range f.Predictors {
		if math.IsNaN(row[j]) {
			v = f.Fallback
			break
		}
		v += f.Beta[c] * row[j]
	}
	row[f.Target] = v
	projectBall(row)
}

func (f *regressFitted) Transform(X *mat.Dense) *mat.Dense {
	checkDims("impute_regression", f, X)
	out := mat.DenseCopyOf(X)
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		f.fillRow(out.RawRowView(i))
	}
	return out
}
