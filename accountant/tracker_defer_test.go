package accountant

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestTrackerDeferred: a deferred accountant composes every step but is
// left out of Bounds and Tightest while SkipDeferred is on; a tracker with
// PLD beside RDP resumed mid-run ends equal to an uninterrupted one.
func TestTrackerDeferred(t *testing.T) {
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
	steps := func(tr *Tracker, n int) {
		for range n {
			if err := tr.Step(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	full := newT()
	steps(full, 200)
	part := newT()
	steps(part, 80)
	raw, err := json.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	resumed := newT()
	if err := json.Unmarshal(raw, resumed); err != nil {
		t.Fatal(err)
	}
	steps(resumed, 120)
	a, b := full.Bounds(1e-5), resumed.Bounds(1e-5)
	if len(a) != 2 || len(b) != 2 || a[0].Bound != b[0].Bound || a[1].Bound != b[1].Bound {
		t.Fatalf("resumed %+v, uninterrupted %+v", b, a)
	}
	best, err := full.TightestFor(1e-5, AddRemove)
	if err != nil || best.Accountant != "pld" || !(best.Epsilon < a[0].Epsilon) {
		t.Fatalf("tightest %+v (%v): want pld below rdp %v", best, err, a[0].Epsilon)
	}
	full.SkipDeferred(true)
	if bs := full.Bounds(1e-5); len(bs) != 1 || bs[0].Name != "rdp" {
		t.Fatalf("skipping deferred: %+v", bs)
	}
	if best, _ := full.TightestFor(1e-5, AddRemove); best.Accountant != "rdp" {
		t.Fatalf("skipping deferred: tightest %+v", best)
	}
	if !slices.Equal(full.Deferred(), []string{"pld"}) {
		t.Fatalf("deferred %v", full.Deferred())
	}
	full.SkipDeferred(false)
	if err := full.SetDeferred("nope", true); err == nil {
		t.Fatal("unknown accountant accepted")
	}
}
