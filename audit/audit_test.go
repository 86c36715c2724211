package audit

import (
	"math"
	"reflect"
	"testing"

	"github.com/dptrain/dptrain/audit/lowerbound"
	"github.com/dptrain/dptrain/trainer"
)

func TestGuessCounts(t *testing.T) {
	for m, want := range map[int][]int{1000: {50, 100, 200, 500}, 10: {1, 2, 5}, 2: {1}} {
		if got := GuessCounts(m); !reflect.DeepEqual(got, want) {
			t.Errorf("m = %d: %v, want %v", m, got, want)
		}
	}
}

// Evaluate divides the significance among every vector × guess count it
// tried: a perfect vector among two gives the bound of 2·4 tests.
func TestEvaluateCorrectsForChoices(t *testing.T) {
	m := 200
	in := make([]bool, m)
	perfect, noise := make([]float64, m), make([]float64, m)
	for i := range in {
		in[i] = i%3 == 0
		if in[i] {
			perfect[i] = 1
		}
		noise[i] = float64((i * 37) % m)
	}
	ev := &trainer.CanaryEvidence{Kind: "gradient", Included: in, Scores: map[string][]float64{"a": perfect, "b": noise}}
	res, err := Evaluate(ev, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	want, err := lowerbound.Scores(perfect, in, GuessCounts(m), 1e-5, 1-0.05/2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Thresholds != 8 || math.Abs(res.EpsilonLower-want.EpsilonLower) > 1e-12 || res.EpsilonLower <= 0 {
		t.Errorf("%+v; want ε %v from 8 tests", res, want.EpsilonLower)
	}
}
