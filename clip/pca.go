package clip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/internal/gemm"
	"github.com/dptrain/dptrain/rng"
)

// NestedBlockSizes turns cumulative subspace ranks (paper 003's "{250, 500,
// 1000, 1500}", read as nested) into block sizes (250, 250,
// 500, 500): docs/twice-sampling.md#subspace-clipping.
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
	return PrincipalBasisFrom(SliceRows(public, d), k, d, k, sizes, iters, s)
}

// RowSource returns rows [lo, hi) of a k × d matrix (row-major,
// (hi−lo)·d values) in storage of its own, valid until its next call. It
// must give the same rows every time it is asked.
type RowSource func(lo, hi int) ([]float32, error)

// SliceRows is the RowSource of a row-major matrix held in memory: views,
// no copies.
func SliceRows(m []float32, d int) RowSource {
	return func(lo, hi int) ([]float32, error) { return m[lo*d : hi*d], nil }
}

// PrincipalBasisFrom is PrincipalBasis over public gradients produced in
// chunks of at most chunk rows by rows, each time they are needed (once per
// power iteration): the k × d matrix is never held at once. Memory is
// O(chunk·d + r·d).
func PrincipalBasisFrom(rows RowSource, k, d, chunk int, sizes []int, iters int, s *rng.Stream) (*Basis, error) {
	if k < 1 || d < 1 || chunk < 1 {
		return nil, fmt.Errorf("clip: public gradients: %d rows of %d in chunks of %d", k, d, chunk)
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
	chunk = min(chunk, k)
	u32 := make([]float32, maxR*d) // the iterate Uᵀ (r × d) in float32
	next := make([]float32, maxR*d)
	z := make([]float32, chunk*maxR) // a chunk's Y U
	// rowsAt fills y with rows [lo, hi), checking that they are finite.
	rowsAt := func(lo, hi int) ([]float32, error) {
		yc, err := rows(lo, hi)
		if err != nil {
			return nil, fmt.Errorf("clip: public gradients %d–%d: %w", lo, hi, err)
		}
		if len(yc) != (hi-lo)*d {
			return nil, fmt.Errorf("clip: public gradients %d–%d: %d values, want %d", lo, hi, len(yc), (hi-lo)*d)
		}
		for i, v := range yc {
			if v-v != 0 {
				return nil, fmt.Errorf("clip: public gradient %d has a non-finite value", lo+i/d)
			}
		}
		return yc, nil
	}
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
			// Uᵀ ← Σ over chunks of (Y_c U)ᵀ Y_c = Zᵀ Y.
			for lo := 0; lo < k; lo += chunk {
				hi := min(k, lo+chunk)
				yc, err := rowsAt(lo, hi)
				if err != nil {
					return nil, err
				}
				m := hi - lo
				beta := float32(1)
				if lo == 0 {
					beta = 0
				}
				gemm.Sgemm(false, true, m, r, d, 1, yc, d, u32, d, 0, z, r)           // Z_c = Y_c U
				gemm.Sgemm(true, false, r, d, m, 1, z, r, yc, d, beta, next[:r*d], d) // += Z_cᵀ Y_c
			}
			for i := range raw {
				raw[i] = float64(next[i])
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
// Σ_j c_j² = c² (our reading; docs/twice-sampling.md#subspace-clipping).
func AllocateBudgets(public []float32, k int, b *Basis, c float64) ([]float64, error) {
	if k < 1 || len(public) != k*b.d {
		return nil, fmt.Errorf("clip: public gradients: %d values for %d×%d", len(public), k, b.d)
	}
	return AllocateBudgetsFrom(SliceRows(public, b.d), k, k, b, c)
}

// AllocateBudgetsFrom is AllocateBudgets over public gradients produced in
// chunks of at most chunk rows by rows.
func AllocateBudgetsFrom(rows RowSource, k, chunk int, b *Basis, c float64) ([]float64, error) {
	if err := checkPositive("global clip budget", c); err != nil {
		return nil, err
	}
	d := b.d
	if k < 1 || chunk < 1 {
		return nil, fmt.Errorf("clip: public gradients: %d rows in chunks of %d", k, chunk)
	}
	chunk = min(chunk, k)
	ranks := b.Ranks()
	mean := make([]float64, len(ranks)+1)
	g := make([]float64, d)
	coef := make([]float64, b.k)
	res := make([]float64, d)
	for lo := 0; lo < k; lo += chunk {
		hi := min(k, lo+chunk)
		y, err := rows(lo, hi)
		if err != nil {
			return nil, fmt.Errorf("clip: public gradients %d–%d: %w", lo, hi, err)
		}
		if len(y) != (hi-lo)*d {
			return nil, fmt.Errorf("clip: public gradients %d–%d: %d values, want %d", lo, hi, len(y), (hi-lo)*d)
		}
		for i := range hi - lo {
			for j, v := range y[i*d : (i+1)*d] {
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
