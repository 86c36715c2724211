package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/internal/gemm"
	"github.com/dptrain/dptrain/rng"
)

// DP-PCA baseline (method (c)): the Gaussian noisy-covariance mechanism
// ("Analyze Gauss", Dwork et al. 2014; SULQ), not Chaudhuri et al.'s PPCA
// (which needs Bingham sampling; docs/srdp.md#paper-figures). It releases
//
//	Ĉ = XᵀX + (z/√2)·E,  E a standard GOE matrix (off-diagonal N(0,1),
//	diagonal N(0,2), symmetric),
//
// and returns the top-k eigenvectors of Ĉ. Under add/remove-one XᵀX moves
// by xxᵀ with ‖xxᵀ‖_F = ‖x‖² ≤ 1; the GOE noise is isotropic in the
// Frobenius geometry of symmetric matrices (its density is ∝ exp(−‖E‖_F²/4)),
// so releasing the upper triangle of Ĉ is exactly a Gaussian mechanism of
// sensitivity 1 and noise multiplier z.
//
// The d×d eigendecomposition (d = 6000) is not done exactly: the top-k
// subspace is approximated by shifted block subspace iteration (block
// k + oversample, shift so that the whole spectrum is positive) with a final
// Rayleigh–Ritz step, all in float32 through internal/gemm. The data enter
// only through XᵀX·V = Xᵀ(X·V); the d×d matrix stored is the noise.

// goe fills a d×d row-major float32 buffer with a standard GOE matrix.
func goe(d int, s *rng.Stream, buf []float32) []float32 {
	if cap(buf) < d*d {
		buf = make([]float32, d*d)
	}
	buf = buf[:d*d]
	for i := range d {
		buf[i*d+i] = float32(math.Sqrt2 * s.NormFloat64())
		for j := i + 1; j < d; j++ {
			v := float32(s.NormFloat64())
			buf[i*d+j], buf[j*d+i] = v, v
		}
	}
	return buf
}

// dpPCA holds the noise draw of one seed; top projects at one noise level.
type dpPCA struct {
	d, n  int
	X32   []float32 // n×d data, row-major
	E     []float32 // d×d standard GOE
	iters int
	over  int
}

// top returns approximate top-k eigenvectors (d×k, orthonormal columns) of
// XᵀX + (z/√2)·E, and the largest residual ‖Ĉv − θv‖ of the k Ritz pairs
// relative to the noise's semicircle edge 2√d·z/√2 (a convergence
// diagnostic: near the edge of the noise spectrum the eigenvalues are
// dense and subspace iteration is not run to convergence there).
func (p *dpPCA) top(k int, z float64, s *rng.Stream) (*mat.Dense, float64, error) {
	d, n := p.d, p.n
	b := min(k+p.over, d)
	scale := float32(z / math.Sqrt2)
	// The GOE's spectrum lies within ±2√d·(z/√2) (semicircle edge) plus the
	// data's ≤ n; shift by the noise edge so that the top of the spectrum
	// is also the largest in magnitude.
	shift := float32(2.2 * math.Sqrt(float64(d)) * float64(scale))
	V := make([]float32, d*b)
	for i := range V {
		V[i] = float32(s.NormFloat64())
	}
	XV := make([]float32, n*b)
	Y := make([]float32, d*b)
	apply := func(dst, src []float32, sh float32) {
		// dst = Xᵀ(X·src) + scale·E·src + sh·src
		gemm.Sgemm(false, false, n, b, d, 1, p.X32, d, src, b, 0, XV, b)
		gemm.Sgemm(true, false, d, b, n, 1, p.X32, d, XV, b, 0, dst, b)
		gemm.Sgemm(false, false, d, b, d, scale, p.E, d, src, b, 1, dst, b)
		if sh != 0 {
			for i := range dst {
				dst[i] += sh * src[i]
			}
		}
	}
	if err := orthonormalize(V, d, b); err != nil {
		return nil, 0, err
	}
	for range p.iters {
		apply(Y, V, shift)
		V, Y = Y, V
		if err := orthonormalize(V, d, b); err != nil {
			return nil, 0, err
		}
	}
	// Rayleigh–Ritz on the unshifted matrix.
	apply(Y, V, 0)
	H := make([]float32, b*b)
	gemm.Sgemm(true, false, b, b, d, 1, V, b, Y, b, 0, H, b)
	Hs := mat.NewSymDense(b, nil)
	for i := range b {
		for j := i; j < b; j++ {
			Hs.SetSym(i, j, 0.5*float64(H[i*b+j]+H[j*b+i]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(Hs, true) {
		return nil, 0, fmt.Errorf("dp-pca: Rayleigh–Ritz eigendecomposition failed")
	}
	vals := es.Values(nil)
	var W mat.Dense
	es.VectorsTo(&W)
	Vd := mat.NewDense(d, b, nil)
	Yd := mat.NewDense(d, b, nil)
	for i := range d * b {
		Vd.RawMatrix().Data[i] = float64(V[i])
		Yd.RawMatrix().Data[i] = float64(Y[i])
	}
	Wk := mat.NewDense(b, k, nil)
	for j := range k {
		for i := range b {
			Wk.Set(i, j, W.At(i, b-1-j)) // descending
		}
	}
	var Vk, CVk mat.Dense
	Vk.Mul(Vd, Wk)
	CVk.Mul(Yd, Wk)
	worst := 0.0
	for j := range k {
		theta := vals[b-1-j]
		r := 0.0
		for i := range d {
			e := CVk.At(i, j) - theta*Vk.At(i, j)
			r += e * e
		}
		worst = math.Max(worst, math.Sqrt(r))
	}
	edge := 2 * math.Sqrt(float64(d)) * float64(scale)
	return &Vk, worst / edge, nil
}

// orthonormalize makes the b columns of the row-major d×b matrix V
// orthonormal: CholeskyQR2 (Gram matrix by Sgemm, Cholesky in float64, two
// rounds), falling back to modified Gram–Schmidt in float64 when the block
// is too ill-conditioned for the Cholesky factorisation.
func orthonormalize(V []float32, d, b int) error {
	G := make([]float32, b*b)
	Rinv := make([]float32, b*b)
	tmp := make([]float32, d*b)
	for round := 0; round < 2; round++ {
		gemm.Sgemm(true, false, b, b, d, 1, V, b, V, b, 0, G, b)
		S := mat.NewSymDense(b, nil)
		for i := range b {
			for j := i; j < b; j++ {
				S.SetSym(i, j, 0.5*float64(G[i*b+j]+G[j*b+i]))
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(S) {
			return mgs(V, d, b)
		}
		var U, Ui mat.TriDense
		ch.UTo(&U)
		if err := Ui.InverseTri(&U); err != nil {
			return mgs(V, d, b)
		}
		for i := range b {
			for j := range b {
				Rinv[i*b+j] = float32(Ui.At(i, j))
			}
		}
		gemm.Sgemm(false, false, d, b, b, 1, V, b, Rinv, b, 0, tmp, b) // V·U⁻¹, with UᵀU = VᵀV
		copy(V, tmp)
	}
	return nil
}

// mgs runs two passes of modified Gram–Schmidt (in float64) on the b
// columns of the row-major d×b matrix V.
func mgs(V []float32, d, b int) error {
	col := make([][]float64, b)
	for j := range b {
		c := make([]float64, d)
		for i := range d {
			c[i] = float64(V[i*b+j])
		}
		col[j] = c
	}
	for j := range b {
		for pass := 0; pass < 2; pass++ {
			for l := 0; l < j; l++ {
				dot := 0.0
				for i, v := range col[j] {
					dot += v * col[l][i]
				}
				for i := range col[j] {
					col[j][i] -= dot * col[l][i]
				}
			}
		}
		nrm := 0.0
		for _, v := range col[j] {
			nrm += v * v
		}
		nrm = math.Sqrt(nrm)
		if !(nrm > 0) || math.IsNaN(nrm) {
			return fmt.Errorf("dp-pca: rank-deficient block in subspace iteration")
		}
		for i := range col[j] {
			col[j][i] /= nrm
		}
	}
	for j := range b {
		for i := range d {
			V[i*b+j] = float32(col[j][i])
		}
	}
	return nil
}
