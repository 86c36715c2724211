package bandmf

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

// TestAmplifiedEventMatchesDPAccounting composes AmplifiedEvent on the
// PLD and RDP accountants at the points of testdata/dp_accounting_bandmf.py,
// whose output (dp_accounting 0.6.0, the same event built from its own
// SelfComposedDpEvent and PoissonSampledDpEvent) is committed beside it.
// PLD: within [−0.1%, +0.5%] of dp_accounting's pessimistic PLD, the band
// of the accountant's own reference test; RDP: within 1%.
func TestAmplifiedEventMatchesDPAccounting(t *testing.T) {
	f, err := os.Open("testdata/dp_accounting_bandmf.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	points := 0
	for sc.Scan() {
		var p struct {
			Steps, Bands, Parts, Count int
			Q, Sigma, Delta, PLD, RDP  float64
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		points++
		c := make([]float64, p.Bands)
		c[0] = 1
		s, _ := NewStrategy(c)
		ev, err := AmplifiedEvent(s, p.Steps, p.Parts, p.Q, p.Sigma)
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.(accountant.SelfComposed).Count; got != p.Count {
			t.Fatalf("T=%d parts=%d: %d participations, dp_accounting's script %d", p.Steps, p.Parts, got, p.Count)
		}
		pld, err := accountant.NewPLD()
		if err != nil {
			t.Fatal(err)
		}
		rdp, err := accountant.NewRDP()
		if err != nil {
			t.Fatal(err)
		}
		for name, acc := range map[string]interface {
			Compose(accountant.Event, int) error
			Epsilon(float64) (accountant.Bound, error)
		}{"pld": pld, "rdp": rdp} {
			if err := acc.Compose(ev, 1); err != nil {
				t.Fatal(err)
			}
			b, err := acc.Epsilon(p.Delta)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ref, lo, hi := p.PLD, -1e-3, 5e-3
			if name == "rdp" {
				ref, lo, hi = p.RDP, -1e-2, 1e-2
			}
			rel := b.Epsilon/ref - 1
			t.Logf("T=%d b=%d parts=%d q=%.4g σ=%g δ=%g: %s ε = %.6g, dp_accounting %.6g (%+.3f%%)", p.Steps, p.Bands, p.Parts, p.Q, p.Sigma, p.Delta, name, b.Epsilon, ref, 100*rel)
			if !(rel >= lo && rel <= hi) {
				t.Errorf("T=%d b=%d parts=%d: %s ε = %.6g, %+.3f%% from dp_accounting's %.6g", p.Steps, p.Bands, p.Parts, name, b.Epsilon, 100*rel, ref)
			}
		}
	}
	if points < 10 {
		t.Fatalf("%d reference points, want at least 10", points)
	}
}

// One band, one part: DP-SGD's event exactly.
func TestAmplifiedEventOneBandIsDPSGD(t *testing.T) {
	ev, err := AmplifiedEvent(Identity(), 1000, 1, 0.01, 1.1)
	if err != nil {
		t.Fatal(err)
	}
	want := accountant.SelfComposed{Event: accountant.PoissonSampled{Q: 0.01, Event: accountant.Gaussian{Sigma: 1.1}}, Count: 1000}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("event %#v, want %#v", ev, want)
	}
}

func TestAmplifiedEventRefuses(t *testing.T) {
	s, _ := NewStrategy([]float64{1, 0.5, 0.2, 0.1})
	for _, tc := range []struct {
		steps, parts int
		q, sigma     float64
	}{
		{100, 3, 0.1, 1}, // fewer parts than bands: a wrong band
		{0, 4, 0.1, 1},   // no steps
		{100, 4, 1.5, 1}, // q > 1
		{100, 4, 0.1, 0}, // no noise
		{100, 4, 0.1, math.Inf(1)},
	} {
		if _, err := AmplifiedEvent(s, tc.steps, tc.parts, tc.q, tc.sigma); err == nil {
			t.Errorf("T=%d parts=%d q=%v σ=%v accepted", tc.steps, tc.parts, tc.q, tc.sigma)
		}
	}
	if got := Participations(2340, 64); got != 37 {
		t.Errorf("Participations(2340, 64) = %d, want 37", got)
	}
}
