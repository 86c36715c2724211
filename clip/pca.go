package clip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/internal/gemm"
	"github.com/dptrain/dptrain/internal/rng"
)

// NestedBlockSizes turns cumulative subspace ranks (paper 003's "{250, 500,
// 1000, 1500}", read as nested per DESIGN decision 2) into block sizes
// (250, 250, 500, 500).
func NestedBlockSizes(cumulative []int) ([]int, error) {
	out := make([]int, len(cumulative))
	prev := 0
	for i, r := range cumulative {
		if r <= prev {
			return nil, fmt.Errorf("clip: cumulative ranks must increase, got %v", cumulative)
		}
		out[i] = r - prev
		prev = r
	}
	return out, nil
}

// PrincipalBasis estimates principal blocks of sizes r_1..r_{m−1} from k
// PUBLIC per-sample gradients (public: k × d, row-major) by randomized
// subspace (power) iteration with deflation (paper 003 Algorithm 4): for
// each block, U ← Gaussian; iters times U ← orth(Yᵀ(Y U)); then
// Y ← Y − Y U Uᵀ. Blocks are re-orthogonalised against earlier ones.
//
// The deflation is carried out implicitly: every iterate is orthogonalised
// against the earlier blocks P before it is used, and then
// Yᵀ(Y u) projected off P is exactly (Y(I−P))ᵀ(Y(I−P)) u. So Y is never
// copied or modified: the products run on public itself in float32 (our
// GEMM; the power iteration only needs directions), and the
// orthonormalisation runs in float64. Memory beyond public is O((k + d)·r),
// where a float64 copy of Y and a k×d deflation product cost 16·k·d bytes
// (1 GiB for 200 gradients of an MLP with 200k parameters).
//
// Privacy: public must not contain private data; the basis is released as
// part of the mechanism's description and the accountant assumes it is
// data-independent.
func PrincipalBasis(public []float32, k, d int, sizes []int, iters int, s *rng.Stream) (*Basis, error) {
	if k < 1 || d < 1 || len(public) != k*d {
		return nil, fmt.Errorf("clip: public gradients: %d values for %d×%d", len(public), k, d)
	}
	if iters < 1 {
		return nil, fmt.Errorf("clip: power iterations must be >= 1, got %d", iters)
	}
	tot, maxR := 0, 0
	for _, r := range sizes {
		if r < 1 {
			return nil, fmt.Errorf("clip: block sizes must be >= 1, got %v", sizes)
		}
		tot += r
		maxR = max(maxR, r)
	}
	if tot > min(k, d) {
		return nil, fmt.Errorf("clip: principal blocks of total rank %d exceed the rank bound min(k=%d public samples, d=%d)", tot, k, d)
	}
	for i, v := range public {
		if v-v != 0 {
			return nil, fmt.Errorf("clip: public gradient %d has a non-finite value", i/d)
		}
	}
	u32 := make([]float32, maxR*d) // the iterate Uᵀ (r × d) in float32
	z := make([]float32, k*maxR)   // Y U (k × r)
	var blocks []*mat.Dense
	for bi, r := range sizes {
		ut := mat.NewDense(r, d, nil) // Uᵀ: rows are basis vectors
		raw := ut.RawMatrix().Data
		for i := range raw {
			raw[i] = s.NormFloat64()
		}
		for it := 0; it < iters; it++ {
			orthonormalizeRows(ut, blocks) // keep the iteration well scaled; checked below
			for i, v := range raw {
				u32[i] = float32(v)
			}
			gemm.Sgemm(false, true, k, r, d, 1, public, d, u32, d, 0, z, r) // Z = Y U
			gemm.Sgemm(true, false, r, d, k, 1, z, r, public, d, 0, u32, d) // Uᵀ = Zᵀ Y
			for i := range raw {
				raw[i] = float64(u32[i])
			}
		}
		if err := orthonormalizeRows(ut, blocks); err != nil {
			return nil, fmt.Errorf("clip: principal block %d: %w", bi, err)
		}
		blocks = append(blocks, ut)
	}
	return NewBasis(d, blocks, 1e-8)
}

// orthonormalizeRows makes the rows of u orthonormal and orthogonal to the
// rows of every prev block, by modified Gram–Schmidt applied twice.
func orthonormalizeRows(u *mat.Dense, prev []*mat.Dense) error {
	r, _ := u.Dims()
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < r; i++ {
			ri := u.RawRowView(i)
			n0 := math.Sqrt(dot(ri, ri))
			for _, p := range prev {
				pr, _ := p.Dims()
				for j := 0; j < pr; j++ {
					axpy(-dot(ri, p.RawRowView(j)), p.RawRowView(j), ri)
				}
			}
			for j := 0; j < i; j++ {
				axpy(-dot(ri, u.RawRowView(j)), u.RawRowView(j), ri)
			}
			n := math.Sqrt(dot(ri, ri))
			if !(n > 1e-10*n0) || n == 0 {
				return fmt.Errorf("public gradients span too few directions (vector %d vanishes after orthogonalisation)", i)
			}
			for j := range ri {
				ri[j] /= n
			}
		}
	}
	return nil
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpy(alpha float64, x, y []float64) {
	for i, v := range x {
		y[i] += alpha * v
	}
}

// AllocateBudgets splits a global L2 budget c over the blocks of basis
// (principal blocks, then the residual) in proportion to the mean norm of
// the PUBLIC gradients projected into each: c_j = c·m̄_j/√Σ_l m̄_l², so
// Σ_j c_j² = c² (specs/003 §3.5 reconstruction).
func AllocateBudgets(public []float32, k int, b *Basis, c float64) ([]float64, error) {
	if err := checkPositive("global clip budget", c); err != nil {
		return nil, err
	}
	d := b.d
	if k < 1 || len(public) != k*d {
		return nil, fmt.Errorf("clip: public gradients: %d values for %d×%d", len(public), k, d)
	}
	ranks := b.Ranks()
	mean := make([]float64, len(ranks)+1)
	g := make([]float64, d)
	coef := make([]float64, b.k)
	res := make([]float64, d)
	for i := 0; i < k; i++ {
		for j, v := range public[i*d : (i+1)*d] {
			g[j] = float64(v)
		}
		b.Encode(coef, res, g)
		off := 0
		for j, r := range ranks {
			mean[j] += math.Sqrt(dot(coef[off:off+r], coef[off:off+r])) / float64(k)
			off += r
		}
		mean[len(ranks)] += math.Sqrt(dot(res, res)) / float64(k)
	}
	var ss float64
	for _, m := range mean {
		ss += m * m
	}
	if !(ss > 0) || math.IsInf(ss, 0) {
		return nil, fmt.Errorf("clip: public gradients have no usable norm to split the budget (mean norms %v)", mean)
	}
	out := make([]float64, len(mean))
	for j, m := range mean {
		out[j] = c * m / math.Sqrt(ss)
		if out[j] == 0 {
			return nil, fmt.Errorf("clip: block %d gets a zero clip budget (public gradients have no component there)", j)
		}
	}
	return out, nil
}
