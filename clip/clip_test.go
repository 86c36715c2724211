package clip

import (
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// rows returns b random rows of length d whose L2 norms span 0 (row 0 is
// zero) to about 40× spread, so some are inside and some outside a clip.
func rows(b, d int, seed uint64) []float32 {
	s := rng.New(seed)
	g := make([]float32, b*d)
	for i := 1; i < b; i++ {
		sc := math.Exp(s.Float64()*4-2) / math.Sqrt(float64(d))
		for j := 0; j < d; j++ {
			g[i*d+j] = float32(sc * s.NormFloat64())
		}
	}
	return g
}

func norm(v []float32) float64 { return math.Sqrt(SumSquares(v)) }

var testGroups = []models.Group{{Name: "w1", Offset: 0, Len: 20}, {Name: "b1", Offset: 20, Len: 4}, {Name: "w2", Offset: 24, Len: 13}}

const testD = 37

// checkScaled asserts out = s·g for a single s ∈ (0,1], with s = 1 exactly
// (out bitwise equal to g) when ‖g‖ ≤ c and ‖out‖ = c otherwise.
func checkScaled(t *testing.T, what string, out, g []float32, c float64) {
	t.Helper()
	n := norm(g)
	if n <= c {
		if !slices.Equal(out, g) {
			t.Errorf("%s: vector inside the ball (‖g‖=%.4g ≤ %.4g) was changed", what, n, c)
		}
		return
	}
	if m := norm(out); m > c*(1+1e-6) || m < c*(1-1e-6) {
		t.Errorf("%s: clipped norm %.9g, want %.9g", what, m, c)
	}
	s := c / n
	for j := range g {
		if math.Abs(float64(out[j])-s*float64(g[j])) > 1e-6*math.Abs(float64(g[j]))+1e-12 {
			t.Fatalf("%s: coordinate %d = %v, want %v·%v (direction changed)", what, j, out[j], s, g[j])
		}
	}
}

func TestL2Clip(t *testing.T) {
	const b, c = 40, 1.0
	g := rows(b, testD, 1)
	l, err := NewL2(c, testD, testGroups)
	if err != nil {
		t.Fatal(err)
	}
	in, outN := 0, 0
	out := make([]float32, testD)
	for i := 0; i < b; i++ {
		row := g[i*testD : (i+1)*testD]
		if norm(row) <= c {
			in++
		} else {
			outN++
		}
		l.Clip(out, row)
		checkScaled(t, "L2", out, row, c)
	}
	if in < 5 || outN < 5 {
		t.Fatalf("test data has %d inside and %d outside; want both", in, outN)
	}
}

func TestPerLayerClip(t *testing.T) {
	const b, c = 40, 1.5
	g := rows(b, testD, 2)
	w := []float64{1, 2, 5}
	p, err := NewPerLayer(c, testD, testGroups, w)
	if err != nil {
		t.Fatal(err)
	}
	// C_k = c·√(w_k/Σw), by hand: Σw = 8.
	wantC := []float64{c * math.Sqrt(1.0/8), c * math.Sqrt(2.0/8), c * math.Sqrt(5.0/8)}
	for k, ck := range p.Norms() {
		if math.Abs(ck-wantC[k]) > 1e-15 {
			t.Errorf("C_%d = %v, want %v", k, ck, wantC[k])
		}
	}
	if s := p.Sensitivity().L2; math.Abs(s-c) > 1e-12 {
		t.Errorf("per-layer L2 sensitivity %v, want the total budget %v", s, c)
	}
	out := make([]float32, testD)
	for i := 0; i < b; i++ {
		row := g[i*testD : (i+1)*testD]
		p.Clip(out, row)
		for k, gr := range testGroups {
			seg := func(v []float32) []float32 { return v[gr.Offset : gr.Offset+gr.Len] }
			checkScaled(t, "per-layer "+gr.Name, seg(out), seg(row), wantC[k])
		}
		if norm(out) > c*(1+1e-6) {
			t.Errorf("per-layer total norm %v > %v", norm(out), c)
		}
	}
	// Size weights: C_k² ∝ Len_k.
	ps, _ := NewPerLayer(c, testD, testGroups, GroupSizeWeights(testGroups))
	for k, ck := range ps.Norms() {
		want := c * math.Sqrt(float64(testGroups[k].Len)/testD)
		if math.Abs(ck-want) > 1e-15 {
			t.Errorf("size-weighted C_%d = %v, want %v", k, ck, want)
		}
	}
}

func TestLInfAndHybridClip(t *testing.T) {
	const b = 40
	g := rows(b, testD, 3)
	const cinf = 0.12
	li, _ := NewLInf(cinf, testD)
	const c2, d0 = 1.0, 16.0
	h, _ := NewL2LInf(c2, d0, testD)
	if h.CInf() != 0.25 {
		t.Fatalf("c∞ = c2/√d0 = %v, want 0.25", h.CInf())
	}
	out := make([]float32, testD)
	clamped, inside := 0, 0
	for i := 0; i < b; i++ {
		row := g[i*testD : (i+1)*testD]
		li.Clip(out, row)
		for j, v := range row {
			want := v
			if math.Abs(float64(v)) > cinf {
				want = float32(math.Copysign(cinf, float64(v)))
				clamped++
			}
			if math.Abs(float64(out[j]-want)) > 1e-7 || math.Abs(float64(out[j])) > cinf {
				t.Fatalf("L∞ coord %d: %v → %v, want %v", j, v, out[j], want)
			}
			if math.Abs(float64(v)) <= cinf && out[j] != v {
				t.Fatalf("L∞ changed an inside coordinate %v → %v", v, out[j])
			}
		}
		// Hybrid: L2 first (brute force in float64), then the clamp.
		h.Clip(out, row)
		n := norm(row)
		for j, v := range row {
			x := float64(v)
			if n > c2 {
				x *= c2 / n
			}
			x = math.Max(-0.25, math.Min(0.25, x))
			if math.Abs(float64(out[j])-x) > 1e-6 {
				t.Fatalf("hybrid coord %d: got %v, want %v", j, out[j], x)
			}
		}
		if norm(out) > c2*(1+1e-6) {
			t.Errorf("hybrid norm %v > c2", norm(out))
		}
		// A vector inside both bounds is returned bit for bit.
		if n <= c2 && slices.IndexFunc(row, func(v float32) bool { return math.Abs(float64(v)) > 0.25 }) < 0 {
			inside++
			if !slices.Equal(out, row) {
				t.Errorf("hybrid changed row %d, which is inside both bounds", i)
			}
		}
	}
	if clamped == 0 || inside == 0 {
		t.Fatalf("test data: %d coordinates clamped, %d rows inside both hybrid bounds; want both > 0", clamped, inside)
	}
}

func TestSensitivities(t *testing.T) {
	l2, _ := NewL2(2, 100, nil)
	li, _ := NewLInf(0.1, 100)
	h, _ := NewL2LInf(2, 100, 100)  // c∞ = 0.2, √d·c∞ = 2 = c2
	h2, _ := NewL2LInf(2, 400, 100) // c∞ = 0.1, √d·c∞ = 1 < c2
	for _, tc := range []struct {
		name       string
		got        Sensitivity
		l2, linf   float64
		blockD0    float64
		blockCount int
	}{
		{"L2", l2.Sensitivity(), 2, 2, 1, 1},
		{"LInf", li.Sensitivity(), 1, 0.1, 100, 1},
		{"L2LInf d0=100", h.Sensitivity(), 2, 0.2, 100, 1},
		{"L2LInf d0=400", h2.Sensitivity(), 1, 0.1, 400, 1}, // d0 > Dim: L2 sensitivity √D·c∞
	} {
		if math.Abs(tc.got.L2-tc.l2) > 1e-12 || math.Abs(tc.got.LInf-tc.linf) > 1e-12 {
			t.Errorf("%s: L2 %v L∞ %v, want %v %v", tc.name, tc.got.L2, tc.got.LInf, tc.l2, tc.linf)
		}
		if len(tc.got.Blocks) != tc.blockCount || tc.got.Blocks[0].D0 != tc.blockD0 {
			t.Errorf("%s: blocks %+v, want d0 %v", tc.name, tc.got.Blocks, tc.blockD0)
		}
	}
}

// bruteSum is Σ_i mask_i ⊙ Clip(g_i) in float64, from Clip alone.
func bruteSum(c Clipper, g []float32, b int, masks []*sampler.Mask) []float64 {
	d, o := c.InDim(), c.OutDim()
	sum := make([]float64, o)
	out := make([]float32, o)
	for i := 0; i < b; i++ {
		c.Clip(out, slices.Clone(g[i*d:(i+1)*d]))
		for j, v := range out {
			if masks == nil || masks[i].Has(j) {
				sum[j] += float64(v)
			}
		}
	}
	return sum
}

func testClippers(t *testing.T) map[string]Clipper {
	t.Helper()
	l2, _ := NewL2(1, testD, testGroups)
	pl, _ := NewPerLayer(1, testD, testGroups, nil)
	li, _ := NewLInf(0.1, testD)
	h, _ := NewL2LInf(1, 9, testD)
	basis := randomBasis(t, testD, []int{3, 5}, 11)
	ss, err := NewSubspace(basis, []float64{0.8, 0.5, 0.4}, []float64{0, 2, 25})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Clipper{"L2": l2, "PerLayer": pl, "LInf": li, "L2LInf": h, "Subspace": ss}
}

func TestClipSumMatchesClip(t *testing.T) {
	const b = 30
	g := rows(b, testD, 4)
	for name, c := range testClippers(t) {
		for _, masked := range []bool{false, true} {
			var masks []*sampler.Mask
			if masked {
				tw, _ := sampler.NewTwice(10, c.OutDim(), 1, 0.4, rng.New(5))
				for i := 0; i < b; i++ {
					m := sampler.NewMask(c.OutDim())
					tw.FillMask(m)
					masks = append(masks, m)
				}
			}
			want := bruteSum(c, g, b, masks)
			sum := make([]float32, c.OutDim())
			st := c.ClipSum(slices.Clone(g), b, masks, sum)
			for j := range sum {
				if math.Abs(float64(sum[j])-want[j]) > 1e-5 {
					t.Fatalf("%s masked=%v: sum[%d] = %v, brute force %v", name, masked, j, sum[j], want[j])
				}
			}
			if st.Clipped == 0 || st.Clipped > b*len(testGroups) || st.NonFinite != 0 {
				t.Errorf("%s: stats %+v", name, st)
			}
		}
	}
}

func TestNonFiniteDropped(t *testing.T) {
	g := rows(4, testD, 6)
	g[testD+3] = float32(math.NaN())
	g[2*testD+7] = float32(math.Inf(-1))
	for name, c := range testClippers(t) {
		ref := slices.Clone(g)
		copy(ref[testD:3*testD], make([]float32, 2*testD))
		want := make([]float32, c.OutDim())
		c.ClipSum(ref, 4, nil, want)
		sum := make([]float32, c.OutDim())
		st := c.ClipSum(slices.Clone(g), 4, nil, sum)
		if st.NonFinite != 2 || !slices.Equal(sum, want) {
			t.Errorf("%s: non-finite rows not dropped: stats %+v", name, st)
		}
	}
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	const b = 8
	g := rows(b, testD, 7)
	for name, c := range testClippers(t) {
		sum := make([]float32, c.OutDim())
		if a := testing.AllocsPerRun(10, func() { c.ClipSum(g, b, nil, sum) }); a != 0 {
			t.Errorf("%s ClipSum: %v allocations", name, a)
		}
		if nc, ok := c.(NormClipper); ok {
			ns := make([]float64, b*len(testGroups))
			sc := make([]float32, b*len(testGroups))
			if a := testing.AllocsPerRun(10, func() { nc.Scales(ns, b, sc) }); a != 0 {
				t.Errorf("%s Scales: %v allocations", name, a)
			}
		}
	}
	noise, _ := NewBlockGaussian([]int{10, 27}, []float64{1, 2})
	s := rng.New(1)
	v := make([]float32, 37)
	if a := testing.AllocsPerRun(10, func() { noise.Add(v, s) }); a != 0 {
		t.Errorf("noise Add: %v allocations", a)
	}
}

func TestBadParameters(t *testing.T) {
	for name, err := range map[string]error{
		"L2 c=0":          func() error { _, e := NewL2(0, 3, nil); return e }(),
		"L2 c=NaN":        func() error { _, e := NewL2(math.NaN(), 3, nil); return e }(),
		"L2 groups gap":   func() error { _, e := NewL2(1, 5, []models.Group{{Offset: 0, Len: 2}, {Offset: 3, Len: 2}}); return e }(),
		"L2 groups short": func() error { _, e := NewL2(1, 5, []models.Group{{Offset: 0, Len: 2}}); return e }(),
		"per-layer w<0":   func() error { _, e := NewPerLayer(1, testD, testGroups, []float64{1, -1, 1}); return e }(),
		"per-layer len":   func() error { _, e := NewPerLayer(1, testD, testGroups, []float64{1}); return e }(),
		"LInf c=-1":       func() error { _, e := NewLInf(-1, 3); return e }(),
		"hybrid d0<1":     func() error { _, e := NewL2LInf(1, 0.5, 3); return e }(),
		"noise var 0":     func() error { _, e := NewBlockGaussian([]int{3}, []float64{0}); return e }(),
		"noise sizes":     func() error { _, e := NewBlockGaussian([]int{3, 2}, []float64{1}); return e }(),
		"iso z=0":         func() error { l, _ := NewL2(1, 3, nil); _, e := IsotropicFor(l, 0); return e }(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMaxAbs(t *testing.T) {
	for _, tc := range []struct {
		row  []float32
		want float32
	}{
		{[]float32{0}, 0}, {[]float32{-3, 2}, 3}, {[]float32{1, 2, 3, -4, 5, -6, 0.5}, 6},
		{[]float32{-0, 1e-30, -1e-38}, 1e-30}, {[]float32{3.4e38, -3.4e38, 1}, 3.4e38},
	} {
		if got := maxAbs(tc.row); got != tc.want {
			t.Errorf("maxAbs(%v) = %v, want %v", tc.row, got, tc.want)
		}
	}
}

// sumSquaresMaxAbs returns SumSquares' bits and maxAbs' value.
func TestSumSquaresMaxAbs(t *testing.T) {
	s := rng.New(9)
	for _, n := range []int{1, 3, 4, 7, 1001} {
		row := make([]float32, n)
		s.FillNormal(row, 3)
		ss, top := sumSquaresMaxAbs(row)
		if ss != SumSquares(row) || top != maxAbs(row) {
			t.Errorf("n=%d: (%v, %v), want (%v, %v)", n, ss, top, SumSquares(row), maxAbs(row))
		}
	}
}
