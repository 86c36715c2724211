package accountant

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
)

// fixedAccountant reports a fixed bound and refuses events of kind refuse.
type fixedAccountant struct {
	name     string
	eps      float64
	relation Relation
	refuse   string
	composed int
}

func (f *fixedAccountant) Name() string { return f.name }
func (f *fixedAccountant) Supports(ev Event) error {
	if Kind(ev) == f.refuse {
		return Unsupported(f.name, ev)
	}
	return nil
}
func (f *fixedAccountant) Compose(ev Event, count int) error {
	if err := f.Supports(ev); err != nil {
		return err
	}
	f.composed += count
	return nil
}
func (f *fixedAccountant) Epsilon(delta float64) (Bound, error) {
	return Bound{Accountant: f.name, Epsilon: f.eps, Delta: delta, Relation: f.relation}, nil
}
func (f *fixedAccountant) Delta(float64) (float64, error) { return 0, nil }
func (f *fixedAccountant) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]int{"composed": f.composed})
}
func (f *fixedAccountant) UnmarshalJSON(b []byte) error {
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	f.composed = m["composed"]
	return nil
}

func TestTrackerTightestNeverMixesRelations(t *testing.T) {
	a := &fixedAccountant{name: "a", eps: 3, relation: AddRemove}
	b := &fixedAccountant{name: "b", eps: 1, relation: ReplaceOne}
	c := &fixedAccountant{name: "c", eps: 2, relation: AddRemove}
	d := &fixedAccountant{name: "d", eps: 2.5, relation: AddRemove}
	tr, err := NewTracker(a, b, c, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetApplicable("c", false, "intermediate iterates are released"); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetApplicable("d", false, ""); err == nil {
		t.Error("not applicable without a reason accepted")
	}
	got := tr.Tightest(1e-5)
	if len(got) != 2 || got[0].Accountant != "d" || got[0].Relation != AddRemove || got[1].Accountant != "b" {
		t.Errorf("tightest %+v, want d (add-remove, 2.5) and b (replace-one, 1)", got)
	}
	if err := tr.SetApplicable("d", false, "not for this run"); err != nil {
		t.Fatal(err)
	}
	ar, err := tr.TightestFor(1e-5, AddRemove)
	if err != nil || ar.Accountant != "a" || ar.Epsilon != 3 {
		t.Errorf("add-remove tightest %+v %v, want a at 3 (c and d are not applicable, b is replace-one)", ar, err)
	}
	bounds := tr.Bounds(1e-5)
	if bounds[2].Applicable || bounds[2].Reason != "intermediate iterates are released" || bounds[2].Epsilon != 2 {
		t.Errorf("bound c %+v", bounds[2])
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		_ = tr.SetApplicable(n, n == "b", "off")
	}
	if _, err := tr.TightestFor(1e-5, AddRemove); err == nil {
		t.Error("no applicable add-remove bound, but one returned")
	}
	if _, err := NewTracker(a, &fixedAccountant{name: "a"}); err == nil {
		t.Error("duplicate name accepted")
	}
}

func TestTrackerStopsFailingAccountant(t *testing.T) {
	r, _ := NewRDP()
	f := &fixedAccountant{name: "picky", eps: 0.1, relation: AddRemove, refuse: "sampled_without_replacement"}
	tr, _ := NewTracker(r, f)
	p := PoissonSampled{Q: 0.01, Event: Gaussian{Sigma: 1}}
	if err := tr.Step(p); err != nil {
		t.Fatal(err)
	}
	// Invalid event: refused before anything changes.
	if err := tr.Step(PoissonSampled{Q: 2, Event: Gaussian{Sigma: 1}}); !errors.Is(err, ErrInvalid) || tr.Steps() != 1 || f.composed != 1 {
		t.Errorf("invalid event: err %v steps %d composed %d", err, tr.Steps(), f.composed)
	}
	// rdp refuses the mixed relation, picky refuses the kind: both stop.
	err := tr.Step(SampledWithoutReplacement{N: 100, B: 10, Event: Gaussian{Sigma: 1}})
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, ErrMixedRelations) {
		t.Errorf("step error %v", err)
	}
	if err := tr.Step(p); err != nil {
		t.Errorf("stopped accountants must be skipped: %v", err)
	}
	for _, b := range tr.Bounds(1e-5) {
		if b.Applicable || b.Err == nil || b.Reason == "" {
			t.Errorf("stopped accountant reported as %+v", b)
		}
	}
	if got := tr.Tightest(1e-5); len(got) != 0 {
		t.Errorf("tightest from stopped accountants: %+v", got)
	}
}

// trackerEvents is a run whose noise changes mid-way (σ schedule).
func trackerEvent(step int) Event {
	sigma := 1.1
	if step >= 300 {
		sigma = 0.9
	}
	return PoissonSampled{Q: 0.02, Event: Gaussian{Sigma: sigma}}
}

func newTestTracker(t *testing.T) *Tracker {
	abs, _ := NewRDP()
	signed, _ := NewRDP(WithSeries(SignedSeries), WithName("rdp-signed"))
	tr, err := NewTracker(abs, signed)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTrackerResumeIsExact: saving after k steps and resuming gives the
// bit-identical account of an uninterrupted run.
func TestTrackerResumeIsExact(t *testing.T) {
	const total, cut = 1000, 437
	full := newTestTracker(t)
	for i := range total {
		if err := full.Step(trackerEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	first := newTestTracker(t)
	for i := range cut {
		_ = first.Step(trackerEvent(i))
	}
	_ = first.SetApplicable("rdp-signed", false, "signed series is not a proven bound")
	saved, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	resumed := newTestTracker(t)
	if err := json.Unmarshal(saved, resumed); err != nil {
		t.Fatal(err)
	}
	for i := cut; i < total; i++ {
		_ = resumed.Step(trackerEvent(i))
	}
	_ = full.SetApplicable("rdp-signed", false, "signed series is not a proven bound")
	if resumed.Steps() != total {
		t.Errorf("resumed steps %d", resumed.Steps())
	}
	for _, delta := range []float64{1e-5, 1e-8} {
		fb, rb := full.Bounds(delta), resumed.Bounds(delta)
		for i := range fb {
			if fb[i].Bound != rb[i].Bound || fb[i].Applicable != rb[i].Applicable || fb[i].Reason != rb[i].Reason {
				t.Errorf("delta %v: uninterrupted %+v, resumed %+v", delta, fb[i], rb[i])
			}
		}
		t.Logf("delta %v: eps %.17g (order %v)", delta, fb[0].Epsilon, fb[0].Order)
	}
	a, _ := json.Marshal(full)
	b, _ := json.Marshal(resumed)
	if !bytes.Equal(a, b) {
		t.Errorf("states differ:\n%s\n%s", a, b)
	}
	// A tracker with other accountants refuses the state.
	other, _ := NewTracker(&fixedAccountant{name: "rdp"}, &fixedAccountant{name: "x"})
	if err := json.Unmarshal(saved, other); err == nil {
		t.Error("state loaded into a tracker with different accountants")
	}
}

// TestTrackerMatchesOneShot: ε after every step equals the one-shot
// composition of that many steps.
func TestTrackerMatchesOneShot(t *testing.T) {
	r, _ := NewRDP()
	tr, _ := NewTracker(r)
	ev := PoissonSampled{Q: 0.04, Event: Gaussian{Sigma: 1.5}}
	for i := 1; i <= 200; i++ {
		if err := tr.Step(ev); err != nil {
			t.Fatal(err)
		}
		if i%50 != 0 {
			continue
		}
		got, err := tr.TightestFor(1e-5, AddRemove)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := PoissonEpsilon(0.04, 1.5, i, 1e-5)
		if !rdpClose(got.Epsilon, want.Epsilon, 1e-12) || got.Order != want.Order {
			t.Errorf("step %d: tracker %v at %v, one-shot %v at %v", i, got.Epsilon, got.Order, want.Epsilon, want.Order)
		}
	}
}

func FuzzTrackerUnmarshal(f *testing.F) {
	tr := func() *Tracker {
		r, _ := NewRDP(WithOrders([]float64{1.5, 2, 8}))
		x, _ := NewTracker(r)
		return x
	}
	seed := tr()
	_ = seed.Step(PoissonSampled{Q: 0.1, Event: Gaussian{Sigma: 1}})
	data, _ := json.Marshal(seed)
	f.Add(data)
	f.Add([]byte(`{"steps":-1,"accountants":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := tr()
		if err := json.Unmarshal(data, x); err != nil {
			return
		}
		for _, b := range x.Bounds(1e-5) {
			if b.Err == nil && (math.IsNaN(b.Epsilon) || b.Epsilon < 0) {
				t.Fatalf("state %s gives bound %+v", data, b)
			}
		}
		if _, err := json.Marshal(x); err != nil {
			t.Fatal(fmt.Errorf("re-marshal: %w", err))
		}
	})
}

// BenchmarkTrackerStep is one training step: compose and ask ε(δ).
func BenchmarkTrackerStep(b *testing.B) {
	r, _ := NewRDP()
	tr, _ := NewTracker(r)
	ev := PoissonSampled{Q: 256.0 / 60000, Event: Gaussian{Sigma: 1.1}}
	for b.Loop() {
		if err := tr.Step(ev); err != nil {
			b.Fatal(err)
		}
		if _, err := tr.TightestFor(1e-5, AddRemove); err != nil {
			b.Fatal(err)
		}
	}
}
