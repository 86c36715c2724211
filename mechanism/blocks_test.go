package mechanism

import (
	"errors"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
)

// The accountant's blocks copy the clipper's block bounds and take one
// noise std for all blocks or one each; a count mismatch or an invalid
// block is refused.
func TestAccountantBlocks(t *testing.T) {
	sens := clip.Sensitivity{Blocks: []clip.Block{{Name: "b0", Dim: 100, C2: 2.5, D0: 1}, {Name: "b1", Dim: 50, C2: 1.5, D0: 4}}}
	for _, tc := range []struct {
		sens  clip.Sensitivity
		sigma []float64
		want  []accountant.Block
		bad   bool
	}{
		{sens, []float64{0.5}, []accountant.Block{{Dim: 100, C2: 2.5, D0: 1, Sigma: 0.5}, {Dim: 50, C2: 1.5, D0: 4, Sigma: 0.5}}, false},
		{sens, []float64{0.5, 2}, []accountant.Block{{Dim: 100, C2: 2.5, D0: 1, Sigma: 0.5}, {Dim: 50, C2: 1.5, D0: 4, Sigma: 2}}, false},
		{sens, []float64{1, 2, 3}, nil, true},
		{sens, []float64{0}, nil, true},
		{clip.Sensitivity{Blocks: []clip.Block{{Dim: 3, C2: -1}}}, []float64{1}, nil, true},
	} {
		got, err := accountantBlocks(tc.sens, tc.sigma)
		if tc.bad {
			if err == nil {
				t.Errorf("σ %v: accepted %v", tc.sigma, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("σ %v: %v", tc.sigma, err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("σ %v: %v, want %v", tc.sigma, got, tc.want)
		}
		for j := range got {
			if got[j] != tc.want[j] {
				t.Errorf("σ %v, block %d: %+v, want %+v", tc.sigma, j, got[j], tc.want[j])
			}
		}
	}
	if _, err := accountantBlocks(clip.Sensitivity{Blocks: []clip.Block{{Dim: 3, C2: 1, D0: -2}}}, []float64{1}); !errors.Is(err, accountant.ErrInvalid) {
		t.Errorf("negative d0: %v, want accountant.ErrInvalid", err)
	}
}
