package clip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/internal/gemm"
	"github.com/dptrain/dptrain/sampler/mask"
)

// Basis is a set of mutually orthogonal principal blocks U_1..U_{m−1} of
// R^d, each stored as an r_j × d matrix with orthonormal rows (U_jᵀ). The
// rest of R^d is the residual, kept in natural coordinates
// (docs/twice-sampling.md#subspace-clipping): a vector is released as its
// coefficients in each block followed by its residual g − Σ_j U_j U_jᵀ g, K +
// d numbers in all (K = Σ r_j).
type Basis struct {
	d      int
	blocks []*mat.Dense
	k      int
}

// NewBasis checks that each block is r_j × d with orthonormal rows and
// that blocks are mutually orthogonal (to tol, e.g. 1e-8), and returns the
// basis. No blocks means the residual is all of R^d.
func NewBasis(d int, blocks []*mat.Dense, tol float64) (*Basis, error) {
	if d < 1 {
		return nil, fmt.Errorf("clip: basis dimension must be >= 1, got %d", d)
	}
	b := &Basis{d: d, blocks: blocks}
	for j, u := range blocks {
		r, c := u.Dims()
		if c != d || r < 1 {
			return nil, fmt.Errorf("clip: basis block %d is %d×%d, want r×%d", j, r, c, d)
		}
		b.k += r
	}
	if err := b.checkOrthonormal(tol); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Basis) checkOrthonormal(tol float64) error {
	var g mat.Dense
	for i, ui := range b.blocks {
		for j := i; j < len(b.blocks); j++ {
			g.Reset()
			g.Mul(ui, b.blocks[j].T())
			r, c := g.Dims()
			for p := 0; p < r; p++ {
				for q := 0; q < c; q++ {
					want := 0.0
					if i == j && p == q {
						want = 1
					}
					if e := math.Abs(g.At(p, q) - want); !(e <= tol) {
						return fmt.Errorf("clip: basis blocks %d,%d not orthonormal: entry (%d,%d) off by %.3g", i, j, p, q, e)
					}
				}
			}
		}
	}
	return nil
}

// Dim is d; K the number of principal coefficients Σ r_j.
func (b *Basis) Dim() int { return b.d }
func (b *Basis) K() int   { return b.k }

// Ranks returns r_1..r_{m−1}.
func (b *Basis) Ranks() []int {
	r := make([]int, len(b.blocks))
	for j, u := range b.blocks {
		r[j], _ = u.Dims()
	}
	return r
}

// Block returns U_jᵀ (r_j × d); do not modify it.
func (b *Basis) Block(j int) *mat.Dense { return b.blocks[j] }

// Encode writes the block coefficients U_jᵀ g (concatenated, length K) into
// coef and the residual g − Σ_j U_j U_jᵀ g (length d) into res.
func (b *Basis) Encode(coef, res, g []float64) {
	if len(coef) != b.k || len(res) != b.d || len(g) != b.d {
		panic("clip: Basis.Encode length mismatch")
	}
	copy(res, g)
	off := 0
	gv := blas64.Vector{N: b.d, Inc: 1, Data: g}
	rv := blas64.Vector{N: b.d, Inc: 1, Data: res}
	for _, u := range b.blocks {
		m := u.RawMatrix()
		cv := blas64.Vector{N: m.Rows, Inc: 1, Data: coef[off : off+m.Rows]}
		blas64.Gemv(blas.NoTrans, 1, m, gv, 0, cv)
		blas64.Gemv(blas.Trans, -1, m, cv, 1, rv)
		off += m.Rows
	}
}

// decodeInto writes Σ_j U_j coef_j + res into out (float64, length d).
func (b *Basis) decodeInto(out, coef, res []float64) {
	copy(out, res)
	ov := blas64.Vector{N: b.d, Inc: 1, Data: out}
	off := 0
	for _, u := range b.blocks {
		m := u.RawMatrix()
		cv := blas64.Vector{N: m.Rows, Inc: 1, Data: coef[off : off+m.Rows]}
		blas64.Gemv(blas.Trans, 1, m, cv, 1, ov)
		off += m.Rows
	}
}

// Subspace is hybrid subspace clipping (paper 003's Algorithm 3, with
// the residual as one block; docs/twice-sampling.md#subspace-clipping): each
// principal block's coefficients are clipped to L2 norm c2_j and then clamped
// to c∞_j = c2_j/√d0_j; the residual (natural coordinates) likewise with the
// last entries. The released vector, summed and noised, is [coefficients |
// residual] (length K + d); Decode maps a noisy sum back to parameter space.
type Subspace struct {
	basis        *Basis
	c2, cinf, d0 []float64 // per block; the last is the residual
	sizes        []int

	// u32 stacks every block's rows (K × d, float32) for the batched
	// GEMM path; coefC (chunk × K) and resC (chunk × d) are its scratch.
	u32         []float32
	coefC, resC []float32
	out         []float32
	// float64 scratch for Decode.
	g64, coef, res []float64
}

// subspaceChunk is how many examples one GEMM processes: the scratch is
// subspaceChunk × d float32s.
const subspaceChunk = 16

// DefaultD0 is the default of docs/twice-sampling.md#subspace-clipping: no
// extra L∞ bound on the m−1 principal blocks (d0 = 0) and d0 = 100 on the
// residual.
func DefaultD0(principalBlocks int) []float64 {
	d0 := make([]float64, principalBlocks+1)
	d0[principalBlocks] = 100
	return d0
}

// NewSubspace clips in basis b with per-block L2 norms c2 and L∞ parameters
// d0 (both of length m = len(b.Ranks())+1, residual last). d0[j] = 0 means
// no L∞ clamp in block j; otherwise d0[j] ≥ 1 and c∞_j = c2_j/√d0_j.
func NewSubspace(b *Basis, c2, d0 []float64) (*Subspace, error) {
	if b == nil {
		return nil, fmt.Errorf("clip: subspace clipping needs a basis")
	}
	m := len(b.blocks) + 1
	if len(c2) != m || len(d0) != m {
		return nil, fmt.Errorf("clip: subspace clipping needs %d c2 and d0 values (blocks + residual), got %d and %d", m, len(c2), len(d0))
	}
	s := &Subspace{basis: b, c2: append([]float64(nil), c2...), cinf: make([]float64, m), d0: make([]float64, m),
		sizes: append(b.Ranks(), b.d)}
	for j := range c2 {
		if err := checkPositive(fmt.Sprintf("c2 of block %d", j), c2[j]); err != nil {
			return nil, err
		}
		switch {
		case d0[j] == 0:
			s.cinf[j], s.d0[j] = c2[j], 1
		case d0[j] >= 1 && !math.IsInf(d0[j], 0):
			s.cinf[j], s.d0[j] = c2[j]/math.Sqrt(d0[j]), d0[j]
		default:
			return nil, fmt.Errorf("clip: d0 of block %d must be 0 (no L∞ bound) or a finite value >= 1, got %v", j, d0[j])
		}
	}
	s.g64 = make([]float64, b.d)
	s.coef = make([]float64, b.k)
	s.res = make([]float64, b.d)
	s.out = make([]float32, b.k+b.d)
	s.u32 = make([]float32, 0, b.k*b.d)
	for _, u := range b.blocks {
		for _, v := range u.RawMatrix().Data {
			s.u32 = append(s.u32, float32(v))
		}
	}
	s.coefC = make([]float32, subspaceChunk*b.k)
	s.resC = make([]float32, subspaceChunk*b.d)
	return s, nil
}

func (s *Subspace) InDim() int  { return s.basis.d }
func (s *Subspace) OutDim() int { return s.basis.k + s.basis.d }

// Basis returns the clipping basis.
func (s *Subspace) Basis() *Basis { return s.basis }

// Sensitivity: one block per principal subspace (r_j, c2_j, c∞_j) and the
// residual (d, c2_m, c∞_m), i.e. r_m = d
// (docs/twice-sampling.md#subspace-clipping).
// L2 = √Σ_j min(c2_j, √r_j·c∞_j)².
func (s *Subspace) Sensitivity() Sensitivity {
	bl := make([]Block, len(s.sizes))
	var ss, mx float64
	for j, n := range s.sizes {
		name := fmt.Sprintf("principal %d", j+1)
		if j == len(s.sizes)-1 {
			name = "residual"
		}
		bl[j] = Block{Name: name, Dim: n, C2: s.c2[j], CInf: s.cinf[j], D0: s.d0[j]}
		e := math.Min(s.c2[j], math.Sqrt(float64(n))*s.cinf[j])
		ss += e * e
		mx = math.Max(mx, s.cinf[j])
	}
	return Sensitivity{L2: math.Sqrt(ss), LInf: mx, Blocks: bl}
}

// clipBlock clips v in L2 to c2 then clamps to cinf, writing into out
// (which may alias v); it reports whether anything was clipped.
func clipBlock(out, v []float32, c2, cinf float64) bool {
	s := l2Scale(SumSquares(v), c2)
	cb := clampBound(cinf)
	hit := s < 1
	for i, x := range v {
		f := s * x
		if f > cb {
			f, hit = cb, true
		} else if f < -cb {
			f, hit = -cb, true
		}
		out[i] = f
	}
	return hit
}

// encodeChunk computes, for the n rows of g (n × d), the block coefficients
// into s.coefC (n × K) and the residuals into s.resC (n × d) with two
// float32 GEMMs: C = G·Uᵀ, R = G − C·U.
func (s *Subspace) encodeChunk(g []float32, n int) {
	d, k := s.basis.d, s.basis.k
	copy(s.resC[:n*d], g[:n*d])
	if k == 0 {
		return
	}
	// Our GEMM (gonum's pure-Go Sgemm was most of the subspace step).
	gemm.Sgemm(false, true, n, k, d, 1, g[:n*d], d, s.u32, d, 0, s.coefC[:n*k], k)        // coefficients G Uᵀ
	gemm.Sgemm(false, false, n, d, k, -1, s.coefC[:n*k], k, s.u32, d, 1, s.resC[:n*d], d) // residual G − (G Uᵀ) U
}

// clipEncoded clips row i of the last encodeChunk into out (length K + d);
// it reports whether anything was clipped.
func (s *Subspace) clipEncoded(out []float32, i int) bool {
	d, k := s.basis.d, s.basis.k
	coef := s.coefC[i*k : (i+1)*k]
	hit := false
	off := 0
	for j, n := range s.sizes[:len(s.sizes)-1] {
		if clipBlock(out[off:off+n], coef[off:off+n], s.c2[j], s.cinf[j]) {
			hit = true
		}
		off += n
	}
	m := len(s.sizes) - 1
	if clipBlock(out[k:], s.resC[i*d:(i+1)*d], s.c2[m], s.cinf[m]) {
		hit = true
	}
	return hit
}

// Clip writes the released clipped form of g (length d) into out (length
// K + d). A non-finite g yields zeros.
func (s *Subspace) Clip(out, g []float32) {
	if len(g) != s.basis.d || len(out) != s.OutDim() {
		panic("clip: Subspace.Clip length mismatch")
	}
	if !allFinite(g) {
		clear(out)
		return
	}
	s.encodeChunk(g, 1)
	s.clipEncoded(out, 0)
}

// ClipSum clips each of the b rows of grads (left unchanged) and adds the
// released vectors, masked when masks is non-nil, to sum (length K + d).
// The basis change runs as float32 GEMMs over chunks of examples.
func (s *Subspace) ClipSum(grads []float32, b int, masks []*mask.Mask, sum []float32) Stats {
	d := s.basis.d
	checkRows(grads, b, d, masks, sum, s.OutDim())
	var st Stats
	for start := 0; start < b; start += subspaceChunk {
		n := min(subspaceChunk, b-start)
		g := grads[start*d : (start+n)*d]
		s.encodeChunk(g, n) // rows are independent: a NaN stays in its row
		for i := 0; i < n; i++ {
			if !allFinite(g[i*d : (i+1)*d]) {
				st.NonFinite++
				continue
			}
			if s.clipEncoded(s.out, i) {
				st.Clipped++
			}
			addRow(sum, s.out, maskAt(masks, start+i))
		}
	}
	return st
}

// Decode maps a released (noisy) sum back to parameter space: out =
// Σ_j U_j coef_j + residual. It allocates nothing but uses the clipper's
// scratch.
func (s *Subspace) Decode(out, released []float32) {
	if len(out) != s.basis.d || len(released) != s.OutDim() {
		panic("clip: Subspace.Decode length mismatch")
	}
	for i, v := range released[:s.basis.k] {
		s.coef[i] = float64(v)
	}
	for i, v := range released[s.basis.k:] {
		s.res[i] = float64(v)
	}
	s.basis.decodeInto(s.g64, s.coef, s.res)
	for i, v := range s.g64 {
		out[i] = float32(v)
	}
}
