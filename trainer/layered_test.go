package trainer

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/models/nn"
)

// Twice sampling with hybrid clipping on conv nets: the layered path (the
// engine's per-layer per-sample gradients read in place) trains the same
// parameters as the materialised one bit for bit, with and without the
// conv layers' per-sample cache (flip and parameter layouts; layers over
// the cache limit fall back to materialising their own gradients).
func TestLayeredMatchesMaterialised(t *testing.T) {
	defer func(old int) { materialiseAlways, nn.CacheLimit = false, old }(nn.CacheLimit)
	for _, tc := range []struct {
		name       string
		model      Model
		batch      int
		steps      int
		cacheLimit int
	}{
		{"cnn", ModelCNN, 64, 3, nn.CacheLimit},
		{"cnn/no-cache", ModelCNN, 40, 2, 0},
		{"resnet20", ModelResNet20, 16, 2, nn.CacheLimit},
		{"resnet20/partial-cache", ModelResNet20, 16, 1, 64 * 2400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nn.CacheLimit = tc.cacheLimit
			params := map[bool][]float32{}
			clipped := map[bool]int{}
			for _, mat := range []bool{false, true} {
				materialiseAlways = mat
				s := convStepState(t, tc.model, true, tc.batch)
				if _, isLayered := s.grad.(layeredGradients); isLayered == mat {
					t.Fatalf("materialiseAlways=%v: strategy %T", mat, s.grad)
				}
				for range tc.steps {
					st, err := s.step()
					if err != nil {
						t.Fatal(err)
					}
					clipped[mat] += st.clipped
				}
				params[mat] = append([]float32(nil), s.model.Params()...)
			}
			a, b := params[false], params[true]
			diffs := 0
			for j := range a {
				if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
					diffs++
				}
			}
			if diffs > 0 || clipped[false] != clipped[true] {
				t.Errorf("layered vs materialised: %d of %d parameters differ; clipped %d vs %d", diffs, len(a), clipped[false], clipped[true])
			}
		})
	}
}
