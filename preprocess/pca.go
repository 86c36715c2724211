package preprocess

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// PCA projects onto the top-K principal directions of the training data.
// Covariance convention (docs/srdp.md#pca): the centred covariance with 1/n;
// the projection is applied to the raw records, without re-centering, as in
// the paper. Rank reduction outputs A_k·A_kᵀ·x ∈ ℝ^d; dimension reduction
// (Dim) outputs A_kᵀ·x ∈ ℝ^k, with each eigenvector's sign fixed so that its
// largest-magnitude entry is positive. The directions come from the d×d
// covariance or, when that is cheaper (wide data, d > n; rule in
// pcaUseGram), from the n×n Gram matrix of the centred records; both give
// the same eigenvalues, directions (with the same canonical signs),
// projector and transformed data up to rounding (pcaGramTop).
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
// removed. It always factorises the d×d covariance, since it returns all d
// eigenvectors (O(n·d² + d³)); FitTransform and EigenGaps switch to the n×n
// Gram matrix when that is cheaper (see pcaUseGram).
func PCASpectrum(X *mat.Dense, removed []bool) ([]float64, [][]float64, error) {
	Xc, err := pcaCentred(X, removed)
	if err != nil {
		return nil, nil, err
	}
	_, d := Xc.Dims()
	return pcaCovTop(Xc, d)
}

// pcaMethod selects how the principal directions are computed.
type pcaMethod int

const (
	pcaAuto       pcaMethod = iota // pcaUseGram decides
	pcaCovariance                  // d×d covariance (1/n)·Xcᵀ·Xc
	pcaGram                        // n×n Gram matrix (1/n)·Xc·Xcᵀ
)

// pcaUseGram reports whether the Gram path is cheaper, by a flop estimate
// calibrated on gonum's pure-Go kernels, for m kept records of dimension d
// and k requested directions. Counting multiply–adds, with the symmetric
// eigendecomposition with vectors at ≈ 4·p³ for a p×p matrix (measured: it
// runs ≈ 8× the time of a syrk with the same p³):
//
//	covariance: m·d²/2 (syrk) + 4·d³
//	Gram:       d·m²/2 (syrk) + 4·m³ + d·m·min(k, m) (Xcᵀ·U_k) + 2·d·k² (reorthonormalisation)
//
// For d ≤ m the Gram estimate is never smaller, so narrow data keep the
// covariance path (bit for bit the pre-Gram computation); for d > m it wins
// as soon as d exceeds m by a margin that shrinks with k/m (for k ≪ m,
// essentially d > m; for k = m, d ≳ 1.24·m).
func pcaUseGram(m, d, k int) bool {
	M, D, K := float64(m), float64(d), float64(k)
	cov := M*D*D/2 + 4*D*D*D
	gram := D*M*M/2 + 4*M*M*M + D*M*math.Min(K, M) + 2*D*K*K
	return gram < cov
}

// pcaCentred returns the kept rows of X minus their mean.
func pcaCentred(X *mat.Dense, removed []bool) (*mat.Dense, error) {
	n, d := X.Dims()
	kept := keptRows(n, removed)
	if len(kept) < 2 {
		return nil, fmt.Errorf("pca: need at least 2 records, got %d", len(kept))
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
	return Xc, nil
}

// pcaTop returns all d eigenvalues (descending) of the centred 1/n
// covariance of the kept rows and, when vecs, its top k unit eigenvectors
// (rows, canonical sign), computed by method (pcaAuto: pcaUseGram(m, d, k));
// gram reports the path taken. Both paths return the same eigenvalues up to
// rounding: the Gram path's m eigenvalues padded with d−m zeros (exact: the
// centred covariance has rank ≤ m−1 < d) when d > m.
func pcaTop(X *mat.Dense, removed []bool, k int, vecs bool, method pcaMethod) (vals []float64, top [][]float64, gram bool, err error) {
	Xc, err := pcaCentred(X, removed)
	if err != nil {
		return nil, nil, false, err
	}
	m, d := Xc.Dims()
	gram = method == pcaGram || method == pcaAuto && pcaUseGram(m, d, k)
	if !vecs {
		k = 0
	}
	if gram {
		vals, top, err = pcaGramTop(Xc, k)
		return vals, top, true, err
	}
	vals, top, err = pcaCovTop(Xc, k)
	return vals, top, false, err
}

// pcaCovTop eigendecomposes the d×d covariance (1/m)·Xcᵀ·Xc and returns
// its eigenvalues (descending) and top k eigenvectors (canonical sign).
func pcaCovTop(Xc *mat.Dense, k int) ([]float64, [][]float64, error) {
	m, d := Xc.Dims()
	C := mat.NewSymDense(d, nil)
	C.SymOuterK(1/float64(m), Xc.T()) // (1/n)·Xcᵀ·Xc through BLAS syrk
	var es mat.EigenSym
	if !es.Factorize(C, true) {
		return nil, nil, fmt.Errorf("pca: eigendecomposition failed")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	order := descending(vals)
	outVals := make([]float64, d)
	outVecs := make([][]float64, k)
	for r, idx := range order {
		outVals[r] = vals[idx]
		if r >= k {
			continue
		}
		v := make([]float64, d)
		for j := 0; j < d; j++ {
			v[j] = vecs.At(j, idx)
		}
		canonicalSign(v)
		outVecs[r] = v
	}
	return outVals, outVecs, nil
}

// pcaGramTop obtains the spectrum of (1/m)·Xcᵀ·Xc from the m×m Gram matrix
// G = (1/m)·Xc·Xcᵀ: the two share their nonzero eigenvalues λ_i, the
// covariance's other d−m eigenvalues are 0, and for λ_i > 0 with G·u_i =
// λ_i·u_i the covariance eigenvector is
//
//	v_i = Xcᵀ·u_i / ‖Xcᵀ·u_i‖ = Xcᵀ·u_i / √(m·λ_i)   (‖Xcᵀu_i‖² = u_iᵀ(Xc·Xcᵀ)u_i = m·λ_i).
//
// The v_i are normalised by their computed norm and re-orthonormalised in
// order of decreasing λ (classical Gram–Schmidt, two passes: the recovery
// loses orthogonality like ε·λ_1/√(λ_i·λ_j)). Directions with λ_i ≤
// max(m, d)·ε·λ_1 — numerically zero; on the covariance path they are
// rounding noise too — and the directions beyond the m Gram eigenvectors
// (k ≥ m) are not recovered from u_i but completed deterministically by
// orthonormalising e_1, e_2, … against the directions already chosen. Any
// orthonormal basis of the null space is an eigenbasis there, and the
// covariance path's choice is equally arbitrary, so for k beyond the rank
// the two paths agree on the span of the top-rank directions only (δ^k is
// then 0, outside every collection the declared sensitivity covers).
func pcaGramTop(Xc *mat.Dense, k int) ([]float64, [][]float64, error) {
	m, d := Xc.Dims()
	G := mat.NewSymDense(m, nil)
	G.SymOuterK(1/float64(m), Xc) // (1/n)·Xc·Xcᵀ through BLAS syrk
	var es mat.EigenSym
	if !es.Factorize(G, true) {
		return nil, nil, fmt.Errorf("pca: Gram eigendecomposition failed")
	}
	gv := es.Values(nil)
	order := descending(gv)
	// The m eigenvalues and d−m zeros (if d > m), descending; the top d
	// (if m > d, the rest are the Gram matrix's zeros).
	vals := make([]float64, max(m, d))
	copy(vals, gv)
	sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
	vals = vals[:d:d]
	if k == 0 {
		return vals, nil, nil
	}
	var U mat.Dense
	es.VectorsTo(&U)
	tol := float64(max(m, d)) * 0x1p-52 * math.Max(gv[order[0]], 0)
	c := 0 // recoverable directions among the top k
	for c < min(k, m) && gv[order[c]] > tol {
		c++
	}
	basis := make([]float64, k*d) // k×d, row r is v_r
	if c > 0 {
		Uk := mat.NewDense(m, c, nil)
		for r := range c {
			for i := range m {
				Uk.Set(i, r, U.At(i, order[r]))
			}
		}
		W := mat.NewDense(c, d, basis[:c*d])
		W.Mul(Uk.T(), Xc) // row r: Xcᵀ·u_r
	}
	A := blas64.General{Rows: k, Cols: d, Stride: d, Data: basis}
	got := 0
	for ; got < c; got++ {
		w := basis[got*d : (got+1)*d]
		if !orthonormalize(A, got, w, 0.5) {
			break // lost to cancellation: complete from here on
		}
	}
	// Completion by standard basis vectors. Before orthogonalisation e_j's
	// residual² is 1 − Σ_r v_r[j]²; residuals only shrink as directions are
	// added, and Σ_j residual² = d − got ≥ 1, so the second scan, with
	// threshold 1/(2√d), cannot run out of candidates.
	for _, thr := range []float64{0.5, 0.5 / math.Sqrt(float64(d))} {
		for j := 0; got < k && j < d; j++ {
			res := 1.0
			for r := range got {
				res -= basis[r*d+j] * basis[r*d+j]
			}
			if res < thr*thr {
				continue
			}
			w := basis[got*d : (got+1)*d]
			clear(w)
			w[j] = 1
			if orthonormalize(A, got, w, thr) {
				got++
			}
		}
	}
	if got < k {
		return nil, nil, fmt.Errorf("pca: could not complete %d of %d directions", k-got, k)
	}
	top := make([][]float64, k)
	for r := range k {
		top[r] = basis[r*d : (r+1)*d : (r+1)*d]
		canonicalSign(top[r])
	}
	return vals, top, nil
}

// orthonormalize makes w orthogonal to the first c rows of A (orthonormal)
// by two passes of classical Gram–Schmidt and normalises it; it reports
// false, leaving w unusable, when less than thr of w's norm survives.
func orthonormalize(A blas64.General, c int, w []float64, thr float64) bool {
	v := blas64.Vector{N: len(w), Inc: 1, Data: w}
	n0 := blas64.Nrm2(v)
	if !(n0 > 0) || math.IsInf(n0, 0) {
		return false
	}
	if c > 0 {
		Ac := blas64.General{Rows: c, Cols: A.Cols, Stride: A.Stride, Data: A.Data[:(c-1)*A.Stride+A.Cols]}
		h := blas64.Vector{N: c, Inc: 1, Data: make([]float64, c)}
		for range 2 {
			blas64.Gemv(blas.NoTrans, 1, Ac, v, 0, h) // h = A_c·w
			blas64.Gemv(blas.Trans, -1, Ac, h, 1, v)  // w −= A_cᵀ·h
		}
	}
	n1 := blas64.Nrm2(v)
	if !(n1 > thr*n0) {
		return false
	}
	blas64.Scal(1/n1, v)
	return true
}

// descending returns the indices of vals sorted by decreasing value (stable).
func descending(vals []float64) []int {
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	return order
}

// canonicalSign flips v so that its largest-magnitude entry (the first, on
// ties) is positive.
func canonicalSign(v []float64) {
	big := 0
	for j := range v {
		if math.Abs(v[j]) > math.Abs(v[big]) {
			big = j
		}
	}
	if v[big] < 0 {
		for j := range v {
			v[j] = -v[j]
		}
	}
}

// EigenGaps returns δ^k = λ_k − λ_{k+1} and δ^1 = λ_1 − λ_2 of X. This reads
// the private data: use it only for non-private diagnostics or inside PTR.
// It computes the spectrum by the same path FitTransform takes for PCA{K: k}.
// When k is at least the rank of the centred data, λ_{k+1} = 0 and δ^k is 0
// up to rounding (λ_k too, for k beyond the rank).
func EigenGaps(X *mat.Dense, removed []bool, k int) (gapK, gap1 float64, err error) {
	vals, _, _, err := pcaTop(X, removed, k, false, pcaAuto)
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
	return s.fit(X, removed, pcaAuto)
}

func (s PCA) fit(X *mat.Dense, removed []bool, method pcaMethod) (Fitted, Result, error) {
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
	_, vecs, _, err := pcaTop(X, removed, s.K, true, method)
	if err != nil {
		return nil, Result{}, err
	}
	f := &pcaFitted{D: d, Rank: !s.Dim, Components: vecs}
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
