package accountant

import (
	"math"
	"testing"
)

// TestPLDHeterogeneousGaussian: Gaussians of different σ compose into one
// Gaussian of (Σ σ_i⁻²)^−½, whose exact ε is known (Balle & Wang 2018), so
// the PLD's heterogeneous composition (a DPSGD-F style Gaussian before the
// steps, a change of σ mid-run) must land just above it.
func TestPLDHeterogeneousGaussian(t *testing.T) {
	cases := []struct {
		name  string
		ev    Event
		sigma float64 // the equivalent single Gaussian
	}{
		{"σ=2 then σ=1.5", Composed{Events: []Event{Gaussian{Sigma: 2}, Gaussian{Sigma: 1.5}}}, 1 / math.Sqrt(0.25+1/2.25)},
		{"10 steps σ=10 then 30 steps σ=20", Composed{Events: []Event{
			SelfComposed{Count: 10, Event: Gaussian{Sigma: 10}},
			SelfComposed{Count: 30, Event: PoissonSampled{Q: 1, Event: Gaussian{Sigma: 20}}},
		}}, 1 / math.Sqrt(0.1+30.0/400)},
	}
	for _, c := range cases {
		a, err := NewPLD()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(c.ev, 1); err != nil {
			t.Fatal(err)
		}
		b, err := a.Epsilon(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		want := gaussianExactEpsilon(c.sigma, 1e-5)
		if rel := b.Epsilon/want - 1; rel < -1e-9 || rel > 2e-3 {
			t.Errorf("%s: ε %.8f, exact %.8f (rel %+.2e): want within [0, +0.2%%]", c.name, b.Epsilon, want, rel)
		}
	}
	// A σ so small that the loss reaches 1/(2σ²) = 5e17 still answers, on
	// a grid coarse enough to hold it: with probability q the record is
	// released almost exactly, so ε(δ < q) is about the largest loss.
	tiny, _ := NewPLD()
	if err := tiny.Compose(PoissonSampled{Q: 4e-4, Event: Gaussian{Sigma: 1e-9}}, 1); err != nil {
		t.Fatal(err)
	}
	if b, err := tiny.Epsilon(1e-5); err != nil || !(b.Epsilon > 4.9e17 && b.Epsilon < 5.1e17) {
		t.Errorf("σ = 1e-9: ε = %v (%v), want about 5e17", b.Epsilon, err)
	}
	// A Gaussian prefix before Poisson steps costs more than the steps alone
	// and less than the steps plus the Gaussian's own ε.
	steps := PoissonSampled{Q: 0.02, Event: Gaussian{Sigma: 1.2}}
	alone, _ := PLDPoissonEpsilon(0.02, 1.2, 200, 1e-5)
	a, _ := NewPLD()
	if err := a.Compose(Composed{Events: []Event{Gaussian{Sigma: 30}, SelfComposed{Count: 200, Event: steps}}}, 1); err != nil {
		t.Fatal(err)
	}
	b, _ := a.Epsilon(1e-5)
	if !(b.Epsilon > alone.Epsilon && b.Epsilon < alone.Epsilon+gaussianExactEpsilon(30, 1e-9)) {
		t.Errorf("prefix + steps ε %v, steps alone %v", b.Epsilon, alone.Epsilon)
	}
}
