package mechanism

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/preprocess"
)

// The mechanism decides which accountants a run is charged to and the
// event each gets: PLD only for Poisson DP-SGD without preprocessing or
// subspace clipping (calibrating unless the user asked for RDP), the
// hidden-state accountant only for projected runs without private or
// declared preprocessing, the comparison RDP only with SRDP preprocessing;
// each step's events name exactly the tracker's accountants.
func TestAccounts(t *testing.T) {
	pre := &preprocess.Sensitivity{}
	for _, tc := range []struct {
		name       string
		spec       Spec
		run        Run
		pld, calib bool
		hidden     bool
		plain      bool
		tracker    []string // accountants, sorted
		note       string
	}{
		{"poisson", Spec{Sampler: Poisson, Clip: Flat}, Run{}, true, true, false, false, []string{"pld", "rdp"}, ""},
		{"poisson, rdp asked", Spec{Sampler: Poisson, Clip: Flat}, Run{RDPOnly: true}, true, false, false, false, []string{"pld", "rdp"}, ""},
		{"shuffle", Spec{Sampler: Shuffle, Clip: Flat}, Run{}, false, false, false, false, []string{"rdp"}, ""},
		{"twice", Spec{Sampler: Twice, Q2: 0.5, Clip: Hybrid, D0: 4}, Run{}, false, false, false, false, []string{"twice"}, ""},
		{"projected", Spec{Sampler: Poisson, Clip: Flat, Radius: 3, FinalOnly: true}, Run{Optimizer: "sgd"}, true, true, true, false, []string{"hidden", "pld", "rdp"}, ""},
		{"projected, clipped count", Spec{Sampler: Poisson, Clip: Flat, Radius: 3, FinalOnly: true, ClippedCountSigma: 5}, Run{Optimizer: "sgd"}, true, true, true, false, []string{"hidden", "pld", "rdp"}, HiddenCountReason},
		{"projected, private prefix", Spec{Sampler: Poisson, Clip: Flat, Radius: 3, Prefix: []accountant.Event{accountant.Gaussian{Sigma: 4}}}, Run{Optimizer: "sgd"}, true, true, false, false, []string{"pld", "rdp"}, "hidden-state bound not computed"},
		{"srdp", Spec{Sampler: Poisson, Clip: Flat, Preprocess: pre}, Run{}, false, false, false, true, []string{"rdp-ignoring-preprocessing", "srdp"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.spec
			sp.N, sp.Batch, sp.C = 100, 10, 1
			c, err := sp.NewClipper(4, nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err := New(sp, c)
			if err != nil {
				t.Fatal(err)
			}
			a, err := m.Accounts(tc.run)
			if err != nil {
				t.Fatal(err)
			}
			if a.PLD != tc.pld || (a.PLDErr == nil) != tc.pld || a.CalibratePLD != tc.calib || a.Hidden != tc.hidden || (a.Plain != "") != tc.plain {
				t.Fatalf("PLD %v (%v) calibrating %v, hidden %v, plain %q; want %v, %v, %v, %v", a.PLD, a.PLDErr, a.CalibratePLD, a.Hidden, a.Plain, tc.pld, tc.calib, tc.hidden, tc.plain)
			}
			tr, primary, notes, err := a.NewTracker()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, b := range tr.Bounds(1e-5) {
				names = append(names, b.Name)
			}
			sort.Strings(names)
			if !slices.Equal(names, tc.tracker) {
				t.Fatalf("tracker %v, want %v", names, tc.tracker)
			}
			if tc.note != "" && !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
				t.Errorf("notes %q, want one saying %q", notes, tc.note)
			}
			ev := m.StepEvent(1.2, 1)
			evs := a.Events(primary, ev, 1.2, 0.5)
			if evs == nil {
				if len(names) != 1 && !(len(names) == 2 && a.PLD) {
					t.Fatalf("no per-accountant events for tracker %v", names)
				}
				return
			}
			var keys []string
			for k := range evs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if !slices.Equal(keys, names) || evs[primary] != ev {
				t.Fatalf("events for %v, tracker %v; primary's %v, want %v", keys, names, evs[primary], ev)
			}
			if a.Hidden && evs["hidden"] != m.HiddenEvent(1.2, 0.5) {
				t.Fatalf("hidden event %v, want %v", evs["hidden"], m.HiddenEvent(1.2, 0.5))
			}
			if err := tr.StepEach(evs); err != nil {
				t.Fatal(err)
			}
		})
	}
}
