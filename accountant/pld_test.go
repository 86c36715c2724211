package accountant

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPLDPinned pins ε against Google's dp_accounting PLD accountant
// (pessimistic, connect-the-dots, value_discretization_interval 1e-4,
// add/remove, PoissonSampledDpEvent(q, GaussianDpEvent(σ)) self-composed T
// times). Target: within 0.5% and never more than 0.1% below.
func TestPLDPinned(t *testing.T) {
	cases := []struct {
		q, sigma float64
		steps    int
		delta    float64
		want     float64
	}{
		{0.034133333, 2.15, 1172, 1e-5, 2.3895214619}, // the README's Fashion-MNIST run (issue 19)
	}
	for _, c := range cases {
		b, err := PoissonPLDEpsilon(c.q, c.sigma, c.steps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		rel := b.Epsilon/c.want - 1
		t.Logf("q=%v σ=%v T=%d: pld %.10f, dp_accounting %.10f, rel %+.2e", c.q, c.sigma, c.steps, b.Epsilon, c.want, rel)
		if rel < -1e-3 || rel > 5e-3 {
			t.Errorf("q=%v σ=%v T=%d: ε = %.10f, want %.10f (-0.1%%..+0.5%%)", c.q, c.sigma, c.steps, b.Epsilon, c.want)
		}
		if b.Relation != AddRemove || b.Accountant != "pld" {
			t.Errorf("bound %+v", b)
		}
	}
}

// TestPLDGaussianExact: q = 1 is the plain Gaussian, and T compositions at σ
// are one Gaussian at σ/√T; heterogeneous composition of σ1 and σ2 is one
// at (σ1⁻² + σ2⁻²)^−½. PLD must be above the exact ε and close to it.
func TestPLDGaussianExact(t *testing.T) {
	cases := []struct {
		name  string
		ev    Event
		sigma float64 // equivalent single Gaussian
		delta float64
	}{
		{"gaussian σ=1", Gaussian{Sigma: 1}, 1, 1e-5},
		{"gaussian σ=3", Gaussian{Sigma: 3}, 3, 1e-6},
		{"q=1 σ=0.7", PoissonSampled{Q: 1, Event: Gaussian{Sigma: 0.7}}, 0.7, 1e-5},
		{"25 steps σ=5", SelfComposed{Count: 25, Event: Gaussian{Sigma: 5}}, 1, 1e-5},
		{"400 steps q=1 σ=20", SelfComposed{Count: 400, Event: PoissonSampled{Q: 1, Event: Gaussian{Sigma: 20}}}, 1, 1e-5},
		{"heterogeneous σ=2 then σ=1.5", Composed{Events: []Event{Gaussian{Sigma: 2}, Gaussian{Sigma: 1.5}}}, 1 / math.Sqrt(0.25+1/2.25), 1e-5},
		{"σ change mid-run", Composed{Events: []Event{SelfComposed{Count: 10, Event: Gaussian{Sigma: 10}}, SelfComposed{Count: 30, Event: Gaussian{Sigma: 20}}}}, 1 / math.Sqrt(0.1+30.0/400), 1e-5},
	}
	for _, c := range cases {
		a, err := NewPLD()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(c.ev, 1); err != nil {
			t.Fatal(err)
		}
		b, err := a.Epsilon(c.delta)
		if err != nil {
			t.Fatal(err)
		}
		want := gaussianExactEpsilon(c.sigma, c.delta)
		rel := b.Epsilon/want - 1
		t.Logf("%s: pld %.8f exact %.8f rel %+.2e", c.name, b.Epsilon, want, rel)
		if rel < -1e-9 || rel > 2e-3 {
			t.Errorf("%s: ε = %.8f, exact %.8f: want within [0, +0.2%%]", c.name, b.Epsilon, want)
		}
	}
}

// TestPLDBelowRDP: PLD is never looser than RDP with the Balle et al.
// conversion, on a grid of DP-SGD settings.
func TestPLDBelowRDP(t *testing.T) {
	qs, sigmas := []float64{0.001, 0.01, 0.1}, []float64{0.8, 1.5, 4}
	if testing.Short() {
		qs, sigmas = []float64{0.01, 0.1}, []float64{1.5}
	}
	for _, q := range qs {
		for _, sigma := range sigmas {
			for _, steps := range []int{100, 1000} {
				p, err := PoissonPLDEpsilon(q, sigma, steps, 1e-5)
				if err != nil {
					t.Fatal(err)
				}
				r, err := PoissonEpsilon(q, sigma, steps, 1e-5)
				if err != nil {
					t.Fatal(err)
				}
				if !(p.Epsilon <= r.Epsilon) {
					t.Errorf("q=%v σ=%v T=%d: pld %v > rdp %v", q, sigma, steps, p.Epsilon, r.Epsilon)
				}
			}
		}
	}
}

func TestPLDMonotone(t *testing.T) {
	eps := func(q, sigma float64, steps int) float64 {
		b, err := PoissonPLDEpsilon(q, sigma, steps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		return b.Epsilon
	}
	prev := math.Inf(1)
	for _, s := range []float64{0.7, 0.9, 1.2, 2, 4} {
		e := eps(0.02, s, 300)
		if !(e < prev) {
			t.Errorf("σ=%v: ε %v not below %v at the smaller σ", s, e, prev)
		}
		prev = e
	}
	prev = 0
	for _, q := range []float64{0.001, 0.005, 0.02, 0.1, 0.5, 1} {
		e := eps(q, 1.5, 100)
		if !(e > prev) {
			t.Errorf("q=%v: ε %v not above %v at the smaller q", q, e, prev)
		}
		prev = e
	}
	prev = 0
	for _, T := range []int{1, 2, 10, 100, 1000} {
		e := eps(0.02, 1.1, T)
		if !(e > prev) {
			t.Errorf("T=%d: ε %v not above %v at fewer steps", T, e, prev)
		}
		prev = e
	}
}

// TestPLDInfinityMass: the tail beyond the grid is mass at +∞: the
// distribution's masses add to one, δ(ε) never drops below that mass, and
// ε is +∞ for a δ below it; composition multiplies the finite parts.
func TestPLDInfinityMass(t *testing.T) {
	for _, dir := range []pldDirection{removeDir, addDir} {
		m, err := sgmPLMF(dir, 0.05, 0.6, 1e-3, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		top := m.loss(len(m.p) - 1)
		if want := sgmDelta(dir, 0.05, 0.6, top); m.inf != want {
			t.Errorf("dir %d: mass at +∞ %v, want δ at the top grid point %v", dir, m.inf, want)
		}
		var sum float64
		for _, v := range m.p {
			sum += v
		}
		if math.Abs(sum+m.inf-1) > 1e-12 {
			t.Errorf("dir %d: masses add to %v", dir, sum+m.inf)
		}
		if dir == removeDir && !(m.inf > 0) {
			t.Errorf("remove direction: no mass at +∞ (%v)", m.inf)
		}
		if m.inf > 0 {
			if d := m.delta(1e6); d != m.inf {
				t.Errorf("dir %d: δ(1e6) = %v, want the +∞ mass %v", dir, d, m.inf)
			}
			if e := m.epsilon(m.inf / 2); !math.IsInf(e, 1) {
				t.Errorf("dir %d: ε at δ below the +∞ mass = %v, want +Inf", dir, e)
			}
			c, err := m.selfCompose(10, 1e-15)
			if err != nil {
				t.Fatal(err)
			}
			if want := 1 - math.Pow(1-m.inf, 10); c.inf < want*(1-1e-9) {
				t.Errorf("dir %d: composed +∞ mass %v < 1−(1−p)^10 = %v", dir, c.inf, want)
			}
		}
	}
	// Through the accountant: δ far out is the +∞ mass, and positive.
	a, _ := NewPLD(WithPLDTail(1e-9))
	if err := a.Compose(PoissonSampled{Q: 0.1, Event: Gaussian{Sigma: 0.5}}, 5); err != nil {
		t.Fatal(err)
	}
	d, err := a.Delta(500)
	if err != nil || !(d > 0) || d > 1e-7 {
		t.Errorf("δ(500) = %v, %v: want the small positive +∞ mass", d, err)
	}
}

// TestPLDFinerGrid: a finer grid never gives a larger ε (nested grids).
func TestPLDFinerGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 1))
	for range 6 {
		q := math.Pow(10, -3+2.5*rng.Float64())
		sigma := 0.6 + 3*rng.Float64()
		steps := 1 + rng.IntN(300)
		prev := math.Inf(1)
		for _, h := range []float64{1e-2, 5e-3, 1e-3, 1e-4} {
			b, err := PoissonPLDEpsilon(q, sigma, steps, 1e-5, WithPLDInterval(h))
			if err != nil {
				t.Fatal(err)
			}
			if b.Epsilon > prev*(1+1e-9) {
				t.Errorf("q=%.4g σ=%.3f T=%d: interval %v gives ε %v > %v at the coarser interval", q, sigma, steps, h, b.Epsilon, prev)
			}
			prev = b.Epsilon
		}
	}
}

func TestPLDDeltaEpsilonInverse(t *testing.T) {
	a, _ := NewPLD()
	if err := a.Compose(PoissonSampled{Q: 0.01, Event: Gaussian{Sigma: 1}}, 500); err != nil {
		t.Fatal(err)
	}
	for _, delta := range []float64{1e-3, 1e-5, 1e-8} {
		b, err := a.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		d, err := a.Delta(b.Epsilon)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d/delta-1) > 1e-6 {
			t.Errorf("δ(ε(%v)) = %v", delta, d)
		}
	}
}

// TestPLDConvolve checks the FFT convolution against the direct sum.
func TestPLDConvolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(n, lo int) *plmf {
		m := &plmf{h: 0.01, lo: lo, p: make([]float64, n), inf: 0.001}
		var s float64
		for i := range m.p {
			m.p[i] = rng.Float64()
			s += m.p[i]
		}
		for i := range m.p {
			m.p[i] *= 0.999 / s
		}
		return m
	}
	a, b := mk(300, -40), mk(517, 7)
	got := convolve(a, b, 1e-300)
	want := make([]float64, 816)
	for i, x := range a.p {
		for j, y := range b.p {
			want[i+j] += x * y
		}
	}
	if got.lo != -33 || len(got.p) != len(want) {
		t.Fatalf("support lo=%d n=%d", got.lo, len(got.p))
	}
	for i := range want {
		if math.Abs(got.p[i]-want[i]) > 1e-15 {
			t.Fatalf("bin %d: %v, want %v", i, got.p[i], want[i])
		}
	}
	if want := 1 - 0.999*0.999; math.Abs(got.inf-want) > 1e-15 {
		t.Errorf("+∞ mass %v, want %v", got.inf, want)
	}
}

func TestPLDUnsupported(t *testing.T) {
	a, _ := NewPLD()
	for _, ev := range []Event{
		SampledWithoutReplacement{N: 100, B: 10, Event: Gaussian{Sigma: 1}},
		NewTwiceSampled(0.1, 0.5, 1, 10),
		nil,
	} {
		err := a.Compose(ev, 1)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err %v, want ErrUnsupported", Kind(ev), err)
		}
	}
	if err := a.Compose(Gaussian{Sigma: -1}, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("σ=-1: err %v, want ErrInvalid", err)
	}
	if a.Steps() != 0 {
		t.Errorf("refused events composed: %d steps", a.Steps())
	}
	if _, err := a.Epsilon(0); err == nil {
		t.Error("δ = 0 accepted")
	}
	if _, err := NewPLD(WithPLDInterval(0)); err == nil {
		t.Error("interval 0 accepted")
	}
}

// TestPLDResume: an account saved and restored mid-run, in a tracker beside
// RDP, ends with the same bounds as an uninterrupted one.
func TestPLDResume(t *testing.T) {
	ev := PoissonSampled{Q: 0.02, Event: Gaussian{Sigma: 1.3}}
	newT := func() *Tracker {
		r, _ := NewRDP()
		p, _ := NewPLD()
		tr, err := NewTracker(r, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.SetDeferred("pld", true); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	full := newT()
	for range 200 {
		if err := full.Step(ev); err != nil {
			t.Fatal(err)
		}
	}
	part := newT()
	for range 80 {
		if err := part.Step(ev); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := json.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	resumed := newT()
	if err := json.Unmarshal(raw, resumed); err != nil {
		t.Fatal(err)
	}
	for range 120 {
		if err := resumed.Step(ev); err != nil {
			t.Fatal(err)
		}
	}
	a, b := full.Bounds(1e-5), resumed.Bounds(1e-5)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("resumed %v, uninterrupted %v", b, a)
	}
	best, err := full.TightestFor(1e-5, AddRemove)
	if err != nil || best.Accountant != "pld" {
		t.Errorf("tightest %+v, %v: want pld", best, err)
	}
	full.SkipDeferred(true)
	if bs := full.Bounds(1e-5); len(bs) != 1 || bs[0].Name != "rdp" {
		t.Errorf("skipping deferred: %v", bs)
	}
	var bad PLD
	if err := bad.UnmarshalJSON([]byte(`{"name":"pld","interval":1e-4,"tail":1e-15,"runs":[{"q":2,"sigma":1,"count":1}]}`)); err == nil {
		t.Error("q=2 run accepted")
	}
}

func TestPLDCalibrate(t *testing.T) {
	sigma, err := PoissonPLDSigma(3, 1e-5, 2048.0/60000, 1172, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := PoissonPLDEpsilon(2048.0/60000, sigma, 1172, 1e-5)
	rdpSigma, _ := PoissonSigma(3, 1e-5, 2048.0/60000, 1172)
	t.Logf("σ(ε=3): pld %.4f, rdp %.4f; pld ε at it %.5f", sigma, rdpSigma, b.Epsilon)
	if !(b.Epsilon <= 3 && b.Epsilon > 3-DefaultTolerance) || !(sigma < rdpSigma) {
		t.Errorf("σ %v gives ε %v (rdp σ %v)", sigma, b.Epsilon, rdpSigma)
	}
}

func BenchmarkPLD(b *testing.B) {
	for _, T := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("T=%d", T), func(b *testing.B) {
			var eps float64
			for b.Loop() {
				// A fresh account: what one evaluation (or the end) costs.
				r, err := PoissonPLDEpsilon(0.01, 1, T, 1e-5)
				if err != nil {
					b.Fatal(err)
				}
				eps = r.Epsilon
			}
			b.ReportMetric(eps, "ε")
		})
	}
	b.Run("calibrate-T=1172", func(b *testing.B) {
		for b.Loop() {
			if _, err := PoissonPLDSigma(3, 1e-5, 2048.0/60000, 1172, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
