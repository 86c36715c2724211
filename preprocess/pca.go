package preprocess

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// PCA projects onto the top-K principal directions of the training data.
// Covariance convention (specs/000 §8 Q5): the centred covariance with 1/n;
// the projection is applied to the raw records, without re-centering, as in
// the paper. Rank reduction outputs A_k·A_kᵀ·x ∈ ℝ^d; dimension reduction
// (Dim) outputs A_kᵀ·x ∈ ℝ^k, with each eigenvector's sign fixed so that its
// largest-magnitude entry is positive.
//
// Proposition 5: Δ_∞ = n and Δ_2 = 4(3n+2)/(n(n−1)·min{δ^k_min, δ^1_min})
// for rank reduction, twice that for dimension reduction. The eigengap
// condition is declared (EigenGapMin, TopGapMin; keeping δ^1 is the
// conservative reading). The dimension-reduction bound holds only up to the
// eigenvector sign; when two entries of an eigenvector have nearly equal
// magnitude the canonical sign can flip between neighbouring datasets.
type PCA struct {
	K   int
	Dim bool // dimension reduction (ℝ^k) instead of rank reduction (ℝ^d)
}

// Name implements Step.
func (s PCA) Name() string {
	if s.Dim {
		return "pca_dim"
	}
	return "pca_rank"
}

// PCASpectrum returns the eigenvalues (descending) and the matching unit
// eigenvectors (as rows) of the centred 1/n covariance of the rows of X not
// removed.
func PCASpectrum(X *mat.Dense, removed []bool) ([]float64, [][]float64, error) {
	n, d := X.Dims()
	kept := keptRows(n, removed)
	if len(kept) < 2 {
		return nil, nil, fmt.Errorf("pca: need at least 2 records, got %d", len(kept))
	}
	mu := make([]float64, d)
	for _, i := range kept {
		for j, v := range X.RawRowView(i) {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(len(kept))
	}
	Xc := mat.NewDense(len(kept), d, nil)
	for k, i := range kept {
		row, c := X.RawRowView(i), Xc.RawRowView(k)
		for j := range c {
			c[j] = row[j] - mu[j]
		}
	}
	C := mat.NewSymDense(d, nil)
	C.SymOuterK(1/float64(len(kept)), Xc.T()) // (1/n)·Xcᵀ·Xc through BLAS syrk
	var es mat.EigenSym
	if !es.Factorize(C, true) {
		return nil, nil, fmt.Errorf("pca: eigendecomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	outVals := make([]float64, d)
	outVecs := make([][]float64, d)
	for r, idx := range order {
		outVals[r] = vals[idx]
		v := make([]float64, d)
		big := 0
		for j := 0; j < d; j++ {
			v[j] = vecs.At(j, idx)
			if math.Abs(v[j]) > math.Abs(v[big]) {
				big = j
			}
		}
		if v[big] < 0 {
			for j := range v {
				v[j] = -v[j]
			}
		}
		outVecs[r] = v
	}
	return outVals, outVecs, nil
}

// EigenGaps returns δ^k = λ_k − λ_{k+1} and δ^1 = λ_1 − λ_2 of X. This reads
// the private data: use it only for non-private diagnostics or inside PTR.
func EigenGaps(X *mat.Dense, removed []bool, k int) (gapK, gap1 float64, err error) {
	vals, _, err := PCASpectrum(X, removed)
	if err != nil {
		return 0, 0, err
	}
	if k < 1 || k >= len(vals) {
		return 0, 0, fmt.Errorf("pca: k=%d outside [1, %d)", k, len(vals))
	}
	return vals[k-1] - vals[k], vals[0] - vals[1], nil
}

// FitTransform implements Step.
func (s PCA) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	if err := checkRemoved(s.Name(), X, removed); err != nil {
		return nil, Result{}, err
	}
	if err := checkFinite(s.Name(), X, removed); err != nil {
		return nil, Result{}, err
	}
	n, d := X.Dims()
	if s.K < 1 || s.K >= d {
		return nil, Result{}, fmt.Errorf("%s: k=%d outside [1, %d)", s.Name(), s.K, d)
	}
	_, vecs, err := PCASpectrum(X, removed)
	if err != nil {
		return nil, Result{}, err
	}
	f := &pcaFitted{D: d, Rank: !s.Dim, Components: vecs[:s.K]}
	out := f.apply(X, keptRows(n, removed))
	return f, Result{X: out, Removed: copyRemoved(removed)}, nil
}

// Sensitivity implements Step.
func (s PCA) Sensitivity(b Bounds) (Sensitivity, error) {
	gap := b.EigenGapMin
	if s.K != 1 {
		gap = math.Min(gap, b.TopGapMin)
	}
	if b.N < 2 || !finitePositive(gap) {
		return Sensitivity{}, notAccounted(s.Name(), "declare N ≥ 2, EigenGapMin > 0 and (k > 1) TopGapMin > 0")
	}
	n := float64(b.N)
	l2 := 4 * (3*n + 2) / (n * (n - 1) * gap)
	f := "Prop 5: 4(3n+2)/(n(n−1)·min(δk,δ1))"
	if s.Dim {
		l2 *= 2
		f = "Prop 5: 8(3n+2)/(n(n−1)·min(δk,δ1))"
	}
	return Sensitivity{L2: l2, LInf: n, Formula: f}, nil
}

type pcaFitted struct {
	D          int         `json:"d"`
	Rank       bool        `json:"rank"`
	Components [][]float64 `json:"components"` // k rows of length d
}

func (f *pcaFitted) Kind() string { return "pca" }
func (f *pcaFitted) InDim() int   { return f.D }
func (f *pcaFitted) OutDim(int) int {
	if f.Rank {
		return f.D
	}
	return len(f.Components)
}

func (f *pcaFitted) validate() error {
	if err := checkDim(f.D); err != nil {
		return fmt.Errorf("pca: %w", err)
	}
	if len(f.Components) < 1 || len(f.Components) > f.D {
		return fmt.Errorf("pca: %d components for dimension %d", len(f.Components), f.D)
	}
	for i, c := range f.Components {
		if len(c) != f.D {
			return fmt.Errorf("pca: component %d has %d entries, want %d", i, len(c), f.D)
		}
		if err := checkFiniteVec(c); err != nil {
			return fmt.Errorf("pca: component %d: %w", i, err)
		}
	}
	return nil
}

func (f *pcaFitted) apply(X *mat.Dense, rows []int) *mat.Dense {
	n, _ := X.Dims()
	k := len(f.Components)
	out := mat.NewDense(n, f.OutDim(f.D), nil)
	proj := make([]float64, k)
	for _, i := range rows {
		x := X.RawRowView(i)
		for r, c := range f.Components {
			var s float64
			for j, v := range c {
				s += v * x[j]
			}
			proj[r] = s
		}
		y := out.RawRowView(i)
		if !f.Rank {
			copy(y, proj)
			continue
		}
		for r, c := range f.Components {
			for j, v := range c {
				y[j] += proj[r] * v
			}
		}
	}
	return out
}

func (f *pcaFitted) Transform(X *mat.Dense) *mat.Dense {
	checkDims("pca", f, X)
	n, _ := X.Dims()
	return f.apply(X, keptRows(n, nil))
}
