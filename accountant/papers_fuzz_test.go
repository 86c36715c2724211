package accountant

import (
	"encoding/json"
	"testing"
)

// FuzzPapersAccountantState feeds arbitrary bytes to the state parsers of the
// twice, hidden and srdp accountants: they either refuse the input or yield
// an account whose queries neither panic nor change on a second round trip.
func FuzzPapersAccountantState(f *testing.F) {
	seed := func(a Accountant, ev Event) {
		_ = a.Compose(ev, 3)
		b, _ := json.Marshal(a)
		f.Add(b)
	}
	seed(NewTwiceWith(8, TwiceBalle), NewTwiceSampled(0.1, 0.5, 1, 10))
	seed(NewHidden(), ProjectedSGD{P: 0.01, Sigma: 1, Clip: 1, LR: 0.1, Diameter: 2})
	seed(NewHidden(), ProjectedSGD{P: 0.01, Sigma: 1, Clip: 1, LR: 0.1, Diameter: 2, Poisson: true})
	seed(NewSRDP(), Preprocessed{Delta2: 0.1, DeltaInf: 2, Event: PoissonSampled{Q: 0.1, Event: Gaussian{Sigma: 1}}})
	f.Add([]byte(`{"version":1,"alpha_max":3,"conversion":1,"rdp":[0.5,1e308]}`))
	f.Add([]byte(`{"version":1,"segments":[{"steps":5,"p":1,"sigma":1e-300,"diameter":1e300}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, a := range []Accountant{NewTwiceWith(8, TwiceBalle), NewHidden(), NewSRDP()} {
			if err := a.UnmarshalJSON(data); err != nil {
				continue
			}
			_, _ = a.Epsilon(1e-5)
			_, _ = a.Delta(1)
			b, err := json.Marshal(a)
			if err != nil {
				t.Fatalf("%s: marshal after unmarshal: %v", a.Name(), err)
			}
			if err := a.UnmarshalJSON(b); err != nil {
				t.Fatalf("%s: own state refused: %v", a.Name(), err)
			}
			b2, _ := json.Marshal(a)
			if string(b) != string(b2) {
				t.Fatalf("%s: state not stable: %s vs %s", a.Name(), b, b2)
			}
		}
	})
}
