package preprocess

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// StandardScaler maps feature j to (x_j − μ_j)/σ_j with the training mean
// and population standard deviation (1/n). Δ_∞ = n (every record moves) and
// Δ_2 = 4/(σ_min³·n) + 2/(n·σ_min) [our bound, docs/srdp.md#scaling: a
// coordinate's variance can change by up to 4/n, not the 2/n Proposition 6
// uses]. With PaperBound, Proposition 6's 2/(σ_min³·n) + 2/(n·σ_min) is
// reported instead. The output is not inside the unit ball; downstream
// mechanisms must clip.
type StandardScaler struct {
	PaperBound bool
}

// Name implements Step.
func (StandardScaler) Name() string { return "standard_scaler" }

// FitTransform implements Step.
func (s StandardScaler) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	if err := checkRemoved("standard_scaler", X, removed); err != nil {
		return nil, Result{}, err
	}
	if err := checkFinite("standard_scaler", X, removed); err != nil {
		return nil, Result{}, err
	}
	n, d := X.Dims()
	kept := keptRows(n, removed)
	if len(kept) == 0 {
		return nil, Result{}, fmt.Errorf("standard_scaler: no records")
	}
	f := &scalerFitted{kind: "standard_scaler", Shift: make([]float64, d), Scale: make([]float64, d)}
	for j := 0; j < d; j++ {
		var m float64
		for _, i := range kept {
			m += X.At(i, j)
		}
		m /= float64(len(kept))
		var v float64
		for _, i := range kept {
			e := X.At(i, j) - m
			v += e * e
		}
		sd := math.Sqrt(v / float64(len(kept)))
		if !(sd > 0) {
			return nil, Result{}, fmt.Errorf("standard_scaler: feature %d is constant (std 0)", j)
		}
		f.Shift[j], f.Scale[j] = m, sd
	}
	return f, Result{X: f.apply(X, kept), Removed: copyRemoved(removed)}, nil
}

// Sensitivity implements Step.
func (s StandardScaler) Sensitivity(b Bounds) (Sensitivity, error) {
	if b.N < 1 || !finitePositive(b.SigmaMin) {
		return Sensitivity{}, notAccounted("standard_scaler", "declare N ≥ 1 and SigmaMin > 0")
	}
	n, sg := float64(b.N), b.SigmaMin
	if s.PaperBound {
		return Sensitivity{L2: 2/(sg*sg*sg*n) + 2/(n*sg), LInf: n, Formula: "Prop 6: 2/(σ³n)+2/(nσ)"}, nil
	}
	return Sensitivity{L2: 4/(sg*sg*sg*n) + 2/(n*sg), LInf: n, Formula: "4/(σ³n)+2/(nσ)"}, nil
}

// MinMaxScaler maps feature j to (x_j − a_j)/(b_j − a_j) with the training
// minimum a_j and maximum b_j. The paper gives no Δ_2 for it; this package
// uses the bound Δ_2 = √d·3g/r_min [DERIVED: (x−a)/r − (x−a')/r' =
// (x−a)(r'−r)/(r·r') + (a'−a)/r' with |x−a| ≤ r, |r−r'| ≤ 2g, |a−a'| ≤ g],
// where g (ExtremeGap) bounds how far one replacement can move a feature's
// min or max and r_min (RangeMin) is the smallest feature range over 𝓛.
// Without both declared, Sensitivity returns ErrNotAccounted.
type MinMaxScaler struct{}

// Name implements Step.
func (MinMaxScaler) Name() string { return "minmax_scaler" }

// FitTransform implements Step.
func (MinMaxScaler) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	if err := checkRemoved("minmax_scaler", X, removed); err != nil {
		return nil, Result{}, err
	}
	if err := checkFinite("minmax_scaler", X, removed); err != nil {
		return nil, Result{}, err
	}
	n, d := X.Dims()
	kept := keptRows(n, removed)
	if len(kept) == 0 {
		return nil, Result{}, fmt.Errorf("minmax_scaler: no records")
	}
	f := &scalerFitted{kind: "minmax_scaler", Shift: make([]float64, d), Scale: make([]float64, d)}
	for j := 0; j < d; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range kept {
			lo, hi = math.Min(lo, X.At(i, j)), math.Max(hi, X.At(i, j))
		}
		if !(hi > lo) {
			return nil, Result{}, fmt.Errorf("minmax_scaler: feature %d is constant", j)
		}
		f.Shift[j], f.Scale[j] = lo, hi-lo
	}
	return f, Result{X: f.apply(X, kept), Removed: copyRemoved(removed)}, nil
}

// Sensitivity implements Step.
func (MinMaxScaler) Sensitivity(b Bounds) (Sensitivity, error) {
	if b.N < 1 || b.D < 1 || !finitePositive(b.RangeMin) || !finitePositive(b.ExtremeGap) {
		return Sensitivity{}, notAccounted("minmax_scaler", "the paper gives no Δ_2; declare N, D, RangeMin > 0 and ExtremeGap > 0")
	}
	return Sensitivity{L2: math.Sqrt(float64(b.D)) * 3 * b.ExtremeGap / b.RangeMin, LInf: float64(b.N), Formula: "√d·3g/r_min"}, nil
}

// scalerFitted is y_j = (x_j − Shift_j)/Scale_j (both scalers).
type scalerFitted struct {
	kind  string
	Shift []float64 `json:"shift"`
	Scale []float64 `json:"scale"`
}

func (f *scalerFitted) Kind() string   { return f.kind }
func (f *scalerFitted) InDim() int     { return len(f.Shift) }
func (f *scalerFitted) OutDim(int) int { return len(f.Shift) }
func (f *scalerFitted) validate() error {
	if err := checkDim(len(f.Shift)); err != nil {
		return fmt.Errorf("%s: %w", f.kind, err)
	}
	if len(f.Scale) != len(f.Shift) {
		return fmt.Errorf("%s: %d shifts but %d scales", f.kind, len(f.Shift), len(f.Scale))
	}
	if err := checkFiniteVec(f.Shift); err != nil {
		return fmt.Errorf("%s: shift %w", f.kind, err)
	}
	for j, s := range f.Scale {
		if !finitePositive(s) {
			return fmt.Errorf("%s: scale %d must be positive and finite, got %v", f.kind, j, s)
		}
	}
	return nil
}

func (f *scalerFitted) apply(X *mat.Dense, rows []int) *mat.Dense {
	out := mat.DenseCopyOf(X)
	for _, i := range rows {
		row := out.RawRowView(i)
		for j := range row {
			row[j] = (row[j] - f.Shift[j]) / f.Scale[j]
		}
	}
	return out
}

func (f *scalerFitted) Transform(X *mat.Dense) *mat.Dense {
	checkDims(f.kind, f, X)
	n, _ := X.Dims()
	return f.apply(X, keptRows(n, nil))
}
