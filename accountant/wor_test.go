package accountant

import (
	"math"
	"testing"
)

// logRenyiQuadrature is log ∫ p^α q^{1−α} by Simpson's rule in log space.
func logRenyiQuadrature(logp, logq func(z float64) float64, lo, hi, alpha float64, n int) float64 {
	h := (hi - lo) / float64(n)
	vals := make([]float64, n+1)
	m := math.Inf(-1)
	for i := range vals {
		z := lo + float64(i)*h
		vals[i] = alpha*logp(z) + (1-alpha)*logq(z)
		m = math.Max(m, vals[i])
	}
	var s float64
	for i, v := range vals {
		w := 2.0
		switch {
		case i == 0 || i == n:
			w = 1
		case i%2 == 1:
			w = 4
		}
		s += w * math.Exp(v-m)
	}
	return m + math.Log(s*h/3)
}

func logNormal(z, mu, sigma float64) float64 {
	d := (z - mu) / sigma
	return -d*d/2 - math.Log(sigma*math.Sqrt(2*math.Pi))
}

// logMix is log((1−γ)N(0,σ²) + γN(mu,σ²)) at z.
func logMix(z, gamma, mu, sigma float64) float64 {
	return logAdd(math.Log1p(-gamma)+logNormal(z, 0, sigma), math.Log(gamma)+logNormal(z, mu, sigma))
}

// TestWORBoundDominatesTrueDivergence: on two replace-one instances of a
// sensitivity-1 sum (one record's value 1 → 0, and 1/2 → −1/2) the bound is
// never below the Rényi divergence computed by quadrature, either direction.
func TestWORBoundDominatesTrueDivergence(t *testing.T) {
	orders := []float64{1.5, 2, 2.5, 3, 4.5, 8, 16, 32}
	for _, n := range []int{100, 1000} {
		for _, b := range []int{1, 10, 50} {
			for _, sigma := range []float64{0.7, 1, 2, 5} {
				gamma := float64(b) / float64(n)
				bound, err := WORGaussianRDP(nil, orders, n, b, sigma)
				if err != nil {
					t.Fatal(err)
				}
				pairs := []struct{ p, q func(float64) float64 }{
					{func(z float64) float64 { return logMix(z, gamma, 1, sigma) }, func(z float64) float64 { return logNormal(z, 0, sigma) }},
					{func(z float64) float64 { return logNormal(z, 0, sigma) }, func(z float64) float64 { return logMix(z, gamma, 1, sigma) }},
					{func(z float64) float64 { return logMix(z, gamma, 0.5, sigma) }, func(z float64) float64 { return logMix(z, gamma, -0.5, sigma) }},
				}
				for i, a := range orders {
					worst := 0.0
					for _, pr := range pairs {
						d := logRenyiQuadrature(pr.p, pr.q, -40*sigma-a, 40*sigma+a, a, 4000) / (a - 1)
						worst = math.Max(worst, d)
					}
					if bound[i] < worst*(1-1e-7) {
						t.Errorf("n=%d b=%d sigma=%v order %v: bound %.8g below the true divergence %.8g", n, b, sigma, a, bound[i], worst)
					}
					if bound[i] > a/(2*sigma*sigma) {
						t.Errorf("n=%d b=%d sigma=%v order %v: bound %v above the unsampled Gaussian", n, b, sigma, a, bound[i])
					}
				}
			}
		}
	}
}

// TestWORValues: b = n is the plain Gaussian; small γ at order 2 is close
// to the leading term γ²·C(2,2)·min{4(e^{1/σ²}−1), 2e^{1/σ²}} (WBK Thm 9).
func TestWORValues(t *testing.T) {
	v, err := WORGaussianRDP(nil, []float64{2, 7.5}, 50, 50, 2)
	if err != nil || v[0] != 2.0/8 || v[1] != 7.5/8 {
		t.Errorf("b=n: %v %v", v, err)
	}
	v, err = WORGaussianRDP(nil, []float64{2}, 1000, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	// ε(2) = 1: log(1 + 1e−4·min{4(e−1), 2e}) by hand, 4(e−1) = 6.87313 >
	// 2e = 5.436564, so log1p(5.436564e−4).
	if math.Abs(v[0]-math.Log1p(5.436564e-4)) > 1e-9 {
		t.Errorf("order 2: %v", v[0])
	}
	if _, err := WORGaussianRDP(nil, []float64{2}, 10, 11, 1); err == nil {
		t.Error("b > n accepted")
	}
	if _, err := WORGaussianRDP(nil, []float64{2}, 10, 5, 0); err == nil {
		t.Error("sigma 0 accepted")
	}
}

// TestWORMatchesDPAccounting pins the Gaussian-specific bound to
// dp_accounting 0.6.0's _compute_rdp_sample_wor_gaussian(q = 0.01, σ,
// orders) (rdp_privacy_accountant.py, WBK Theorem 27 up to order 256), and
// checks it is never above the general Theorem 9 bound and well below it
// somewhere.
func TestWORMatchesDPAccounting(t *testing.T) {
	orders := []float64{2, 3, 8, 32, 256, 512}
	for _, tc := range []struct {
		sigma float64
		want  []float64
	}{
		{0.5, []float64{0.010860441335991575, 0.15310535342068948, 10.835969384744056, 59.26863552351422, 507.37948854732394, 1019.3871741916921}},
		{1, []float64{0.0005435086381094331, 0.0008348726849544131, 0.002684165012688936, 11.26863552351778, 123.37948854732396, 251.38717419169208}},
		{2, []float64{0.00011360371352886809, 0.000171288979794885, 0.0004684162610720203, 0.0020793016331292226, 27.37948854732396, 59.38717419169208}},
		{5, []float64{1.632417643686213e-05, 2.4517487609675187e-05, 6.579053653685828e-05, 0.0002704655897601465, 0.5032878088254282, 5.627174324697842}},
		{20, []float64{1.0012505410665614e-06, 1.502311025013212e-06, 4.0119429558250556e-06, 1.6156609385733856e-05, 0.0001358009858623837, 0.011160109748247105}},
		{100, []float64{4.000199926658889e-08, 6.000646178450282e-08, 1.600633671698095e-07, 6.411359155851497e-07, 5.192757836463424e-06, 0.011090829803103028}},
	} {
		got, err := WORGaussianRDP(nil, orders, 1000, 10, tc.sigma)
		if err != nil {
			t.Fatal(err)
		}
		best := 1.0
		for i, a := range orders {
			if math.Abs(got[i]/tc.want[i]-1) > 1e-9 {
				t.Errorf("σ = %g, order %g: %.15g, dp_accounting %.15g", tc.sigma, a, got[i], tc.want[i])
			}
			general := math.Min(worLogA(0.01, tc.sigma, int(a), nil)/(a-1), a/(2*tc.sigma*tc.sigma))
			if got[i] > general*(1+1e-12) {
				t.Errorf("σ = %g, order %g: %v above the general bound %v", tc.sigma, a, got[i], general)
			}
			best = math.Min(best, got[i]/general)
		}
		t.Logf("σ = %g: smallest ratio to the general bound %.3f", tc.sigma, best)
		if tc.sigma >= 2 && !(best < 0.9) {
			t.Errorf("σ = %g: the Gaussian-specific bound is never 10%% below the general one (best ratio %v)", tc.sigma, best)
		}
	}
}
