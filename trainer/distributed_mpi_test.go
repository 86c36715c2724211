//go:build mpi

package trainer

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/internal/mpi"
)

// The tests named TestMPI… run under mpirun (see .ci/run) and share one
// communicator, initialised by the first of them and finalised at exit.
var (
	commOnce sync.Once
	comm     mpi.Comm
	commErr  error
)

func testComm(t *testing.T) mpi.Comm {
	t.Helper()
	commOnce.Do(func() { comm, commErr = mpi.Init() })
	if commErr != nil {
		t.Fatal(commErr)
	}
	return comm
}

func TestMain(m *testing.M) {
	code := m.Run()
	if comm != nil {
		comm.Finalize()
	}
	os.Exit(code)
}

// mpiMLP is a small MLP run for the fault tests.
func mpiMLP(out string) Config {
	c := Default()
	c.Dataset, c.Model, c.Hidden = "synthetic", "mlp", []int{16}
	c.BatchSize, c.Steps, c.Sigma, c.LR = 200, 20, 1, 0.5
	c.Seeded, c.Epsilon, c.Plots, c.Distributed, c.OutDir = true, 0, false, DistributedMPI, out
	return c
}

// TestMPIRefusesDifferingBinaries: when one rank's binary differs from
// rank 0's, every rank refuses to start, naming that rank.
func TestMPIRefusesDifferingBinaries(t *testing.T) {
	comm := testComm(t)
	if comm.Size() < 2 {
		t.Skip("needs mpirun -np 2 or more")
	}
	saved := buildID
	defer func() { buildID = saved }()
	if comm.Rank() == 1 {
		buildID = func() (string, error) { return "another-build", nil }
	}
	c := mpiMLP(filepath.Join(os.TempDir(), "dptrain-mpi-version"))
	_, err := Run(context.Background(), c, Options{Reducer: comm, Overwrite: true})
	if err == nil || !strings.Contains(err.Error(), "binary of rank 1 differs from rank 0's") {
		t.Fatalf("rank %d: a rank with another binary gave %v, want a refusal naming rank 1", comm.Rank(), err)
	}
}

// TestMPIRefusesDifferingSettingsNamingThem: ranks given different flags
// refuse on every rank, naming the flags that differ (not only a hash).
func TestMPIRefusesDifferingSettingsNamingThem(t *testing.T) {
	comm := testComm(t)
	if comm.Size() < 2 {
		t.Skip("needs mpirun -np 2 or more")
	}
	c := mpiMLP(filepath.Join(os.TempDir(), "dptrain-mpi-flags"))
	if comm.Rank() == 1 {
		c.LR, c.Steps = 0.25, 30
	}
	_, err := Run(context.Background(), c, Options{Reducer: comm, Overwrite: true})
	if err == nil || !strings.Contains(err.Error(), "the settings of rank 1 differ from rank 0's in steps, lr") || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("rank %d: ranks with other flags gave %v, want a refusal naming steps and lr", comm.Rank(), err)
	}
}

// TestMPIRefusesDifferingData: ranks with the same flags but different
// data (300 training rows against 200, or another test set) refuse on
// every rank, naming the split that differs; before, they trained to the
// end and nothing noticed.
func TestMPIRefusesDifferingData(t *testing.T) {
	comm := testComm(t)
	if comm.Size() < 2 {
		t.Skip("needs mpirun -np 2 or more")
	}
	gen := func(n int, seed uint64) *datasets.Dataset {
		ds, err := datasets.GaussianMixture{N: n, K: 2, D: 8, Sep: 2, Seed: seed}.Generate()
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	other := comm.Rank() == 1
	for _, tc := range []struct {
		name        string
		train, test *datasets.Dataset
		want, not   string
	}{
		{"same", gen(300, 1), gen(100, 2), "", ""},
		{"train rows", gen(map[bool]int{false: 300, true: 200}[other], 1), gen(100, 2), "the training data (", "test data"},
		{"test contents", gen(300, 1), gen(100, map[bool]uint64{false: 2, true: 3}[other]), "the test data (", "training data"},
	} {
		c := mpiMLP(filepath.Join(os.TempDir(), "dptrain-mpi-data-"+strings.ReplaceAll(tc.name, " ", "-")))
		c.Dataset, c.Steps = InMemory, 2
		_, err := Run(context.Background(), c, Options{Reducer: comm, Overwrite: true, Train: tc.train, Test: tc.test})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("rank %d, %s: %v", comm.Rank(), tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "of rank 1 differ from rank 0's") || strings.Contains(err.Error(), tc.not)):
			t.Errorf("rank %d, %s: %v; want a refusal naming %s of rank 1", comm.Rank(), tc.name, err, tc.want)
		}
	}
}

// TestRankFaults runs this test binary under mpirun -np 2 (it is not run
// under mpirun itself: .ci/run calls it directly) with one rank made to
// hang (SIGSTOP) or die (SIGKILL) in the middle of training: the job must
// end, with the watchdog's message naming the waiting rank for a hang.
func TestRankFaults(t *testing.T) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") != "" {
		t.Skip("starts mpirun itself; run outside mpirun")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed")
	}
	for _, tc := range []struct{ fault, want string }{
		{"stop", "rank 0 of 2: no all-reduce from the other ranks within 3s (--rank-timeout): rank 1 died or hangs"},
		{"kill", "signal 9"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			// The deadline only keeps a broken watchdog from hanging CI.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "mpirun", "-np", "2", "--oversubscribe", os.Args[0], "-test.run", "^TestFaultRank$", "-test.v")
			cmd.Env = append(os.Environ(), "DPTRAIN_FAULT="+tc.fault, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the job did not end:\n%s", out)
			}
			if err == nil {
				t.Fatalf("the job ended with status 0 after a %s fault:\n%s", tc.fault, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("no %q in the job's output:\n%s", tc.want, out)
			}
		})
	}
}

// faultyRank raises sig on its own process at the given all-reduce.
type faultyRank struct {
	mpi.Comm
	at, calls int
	sig       syscall.Signal
}

func (f *faultyRank) SumFloat32(b []float32) error {
	if f.calls++; f.calls == f.at {
		syscall.Kill(os.Getpid(), f.sig)
	}
	return f.Comm.SumFloat32(b)
}

// TestFaultRank is one rank of TestRankFaults's job (it does nothing
// without DPTRAIN_FAULT): rank 1 stops or kills itself at the third step.
func TestFaultRank(t *testing.T) {
	fault := os.Getenv("DPTRAIN_FAULT")
	if fault == "" {
		t.Skip("one rank of TestRankFaults")
	}
	comm := testComm(t)
	red := mpi.WithTimeout(comm, 3*time.Second, os.Stderr)
	if comm.Rank() == 1 {
		sig := syscall.SIGSTOP
		if fault == "kill" {
			sig = syscall.SIGKILL
		}
		red = &faultyRank{Comm: red, at: 3, sig: sig}
	}
	c := mpiMLP(filepath.Join(os.TempDir(), "dptrain-mpi-fault-"+fault))
	c.Steps = 200
	_, err := Run(context.Background(), c, Options{Reducer: red, Overwrite: true})
	t.Fatalf("rank %d: the run ended (%v) although rank 1 failed", comm.Rank(), err)
}

// TestMPIEquivalence runs under mpirun (see .ci/run): with a fixed seed,
// N ranks and one process take identical batches, report identical ε at
// every step, and end with parameters equal up to float32 rounding of the
// summation order (the clipped sums are reduced across ranks in MPI's
// order, not one process's). Rank 0 runs the single-process reference.
func TestMPIEquivalence(t *testing.T) {
	comm := testComm(t)
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
	// Twice sampling: every rank draws one process's sequence of
	// coordinate masks and keeps those of its own examples; with hybrid
	// clipping too (L2 then L∞ on the masked coordinates).
	twice := mlp
	twice.Sampler, twice.Q2, twice.Steps, twice.CheckpointEvery = "twice", 0.5, 10, 10
	hybrid := twice
	hybrid.Clip, hybrid.D0 = "hybrid", 64
	// Per-instance tracking: each rank computes its examples' norms; rank
	// 0 writes the report, byte for byte one process's.
	inst := mlp
	inst.PerInstance, inst.Steps, inst.CheckpointEvery, inst.ClipNorm = 50, 10, 10, 5 // norms below C: ε varies
	// Subspace clipping: every rank computes the public basis from the
	// shared seed (public data, charged nothing) and all-reduces the
	// clipped sums in the subspace's coordinates.
	sub := mlp
	sub.Clip, sub.SubspaceRanks, sub.PublicN, sub.D0, sub.SubspaceRefresh = "subspace", []int{4, 8}, 50, 64, 5
	sub.Steps, sub.CheckpointEvery = 10, 10
	// Lattice noise: the int64 lattice sums reduce exactly, so the ranks
	// release one process's parameters bit for bit.
	lat := mlp
	lat.Noise, lat.Steps, lat.CheckpointEvery = NoiseLattice, 10, 10
	// Banded noise: every rank samples the same cyclic parts, optimises
	// the same strategy and draws the same correlated noise (its
	// correlator's state is the checkpoint's, which every rank reads).
	band := mlp
	band.Noise, band.Bands, band.Steps, band.CheckpointEvery, band.Sampler = NoiseBandMF, 3, 10, 10, "cyclic"
	for _, tc := range []struct {
		name string
		c    Config
	}{{"mlp", mlp}, {"augmult", aug}, {"clip-quantile", quant}, {"twice", twice}, {"twice-hybrid", hybrid}, {"per-instance", inst}, {"subspace", sub}, {"lattice", lat}, {"bandmf", band}} {
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
	if c.PerInstance > 0 {
		a, errA := os.ReadFile(filepath.Join(one.OutDir, "private", "per_instance.csv"))
		b, errB := os.ReadFile(filepath.Join(c.OutDir, "private", "per_instance.csv"))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("per_instance.csv: one process and %d ranks differ (%v, %v)", comm.Size(), errA, errB)
		}
	}
	maxDiff, maxAbs := checkpointParamsDiff(t, c.OutDir, one.OutDir)
	if c.Noise == NoiseLattice && maxDiff != 0 {
		t.Errorf("lattice noise: parameters differ by up to %v; the exact sums should make them identical", maxDiff)
	}
	if maxDiff > 1e-4*maxAbs {
		t.Errorf("parameters differ by up to %v (largest parameter %v): more than float32 rounding", maxDiff, maxAbs)
	}
	if ref.Best.Epsilon != dist.Best.Epsilon || ref.TestAcc != dist.TestAcc && math.Abs(ref.TestAcc-dist.TestAcc) > 0.002 {
		t.Errorf("one process: ε %v acc %v; %d ranks: ε %v acc %v", ref.Best.Epsilon, ref.TestAcc, comm.Size(), dist.Best.Epsilon, dist.TestAcc)
	}
	t.Logf("%d ranks vs one process: identical batches and ε over %d steps, parameters within %.3g (largest %.3g), test accuracy %.4f vs %.4f", comm.Size(), len(da), maxDiff, maxAbs, dist.TestAcc, ref.TestAcc)
}

// TestMPIResume: a run interrupted at step 12 and resumed from its last
// checkpoint, on one process or on all the ranks of this job (started and
// resumed with either), ends at the uninterrupted run's model (up to
// float32 rounding of the summation order) with the same ε at every step.
func TestMPIResume(t *testing.T) {
	comm := testComm(t)
	base := filepath.Join(os.TempDir(), "dptrain-mpi-resume")
	c := mpiMLP(filepath.Join(base, "full"))
	c.Steps, c.CheckpointEvery, c.KeepCheckpoint, c.PrivateDiagnostics = 20, 5, true, true
	if comm.Rank() == 0 {
		os.RemoveAll(base)
		one := c
		one.Distributed = ""
		if _, err := Run(context.Background(), one, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	// runOn runs c on this job's ranks (dist) or on rank 0 alone.
	runOn := func(c Config, dist bool, o Options) error {
		if !dist {
			c.Distributed = ""
			if comm.Rank() != 0 {
				return ErrInterrupted // the expected outcome for the first half
			}
		} else {
			o.Reducer = comm
		}
		_, err := Run(context.Background(), c, o)
		return err
	}
	for _, tc := range []struct {
		name           string
		first, resumed bool // distributed?
	}{{"ranks-then-ranks", true, true}, {"one-then-ranks", false, true}, {"ranks-then-one", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := c
			r.OutDir = filepath.Join(base, tc.name)
			if err := runOn(r, tc.first, Options{StopAfter: 12}); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("rank %d: stop: %v", comm.Rank(), err)
			}
			if err := comm.Barrier(); err != nil {
				t.Fatal(err)
			}
			if err := runOn(r, tc.resumed, Options{Resume: true}); err != nil && !(errors.Is(err, ErrInterrupted) && comm.Rank() != 0) {
				t.Fatalf("rank %d: resume: %v", comm.Rank(), err)
			}
			if comm.Rank() != 0 {
				return
			}
			a, b := mustMetrics(t, c.OutDir), mustMetrics(t, r.OutDir)
			if len(a) != len(b) {
				t.Fatalf("%d vs %d steps", len(a), len(b))
			}
			for i := range a {
				if a[i].EpsilonBest != b[i].EpsilonBest || a[i].BatchSize != b[i].BatchSize {
					t.Fatalf("step %d: ε %v vs %v, batch %d vs %d", i+1, a[i].EpsilonBest, b[i].EpsilonBest, a[i].BatchSize, b[i].BatchSize)
				}
			}
			maxDiff, maxAbs := checkpointParamsDiff(t, r.OutDir, c.OutDir)
			if maxDiff > 1e-4*maxAbs {
				t.Errorf("parameters differ by up to %v (largest %v)", maxDiff, maxAbs)
			}
			t.Logf("%s on %d ranks: resumed at step 12, final parameters within %.3g of the uninterrupted run's (largest %.3g)", tc.name, comm.Size(), maxDiff, maxAbs)
		})
	}
}
