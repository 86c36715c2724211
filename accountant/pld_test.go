package accountant

import (
	"errors"
	"math"
	"testing"
)

// gaussianEpsilon is the exact ε(δ) of the Gaussian mechanism with
// sensitivity 1 and noise σ (Balle & Wang 2018, Theorem 8):
// δ(ε) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ), solved by bisection.
func gaussianEpsilon(sigma, delta float64) float64 {
	d := func(e float64) float64 {
		return normCDF(1/(2*sigma)-e*sigma) - math.Exp(e)*normCDF(-1/(2*sigma)-e*sigma)
	}
	lo, hi := 0.0, 1.0
	for d(hi) > delta {
		hi *= 2
	}
	if d(0) <= delta {
		return 0
	}
	for i := 0; i < 200; i++ {
		m := (lo + hi) / 2
		if d(m) > delta {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// dp_accounting's PLD (pessimistic estimate, interval 1e-4) for the README's
// Fashion-MNIST run: ε = 2.3895214619 at δ = 1e-5 (issue 19). Ours must be
// within 0.5% and never more than 0.1% below it.
func TestPLDMatchesDPAccounting(t *testing.T) {
	const ref = 2.3895214619
	b, err := PLDPoissonEpsilon(2048.0/60000, 2.15, 1172, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if b.Epsilon > ref*1.005 || b.Epsilon < ref*0.999 || b.Relation != AddRemove || b.Accountant != "pld" {
		t.Fatalf("ε = %.10f (%+v), dp_accounting %.10f", b.Epsilon, b, ref)
	}
	r, err := PoissonEpsilon(2048.0/60000, 2.15, 1172, 1e-5)
	if err != nil || !(b.Epsilon < r.Epsilon) {
		t.Fatalf("PLD %v not below RDP %v (%v)", b.Epsilon, r.Epsilon, err)
	}
}

// q = 1 is the plain Gaussian mechanism, and k Gaussians of σ compose to one
// of σ/√k: the PLD must match the exact analytic ε from above, closely.
func TestPLDGaussianIsExact(t *testing.T) {
	for _, tc := range []struct {
		sigma float64
		k     int
		delta float64
	}{{1, 1, 1e-5}, {2, 1, 1e-6}, {0.8, 1, 1e-3}, {5, 10, 1e-5}, {10, 100, 1e-5}, {3, 7, 1e-8}} {
		a, _ := NewPLD()
		if err := a.Compose(Gaussian{Sigma: tc.sigma}, tc.k); err != nil {
			t.Fatal(err)
		}
		b, err := a.Epsilon(tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		want := gaussianEpsilon(tc.sigma/math.Sqrt(float64(tc.k)), tc.delta)
		if b.Epsilon < want-1e-9 || b.Epsilon > want*1.001+1e-4 {
			t.Errorf("σ = %g × %d, δ = %g: PLD ε = %.8f, exact %.8f", tc.sigma, tc.k, tc.delta, b.Epsilon, want)
		}
		d, err := a.Delta(want)
		wantD := normCDF(math.Sqrt(float64(tc.k))/(2*tc.sigma)-want*tc.sigma/math.Sqrt(float64(tc.k))) - math.Exp(want)*normCDF(-math.Sqrt(float64(tc.k))/(2*tc.sigma)-want*tc.sigma/math.Sqrt(float64(tc.k)))
		if err != nil || d < wantD*(1-1e-6) || d > wantD*1.01+1e-12 {
			t.Errorf("σ = %g × %d: δ(%g) = %g, exact %g (%v)", tc.sigma, tc.k, want, d, wantD, err)
		}
	}
}

// PLD is never looser than RDP, and ε grows with q and T and falls with σ.
func TestPLDBelowRDPAndMonotone(t *testing.T) {
	type set struct {
		q, sigma float64
		steps    int
	}
	eps := func(s set) float64 {
		b, err := PLDPoissonEpsilon(s.q, s.sigma, s.steps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		return b.Epsilon
	}
	for _, s := range []set{{0.01, 1, 300}, {0.05, 1.5, 200}, {0.1, 1, 50}, {0.002, 1.2, 500}, {0.2, 3, 50}, {1, 4, 20}} {
		p := eps(s)
		r, err := PoissonEpsilon(s.q, s.sigma, s.steps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if !(p <= r.Epsilon) {
			t.Errorf("%+v: PLD %v > RDP %v", s, p, r.Epsilon)
		}
		if s.q < 1 {
			if up := eps(set{s.q * 1.5, s.sigma, s.steps}); !(up > p) {
				t.Errorf("%+v: ε %v did not grow with q (%v)", s, p, up)
			}
		}
		if up := eps(set{s.q, s.sigma * 1.2, s.steps}); !(up < p) {
			t.Errorf("%+v: ε %v did not fall with σ (%v)", s, p, up)
		}
		if up := eps(set{s.q, s.sigma, s.steps * 2}); !(up > p) {
			t.Errorf("%+v: ε %v did not grow with T (%v)", s, p, up)
		}
	}
}

// A finer grid never gives a larger ε (each grid's curve is exact at its
// points and a chord between them).
func TestPLDFinerGridNeverLarger(t *testing.T) {
	for _, s := range []struct {
		q, sigma float64
		steps    int
	}{{0.02, 1.1, 300}, {0.1, 2, 100}, {1, 3, 5}} {
		prev := math.Inf(1)
		for _, h := range []float64{4e-3, 1e-3, 2e-4} {
			b, err := PLDPoissonEpsilon(s.q, s.sigma, s.steps, 1e-5, WithPLDInterval(h))
			if err != nil {
				t.Fatal(err)
			}
			if b.Epsilon > prev+1e-9 {
				t.Errorf("%+v: interval %g gives ε %v > coarser grid's %v", s, h, b.Epsilon, prev)
			}
			prev = b.Epsilon
		}
	}
}

// The mass at +∞: δ(ε) never falls below it, and a δ below it has no ε.
func TestPLDInfinityMass(t *testing.T) {
	m := &pmf{h: 0.1, lo: 0, p: []float64{0.5, 0.49}, inf: 0.01}
	if d := m.deltaAt(100); d != 0.01 {
		t.Errorf("δ(100) = %v, want the +∞ mass 0.01", d)
	}
	if e := m.epsilonAt(0.005); !math.IsInf(e, 1) {
		t.Errorf("ε(0.005) = %v, want +Inf below the +∞ mass", e)
	}
	// δ(ε) by brute force at a point between grid values.
	want := 0.01 + 0.49*(1-math.Exp(0.05-0.1))
	if d := m.deltaAt(0.05); math.Abs(d-want) > 1e-15 {
		t.Errorf("δ(0.05) = %v, want %v", d, want)
	}
	if e := m.epsilonAt(want); math.Abs(e-0.05) > 1e-12 {
		t.Errorf("ε(δ(0.05)) = %v, want 0.05", e)
	}
	// Capping tails moves the largest losses to +∞ within the budget and
	// drops nothing: of 1e-20 at loss 2 and 1e-12 at 1, a budget of 1e-15
	// over two steps moves the first only.
	three := &pmf{h: 1, p: []float64{1 - 1e-12 - 1e-20, 1e-12, 1e-20}}
	capped := capTails([]tiltTerm{{three, 2}}, 1e-15)[0].p
	if len(capped.p) != 2 || !(capped.inf >= 1e-20 && capped.inf < 1.01e-20) || capped.p[1] != 1e-12 {
		t.Errorf("capTails: %+v", capped)
	}
}

// A resumed account equals an uninterrupted one; heterogeneous composition
// (a Gaussian before the steps, σ changed mid-run) commutes.
func TestPLDStateAndComposition(t *testing.T) {
	step := PoissonSampled{Q: 0.05, Event: Gaussian{Sigma: 1.2}}
	full, _ := NewPLD()
	full.Compose(Gaussian{Sigma: 20}, 1)
	full.Compose(step, 150)
	half, _ := NewPLD()
	half.Compose(Gaussian{Sigma: 20}, 1)
	half.Compose(step, 100)
	if _, err := half.Epsilon(1e-5); err != nil { // fill its cache
		t.Fatal(err)
	}
	b, err := half.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	resumed, _ := NewPLD()
	if err := resumed.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		resumed.Compose(step, 1)
	}
	fb, _ := full.Epsilon(1e-5)
	rb, _ := resumed.Epsilon(1e-5)
	if math.Abs(fb.Epsilon-rb.Epsilon) > 1e-12 {
		t.Errorf("resumed ε %v, uninterrupted %v", rb.Epsilon, fb.Epsilon)
	}
	// Order does not matter.
	rev, _ := NewPLD()
	rev.Compose(step, 150)
	rev.Compose(Gaussian{Sigma: 20}, 1)
	vb, _ := rev.Epsilon(1e-5)
	if math.Abs(fb.Epsilon-vb.Epsilon) > 1e-9 {
		t.Errorf("reordered ε %v, %v", vb.Epsilon, fb.Epsilon)
	}
	// Two Gaussians compose to one of (σ1⁻² + σ2⁻²)^(−1/2).
	two, _ := NewPLD()
	two.Compose(Composed{Events: []Event{Gaussian{Sigma: 2}, Gaussian{Sigma: 3}}}, 1)
	tb, _ := two.Epsilon(1e-5)
	if want := gaussianEpsilon(1/math.Sqrt(1.0/4+1.0/9), 1e-5); tb.Epsilon < want-1e-9 || tb.Epsilon > want*1.001 {
		t.Errorf("two Gaussians: ε %v, exact %v", tb.Epsilon, want)
	}
	// Unsupported mechanisms say so.
	for _, ev := range []Event{NewTwiceSampled(0.1, 0.5, 1, 10), SampledWithoutReplacement{N: 100, B: 10, Event: Gaussian{Sigma: 1}}} {
		if err := full.Supports(ev); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%T: %v, want ErrUnsupported", ev, err)
		}
	}
	if err := resumed.UnmarshalJSON([]byte(`{"interval":0,"segments":[]}`)); err == nil {
		t.Error("a zero interval was accepted")
	}
}

// BenchmarkPLD: one ε after T steps (the end of a run), and the per-step
// cost of extending the account by one step and asking again (what the
// tracker does at every evaluation).
func BenchmarkPLD(b *testing.B) {
	step := PoissonSampled{Q: 2048.0 / 60000, Event: Gaussian{Sigma: 2.15}}
	for _, T := range []int{1000, 10000, 100000, 1000000} {
		b.Run("end/T="+itoa(T), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				a, _ := NewPLD()
				a.Compose(step, T)
				if _, err := a.Epsilon(1e-5); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("per-step/T="+itoa(T), func(b *testing.B) {
			a, _ := NewPLD()
			a.Compose(step, T)
			a.Epsilon(1e-5)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a.Compose(step, 1)
				if _, err := a.Epsilon(1e-5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// Calibration by PLD: the σ meets the target within the tolerance, and is
// smaller than RDP's for the same target.
func TestPLDCalibration(t *testing.T) {
	q, steps, delta, target := 2048.0/60000, 1172, 1e-5, 3.0
	s, err := poissonSigmaPLD(target, delta, q, steps)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PLDPoissonEpsilon(q, s, steps, delta)
	if err != nil || b.Epsilon > target || b.Epsilon < target-DefaultTolerance {
		t.Fatalf("σ = %v gives PLD ε %v (%v), want within [%v, %v]", s, b.Epsilon, err, target-DefaultTolerance, target)
	}
	r, err := poissonSigmaRDP(target, delta, q, steps)
	if err != nil || !(s < r) {
		t.Fatalf("PLD σ %v not below RDP σ %v (%v)", s, r, err)
	}
}

// Calibrate with WithPLDCertification certifies its σ on the fine grid even where the
// coarse grid's ε is the smaller (as the real grids' are at δ ≥ q, σ ≈ 0.08):
// here the coarse account certifies σ ≥ 0.05, the fine one only σ ≥ 0.2.
func TestCalibrateSigmaPLDGridsCertifiesOnFineGrid(t *testing.T) {
	fine := func(s float64) (float64, error) {
		if s < 0.1 {
			return 5, nil
		}
		return 0.1 / s, nil
	}
	coarse := func(s float64) (float64, error) {
		if s < 0.05 {
			return 5, nil
		}
		return min(0.1/s, 0.3), nil
	}
	rdp := func(s float64) (float64, error) { return 1 / s, nil }
	s, err := Calibrate(fine, 0.5, WithPLDCertification(coarse, rdp))
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := fine(s); e > 0.5 || s > 0.2*1.01 {
		t.Fatalf("σ = %v: fine ε %v, want ≤ 0.5 at σ ≈ 0.2", s, e)
	}
}
