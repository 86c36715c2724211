package accountant

import (
	"math"
	"testing"
)

// A projected DP-SGD step described to RDP and to the hidden-state accountant
// composes each account exactly as composing each alone would.
func TestStepEachMatchesSeparateAccounts(t *testing.T) {
	rdp, err := NewRDP()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTracker(rdp, NewHidden())
	if err != nil {
		t.Fatal(err)
	}
	sampled := PoissonSampled{Q: 0.01, Event: Gaussian{Sigma: 1.1}}
	proj := ProjectedSGD{P: 0.01, Sigma: 1, Clip: 1, LR: 0.1, Diameter: 2}
	const steps = 50
	for i := 0; i < steps; i++ {
		if err := tr.StepEach(map[string]Event{"rdp": sampled, "hidden": proj}); err != nil {
			t.Fatal(err)
		}
	}
	wantRDP, err := NewRDP()
	if err != nil {
		t.Fatal(err)
	}
	if err := wantRDP.Compose(sampled, steps); err != nil {
		t.Fatal(err)
	}
	wantHidden := NewHidden()
	if err := wantHidden.Compose(proj, steps); err != nil {
		t.Fatal(err)
	}
	const delta = 1e-5
	for _, tb := range tr.Bounds(delta) {
		var want Bound
		switch tb.Name {
		case "rdp":
			want, err = wantRDP.Epsilon(delta)
		case "hidden":
			want, err = wantHidden.Epsilon(delta)
		}
		if err != nil || tb.Err != nil {
			t.Fatal(err, tb.Err)
		}
		if math.Abs(tb.Epsilon-want.Epsilon) > 1e-12*want.Epsilon {
			t.Errorf("%s: tracker ε %v, separate %v", tb.Name, tb.Epsilon, want.Epsilon)
		}
	}
	if tr.Steps() != steps {
		t.Fatalf("steps %d", tr.Steps())
	}
}

func TestStepEachRefusesMissingOrInvalid(t *testing.T) {
	rdp, _ := NewRDP()
	tr, _ := NewTracker(rdp, NewHidden())
	if err := tr.StepEach(map[string]Event{"rdp": Gaussian{Sigma: 1}}); err == nil {
		t.Fatal("missing hidden event accepted")
	}
	if err := tr.StepEach(map[string]Event{"rdp": Gaussian{Sigma: -1}, "hidden": NoOp{}}); err == nil {
		t.Fatal("invalid event accepted")
	}
	if tr.Steps() != 0 {
		t.Fatal("refused step counted")
	}
}
