package nn

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// gradCheck holds a float64 network and a chunk to check.
type gradCheck struct {
	net *Network[float64]
	x   []float64
	tg  Target[float64]
	n   int
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// lossOf returns sample i's loss at the current parameters, computed on a
// chunk holding sample i alone.
func (c gradCheck) lossOf(t *testing.T, i int) float64 {
	t.Helper()
	sz := c.net.InputShape().Size()
	tg := Target[float64]{}
	if c.tg.Y != nil {
		tg.Y = c.tg.Y[i : i+1]
	}
	if c.tg.T != nil {
		tg.T = c.tg.T[i : i+1]
	}
	l, _, err := c.net.Evaluate(c.x[i*sz:(i+1)*sz], tg, 1)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// run checks per-sample gradients against central finite differences, the
// norm-only path and the scaled sum against the materialised gradients, and
// the batch gradient against their sum. It returns the materialised grads.
func (c gradCheck) run(t *testing.T) []float64 {
	t.Helper()
	net, n := c.net, c.n
	d, k := net.NumParams(), len(net.Groups())
	grads := make([]float64, n*d)
	losses := make([]float64, n)
	if err := net.PerSampleGrads(c.x, c.tg, n, grads, losses); err != nil {
		t.Fatal(err)
	}
	// Finite differences on a subset of coordinates: all when D is small,
	// otherwise each group's ends and a seeded random sample.
	coords := []int{}
	if d <= 400 {
		for j := range d {
			coords = append(coords, j)
		}
	} else {
		for _, g := range net.Groups() {
			coords = append(coords, g.Offset, g.Offset+g.Len-1, g.Offset+g.Len/2)
		}
		s := rng.New(99)
		for range 60 {
			coords = append(coords, s.IntN(d))
		}
	}
	p := net.Params()
	const h = 1e-5
	for i := range min(n, 3) {
		if l := c.lossOf(t, i); math.Abs(l-losses[i]) > 1e-12*max(1, math.Abs(l)) {
			t.Fatalf("sample %d: loss %v alone, %v in the chunk", i, l, losses[i])
		}
		gi := grads[i*d : (i+1)*d]
		scale := max(maxAbs(gi), 1e-3)
		for _, j := range coords {
			old := p[j]
			p[j] = old + h
			lp := c.lossOf(t, i)
			p[j] = old - h
			lm := c.lossOf(t, i)
			p[j] = old
			fd := (lp - lm) / (2 * h)
			if math.Abs(fd-gi[j]) > 1e-6*scale {
				t.Errorf("sample %d param %d (%s): grad %.12g, finite difference %.12g", i, j, groupOf(net, j), gi[j], fd)
			}
		}
	}
	// Norm-only path equals the materialised norms.
	norms := make([]float64, n*k)
	losses2 := make([]float64, n)
	if err := net.PerSampleNormsSq(c.x, c.tg, n, norms, losses2); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for kk, g := range net.Groups() {
			want := sumSq(grads[i*d+g.Offset : i*d+g.Offset+g.Len])
			if got := norms[i*k+kk]; math.Abs(got-want) > 1e-10*max(want, 1e-12) {
				t.Errorf("sample %d group %s: norm² %.15g, materialised %.15g", i, g.Name, got, want)
			}
		}
		if losses2[i] != losses[i] {
			t.Errorf("sample %d: loss %v vs %v", i, losses2[i], losses[i])
		}
	}
	// Scaled sum equals the materialised weighted sum.
	s := rng.New(7)
	scales := make([]float64, n*k)
	for i := range scales {
		scales[i] = s.Float64()
	}
	sum := make([]float64, d)
	for j := range sum {
		sum[j] = 0.5 // AccumulateScaled adds
	}
	if err := net.AccumulateScaled(scales, sum); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, d)
	batch := make([]float64, d)
	for j := range want {
		want[j] = 0.5
	}
	for i := range n {
		for kk, g := range net.Groups() {
			for j := g.Offset; j < g.Offset+g.Len; j++ {
				want[j] += scales[i*k+kk] * grads[i*d+j]
				batch[j] += grads[i*d+j]
			}
		}
	}
	tol := 1e-10 * max(maxAbs(want), 1)
	for j := range d {
		if math.Abs(sum[j]-want[j]) > tol {
			t.Fatalf("scaled sum[%d] (%s) = %.15g, materialised %.15g", j, groupOf(net, j), sum[j], want[j])
		}
	}
	got := make([]float64, d)
	if err := net.BatchGrad(c.x, c.tg, n, got, losses2); err != nil {
		t.Fatal(err)
	}
	for j := range d {
		if math.Abs(got[j]-batch[j]) > tol {
			t.Fatalf("batch grad[%d] = %.15g, Σ per-sample %.15g", j, got[j], batch[j])
		}
	}
	return grads
}

// independence perturbs sample j's input and checks that no other sample's
// gradient moves.
func (c gradCheck) independence(t *testing.T, j int) {
	t.Helper()
	d, sz := c.net.NumParams(), c.net.InputShape().Size()
	before := make([]float64, c.n*d)
	losses := make([]float64, c.n)
	if err := c.net.PerSampleGrads(c.x, c.tg, c.n, before, losses); err != nil {
		t.Fatal(err)
	}
	x := append([]float64(nil), c.x...)
	s := rng.New(3)
	for q := j * sz; q < (j+1)*sz; q++ {
		x[q] += s.NormFloat64()
	}
	after := make([]float64, c.n*d)
	if err := c.net.PerSampleGrads(x, c.tg, c.n, after, losses); err != nil {
		t.Fatal(err)
	}
	moved := false
	for i := range c.n {
		for q := i * d; q < (i+1)*d; q++ {
			diff := math.Abs(after[q] - before[q])
			if i == j && diff > 0 {
				moved = true
			}
			if i != j && diff > 1e-13*max(1, math.Abs(before[q])) {
				t.Fatalf("perturbing sample %d moved sample %d's gradient at %d: %v → %v", j, i, q-i*d, before[q], after[q])
			}
		}
	}
	if !moved {
		t.Fatalf("perturbing sample %d did not move its own gradient", j)
	}
}

func groupOf(net *Network[float64], j int) string {
	for _, g := range net.Groups() {
		if j >= g.Offset && j < g.Offset+g.Len {
			return g.Name
		}
	}
	return "?"
}

func randn(s *rng.Stream, n int, sd float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = sd * s.NormFloat64()
	}
	return x
}

func labels(s *rng.Stream, n, k int) []int {
	y := make([]int, n)
	for i := range y {
		y[i] = s.IntN(k)
	}
	return y
}

// agreeF32 builds the same architecture in float32 with the float64
// parameters and checks per-sample gradients agree to relative tol.
func agreeF32(t *testing.T, c gradCheck, net32 *Network[float32], tol float64) {
	t.Helper()
	for j, v := range c.net.Params() {
		net32.Params()[j] = float32(v)
	}
	x32 := make([]float32, len(c.x))
	for j, v := range c.x {
		x32[j] = float32(v)
	}
	tg := Target[float32]{Y: c.tg.Y}
	for _, v := range c.tg.T {
		tg.T = append(tg.T, float32(v))
	}
	d := c.net.NumParams()
	g64 := make([]float64, c.n*d)
	g32 := make([]float32, c.n*d)
	l64 := make([]float64, c.n)
	l32 := make([]float32, c.n)
	if err := c.net.PerSampleGrads(c.x, c.tg, c.n, g64, l64); err != nil {
		t.Fatal(err)
	}
	if err := net32.PerSampleGrads(x32, tg, c.n, g32, l32); err != nil {
		t.Fatal(err)
	}
	for i := range c.n {
		var diff, norm float64
		for q := i * d; q < (i+1)*d; q++ {
			e := float64(g32[q]) - g64[q]
			diff += e * e
			norm += g64[q] * g64[q]
		}
		if math.Sqrt(diff) > tol*math.Sqrt(norm) {
			t.Errorf("sample %d: float32 grads differ from float64 by %.3g relative", i, math.Sqrt(diff/norm))
		}
		if math.Abs(float64(l32[i])-l64[i]) > tol*max(1, math.Abs(l64[i])) {
			t.Errorf("sample %d: float32 loss %v, float64 %v", i, l32[i], l64[i])
		}
	}
}
