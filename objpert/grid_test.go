package objpert

import (
	"math"
	"math/big"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/rng"
)

// b is an integer multiple of the public step γ_b with σ/γ_b in [2⁴⁹, 2⁵⁰):
// the exact sampler returned round(b*/γ_b), so ‖b − b*‖∞ ≤ γ_b/2; its
// empirical moments match N(0, σ²).
func TestDrawBOnStep(t *testing.T) {
	r := rng.New(21)
	for _, sigma := range []float64{1e-3, 0.7, 1, 3, 10.08, 5e4} {
		g := NoiseStep(sigma)
		if q := sigma / g; !(q >= 0x1p49 && q < 0x1p50) {
			t.Fatalf("sigma %v: σ/γ_b = %v outside [2^49, 2^50)", sigma, q)
		}
		const draws = 4000
		b, err := drawB(draws, sigma, r)
		if err != nil {
			t.Fatal(err)
		}
		var s1, s2 float64
		for _, v := range b {
			if k := v / g; k != math.Trunc(k) {
				t.Fatalf("sigma %v: b = %v is not a multiple of γ_b = %v", sigma, v, g)
			}
			s1 += v / sigma
			s2 += v * v / (sigma * sigma)
		}
		// mean ~ N(0, 1/4000), second moment ~ 1 ± √(2/4000): 5 SE.
		if m := s1 / draws; math.Abs(m) > 5/math.Sqrt(draws) {
			t.Errorf("sigma %v: mean %v", sigma, m)
		}
		if v := s2 / draws; math.Abs(v-1) > 5*math.Sqrt(2.0/draws) {
			t.Errorf("sigma %v: variance ratio %v", sigma, v)
		}
	}
}

// ridgeExact solves (XᵀX + λI)θ = Xᵀy − b exactly in rationals: the ideal
// minimiser of the squared loss's perturbed objective.
func ridgeExact(X *mat.Dense, y []float64, lambda float64, b []*big.Rat) []*big.Rat {
	n, d := X.Dims()
	a := make([][]*big.Rat, d)
	for i := range a {
		a[i] = make([]*big.Rat, d+1)
		for j := range a[i] {
			a[i][j] = new(big.Rat)
		}
		a[i][i].SetFloat64(lambda)
		a[i][d].Neg(b[i])
	}
	t := new(big.Rat)
	for k := 0; k < n; k++ {
		x := X.RawRowView(k)
		for i := 0; i < d; i++ {
			xi := new(big.Rat).SetFloat64(x[i])
			for j := 0; j < d; j++ {
				a[i][j].Add(a[i][j], t.Mul(xi, new(big.Rat).SetFloat64(x[j])))
			}
			a[i][d].Add(a[i][d], t.Mul(xi, new(big.Rat).SetFloat64(y[k])))
		}
	}
	for c := 0; c < d; c++ { // SPD: no pivoting needed
		for r := c + 1; r < d; r++ {
			f := new(big.Rat).Quo(a[r][c], a[c][c])
			for j := c; j <= d; j++ {
				a[r][j].Sub(a[r][j], t.Mul(f, a[c][j]))
			}
		}
	}
	th := make([]*big.Rat, d)
	for i := d - 1; i >= 0; i-- {
		s := new(big.Rat).Set(a[i][d])
		for j := i + 1; j < d; j++ {
			s.Sub(s, t.Mul(a[i][j], th[j]))
		}
		th[i] = s.Quo(s, a[i][i])
	}
	return th
}

// The certificate r bounds the true distance to the exact ridge minimiser
// for the ideal b* anywhere in the box ‖b − b*‖∞ ≤ bErr (a corner of it
// here), at the solver's θ̂ and at a deliberately worse point, and stays
// under the public cap at the solver's point.
func TestCertifyRidgeExact(t *testing.T) {
	r := rng.New(22)
	for _, c := range []struct {
		n, d           int
		lambda, sigma  float64
		bErr, worsenBy float64
	}{
		{40, 3, 1, 2, 0, 0},
		{40, 3, 1, 2, 0x1p-50, 0},
		{200, 5, 0.3, 7, 0x1p-48, 0},
		{200, 5, 0.3, 7, 0x1p-48, 1e-9},
		{60, 2, 2, 0.5, 1e-12, 1e-6},
	} {
		X := randomBall(r, c.n, c.d)
		y := make([]float64, c.n)
		for i := range y {
			y[i] = 2*r.Float64() - 1
		}
		b := make([]float64, c.d)
		bStar := make([]*big.Rat, c.d)
		for j := range b {
			b[j] = c.sigma * r.NormFloat64()
			e := c.bErr
			if j%2 == 1 {
				e = -e
			}
			bStar[j] = new(big.Rat).Add(new(big.Rat).SetFloat64(b[j]), new(big.Rat).SetFloat64(e))
		}
		m, err := Fit(X, y, Squared{}, c.lambda, c.sigma, b)
		if err != nil {
			t.Fatal(err)
		}
		th := append([]float64(nil), m.Theta...)
		for j := range th {
			th[j] += c.worsenBy
		}
		want := ridgeExact(X, y, c.lambda, bStar)
		d2 := new(big.Rat)
		for j := range th {
			e := new(big.Rat).Sub(new(big.Rat).SetFloat64(th[j]), want[j])
			d2.Add(d2, e.Mul(e, e))
		}
		got := Certify(X, y, Squared{}, c.lambda, th, b, c.bErr)
		r2 := new(big.Rat).SetFloat64(got)
		r2.Mul(r2, r2)
		dist, _ := new(big.Float).SetRat(d2).Float64()
		if r2.Cmp(d2) < 0 {
			t.Errorf("%+v: certificate %g below the true distance %g", c, got, math.Sqrt(dist))
		}
		if cap := RadiusCap(c.n, c.d, c.sigma, c.lambda); c.worsenBy == 0 && !(got < cap) {
			t.Errorf("%+v: certificate %g at the solve is above the public cap %g", c, got, cap)
		}
		t.Logf("%+v: true distance %.3g, certificate %.3g", c, math.Sqrt(dist), got)
	}
}

// The boundary event: with a uniform shift, the rounding of a point θ̂
// within r of θ* (r/w = ρ, pushed toward the nearest boundary, the worst
// case) differs from θ*'s rounding with frequency about 1 − (1 − 2ρ)ᵈ,
// never more than τ = 2dρ beyond sampling error.
func TestGridBoundaryEvent(t *testing.T) {
	r := rng.New(23)
	for _, c := range []struct {
		d   int
		rho float64
	}{{1, 0.01}, {3, 0.01}, {8, 0.002}} {
		const w, runs = 0.125, 40000
		theta := make([]float64, c.d)
		for j := range theta {
			theta[j] = 3 * r.NormFloat64()
		}
		differ := 0
		for run := 0; run < runs; run++ {
			u := make([]float64, c.d)
			hat := make([]float64, c.d)
			for j := range u {
				u[j] = r.Float64()
				t0 := theta[j]/w + u[j]
				push := c.rho * w
				if t0-math.Floor(t0) < 0.5 { // nearest half-integer is above
					hat[j] = theta[j] + push
				} else {
					hat[j] = theta[j] - push
				}
			}
			a, err := roundToGrid(theta, u, w, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			b, err := roundToGrid(hat, u, w, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			for j := range a {
				if a[j] != b[j] {
					differ++
					break
				}
			}
		}
		p := 1 - math.Pow(1-2*c.rho, float64(c.d))
		got := float64(differ) / runs
		se := math.Sqrt(p * (1 - p) / runs)
		if math.Abs(got-p) > 5*se || got > 2*float64(c.d)*c.rho+5*se {
			t.Errorf("d=%d ρ=%g: boundary event frequency %.5f, want %.5f (≤ τ = %.5f)", c.d, c.rho, got, p, 2*float64(c.d)*c.rho)
		}
	}
}

// The release lies on the public shifted grid, within w/2 of the solve;
// its τ respects the budget and δ grows by (1 + e^ε)τ; a certificate
// above the cap is refused.
func TestFitObjPertReleaseOnGrid(t *testing.T) {
	r := rng.New(24)
	X, y := SyntheticLogistic(500, 4, r)
	const tau = 1e-6
	for run := 0; run < 20; run++ {
		m, err := FitObjPert(X, y, Logistic{}, 0.5, 3, tau, r)
		if err != nil {
			t.Fatal(err)
		}
		if !(m.Tau > 0 && m.Tau <= tau) || m.Grid != math.Ldexp(1, math.Ilogb(m.Grid)) {
			t.Fatalf("tau %v (budget %v), grid %v not a power of two", m.Tau, tau, m.Grid)
		}
		for j, v := range m.Released {
			k := v/m.Grid + m.Shift[j]
			if math.Abs(k-math.Round(k)) > 1e-9 || m.Shift[j] < 0 || m.Shift[j] >= 1 {
				t.Fatalf("θ̃_%d = %v is not on the grid %v shifted by %v", j, v, m.Grid, m.Shift[j])
			}
			if math.Abs(v-m.Theta[j]) > m.Grid/2*(1+1e-9) {
				t.Fatalf("θ̃_%d = %v is %v from the solve, more than w/2", j, v, math.Abs(v-m.Theta[j]))
			}
		}
		dp := m.DP(1e-5)
		near(t, "delta", dp.Delta, 1e-5+(1+math.Exp(dp.Epsilon))*m.Tau, 1e-18)
	}
	if _, err := roundToGrid([]float64{0.3}, []float64{0.5}, 0.25, 2e-3, 1e-3); err == nil {
		t.Error("a certificate above the cap was released")
	}
	if _, err := GridFor(10, 2, 1, 1, 0); err == nil {
		t.Error("tau = 0 accepted")
	}
}
