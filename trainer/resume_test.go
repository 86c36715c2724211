package trainer

import (
	"strings"
	"testing"
)

// The settings hash records the noise a run's steps take: lattice set or
// by default is one run, continuous set or (before lattice was the
// default) by default is another; a checkpoint of a continuous-by-default
// run, resumed with the noise unset, is refused with the flag that
// continues it, and an explicit change names both noises.
func TestResumeHashFollowsTheNoiseTaken(t *testing.T) {
	base := Default()
	base.Dataset, base.Model = DatasetSynthetic, ModelLogReg
	with := func(n Noise) Config { c := base; c.Noise = n; return c }
	unset, lat, cont := with(noiseUnset), with(NoiseLattice), with(NoiseContinuous)
	if DefaultNoise != NoiseLattice {
		t.Fatalf("DefaultNoise = %q: this test describes the lattice default", DefaultNoise)
	}
	if unset.Hash() != lat.Hash() {
		t.Errorf("unset (lattice by default) and explicit lattice hash differently")
	}
	if unset.Hash() == cont.Hash() {
		t.Errorf("unset (lattice by default) and explicit continuous hash alike")
	}
	final := base
	final.FinalOnly = true // the lattice does not cover final-only: continuous by default
	finalCont := final
	finalCont.Noise = NoiseContinuous
	if final.Hash() != finalCont.Hash() {
		t.Errorf("final-only: unset (continuous by default) and explicit continuous hash differently")
	}
	for _, tc := range []struct {
		name     string
		was      Config
		wasHash  string
		now      Config
		want     string
		matching bool
	}{
		{"legacy continuous default", unset, cont.Hash(), unset, "pass --noise continuous", false},
		{"explicit continuous", cont, cont.Hash(), unset, `noise: checkpoint "continuous", now "lattice"`, false},
		{"lattice by default", unset, unset.Hash(), lat, "", true},
	} {
		if got := tc.wasHash == tc.now.Hash(); got != tc.matching {
			t.Errorf("%s: hashes match = %v, want %v", tc.name, got, tc.matching)
			continue
		}
		if tc.matching {
			continue
		}
		if d := strings.Join(settingsDiff(tc.was, tc.wasHash, tc.now), "; "); !strings.Contains(d, tc.want) {
			t.Errorf("%s: diff %q, want it to say %q", tc.name, d, tc.want)
		}
	}
}
