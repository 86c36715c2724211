package trainer

import (
	"context"
	"errors"
	"github.com/dptrain/dptrain/mechanism"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// The split z_Δ⁻² + (2σ_b)⁻² = z⁻² (Andrew et al. §3.1), its refusal when
// the count would take the whole budget, and the paper's setting (σ_b =
// m/20 with m = 256 at z = 1: z_Δ ≈ 1.000764).
func TestQuantileSigmas(t *testing.T) {
	for _, tc := range []struct{ z, sb, want float64 }{
		{1, 12.8, 1 / math.Sqrt(1-1/(4*12.8*12.8))},
		{1, 12.8, 1.000763},
		{2, 1.5, 1 / math.Sqrt(0.25-1/9.0)},
		{0.6, 0.5, 1 / math.Sqrt(1/0.36-1.0)},
	} {
		zd, err := QuantileSigmas(tc.z, tc.sb)
		if err != nil || math.Abs(zd-tc.want) > 1e-6 {
			t.Errorf("z=%g σ_b=%g: z_Δ = %v (%v), want %v", tc.z, tc.sb, zd, err, tc.want)
		}
		if got := 1/(zd*zd) + 1/(4*tc.sb*tc.sb); math.Abs(got-1/(tc.z*tc.z)) > 1e-12 {
			t.Errorf("z=%g σ_b=%g: z_Δ⁻² + (2σ_b)⁻² = %v, want %v", tc.z, tc.sb, got, 1/(tc.z*tc.z))
		}
	}
	for _, tc := range []struct{ z, sb float64 }{{1, 0.5}, {2, 0.9}, {0, 1}, {1, 0}, {math.NaN(), 1}} {
		if _, err := QuantileSigmas(tc.z, tc.sb); err == nil {
			t.Errorf("z=%g σ_b=%g accepted", tc.z, tc.sb)
		}
	}
}

// Accounting of the quantile estimate: the step releases the gradient sum
// at z_Δ (sensitivity 1 in units of C) and the centred count at σ_b
// (sensitivity ½). Without subsampling their RDP adds up to the Gaussian
// at the run's σ = z, at every order. Both are computed on the same Poisson
// batch, so with subsampling they are one subsampled Gaussian at z (what the
// run accounts), never less than the gradient's alone; composing two
// separately subsampled events would assume independent batches and
// undercount (it is below the joint value at small orders).
func TestQuantileAccountingComposes(t *testing.T) {
	orders := accountant.DefaultOrders()
	rdp := func(q, z float64) []float64 {
		t.Helper()
		v, err := accountant.PoissonGaussianRDP(nil, orders, q, z, accountant.AbsSeries)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, z := range []float64{0.8, 1.1, 2} {
		sb := 3.0
		zd, err := QuantileSigmas(z, sb)
		if err != nil {
			t.Fatal(err)
		}
		whole, grad, count := rdp(1, z), rdp(1, zd), rdp(1, 2*sb)
		for i, a := range orders {
			if math.Abs(whole[i]-(grad[i]+count[i])) > 1e-9*whole[i] {
				t.Fatalf("z=%g α=%g: RDP %v ≠ gradient %v + count %v", z, a, whole[i], grad[i], count[i])
			}
		}
		q := 0.01
		whole, grad = rdp(q, z), rdp(q, zd)
		for i, a := range orders {
			if whole[i] <= grad[i] {
				t.Fatalf("z=%g α=%g q=%g: joint RDP %v not above the gradient's %v", z, a, q, whole[i], grad[i])
			}
		}
	}
}

// The geometric update C ← C·exp(−η(b/m + ½ − γ)) for given released
// counts, and C_t's scale undone on the sum.
func TestQuantileUpdateRule(t *testing.T) {
	q := &quantileState{gamma: 0.5, eta: 0.2, m: 100, c0: 1, c: 2}
	for _, tc := range []struct{ count, frac, c float64 }{
		{0, 0.5, 2},                 // half unclipped: at the quantile
		{50, 1, 2 * math.Exp(-0.1)}, // all unclipped: shrink
		{-50, 0, 2 * math.Exp(-0.1) * math.Exp(0.1)}, // none: grow back
		{20, 0.7, 2 * math.Exp(-0.04)},
	} {
		if frac := q.update(tc.count); math.Abs(frac-tc.frac) > 1e-12 || math.Abs(q.c-tc.c) > 1e-12 {
			t.Fatalf("count %g: frac %v C %v, want %v %v", tc.count, frac, q.c, tc.frac, tc.c)
		}
	}
}

// Both clipping paths clip at C_t: the norm-only scales give ‖s_i g_i‖ =
// r·min(‖g_i‖, C_t) (the sum is kept at C_0's scale until finish) and the materialised rows, clipped at C_0 and mapped back
// by finish (no noise), the same; the centred count is Σ(1[‖g‖ ≤ C_t] − ½).
func TestQuantileClipsAtCurrentNorm(t *testing.T) {
	norms := []float64{0.1, 0.5, 0.99, 1.5, 3, math.NaN()}
	ct := 1.0
	l2, err := clip.NewL2(4, 1, nil) // C_0 = 4
	if err != nil {
		t.Fatal(err)
	}
	mk := func() *quantileState {
		// Count noise of std 2⁻¹⁰ on 2·count rounds to 0 (|Z| > ½ is 512 std).
		nz, err := lattice.NewCountNoise(0x1p-10)
		if err != nil {
			t.Fatal(err)
		}
		return &quantileState{gamma: 0.5, eta: 0, sigmaB: 0x1p-11, m: 6, c0: 4, c: ct, rng: rng.New(1), noise: nz}
	}
	q := mk()
	sq := make([]float64, len(norms))
	for i, v := range norms {
		sq[i] = v * v
	}
	sc := make([]float32, len(norms))
	q.scales(l2, sq, len(norms), 1, sc)
	if q.count != 3*0.5-3*0.5 { // three within C_t, three not (NaN is not)
		t.Fatalf("centred count %v, want 0", q.count)
	}
	for i, v := range norms {
		want := math.Min(v, ct)
		if math.IsNaN(v) {
			want, v = 0, 1
		}
		if got := float64(sc[i]) * v / q.ratio(); math.Abs(got-want) > 1e-6 {
			t.Errorf("norm %v: scaled norm %v, want %v", norms[i], got, want)
		}
	}
	q = mk()
	g := make([]float32, len(norms)-1)
	sum := make([]float32, 1)
	for i, v := range norms[:len(g)] {
		g[i] = float32(v)
	}
	q.scaleRows(g, len(g), 1)
	l2.ClipSum(g, len(g), nil, sum)
	q.finish(sum)
	if want := 0.1 + 0.5 + 0.99 + 1 + 1; math.Abs(float64(sum[0])-want) > 1e-5 {
		t.Fatalf("materialised sum %v, want %v", sum[0], want)
	}
}

// The estimate tracks the γ-quantile: norms uniform on [0, 1] (quantile
// γ), a batch of 500 per step and the default count noise, from C_0 = 0.05.
func TestQuantileConverges(t *testing.T) {
	for _, gamma := range []float64{0.3, 0.5, 0.9} {
		var cfg Config
		cfg.ClipQuantile, cfg.ClipNorm = gamma, 0.05
		sp := mechanism.Spec{Sampler: mechanism.Poisson, N: 1000, Batch: 500, Clip: mechanism.Flat, C: cfg.ClipNorm, ClipQuantile: gamma}
		cl, err := sp.NewClipper(10, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mechanism.New(sp, cl)
		if err != nil {
			t.Fatal(err)
		}
		q, err := newQuantile(&cfg, m, 1, rng.New(7))
		if err != nil {
			t.Fatal(err)
		}
		data := rng.New(8)
		var tail []float64
		for step := 0; step < 400; step++ {
			for range 500 {
				q.observe(data.Float64())
			}
			q.finish(nil)
			if step >= 300 {
				tail = append(tail, q.c)
			}
		}
		var mean float64
		for _, c := range tail {
			mean += c / float64(len(tail))
		}
		if math.Abs(mean-gamma) > 0.05 {
			t.Errorf("γ = %g: C settles at %.4f", gamma, mean)
		}
	}
}

// A run with clip_quantile accounts exactly what the run without it does
// at the same σ (the count shares σ), noises the gradient at z_Δ·C_0, and
// resumes bit for bit (C_t and the count stream are in the checkpoint).
func TestQuantileRun(t *testing.T) {
	base := small(t)
	base.Model, base.Steps, base.CheckpointEvery = "logreg", 12, 5
	plain := run(t, base, Options{})
	c := base
	c.OutDir, c.ClipQuantile, c.QuantileCountSigma = t.TempDir(), 0.5, 2
	full := run(t, c, Options{})
	if full.Best.Epsilon != plain.Best.Epsilon || full.Sigma != plain.Sigma {
		t.Fatalf("ε %v σ %v with clip_quantile, %v %v without", full.Best.Epsilon, full.Sigma, plain.Best.Epsilon, plain.Sigma)
	}
	zd, _ := QuantileSigmas(c.Sigma, 2)
	if r := full.NoiseVariance / plain.NoiseVariance; math.Abs(r-zd*zd/(c.Sigma*c.Sigma)) > 1e-9 {
		t.Fatalf("noise variance ratio %v, want (z_Δ/σ)² = %v", r, zd*zd/(c.Sigma*c.Sigma))
	}
	if !slices.ContainsFunc(full.Notes, func(n string) bool { return strings.Contains(n, "adaptive clipping") }) {
		t.Fatalf("no adaptive clipping note in %q", full.Notes)
	}
	r := c
	r.OutDir = t.TempDir()
	if _, err := Run(context.Background(), r, Options{StopAfter: 7}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	resumed := run(t, r, Options{Resume: true})
	a := mustCheckpoint(t, c.OutDir)
	b := mustCheckpoint(t, r.OutDir)
	qa, qb := mustFeature[quantileCheckpoint](t, a, featureQuantile), mustFeature[quantileCheckpoint](t, b, featureQuantile)
	if !slices.Equal(a.Params, b.Params) || qa.ClipNow != qb.ClipNow || qa.ClipNow == c.ClipNorm {
		t.Fatalf("resumed run differs: C %v vs %v (C_0 %v)", qb.ClipNow, qa.ClipNow, c.ClipNorm)
	}
	if resumed.Best.Epsilon != full.Best.Epsilon {
		t.Fatalf("resumed ε %v, want %v", resumed.Best.Epsilon, full.Best.Epsilon)
	}
}

// clip_quantile is refused where a fixed clip norm is assumed.
func TestQuantileRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
	}{
		{"range", func(c *Config) { c.ClipQuantile = 1 }},
		{"linf", func(c *Config) { c.ClipQuantile, c.Clip = 0.5, "linf" }},
		{"twice", func(c *Config) { c.ClipQuantile, c.Sampler, c.Clip, c.Q2 = 0.5, "twice", "hybrid", 0.5 }},
		{"final-only", func(c *Config) { c.ClipQuantile, c.FinalOnly = 0.5, true }},
		{"orphan lr", func(c *Config) { c.QuantileLR = 0.1 }},
		{"clipped count", func(c *Config) { c.ClipQuantile, c.ClippedCountSigma = 0.5, 5 }},
		{"count noise below the exact sampler's range", func(c *Config) { c.ClipQuantile, c.QuantileCountSigma = 0.5, 1e-4 }},
	} {
		c := small(t)
		tc.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "quantile") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
