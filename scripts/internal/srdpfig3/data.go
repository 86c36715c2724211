package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/rng"
)

// genConfig is the synthetic data of the paper's Fig. 3
// (docs/srdp.md#paper-figures; our reconstruction of sklearn
// make_classification with n_clusters_per_class=1 and "rank 50").
type genConfig struct {
	N, D, Informative int
	ClassSep          float64 // half the hypercube side (sklearn class_sep)
	FlipY             float64 // fraction of labels redrawn at random (sklearn flip_y)
	Nu                float64 // std of the isotropic noise added before scaling
	Seed              uint64
}

// dataset is S: n rows x ∈ ℝ^d with ‖x‖ ≤ 1 (the largest is exactly 1),
// centred (column means 0), and labels y ∈ {−1, +1}.
type dataset struct {
	X    *mat.Dense
	Y    []float64
	Norm []float64 // row norms
	R    float64   // max row norm (1 after scaling)
}

// generate draws the data. Per sklearn make_classification (hypercube=True,
// n_classes=2, n_clusters_per_class=1, weights balanced):
//
//  1. two distinct random vertices of {−1,+1}^m·ClassSep are the class
//     centroids (m = Informative);
//  2. each class's n/2 points are N(0, I_m)·A_c + centroid, with a per-class
//     random A_c of i.i.d. U(−1, 1) entries (sklearn's random covariance);
//  3. a fraction FlipY of the labels is redrawn uniformly (sklearn flip_y);
//
// then (our reconstruction of "rank 50" in d dimensions) the m
// informative features are mixed into d by a random m×d matrix of i.i.d.
// U(−1, 1) entries (sklearn's redundant-feature convention), isotropic
// N(0, ν²) noise is added, the columns are centred and all rows are divided
// by the largest row norm, so that ‖x‖ ≤ 1 (one global scale: the rank-m
// structure and the spread of the norms are kept, and Table 4's clipping
// at C = 0.1R … 0.99R is meaningful). The rows are shuffled.
func generate(c genConfig) (*dataset, error) {
	if c.N < 4 || c.D < c.Informative || c.Informative < 1 || c.Informative > 62 {
		return nil, fmt.Errorf("data: need n ≥ 4 and 1 ≤ informative ≤ min(d, 62), got n=%d d=%d m=%d", c.N, c.D, c.Informative)
	}
	s := rng.New(c.Seed).Child("srdp-fig3-data")
	m := c.Informative
	// Two distinct hypercube vertices.
	var v0, v1 uint64
	for v0 == v1 {
		v0, v1 = s.Uint64()&(1<<m-1), s.Uint64()&(1<<m-1)
	}
	vertex := func(v uint64) []float64 {
		out := make([]float64, m)
		for j := range out {
			out[j] = -c.ClassSep
			if v>>j&1 == 1 {
				out[j] = c.ClassSep
			}
		}
		return out
	}
	cent := [2][]float64{vertex(v0), vertex(v1)}
	Z := mat.NewDense(c.N, m, nil)
	y := make([]float64, c.N)
	g := make([]float64, m)
	for cls := 0; cls < 2; cls++ {
		A := mat.NewDense(m, m, nil)
		for i := range m {
			for j := range m {
				A.Set(i, j, 2*s.Float64()-1)
			}
		}
		lo, hi := cls*c.N/2, (cls+1)*c.N/2
		for i := lo; i < hi; i++ {
			for j := range g {
				g[j] = s.NormFloat64()
			}
			row := Z.RawRowView(i)
			gv := mat.NewVecDense(m, g)
			rv := mat.NewVecDense(m, row)
			rv.MulVec(A.T(), gv) // row = g·A
			for j := range row {
				row[j] += cent[cls][j]
			}
			y[i] = float64(2*cls - 1)
		}
	}
	for i := range y {
		if s.Float64() < c.FlipY {
			y[i] = float64(2*s.IntN(2) - 1)
		}
	}
	M := mat.NewDense(m, c.D, nil)
	raw := M.RawMatrix().Data
	for i := range raw {
		raw[i] = 2*s.Float64() - 1
	}
	X := mat.NewDense(c.N, c.D, nil)
	X.Mul(Z, M)
	xr := X.RawMatrix().Data
	for i := range xr {
		xr[i] += c.Nu * s.NormFloat64()
	}
	// Centre the columns, then scale by the largest row norm.
	mean := make([]float64, c.D)
	for i := range c.N {
		for j, v := range X.RawRowView(i) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(c.N)
	}
	norms := make([]float64, c.N)
	R := 0.0
	for i := range c.N {
		row := X.RawRowView(i)
		ss := 0.0
		for j := range row {
			row[j] -= mean[j]
			ss += row[j] * row[j]
		}
		norms[i] = math.Sqrt(ss)
		R = math.Max(R, norms[i])
	}
	X.Scale(1/R, X)
	for i := range norms {
		norms[i] /= R
	}
	// Shuffle the rows (sklearn shuffle=True).
	perm := s.Perm(c.N)
	Xs := mat.NewDense(c.N, c.D, nil)
	ys := make([]float64, c.N)
	ns := make([]float64, c.N)
	for i, p := range perm {
		copy(Xs.RawRowView(i), X.RawRowView(p))
		ys[i], ns[i] = y[p], norms[p]
	}
	return &dataset{X: Xs, Y: ys, Norm: ns, R: 1}, nil
}

// spectrum is the SVD of S obtained from its n×n Gram matrix: X = U·diag(s)·Vᵀ
// with s descending. F = U·diag(s) are the coordinates of the rows in the
// basis V of the row space (x_i = V·F_i, ‖F_i‖ = ‖x_i‖), which is all the
// linear models here ever see: a logit x·θ only depends on Vᵀθ.
type spectrum struct {
	S []float64  // singular values, descending, only the r numerically nonzero ones
	U *mat.Dense // n×r
	F *mat.Dense // n×r, U·diag(S)
}

// gramSVD factorises the n×n Gram matrix XXᵀ (never the d×d covariance).
func gramSVD(X *mat.Dense) (*spectrum, error) {
	n, _ := X.Dims()
	G := blas64.Symmetric{N: n, Stride: n, Data: make([]float64, n*n), Uplo: blas.Upper}
	blas64.Syrk(blas.NoTrans, 1, X.RawMatrix(), 0, G)
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(n, G.Data), true) {
		return nil, fmt.Errorf("gram eigendecomposition failed")
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	top := vals[n-1]
	r := 0
	for i := n - 1; i >= 0 && vals[i] > 1e-12*top; i-- {
		r++
	}
	sp := &spectrum{S: make([]float64, r), U: mat.NewDense(n, r, nil), F: mat.NewDense(n, r, nil)}
	for k := range r {
		idx := n - 1 - k
		sp.S[k] = math.Sqrt(vals[idx])
		for i := range n {
			u := vecs.At(i, idx)
			sp.U.Set(i, k, u)
			sp.F.Set(i, k, u*sp.S[k])
		}
	}
	return sp, nil
}

// eigenvalues of the centred 1/n covariance, λ_1 ≥ … ≥ λ_r (the data are
// centred, so XᵀX/n is the covariance and λ_i = s_i²/n).
func (sp *spectrum) eigenvalues(n int) []float64 {
	out := make([]float64, len(sp.S))
	for i, s := range sp.S {
		out[i] = s * s / float64(n)
	}
	return out
}

// pcaCoords returns the rows projected on the top-k principal directions,
// A_kᵀx_i = s_j·U_ij (j < k), as an n×k matrix: the data method (a) trains
// on. The directions themselves, A_k = X·… , are never formed: θ = A_k·w
// has logits x_i·θ = (A_kᵀx_i)·w and ‖θ‖ = ‖w‖.
func (sp *spectrum) pcaCoords(k int) *mat.Dense {
	n, _ := sp.F.Dims()
	return mat.DenseCopyOf(sp.F.Slice(0, n, 0, k))
}
