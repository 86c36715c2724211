package clip

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/rng"
)

// randomBasis returns orthonormal blocks of the given sizes in R^d from the
// QR factorisation of a Gaussian matrix (independent of PrincipalBasis).
func randomBasis(t *testing.T, d int, sizes []int, seed uint64) *Basis {
	t.Helper()
	k := 0
	for _, r := range sizes {
		k += r
	}
	s := rng.New(seed)
	a := mat.NewDense(d, k, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < k; j++ {
			a.Set(i, j, s.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	var blocks []*mat.Dense
	off := 0
	for _, r := range sizes {
		u := mat.NewDense(r, d, nil)
		u.Copy(q.Slice(0, d, off, off+r).T())
		blocks = append(blocks, u)
		off += r
	}
	b, err := NewBasis(d, blocks, 1e-10)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBasisRoundTripAndValidation(t *testing.T) {
	b := randomBasis(t, testD, []int{4, 6}, 1)
	g := make([]float64, testD)
	s := rng.New(2)
	for i := range g {
		g[i] = s.NormFloat64()
	}
	coef := make([]float64, b.K())
	res := make([]float64, testD)
	b.Encode(coef, res, g)
	// The residual is orthogonal to every block and energy splits exactly.
	var e float64
	for j := 0; j < 2; j++ {
		u := b.Block(j)
		r, _ := u.Dims()
		for p := 0; p < r; p++ {
			if x := dot(u.RawRowView(p), res); math.Abs(x) > 1e-12 {
				t.Errorf("residual not orthogonal to block %d row %d: %v", j, p, x)
			}
		}
	}
	e = dot(coef, coef) + dot(res, res)
	if math.Abs(e-dot(g, g)) > 1e-10 {
		t.Errorf("energy %v, want %v", e, dot(g, g))
	}
	back := make([]float64, testD)
	b.decodeInto(back, coef, res)
	for i := range g {
		if math.Abs(back[i]-g[i]) > 1e-12 {
			t.Fatalf("decode(encode(g))[%d] = %v, want %v", i, back[i], g[i])
		}
	}
	// A non-orthonormal block is refused.
	bad := mat.NewDense(2, testD, nil)
	bad.Set(0, 0, 1)
	bad.Set(1, 0, 1)
	if _, err := NewBasis(testD, []*mat.Dense{bad}, 1e-8); err == nil {
		t.Error("non-orthonormal basis accepted")
	}
}

// With the identity as the one principal block, subspace clipping is plain
// L2 clipping; with no principal block, it is L2 + L∞ on the residual.
func TestSubspaceIdentityEqualsPlain(t *testing.T) {
	const b = 30
	g := rows(b, testD, 3)
	id := mat.NewDense(testD, testD, nil)
	for i := 0; i < testD; i++ {
		id.Set(i, i, 1)
	}
	basis, err := NewBasis(testD, []*mat.Dense{id}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := NewSubspace(basis, []float64{1, 0.3}, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	l2, _ := NewL2(1, testD, nil)
	noBasis, _ := NewBasis(testD, nil, 0)
	res, _ := NewSubspace(noBasis, []float64{1}, []float64{9})
	hy, _ := NewL2LInf(1, 9, testD)
	for _, tc := range []struct {
		name  string
		sub   *Subspace
		plain Clipper
	}{{"identity block vs L2", ss, l2}, {"residual only vs L2LInf", res, hy}} {
		want := make([]float32, testD)
		tc.plain.ClipSum(slices.Clone(g), b, nil, want)
		rel := make([]float32, tc.sub.OutDim())
		tc.sub.ClipSum(g, b, nil, rel)
		got := make([]float32, testD)
		tc.sub.Decode(got, rel)
		for j := range got {
			if math.Abs(float64(got[j]-want[j])) > 1e-6 {
				t.Fatalf("%s: coordinate %d: %v vs %v", tc.name, j, got[j], want[j])
			}
		}
		if s1, s2 := tc.sub.Sensitivity().L2, tc.plain.Sensitivity().L2; math.Abs(s1-s2) > 1e-12 && tc.name != "identity block vs L2" {
			t.Errorf("%s: sensitivity %v vs %v", tc.name, s1, s2)
		}
	}
}

func TestSubspaceBlockBounds(t *testing.T) {
	const b = 40
	g := rows(b, testD, 4)
	for i := range g {
		g[i] *= 3 // push most blocks outside
	}
	basis := randomBasis(t, testD, []int{3, 5}, 5)
	c2 := []float64{0.8, 0.5, 0.4}
	d0 := []float64{0, 2, 25}
	ss, _ := NewSubspace(basis, c2, d0)
	sens := ss.Sensitivity()
	wantDims := []int{3, 5, testD}
	for j, bl := range sens.Blocks {
		wantInf := c2[j]
		if d0[j] > 0 {
			wantInf = c2[j] / math.Sqrt(d0[j])
		}
		if bl.Dim != wantDims[j] || bl.C2 != c2[j] || math.Abs(bl.CInf-wantInf) > 1e-15 {
			t.Errorf("block %d: %+v, want dim %d c2 %v c∞ %v", j, bl, wantDims[j], c2[j], wantInf)
		}
	}
	out := make([]float32, ss.OutDim())
	coef := make([]float64, basis.K())
	res := make([]float64, testD)
	g64 := make([]float64, testD)
	untouched := 0
	for i := 0; i < b; i++ {
		row := g[i*testD : (i+1)*testD]
		ss.Clip(out, row)
		for j, v := range row {
			g64[j] = float64(v)
		}
		basis.Encode(coef, res, g64)
		raw := append(slices.Clone(coef), res...)
		off := 0
		for j, bl := range sens.Blocks {
			seg := out[off : off+bl.Dim]
			rseg := raw[off : off+bl.Dim]
			if n := norm(seg); n > bl.C2*(1+1e-6) {
				t.Errorf("row %d block %d: norm %v > c2 %v", i, j, n, bl.C2)
			}
			inside := true
			var rn float64
			for p, v := range seg {
				if math.Abs(float64(v)) > bl.CInf*(1+1e-7) {
					t.Errorf("row %d block %d: |coord| %v > c∞ %v", i, j, v, bl.CInf)
				}
				rn += rseg[p] * rseg[p]
				if math.Abs(rseg[p]) > bl.CInf*(1-1e-4) {
					inside = false
				}
			}
			if rn > bl.C2*bl.C2 {
				inside = false
			}
			// The clipper encodes with float32 GEMMs: inside blocks must
			// equal its own encoding bit for bit and the float64 one closely.
			ss.encodeChunk(row, 1)
			enc := append(slices.Clone(ss.coefC[:basis.K()]), ss.resC[:testD]...)[off : off+bl.Dim]
			for p := range enc {
				if math.Abs(float64(enc[p])-rseg[p]) > 1e-5*(1+math.Abs(rseg[p])) {
					t.Fatalf("row %d block %d: float32 encoding %v vs float64 %v", i, j, enc[p], rseg[p])
				}
			}
			if inside && rn < bl.C2*bl.C2*(1-1e-4) {
				untouched++
				for p, v := range seg {
					if v != enc[p] {
						t.Errorf("row %d block %d: block inside both bounds was changed", i, j)
						break
					}
				}
			}
			off += bl.Dim
		}
	}
	if untouched == 0 {
		t.Error("no block was inside both bounds: the untouched check never ran")
	}
	t.Logf("%d blocks inside both bounds were left untouched", untouched)
}

func TestNestedBlockSizes(t *testing.T) {
	got, err := NestedBlockSizes([]int{250, 500, 1000, 1500})
	if err != nil || !slices.Equal(got, []int{250, 250, 500, 500}) {
		t.Errorf("NestedBlockSizes = %v, %v; want [250 250 500 500]", got, err)
	}
	if _, err := NestedBlockSizes([]int{5, 5}); err == nil {
		t.Error("non-increasing ranks accepted")
	}
	if d0 := DefaultD0(4); !slices.Equal(d0, []float64{0, 0, 0, 0, 100}) {
		t.Errorf("DefaultD0(4) = %v", d0)
	}
}

// PrincipalBasis on public gradients with a planted spectrum captures
// (nearly) the energy of the exact top-r singular subspace (gonum SVD).
func TestPrincipalBasis(t *testing.T) {
	const k, d = 60, 80
	s := rng.New(6)
	// Y = A Vᵀ with singular values 30, 20, 15, 10, 8, 6, then noise 0.1.
	pub := make([]float32, k*d)
	spec := []float64{30, 20, 15, 10, 8, 6}
	vb := randomBasis(t, d, []int{len(spec)}, 7).Block(0)
	for i := 0; i < k; i++ {
		for j := 0; j < d; j++ {
			pub[i*d+j] = float32(0.1 * s.NormFloat64())
		}
	}
	coefs := make([]float64, len(spec))
	for i := 0; i < k; i++ {
		for p, sv := range spec {
			coefs[p] = sv * s.NormFloat64()
		}
		for j := 0; j < d; j++ {
			var v float64
			for p := range spec {
				v += coefs[p] * vb.At(p, j)
			}
			pub[i*d+j] += float32(v)
		}
	}
	sizes := []int{2, 3}
	// The slice API (chunk 0), and the streamed one with chunks that do and
	// do not divide k, from a source that writes into its own buffer.
	for _, chunk := range []int{0, 1, 7, 60} {
		b := principalFrom(t, pub, k, d, chunk, sizes)
		checkCaptured(t, pub, k, d, sizes, b, chunk)
	}
	if _, err := PrincipalBasis(pub, k, d, []int{61}, 1, s); err == nil {
		t.Error("rank above the number of public samples accepted")
	}
}

// principalFrom runs PrincipalBasis (chunk 0) or PrincipalBasisFrom with a
// copying source, checking that no call asks for more than chunk rows.
func principalFrom(t *testing.T, pub []float32, k, d, chunk int, sizes []int) *Basis {
	t.Helper()
	if chunk == 0 {
		b, err := PrincipalBasis(pub, k, d, sizes, 10, rng.New(8))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	buf := make([]float32, chunk*d)
	src := func(lo, hi int) ([]float32, error) {
		if hi-lo > chunk || lo < 0 || hi > k {
			t.Fatalf("rows [%d, %d) asked in chunks of %d", lo, hi, chunk)
		}
		copy(buf, pub[lo*d:hi*d])
		return buf[:(hi-lo)*d], nil
	}
	b, err := PrincipalBasisFrom(src, k, d, chunk, sizes, 10, rng.New(8))
	if err != nil {
		t.Fatal(err)
	}
	if c1, err := AllocateBudgets(pub, k, b, 1); err != nil {
		t.Fatal(err)
	} else if c2, err := AllocateBudgetsFrom(src, k, chunk, b, 1); err != nil {
		t.Fatal(err)
	} else {
		for j := range c1 {
			if math.Abs(c1[j]-c2[j]) > 1e-12 {
				t.Errorf("chunk %d: budget %d = %v streamed, %v from the matrix", chunk, j, c2[j], c1[j])
			}
		}
	}
	return b
}

// checkCaptured checks that the blocks of b capture the optimal energy of
// the top singular directions of pub (to 0.1%).
func checkCaptured(t *testing.T, pub []float32, k, d int, sizes []int, b *Basis, chunk int) {
	t.Helper()
	y := mat.NewDense(k, d, nil)
	for i, v := range pub {
		y.RawMatrix().Data[i] = float64(v)
	}
	var svd mat.SVD
	if !svd.Factorize(y, mat.SVDThin) {
		t.Fatal("svd failed")
	}
	sv := svd.Values(nil)
	cum := 0
	var captured float64
	for j, r := range sizes {
		cum += r
		var z mat.Dense
		z.Mul(y, b.Block(j).T())
		captured += mat.Norm(&z, 2) * mat.Norm(&z, 2) // Frobenius²
		var best float64
		for _, v := range sv[:cum] {
			best += v * v
		}
		ratio := captured / best
		t.Logf("chunk %d, after %d blocks (rank %d): captured energy %.6g of optimal %.6g (%.5f)", chunk, j+1, cum, captured, best, ratio)
		if ratio < 0.999 || ratio > 1+1e-9 {
			t.Errorf("chunk %d, rank %d: captured %.6f of the optimal energy", chunk, cum, ratio)
		}
	}
}

func TestAllocateBudgets(t *testing.T) {
	// Basis {e1}; public gradients with |g·e1| = 3, residual norm 4 (and
	// 1 and 0): mean norms 2 and 2 → equal split c/√2 each.
	const d = 3
	e1 := mat.NewDense(1, d, []float64{1, 0, 0})
	b, _ := NewBasis(d, []*mat.Dense{e1}, 0)
	pub := []float32{3, 4, 0, 1, 0, 0}
	c, err := AllocateBudgets(pub, 2, b, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := 2 / math.Sqrt2
	if math.Abs(c[0]-want) > 1e-12 || math.Abs(c[1]-want) > 1e-12 {
		t.Errorf("budgets %v, want [%v %v]", c, want, want)
	}
	if _, err := AllocateBudgets([]float32{0, 0, 0}, 1, b, 1); err == nil {
		t.Error("zero public gradients accepted")
	}
}

// TestSubspaceClippingBias measures the clipping bias that subspace clipping
// causes (docs/twice-sampling.md#subspace-clipping): relative bias
// ‖E[decode(clip(g))] − E[g]‖/‖E[g]‖ over per-sample gradients with a dominant
// low-rank part, for flat L2 at the global budget c and for hybrid subspace
// clipping (basis and per-block budgets from separate public gradients of the
// same distribution) with the default d0 (no L∞ bound on principal blocks, 100
// on the residual) and with d0 = 100 in every block. Clamping the dense,
// high-energy principal coefficients must cost more bias than the default.
func TestSubspaceClippingBias(t *testing.T) {
	const d, r, b, k = 400, 8, 256, 200
	s := rng.New(21)
	dirs := randomBasis(t, d, []int{r}, 22).Block(0) // r × d
	signal := make([]float64, r)
	for p := range signal {
		signal[p] = 3 / float64(p+1)
	}
	draw := func(n int) []float32 {
		g := make([]float32, n*d)
		for i := 0; i < n; i++ {
			row := g[i*d : (i+1)*d]
			for j := range row {
				row[j] = float32(0.3 / math.Sqrt(d) * s.NormFloat64())
			}
			for p := 0; p < r; p++ {
				z := signal[p] * (1 + s.NormFloat64())
				for j := range row {
					row[j] += float32(z * dirs.At(p, j))
				}
			}
		}
		return g
	}
	pub, priv := draw(k), draw(b)
	ns := make([]float64, b)
	for i := range ns {
		ns[i] = norm(priv[i*d : (i+1)*d])
	}
	c := slices.Sorted(slices.Values(ns))[b/2] // clip at the median norm
	basis, err := PrincipalBasis(pub, k, d, []int{4, 4}, 5, rng.New(23))
	if err != nil {
		t.Fatal(err)
	}
	budgets, err := AllocateBudgets(pub, k, basis, c)
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float64, d)
	for i := 0; i < b; i++ {
		for j, v := range priv[i*d : (i+1)*d] {
			mean[j] += float64(v) / b
		}
	}
	bias := func(c Clipper) float64 {
		sum := make([]float32, c.OutDim())
		c.ClipSum(slices.Clone(priv), b, nil, sum)
		got := sum
		if sub, ok := c.(*Subspace); ok {
			got = make([]float32, d)
			sub.Decode(got, sum)
		}
		var e, m float64
		for j := range mean {
			x := float64(got[j])/b - mean[j]
			e += x * x
			m += mean[j] * mean[j]
		}
		return math.Sqrt(e / m)
	}
	l2, _ := NewL2(c, d, nil)
	def, err := NewSubspace(basis, budgets, DefaultD0(2))
	if err != nil {
		t.Fatal(err)
	}
	all, err := NewSubspace(basis, budgets, []float64{100, 100, 100})
	if err != nil {
		t.Fatal(err)
	}
	bL2, bDef, bAll := bias(l2), bias(def), bias(all)
	t.Logf("relative clipping bias at c = %.3f (median norm), budgets %.3f: flat L2 %.4f, subspace default d0 %.4f, subspace d0 = 100 everywhere %.4f",
		c, budgets, bL2, bDef, bAll)
	if !(bDef < bAll) {
		t.Errorf("default d0 bias %.4f not below d0 = 100 in every block (%.4f)", bDef, bAll)
	}
	if !(bL2 > 0.01) || !(bDef > 0) {
		t.Errorf("biases %.4f (L2), %.4f (subspace): clipping at the median norm must bias", bL2, bDef)
	}
}
