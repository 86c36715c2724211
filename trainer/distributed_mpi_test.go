//go:build mpi

package trainer

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/dptrain/dptrain/internal/mpi"
)

// TestMPIEquivalence runs under mpirun (see .ci/run): with a fixed seed,
// N ranks and one process take identical batches, report identical ε at
// every step, and end with parameters equal up to float32 rounding of the
// summation order (the clipped sums are reduced across ranks in MPI's
// order, not one process's). Rank 0 runs the single-process reference.
func TestMPIEquivalence(t *testing.T) {
	comm, err := mpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	defer comm.Finalize()
	mlp := Default()
	mlp.Dataset, mlp.Model, mlp.Hidden = "synthetic", "mlp", []int{16}
	mlp.BatchSize, mlp.Steps, mlp.Sigma, mlp.LR = 200, 20, 1, 0.5
	mlp.EvalEvery, mlp.CheckpointEvery = 5, 20 // a checkpoint at the last step, kept
	// Augmentation multiplicity: each rank draws the crops of the examples
	// it owns; they must be the crops one process draws for them.
	aug := Default()
	aug.Dataset, aug.Model, aug.Augmult, aug.TrainLimit, aug.TestLimit = "embedded", "cnn", 2, 600, 200
	aug.BatchSize, aug.Steps, aug.Sigma, aug.LR, aug.MaxPhysicalBatch = 64, 4, 1, 0.5, 32
	aug.EvalEvery, aug.CheckpointEvery = 2, 4
	// Adaptive clipping: the centred count is all-reduced, so C_t follows
	// the same path on every rank as in one process.
	quant := mlp
	quant.Hidden, quant.ClipQuantile, quant.Steps, quant.CheckpointEvery = []int{16}, 0.5, 10, 10
	for _, tc := range []struct {
		name string
		c    Config
	}{{"mlp", mlp}, {"augmult", aug}, {"clip-quantile", quant}} {
		t.Run(tc.name, func(t *testing.T) { mpiEquivalence(t, comm, tc.name, tc.c) })
	}
}

func mpiEquivalence(t *testing.T, comm mpi.Comm, name string, c Config) {
	base := filepath.Join(os.TempDir(), "dptrain-mpi-equivalence-"+name)
	c.Seeded, c.Epsilon, c.Plots = true, 0, false
	c.PrivateDiagnostics, c.KeepCheckpoint, c.Distributed = true, true, "mpi"
	c.OutDir = filepath.Join(base, "dist")
	if comm.Rank() == 0 {
		os.RemoveAll(base)
	}
	if err := comm.Barrier(); err != nil {
		t.Fatal(err)
	}
	dist, err := Run(context.Background(), c, Options{Reducer: comm})
	if err != nil {
		t.Fatal(err)
	}
	if comm.Rank() != 0 {
		return
	}
	one := c
	one.Distributed, one.OutDir = "", filepath.Join(base, "one")
	ref, err := Run(context.Background(), one, Options{})
	if err != nil {
		t.Fatal(err)
	}
	da, db := mustMetrics(t, one.OutDir), mustMetrics(t, c.OutDir)
	if len(da) != len(db) {
		t.Fatalf("%d vs %d steps", len(da), len(db))
	}
	for i := range da {
		if da[i].BatchSize != db[i].BatchSize || da[i].EpsilonBest != db[i].EpsilonBest {
			t.Fatalf("step %d: batch %d vs %d, ε %v vs %v", i+1, da[i].BatchSize, db[i].BatchSize, da[i].EpsilonBest, db[i].EpsilonBest)
		}
		if math.Abs(da[i].Loss-db[i].Loss) > 1e-4*math.Max(1, math.Abs(da[i].Loss)) {
			t.Errorf("step %d: loss %v vs %v", i+1, da[i].Loss, db[i].Loss)
		}
	}
	maxDiff, maxAbs := checkpointParamsDiff(t, c.OutDir, one.OutDir)
	if maxDiff > 1e-4*maxAbs {
		t.Errorf("parameters differ by up to %v (largest parameter %v): more than float32 rounding", maxDiff, maxAbs)
	}
	if ref.Best.Epsilon != dist.Best.Epsilon || ref.TestAcc != dist.TestAcc && math.Abs(ref.TestAcc-dist.TestAcc) > 0.002 {
		t.Errorf("one process: ε %v acc %v; %d ranks: ε %v acc %v", ref.Best.Epsilon, ref.TestAcc, comm.Size(), dist.Best.Epsilon, dist.TestAcc)
	}
	t.Logf("%d ranks vs one process: identical batches and ε over %d steps, parameters within %.3g (largest %.3g), test accuracy %.4f vs %.4f", comm.Size(), len(da), maxDiff, maxAbs, dist.TestAcc, ref.TestAcc)
}
