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
	base := filepath.Join(os.TempDir(), "dptrain-mpi-equivalence")
	c := Default()
	c.Seeded, c.Dataset, c.Model, c.Hidden = true, "synthetic", "mlp", []int{16}
	c.BatchSize, c.Steps, c.Epsilon, c.Sigma, c.LR = 200, 20, 0, 1, 0.5
	c.EvalEvery, c.CheckpointEvery, c.Plots = 5, 20, false // a checkpoint at the last step, kept
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
	pa, pb := mustCheckpoint(t, one.OutDir), mustCheckpoint(t, c.OutDir)
	a, b := make([]float32, len(pa.Params)/4), make([]float32, len(pb.Params)/4)
	setFloat32s(a, pa.Params)
	setFloat32s(b, pb.Params)
	var maxDiff, maxAbs float64
	for i := range a {
		maxDiff = math.Max(maxDiff, math.Abs(float64(a[i]-b[i])))
		maxAbs = math.Max(maxAbs, math.Abs(float64(a[i])))
	}
	if maxDiff > 1e-4*maxAbs {
		t.Errorf("parameters differ by up to %v (largest parameter %v): more than float32 rounding", maxDiff, maxAbs)
	}
	if ref.Best.Epsilon != dist.Best.Epsilon || ref.TestAcc != dist.TestAcc && math.Abs(ref.TestAcc-dist.TestAcc) > 0.002 {
		t.Errorf("one process: ε %v acc %v; %d ranks: ε %v acc %v", ref.Best.Epsilon, ref.TestAcc, comm.Size(), dist.Best.Epsilon, dist.TestAcc)
	}
	t.Logf("%d ranks vs one process: identical batches and ε over %d steps, parameters within %.3g (largest %.3g), test accuracy %.4f vs %.4f", comm.Size(), len(da), maxDiff, maxAbs, dist.TestAcc, ref.TestAcc)
}
