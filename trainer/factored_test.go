package trainer

import (
	"context"
	"github.com/dptrain/dptrain/mechanism"
	"testing"
)

// Twice sampling with flat and hybrid clipping on an MLP: the factored path
// (no gradient materialised) trains the same model as the materialised one,
// with the same batches, masks and ε, to float32 rounding of the norms.
func TestFactoredMatchesMaterialised(t *testing.T) {
	defer func() { materialiseAlways = false }()
	for _, clipName := range []string{"flat", "hybrid"} {
		run := func(materialise bool) *Summary {
			materialiseAlways = materialise
			c := Default()
			c.Dataset, c.Model, c.Hidden, c.Sampler, c.Q2, c.Clip = "synthetic", "mlp", []int{24}, "twice", 0.5, mechanism.Clip(clipName)
			c.BatchSize, c.Steps, c.Sigma, c.Epsilon, c.LR, c.ClipNorm, c.D0 = 100, 8, 1, 0, 0.5, 1, 30
			c.Seeded, c.Plots, c.EvalEvery, c.KeepCheckpoint, c.CheckpointEvery = true, false, 4, true, 8
			c.OutDir = t.TempDir()
			sum, err := Run(context.Background(), c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sum.OutDir = c.OutDir
			return sum
		}
		fact, mat := run(false), run(true)
		if fact.Best.Epsilon != mat.Best.Epsilon || fact.Samples != mat.Samples {
			t.Fatalf("%s: ε %v vs %v, samples %d vs %d", clipName, fact.Best.Epsilon, mat.Best.Epsilon, fact.Samples, mat.Samples)
		}
		maxDiff, maxAbs := checkpointParamsDiff(t, fact.OutDir, mat.OutDir)
		if maxDiff > 1e-4*maxAbs || maxAbs == 0 {
			t.Errorf("%s: parameters differ by up to %v (largest %v)", clipName, maxDiff, maxAbs)
		}
		t.Logf("%s: factored and materialised parameters within %.3g (largest %.3g), test accuracy %.4f vs %.4f", clipName, maxDiff, maxAbs, fact.TestAcc, mat.TestAcc)
	}
}
