package accountant

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// A failure probability adds to δ: ε at δ with a tail τ is ε at δ − τ
// without it, Delta(ε) grows by τ, the tail survives a save, and the RDP
// accountant refuses it.
func TestFailureProbability(t *testing.T) {
	ev := PoissonSampled{Q: 0.01, Event: Gaussian{Sigma: 1}}
	plain, _ := NewPLD()
	if err := plain.Compose(ev, 300); err != nil {
		t.Fatal(err)
	}
	tailed, _ := NewPLD()
	step := Composed{Events: []Event{ev, FailureProbability{Delta: 1e-8}}}
	for range 300 {
		if err := tailed.Compose(step, 1); err != nil {
			t.Fatal(err)
		}
	}
	if !(tailed.tail >= 3e-6 && tailed.tail <= 3e-6*(1+1e-12)) {
		t.Fatalf("tail %v, want 300·1e-8 rounded up", tailed.tail)
	}
	want, err := plain.Epsilon(1e-5 - 3e-6)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tailed.Epsilon(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if got.Delta != 1e-5 || math.Abs(got.Epsilon-want.Epsilon) > 1e-9*want.Epsilon || got.Epsilon < want.Epsilon {
		t.Errorf("ε %v at δ 1e-5 with tail 3e-6; plain at 7e-6: %v", got, want.Epsilon)
	}
	d0, _ := plain.Delta(1)
	d1, _ := tailed.Delta(1)
	if !(d1 >= d0+3e-6) || d1 > d0+3e-6+1e-15 {
		t.Errorf("Delta(1) %v, plain %v + 3e-6", d1, d0)
	}
	if _, err := tailed.Epsilon(2e-6); !errors.Is(err, ErrPLDUncertified) {
		t.Errorf("δ below the tail: %v", err)
	}
	b, err := json.Marshal(tailed)
	if err != nil {
		t.Fatal(err)
	}
	back, _ := NewPLD()
	if err := json.Unmarshal(b, back); err != nil {
		t.Fatal(err)
	}
	if e, _ := back.Epsilon(1e-5); e.Epsilon != got.Epsilon {
		t.Errorf("saved account: ε %v, want %v", e.Epsilon, got.Epsilon)
	}
	r, _ := NewRDP()
	if err := r.Compose(FailureProbability{Delta: 1e-8}, 1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("rdp: %v, want a refusal", err)
	}
	if err := (FailureProbability{Delta: 1}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("δ = 1 validated: %v", err)
	}
}
