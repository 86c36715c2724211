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
