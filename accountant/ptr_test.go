package accountant

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// TV1 (PCA part) of docs/srdp.md#test-vectors: τ = 24.4 exactly at n = 101,
// gap = 0.5.
func TestPCARankTau(t *testing.T) {
	if got := PCARankTau(101, 0.5); !papersClose(got, 24.4, 1e-12) {
		t.Errorf("τ = %v", got)
	}
	if d2 := PCARankTau(101, 0.5) / 101; !papersClose(d2, 0.24158415841584158, 1e-12) {
		t.Errorf("Δ2 = %v", d2)
	}
	// Decreasing to 12/gap as n grows.
	if PCARankTau(10000, 1) >= 12.2 || PCARankTau(10000, 1) <= 12 {
		t.Errorf("τ(1e4) = %v", PCARankTau(10000, 1))
	}
}

// TV7: Theorem 8 (μ = L = 1, β = 1, δ = 1e-5).
func TestPTRTheorem8(t *testing.T) {
	r := PTRPCAClosedForm(0.01, 1, 1e-5, 1, 1)
	if !r.Valid || !papersClose(r.AlphaStar, 28.0511, 1e-5) || !papersClose(r.EpsHat, 1.276799, 1e-6) ||
		!papersClose(r.Total, 1.286799, 1e-6) || !papersClose(r.Exact, 0.866933, 1e-6) {
		t.Errorf("ε=0.01: %+v", r)
	}
	r = PTRPCAClosedForm(0.1, 1, 1e-5, 1, 1)
	if r.Valid || !papersClose(r.AlphaStar, 3.7051, 1e-4) || !papersClose(r.EpsHat, 12.767993, 1e-6) {
		t.Errorf("ε=0.1 must be invalid: %+v", r)
	}
	// The numeric path: closed form c + 2√(c·log(1/δ)) with c = (a+b)²/2 per
	// unit α, a = ε, b = μτε/(2L), minimised over α ∈ (1, ∞).
	for _, eps := range []float64{0.01, 0.1} {
		got, _ := PTRPCANumeric(eps, 1, 1e-5, 1, 1, 101)
		b := PCARankTau(101, 1) * eps / 2
		c := (eps + b) * (eps + b) / 2
		want := c + 2*math.Sqrt(c*math.Log(1e5)) + eps
		if !papersClose(got, want, 1e-6) {
			t.Errorf("ε=%v numeric %v want %v", eps, got, want)
		}
	}
}

// TV8: Proposition 9.
func TestPTRProp9(t *testing.T) {
	xi, ok := PTRFailureProbability(0.6, 0.3, 1000, 1, 1e-5, false)
	if !ok || !papersClose(xi, 1.046159e-06, 1e-6) {
		t.Errorf("ξ = %v (precondition %v)", xi, ok)
	}
	xi2, _ := PTRFailureProbability(0.6, 0.3, 1000, 1, 1e-5, true)
	if !papersClose(xi2, 2.092317e-06, 1e-6) {
		t.Errorf("ξ (log 2/δ) = %v", xi2)
	}
	if _, ok := PTRFailureProbability(0.44, 0.3, 1000, 1, 1e-5, false); ok {
		t.Error("precondition δ_k ≥ 0.44046 reported as holding at 0.44")
	}
}

// The PTR test: the surrogate has sensitivity ≤ 1 under the 12.2/n gap
// bound, and the release rate matches the Laplace tail.
func TestPTRDecide(t *testing.T) {
	if got := PTRSurrogateStatistic(0.6, 0.3, 1220); !papersClose(got, 30, 1e-12) {
		t.Errorf("J' = %v", got)
	}
	if PTRSurrogateStatistic(0.2, 0.3, 1000) != 0 {
		t.Error("J' must be 0 below beta")
	}
	// Neighbouring gaps differ by ≤ 12.2/n, so J' moves by ≤ 1.
	if d := PTRSurrogateStatistic(0.5+12.2/1000, 0.3, 1000) - PTRSurrogateStatistic(0.5, 0.3, 1000); d > 1+1e-12 {
		t.Errorf("sensitivity %v", d)
	}
	// Below β the release probability is P[Lap(1/ε) > log(2/δ)/ε] = δ/4.
	s := rng.New(7)
	const trials = 400000
	eps, delta := 1.0, 0.02
	released := 0
	for i := 0; i < trials; i++ {
		u := s.Float64()
		if u == 0 {
			continue
		}
		ok, _, err := PTRPCADecide(0.1, 0.3, 1000, eps, delta, LaplaceFromUniform(u))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			released++
		}
	}
	p := float64(released) / trials
	if want := delta / 4; math.Abs(p-want) > 4*math.Sqrt(want/trials) {
		t.Errorf("release rate %v want %v", p, want)
	}
	if _, _, err := PTRPCADecide(0.5, 0.3, 50, 1, 1e-5, 0); err == nil {
		t.Error("n < 101 accepted")
	}
}
