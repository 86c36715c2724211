package accountant

import (
	"math"
	"testing"
)

// TestOpacusCalibration pins Opacus' calibration (RDP, its order grid, signed
// series): target ε = 8, δ = 1e−5, q = 0.04.
func TestOpacusCalibration(t *testing.T) {
	tests := []struct {
		steps int
		sigma float64
		tol   float64
	}{
		{2250, 1.416, 1e-3},
		{2000, 1.3562, 1e-4},
	}
	for _, tc := range tests {
		rdpOpts := []RDPOption{WithOrders(opacusOrders()), WithSeries(SignedSeries)}
		sigma, err := poissonSigmaRDP(8, 1e-5, 0.04, tc.steps, rdpOpts...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := PoissonEpsilon(0.04, sigma, tc.steps, 1e-5, rdpOpts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("T=%d: sigma %.6g (want %v), eps %.6g", tc.steps, sigma, tc.sigma, b.Epsilon)
		if math.Abs(sigma-tc.sigma) > tc.tol {
			t.Errorf("T=%d: sigma %v, want %v ± %v", tc.steps, sigma, tc.sigma, tc.tol)
		}
		// Conservative end, within the default tolerance.
		if b.Epsilon > 8 || b.Epsilon < 8-DefaultTolerance {
			t.Errorf("T=%d: eps(sigma) = %v, want in [8-1e-3, 8]", tc.steps, b.Epsilon)
		}
	}
}

func TestCalibrateSigmaGeneric(t *testing.T) {
	// ε(σ) = 3/σ: exact answer 3/target.
	for _, target := range []float64{0.01, 0.5, 3, 40} {
		for _, tol := range []float64{1e-3, 1e-8} {
			s, err := Calibrate(func(s float64) (float64, error) { return 3 / s, nil }, target, WithTolerance(tol))
			if err != nil {
				t.Fatal(err)
			}
			if e := 3 / s; e > target || e < target-tol {
				t.Errorf("target %v tol %v: sigma %v gives eps %v", target, tol, s, e)
			}
		}
	}
	// A step function: the answer is the conservative side of the jump.
	s, err := Calibrate(func(s float64) (float64, error) {
		if s < 2.5 {
			return 10, nil
		}
		return 1, nil
	}, 5)
	if err != nil || s < 2.5 || s > 2.5+1e-9 {
		t.Errorf("step function: sigma %v (%v), want just above 2.5", s, err)
	}
	if _, err := Calibrate(func(float64) (float64, error) { return 1, nil }, 0.5); err == nil {
		t.Error("unreachable target accepted")
	}
	if _, err := Calibrate(func(float64) (float64, error) { return math.NaN(), nil }, 1); err == nil {
		t.Error("NaN epsilon accepted")
	}
	if _, err := Calibrate(func(float64) (float64, error) { return math.NaN(), nil }, 1, WithMaxSteps(10)); err == nil {
		t.Error("NaN epsilon accepted by the steps search")
	}
	if _, err := Calibrate(func(s float64) (float64, error) { return 1 / s, nil }, math.NaN()); err == nil {
		t.Error("NaN target accepted")
	}
}

func TestCalibrateSteps(t *testing.T) {
	lin := func(tt float64) (float64, error) { return 0.01 * tt, nil }
	tests := []struct {
		target float64
		max    int
		want   int
	}{
		{1, 1 << 20, 100}, {1.005, 1 << 20, 100}, {0.005, 100, 0}, {1, 60, 60}, {0.01, 5, 1},
	}
	for _, tc := range tests {
		got, err := Calibrate(lin, tc.target, WithMaxSteps(tc.max))
		if err != nil || got != float64(tc.want) {
			t.Errorf("target %v max %d: %v (%v), want %d", tc.target, tc.max, got, err, tc.want)
		}
	}
	// RDP: the answer is the last step count within the target.
	T, err := PoissonSteps(3, 1e-5, 0.01, 1.0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	at, _ := PoissonEpsilon(0.01, 1.0, T, 1e-5)
	next, _ := PoissonEpsilon(0.01, 1.0, T+1, 1e-5)
	t.Logf("PoissonSteps: T=%d eps(T)=%v eps(T+1)=%v", T, at.Epsilon, next.Epsilon)
	if at.Epsilon > 3 || next.Epsilon <= 3 {
		t.Errorf("T=%d: eps(T)=%v eps(T+1)=%v around target 3", T, at.Epsilon, next.Epsilon)
	}
}

// bruteSmallestSigma bisects a non-increasing eps(σ) on [lo, hi] (eps(lo) >
// target ≥ eps(hi)) to relative width 1e-7: the smallest σ meeting target,
// found without Calibrate.
func bruteSmallestSigma(t *testing.T, eps func(float64) (float64, error), target, lo, hi float64) float64 {
	t.Helper()
	if e, err := eps(lo); err == nil && e <= target {
		t.Fatalf("bracket: ε(%v) = %v already meets %v", lo, e, target)
	}
	for hi-lo > 1e-7*hi {
		mid := (lo + hi) / 2
		if e, err := eps(mid); err == nil && e <= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Calibrate returns a σ within 0.2% of the smallest meeting the target, by
// both accountants (issue 32 item 3): the PLD's on the default grid, which
// certifies it. Before, the PLD search returned σ 3% above it at the first
// point (2.4016 against 2.3323).
func TestCalibrateWithinPointTwoPercentOfSmallest(t *testing.T) {
	for _, tc := range []struct {
		eps, delta, q float64
		steps         int
	}{
		{0.5, 1e-8, 0.001, 50000},
		{0.1, 1e-5, 0.01, 1000},
		{2, 1e-5, 0.01, 1000},
		{8, 1e-6, 0.05, 2000},
	} {
		ev := poissonEvent(tc.q, tc.steps)
		rdp := Account(rdpFactory(), ev, tc.delta)
		fine := Account(pldFactory(), ev, tc.delta)
		rs, err := Calibrate(rdp, tc.eps)
		if err != nil {
			t.Fatal(err)
		}
		rWant := bruteSmallestSigma(t, rdp, tc.eps, rs/2, rs*1.01)
		ps, err := poissonSigmaPLD(tc.eps, tc.delta, tc.q, tc.steps)
		if err != nil {
			t.Fatal(err)
		}
		pWant := bruteSmallestSigma(t, fine, tc.eps, rs/2, rs*1.01)
		for _, c := range []struct {
			name      string
			got, want float64
			eps       func(float64) (float64, error)
		}{{"rdp", rs, rWant, rdp}, {"pld", ps, pWant, fine}} {
			e, err := c.eps(c.got)
			if err != nil || e > tc.eps {
				t.Errorf("%s %+v: σ %v has ε %v > target (%v)", c.name, tc, c.got, e, err)
			}
			if r := c.got/c.want - 1; r < -1e-6 || r > 2e-3 {
				t.Errorf("%s %+v: σ %v is %.3g%% from the smallest %v, want within [0, 0.2%%]", c.name, tc, c.got, 100*r, c.want)
			}
		}
	}
}
