package trainer

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/models"
)

// Augment against the definition: reflect padding by 4, crop at (dy, dx),
// optional mirror, on a 2×5×6 image of distinct values.
func TestAugment(t *testing.T) {
	const c, h, w = 2, 5, 6
	src := make([]float32, c*h*w)
	for i := range src {
		src[i] = float32(i)
	}
	at := func(ch, y, x int) float32 { return src[ch*h*w+y*w+x] }
	refl := func(u, n int) int { // brute force: index into the padded row
		pad := make([]int, 0, n+2*AugPad)
		for k := AugPad; k >= 1; k-- {
			pad = append(pad, k)
		}
		for k := 0; k < n; k++ {
			pad = append(pad, k)
		}
		for k := n - 2; k >= n-1-AugPad; k-- {
			pad = append(pad, k)
		}
		return pad[u+AugPad]
	}
	dst := make([]float32, len(src))
	for dy := 0; dy <= 2*AugPad; dy++ {
		for dx := 0; dx <= 2*AugPad; dx++ {
			for _, flip := range []bool{false, true} {
				Augment(dst, src, c, h, w, dy, dx, flip)
				for ch := range c {
					for y := range h {
						for x := range w {
							xx := x
							if flip {
								xx = w - 1 - x
							}
							want := at(ch, refl(y+dy-AugPad, h), refl(xx+dx-AugPad, w))
							if got := dst[ch*h*w+y*w+x]; got != want {
								t.Fatalf("dy=%d dx=%d flip=%v (%d,%d,%d): %v, want %v", dy, dx, flip, ch, y, x, got, want)
							}
						}
					}
				}
			}
		}
	}
	Augment(dst, src, c, h, w, AugPad, AugPad, false)
	if !slices.Equal(dst, src) {
		t.Fatal("centred crop without flip is not the identity")
	}
}

func TestMeanGroups(t *testing.T) {
	g := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // 6 rows of 2, b=2, k=3
	MeanGroups(g, 2, 3, 2)
	if want := []float32{3, 4, 9, 10}; !slices.Equal(g[:4], want) {
		t.Fatalf("got %v, want %v", g[:4], want)
	}
}

// Per-example sensitivity stays C: one example's contribution to the
// clipped sum (the sum with it minus the sum without it, the same
// augmentation draws for the others) is the clip of the mean of its K
// copies' gradients, recomputed here from the model directly, and its norm
// is at most C (and reaches C: the clip is active, the bound is tight).
func TestAugmultSensitivity(t *testing.T) {
	c := small(t)
	c.Dataset, c.Model, c.Hidden, c.TrainLimit, c.TestLimit = "embedded", "mlp", []int{8}, 64, 16
	c.Augmult, c.MaxPhysicalBatch, c.ClipNorm, c.BatchSize = 4, 16, 0.05, 16
	c.Noise = NoiseContinuous
	s := &state{cfg: c}
	if err := s.setup(); err != nil {
		t.Fatal(err)
	}
	ag, aug := s.grad.(augmultGradients)
	if !aug {
		t.Fatal("augmult did not take the materialised path")
	}
	d, in, k := s.model.NumParams(), s.model.InputSize(), c.Augmult
	with, without := make([]float32, d), make([]float32, d)
	idx := []int{3, 10, 41, 7}
	var st stepStats
	ag.aug.startStep(5)
	if err := ag.chunk(idx, with, &st); err != nil {
		t.Fatal(err)
	}
	ag.aug.startStep(5)
	if err := ag.chunk(idx[:3], without, &st); err != nil {
		t.Fatal(err)
	}
	diff := make([]float32, d)
	for j := range diff {
		diff[j] = with[j] - without[j]
	}
	if n := math.Sqrt(clip.SumSquares(diff)); n > c.ClipNorm*(1+1e-4) || n < 0.99*c.ClipNorm {
		t.Fatalf("one example's contribution has norm %v, want C = %v", n, c.ClipNorm)
	}
	// Oracle: the same draws (keyed by step and example index, not by the
	// position in the chunk), per-copy gradients, mean, clip.
	ag.aug.startStep(5)
	x := make([]float32, 4*k*in)
	y := make([]int, 4*k)
	src := make([]float32, 4*in)
	ys := make([]int, 4)
	s.data.train.Gather(idx, src, ys)
	ag.aug.expand(x, src, idx, ys, 4, y)
	// Example idx[3] alone (as another rank, or another chunk split, would
	// process it) gets the same copies as in the chunk of four.
	alone, ya := make([]float32, k*in), make([]int, k)
	ag.aug.expand(alone, src[3*in:4*in], idx[3:4], ys[3:4], 1, ya)
	for j, v := range alone {
		if v != x[3*k*in+j] {
			t.Fatalf("example %d's augmented copies depend on its place in the chunk (value %d: %v vs %v)", idx[3], j, v, x[3*k*in+j])
		}
	}
	g := make([]float32, k*d)
	if err := s.model.PerSampleGrads(models.Batch{X: x[3*k*in:], Y: y[3*k:], N: k}, g, make([]float32, k)); err != nil {
		t.Fatal(err)
	}
	mean := make([]float32, d)
	for j := range k {
		for t, v := range g[j*d : (j+1)*d] {
			mean[t] += v / float32(k)
		}
	}
	s.clipper.Clip(mean, mean)
	for j := range d {
		if math.Abs(float64(mean[j]-diff[j])) > 1e-5 {
			t.Fatalf("coordinate %d: contribution %v, clipped mean of the copies %v", j, diff[j], mean[j])
		}
	}
}

// A run with augmult is accounted as the run without it: same σ, ε and
// sensitivity.
func TestAugmultRunAccount(t *testing.T) {
	base := small(t)
	base.Dataset, base.Model, base.Hidden, base.TrainLimit, base.TestLimit = "embedded", "logreg", nil, 400, 100
	base.BatchSize, base.Steps, base.Sigma, base.Epsilon = 40, 4, 0, 4
	plain := run(t, base, Options{})
	a := base
	a.OutDir, a.Augmult = t.TempDir(), 3
	aug := run(t, a, Options{})
	if aug.Sigma != plain.Sigma || aug.Best.Epsilon != plain.Best.Epsilon || aug.Sensitivity != plain.Sensitivity {
		t.Fatalf("augmult: σ %v ε %v Δ %v; without: %v %v %v", aug.Sigma, aug.Best.Epsilon, aug.Sensitivity, plain.Sigma, plain.Best.Epsilon, plain.Sensitivity)
	}
	bad := base
	bad.Dataset, bad.Model, bad.Augmult = "synthetic", "mlp", 2
	if _, err := Run(t.Context(), bad, Options{}); err == nil {
		t.Fatal("augmult on non-image data accepted")
	}
}

// weight_std builds the weight-standardised ResNet (the ResNets only).
func TestWeightStdModel(t *testing.T) {
	c := small(t)
	c.WeightStd = true
	s := &state{cfg: c}
	if err := s.setup(); err == nil || !strings.Contains(err.Error(), "ResNets only") {
		t.Fatalf("weight_std on an MLP: %v", err)
	}
}

// The keyed draws cover every crop offset and flip about equally, and
// change with the step, the example and the copy.
func TestAugmentDraws(t *testing.T) {
	a, err := newAugmenter(3, []int{1, 8, 8}, 7)
	if err != nil {
		t.Fatal(err)
	}
	a.startStep(1)
	const span = 2*AugPad + 1
	count := map[[3]int]int{}
	const n = 54000
	for i := range n {
		dy, dx, flip := a.draw(i/3, i%3)
		f := 0
		if flip {
			f = 1
		}
		count[[3]int{dy, dx, f}]++
	}
	want := float64(n) / (span * span * 2)
	if len(count) != span*span*2 {
		t.Fatalf("%d distinct (dy, dx, flip), want %d", len(count), span*span*2)
	}
	for k, c := range count {
		if math.Abs(float64(c)-want) > 5*math.Sqrt(want) {
			t.Errorf("draw %v: %d times, want about %.0f", k, c, want)
		}
	}
	dy, dx, f := a.draw(5, 0)
	a.startStep(2)
	if dy2, dx2, f2 := a.draw(5, 0); dy2 == dy && dx2 == dx && f2 == f {
		if dy3, dx3, f3 := a.draw(6, 0); dy3 == dy && dx3 == dx && f3 == f {
			t.Errorf("draws do not change with the step and the example")
		}
	}
}
