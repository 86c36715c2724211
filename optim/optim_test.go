package optim

import (
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

func near(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.9g, want %.9g", what, i, got[i], want[i])
		}
	}
}

func TestSGDByHand(t *testing.T) {
	sums := [][]float32{{0.4, -0.8}, {1.2, 0.2}}
	// g1 = sum1/2 = (0.2, −0.4), g2 = (0.6, 0.1); w0 = (1, −2), η = 0.5.
	for _, tc := range []struct {
		name string
		cfg  SGDConfig
		want [][]float64
	}{
		// w1 = w0 − 0.5 g1 = (0.9, −1.8); w2 = w1 − 0.5 g2 = (0.6, −1.85).
		{"plain", SGDConfig{LR: Constant(0.5)}, [][]float64{{0.9, -1.8}, {0.6, -1.85}}},
		// v1 = g1, w1 = (0.9, −1.8); v2 = 0.9 v1 + g2 = (0.78, −0.26), w2 = w1 − 0.5 v2 = (0.51, −1.67).
		{"momentum", SGDConfig{LR: Constant(0.5), Momentum: 0.9}, [][]float64{{0.9, -1.8}, {0.51, -1.67}}},
		// Nesterov: step uses g + μv: step1 g1 + 0.9 g1 = 1.9 g1 = (0.38, −0.76) → w1 = (0.81, −1.62);
		// v2 = (0.78, −0.26), g2 + 0.9 v2 = (1.302, −0.134) → w2 = (0.159, −1.553).
		{"nesterov", SGDConfig{LR: Constant(0.5), Momentum: 0.9, Nesterov: true}, [][]float64{{0.81, -1.62}, {0.159, -1.553}}},
		// Coupled decay 0.1: g1 + 0.1 w0 = (0.3, −0.6) → w1 = (0.85, −1.7);
		// g2 + 0.1 w1 = (0.685, −0.07) → w2 = (0.5075, −1.665).
		{"weight decay", SGDConfig{LR: Constant(0.5), WeightDecay: 0.1}, [][]float64{{0.85, -1.7}, {0.5075, -1.665}}},
		// Shrink λ = 0.1: w1 = 0.9 w0 − 0.5 g1 = (0.8, −1.6); w2 = 0.9 w1 − 0.5 g2 = (0.42, −1.49).
		{"shrink", SGDConfig{LR: Constant(0.5), Shrink: 0.1}, [][]float64{{0.8, -1.6}, {0.42, -1.49}}},
		// Step decay 0.5 every step: η0 = 0.5, η1 = 0.25: w2 = w1 − 0.25 g2 = (0.75, −1.825).
		{"step decay", SGDConfig{LR: StepDecay{Base: 0.5, Gamma: 0.5, Every: 1}}, [][]float64{{0.9, -1.8}, {0.75, -1.825}}},
	} {
		o, err := NewSGD(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		w := []float32{1, -2}
		for s, sum := range sums {
			if err := o.Step(w, sum, 2); err != nil {
				t.Fatal(err)
			}
			near(t, tc.name, w, tc.want[s], 1e-6)
		}
		if o.Steps() != 2 {
			t.Errorf("%s: Steps() = %d", tc.name, o.Steps())
		}
	}
}

func TestAdamByHand(t *testing.T) {
	// w0 = (0.5, −1, 2), η = 0.01, β = (0.9, 0.999), ε = 1e-8, expected batch 2.
	// Step 1, g = (0.1, −0.2, 0): m̂ = g, v̂ = g², so w1 = w0 − η·g/(|g|+ε):
	//   (0.5 − 0.01·0.1/(0.1+1e-8), −1 + 0.01·0.2/(0.2+1e-8), 2) = (0.49000000100, −0.99000000050, 2).
	// Step 2, g = (−0.3, 0.1, 0.4): coordinate 0: m = 0.9·0.01 − 0.03 = −0.021, m̂ = −0.021/0.19;
	//   v = 0.999·1e-5 + 0.001·0.09 = 9.999e-5, v̂ = v/0.001999; w2 = w1 − 0.01·m̂/(√v̂+ε) = 0.494941899.
	//   Likewise −0.987336630 and 1.992558632.
	o, err := NewAdam(AdamConfig{LR: Constant(0.01)})
	if err != nil {
		t.Fatal(err)
	}
	w := []float32{0.5, -1, 2}
	_ = o.Step(w, []float32{0.2, -0.4, 0}, 2)
	near(t, "adam step 1", w, []float64{0.4900000009999999, -0.9900000004999999, 2}, 1e-7)
	_ = o.Step(w, []float32{-0.6, 0.2, 0.8}, 2)
	near(t, "adam step 2", w, []float64{0.49494189911200653, -0.9873366302718676, 1.9925586320273565}, 1e-7)

	// AdamW decoupled decay 0.5 with a zero gradient: w1 = w0 − η·wd·w0.
	ow, _ := NewAdam(AdamConfig{LR: Constant(0.1), WeightDecay: 0.5, Decoupled: true})
	w = []float32{2, -4}
	_ = ow.Step(w, []float32{0, 0}, 1)
	near(t, "adamw", w, []float64{1.9, -3.8}, 1e-7)
}

func TestSchedules(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Schedule
		t    int
		want float64
	}{
		{"constant", Constant(0.3), 1000, 0.3},
		{"step t=9", StepDecay{Base: 1, Gamma: 0.1, Every: 10}, 9, 1},
		{"step t=10", StepDecay{Base: 1, Gamma: 0.1, Every: 10}, 10, 0.1},
		{"step t=25", StepDecay{Base: 1, Gamma: 0.1, Every: 10}, 25, 0.01},
		{"cosine t=0", Cosine{Base: 1, Min: 0.2, Total: 100}, 0, 1},
		{"cosine half", Cosine{Base: 1, Min: 0.2, Total: 100}, 50, 0.6},
		{"cosine quarter", Cosine{Base: 1, Min: 0, Total: 100}, 25, (1 + math.Sqrt2/2) / 2},
		{"cosine end", Cosine{Base: 1, Min: 0.2, Total: 100}, 100, 0.2},
		{"cosine after", Cosine{Base: 1, Min: 0.2, Total: 100}, 500, 0.2},
		{"warmup t=0", Warmup{Steps: 4, Then: Constant(0.8)}, 0, 0.2},
		{"warmup t=2", Warmup{Steps: 4, Then: Constant(0.8)}, 2, 0.6},
		{"warmup t=3", Warmup{Steps: 4, Then: Constant(0.8)}, 3, 0.8},
		{"warmup+cosine", Warmup{Steps: 10, Then: Cosine{Base: 1, Total: 20}}, 4, 0.5 * (1 + math.Cos(math.Pi*4/20)) / 2},
	} {
		if got := tc.s.LR(tc.t); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: LR(%d) = %v, want %v", tc.name, tc.t, got, tc.want)
		}
	}
	for name, s := range map[string]Schedule{
		"nil": nil, "negative": Constant(-1), "NaN": Constant(math.NaN()),
		"step every 0": StepDecay{Base: 1, Gamma: 0.5}, "cosine total 0": Cosine{Base: 1},
		"warmup 0": Warmup{Then: Constant(1)},
	} {
		if err := ValidateSchedule(s, 10); err == nil {
			t.Errorf("%s schedule accepted", name)
		}
	}
}

func TestL2BallProjection(t *testing.T) {
	s := rng.New(1)
	for _, center := range [][]float32{nil, {1, -2, 0.5, 3, 0, 0, 7}} {
		ball, err := NewL2Ball(center, 1.5)
		if err != nil {
			t.Fatal(err)
		}
		if ball.Diameter() != 3 {
			t.Errorf("diameter %v, want 2R = 3", ball.Diameter())
		}
		for it := 0; it < 500; it++ {
			w := make([]float32, 7)
			sc := math.Exp(s.Float64()*6 - 3)
			for i := range w {
				w[i] = float32(sc * s.NormFloat64())
				if center != nil {
					w[i] += center[i]
				}
			}
			orig := slices.Clone(w)
			d0 := ball.dist(orig)
			moved := ball.Project(w)
			d := ball.dist(w)
			if d > 1.5 {
				t.Fatalf("projected point at distance %.17g > R", d)
			}
			if d0 <= 1.5 {
				if moved || !slices.Equal(w, orig) {
					t.Fatal("a point inside the ball was moved")
				}
				continue
			}
			if !moved || d < 1.5*(1-1e-6) {
				t.Fatalf("projection of a point at %.4g landed at %.9g, not on the sphere", d0, d)
			}
			// Same direction from the centre: w − c = (R/d0)(orig − c).
			for i := range w {
				var c float64
				if center != nil {
					c = float64(center[i])
				}
				want := c + 1.5/d0*(float64(orig[i])-c)
				if math.Abs(float64(w[i])-want) > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("coordinate %d = %v, want %v", i, w[i], want)
				}
			}
		}
	}
	if _, err := NewL2Ball(nil, 0); err == nil {
		t.Error("radius 0 accepted")
	}
}

func TestProjectionAfterStep(t *testing.T) {
	ball, _ := NewL2Ball(nil, 1)
	o, _ := NewSGD(SGDConfig{LR: Constant(1), Project: ball})
	w := []float32{0.6, 0.8}
	if err := o.Step(w, []float32{-3, 0}, 1); err != nil { // w − g = (3.6, 0.8)
		t.Fatal(err)
	}
	n := math.Hypot(float64(w[0]), float64(w[1]))
	if n > 1 || n < 1-1e-6 || w[0] <= w[1] {
		t.Errorf("after step and projection w = %v (norm %v)", w, n)
	}
}

func TestExpectedBatchAPI(t *testing.T) {
	o, _ := NewSGD(SGDConfig{LR: Constant(1)})
	w := []float32{0}
	for _, eb := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if err := o.Step(w, []float32{1}, eb); err == nil {
			t.Errorf("expected batch %v accepted", eb)
		}
	}
	if err := o.Step(w, []float32{1, 2}, 1); err == nil {
		t.Error("length mismatch accepted")
	}
	// The divisor is the expected batch as given: a sum of 3 over an
	// expected batch of 4 moves w by 0.75 whatever the realised batch was.
	if err := o.Step(w, []float32{3}, 4); err != nil || w[0] != -0.75 {
		t.Errorf("w = %v, %v; want −0.75", w, err)
	}
}

func TestBadConfigs(t *testing.T) {
	for name, err := range map[string]error{
		"momentum 1":     func() error { _, e := NewSGD(SGDConfig{LR: Constant(1), Momentum: 1}); return e }(),
		"nesterov no mu": func() error { _, e := NewSGD(SGDConfig{LR: Constant(1), Nesterov: true}); return e }(),
		"shrink 1":       func() error { _, e := NewSGD(SGDConfig{LR: Constant(1), Shrink: 1}); return e }(),
		"wd negative":    func() error { _, e := NewSGD(SGDConfig{LR: Constant(1), WeightDecay: -1}); return e }(),
		"no lr":          func() error { _, e := NewSGD(SGDConfig{}); return e }(),
		"adam beta 1":    func() error { _, e := NewAdam(AdamConfig{LR: Constant(1), Beta1: 1}); return e }(),
		"adam eps<0":     func() error { _, e := NewAdam(AdamConfig{LR: Constant(1), Eps: -1}); return e }(),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	makers := map[string]func() Optimizer{
		"sgd": func() Optimizer {
			o, _ := NewSGD(SGDConfig{LR: Cosine{Base: 0.1, Total: 10}, Momentum: 0.9, WeightDecay: 0.01})
			return o
		},
		"adam": func() Optimizer {
			o, _ := NewAdam(AdamConfig{LR: Constant(0.01), WeightDecay: 0.1, Decoupled: true})
			return o
		},
	}
	for name, mk := range makers {
		s := rng.New(2)
		grads := make([][]float32, 8)
		for i := range grads {
			grads[i] = make([]float32, 5)
			s.FillNormal(grads[i], 1)
		}
		o := mk()
		w := []float32{1, 2, 3, 4, 5}
		for _, g := range grads[:4] {
			_ = o.Step(w, g, 3)
		}
		st, err := o.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		w2 := slices.Clone(w)
		for _, g := range grads[4:] {
			_ = o.Step(w, g, 3)
		}
		r := mk()
		if err := r.UnmarshalBinary(st); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Steps() != 4 {
			t.Errorf("%s: restored Steps() = %d", name, r.Steps())
		}
		for _, g := range grads[4:] {
			_ = r.Step(w2, g, 3)
		}
		if !slices.Equal(w, w2) {
			t.Errorf("%s: resumed run differs: %v vs %v", name, w2, w)
		}
		if err := r.UnmarshalBinary(st[:len(st)-3]); err == nil {
			t.Errorf("%s: truncated state accepted", name)
		}
	}
	sgd, _ := NewSGD(SGDConfig{LR: Constant(1)})
	ad, _ := NewAdam(AdamConfig{LR: Constant(1)})
	st, _ := ad.MarshalBinary()
	if err := sgd.UnmarshalBinary(st); err == nil {
		t.Error("SGD accepted an Adam state")
	}
}

func FuzzUnmarshalState(f *testing.F) {
	o, _ := NewAdam(AdamConfig{LR: Constant(1)})
	w := []float32{1, 2}
	_ = o.Step(w, []float32{1, 1}, 1)
	st, _ := o.MarshalBinary()
	f.Add(st)
	s, _ := NewSGD(SGDConfig{LR: Constant(1), Momentum: 0.5})
	_ = s.Step(w, []float32{1, 1}, 1)
	st, _ = s.MarshalBinary()
	f.Add(st)
	f.Fuzz(func(t *testing.T, p []byte) {
		a, _ := NewAdam(AdamConfig{LR: Constant(1)})
		if a.UnmarshalBinary(p) == nil {
			_ = a.Step(make([]float32, len(a.m)), make([]float32, len(a.m)), 1)
		}
		g, _ := NewSGD(SGDConfig{LR: Constant(1), Momentum: 0.5})
		if g.UnmarshalBinary(p) == nil {
			_ = g.Step(make([]float32, len(g.vel)), make([]float32, len(g.vel)), 1)
		}
	})
}
