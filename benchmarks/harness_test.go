package benchmarks

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/trainer"
)

// tinyGrid: logistic regression on the synthetic Gaussian mixture
// (6000 points, 32 features, 10 classes; 5000 for training), 3 steps.
func tinyGrid() Grid {
	cfg := trainer.Default()
	cfg.Dataset, cfg.Model = "synthetic", "logreg"
	cfg.Steps, cfg.BatchSize = 3, 64
	cfg.Sigma, cfg.Epsilon, cfg.Delta = 1.3, 0, 1e-5
	cfg.ClipNorm, cfg.Q2, cfg.D0 = 0.7, 0.5, 50
	cfg.LR = 0.5
	return Grid{Base: cfg, Clips: Clips, Samplers: Samplers}
}

func TestRunTinyGrid(t *testing.T) {
	g := tinyGrid()
	rows, err := Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(Clips) * len(Samplers); len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	const (
		trainN = 5000          // 6000 · 5/6
		d      = (32 + 1) * 10 // logreg weights and biases
		k      = 16 + 16       // subspace principal ranks
	)
	sigma, c, delta := g.Base.Sigma, g.Base.ClipNorm, g.Base.Delta
	q := float64(g.Base.BatchSize) / trainN
	// Independent ε: RDP of the Poisson subsampled Gaussian; shuffling is
	// charged, under replace-one, one Gaussian of sensitivity 2C (multiplier
	// σ/2) per epoch started: one epoch here.
	poissonEps, err := accountant.PoissonEpsilon(q, sigma, g.Base.Steps, delta)
	if err != nil {
		t.Fatal(err)
	}
	perEpoch := trainN / g.Base.BatchSize
	shuffleAcc, err := accountant.NewRDP(accountant.WithRelation(accountant.ReplaceOne))
	if err != nil {
		t.Fatal(err)
	}
	if err := shuffleAcc.Compose(accountant.Gaussian{Sigma: sigma / 2}, (g.Base.Steps+perEpoch-1)/perEpoch); err != nil {
		t.Fatal(err)
	}
	fullEps, err := shuffleAcc.Epsilon(delta)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, cl := range Clips {
		for _, s := range Samplers {
			r := rows[i]
			i++
			t.Logf("%s × %s: %.0f samples/s, heap %.1f MiB, E‖e‖² = %.6g, ε = %.6g (%s), acc %.3f",
				r.Clip, r.Sampler, r.SamplesPerSec, r.PeakHeapMiB, r.NoiseVariance, r.Epsilon, r.Accountant, r.TestAcc)
			if r.Clip != cl || r.Sampler != s {
				t.Errorf("row %d is %s × %s, want %s × %s", i, r.Clip, r.Sampler, cl, s)
				continue
			}
			if r.Err != "" {
				t.Errorf("%s × %s: %s", cl, s, r.Err)
				continue
			}
			if !(r.SamplesPerSec > 0) || !(r.PeakHeapMiB > 0) || !(r.PeakSysMiB >= r.PeakHeapMiB) {
				t.Errorf("%s × %s: samples/s %v, heap %v MiB, sys %v MiB: want positive, sys ≥ heap", cl, s, r.SamplesPerSec, r.PeakHeapMiB, r.PeakSysMiB)
			}
			if r.Steps != 3 {
				t.Errorf("%s × %s: %d steps, want 3", cl, s, r.Steps)
			}
			// Isotropic noise of std σ·Δ₂ on every released coordinate:
			// E‖e‖² = σ²Δ₂²·dim, with Δ₂ = C for every variant (per-layer
			// splits C² over the groups, L∞ clamps at C/√D, the subspace
			// blocks get C/√3 each) and dim = D, or K + D for subspace.
			dim := d
			if cl == "subspace" {
				dim = k + d
				if !r.KernelOnly {
					t.Errorf("subspace × %s not marked kernel only", s)
				}
			}
			want := sigma * sigma * c * c * float64(dim)
			if math.Abs(r.NoiseVariance-want) > 1e-9*want {
				t.Errorf("%s × %s: noise variance %.10g, want σ²C²·%d = %.10g", cl, s, r.NoiseVariance, dim, want)
			}
			if r.Dim != dim {
				t.Errorf("%s × %s: released dim %d, want %d", cl, s, r.Dim, dim)
			}
			if r.KernelOnly {
				continue
			}
			switch s {
			case "poisson":
				if math.Abs(r.Epsilon-poissonEps.Epsilon) > 1e-9*poissonEps.Epsilon || r.Accountant != "rdp" {
					t.Errorf("%s × poisson: ε = %.10g (%s), want PoissonEpsilon = %.10g (rdp)", cl, r.Epsilon, r.Accountant, poissonEps.Epsilon)
				}
			case "shuffle":
				if math.Abs(r.Epsilon-fullEps.Epsilon) > 1e-9*fullEps.Epsilon {
					t.Errorf("%s × shuffle: ε = %.10g, want one replace-one Gaussian per epoch: %.10g", cl, r.Epsilon, fullEps.Epsilon)
				}
			case "twice":
				if r.Accountant != "twice" || !(r.Epsilon > 0) {
					t.Errorf("%s × twice: ε = %v by %q, want a positive twice-sampling bound", cl, r.Epsilon, r.Accountant)
				}
			}
			if !(r.TestAcc >= 0 && r.TestAcc <= 1) {
				t.Errorf("%s × %s: test accuracy %v outside [0,1]", cl, s, r.TestAcc)
			}
		}
	}
}

// Unknown variants and refused settings become rows with errors.
func TestRunErrorRows(t *testing.T) {
	g := tinyGrid()
	g.Base.Steps = 1
	g.Clips = []string{"bogus", "subspace"}
	g.Samplers = []string{"poisson", "nosuch"}
	rows, err := Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ clip, sampler, err string }{
		{"bogus", "poisson", `clip "bogus"`},
		{"bogus", "nosuch", `sampler "nosuch"`},
		{"subspace", "poisson", ""},
		{"subspace", "nosuch", `unknown sampler "nosuch"`},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Clip != w.clip || r.Sampler != w.sampler {
			t.Errorf("row %d is %s × %s, want %s × %s", i, r.Clip, r.Sampler, w.clip, w.sampler)
		}
		if w.err == "" && r.Err != "" || !strings.Contains(r.Err, w.err) {
			t.Errorf("%s × %s: error %q, want one containing %q", r.Clip, r.Sampler, r.Err, w.err)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rows, err := Run(ctx, tinyGrid())
	if err == nil || len(rows) != 0 {
		t.Errorf("cancelled run: %d rows, error %v; want none and context.Canceled", len(rows), err)
	}
}

// A calibrated grid: σ comes from the target ε, and the Poisson rows meet it.
func TestRunCalibrated(t *testing.T) {
	g := tinyGrid()
	g.Base.Sigma, g.Base.Epsilon = 0, 2
	g.Clips, g.Samplers = []string{"flat", "subspace"}, []string{"poisson"}
	rows, err := Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Err != "" || rows[1].Err != "" {
		t.Fatalf("rows %+v", rows)
	}
	flat, sub := rows[0], rows[1]
	b, err := accountant.PoissonEpsilon(64.0/5000, flat.Sigma, 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !(flat.Epsilon <= 2) || math.Abs(b.Epsilon-flat.Epsilon) > 1e-9 || flat.Epsilon < 1.9 {
		t.Errorf("calibrated σ = %v gives ε = %v (independently %v); want just under 2", flat.Sigma, flat.Epsilon, b.Epsilon)
	}
	if sub.Sigma != flat.Sigma {
		t.Errorf("kernel row σ = %v, want the calibrated %v", sub.Sigma, flat.Sigma)
	}
}

// A harness cell reports what the trainer reports for the same seeded run,
// and samples/s is exactly samples over seconds.
func TestRunMatchesTrainer(t *testing.T) {
	g := tinyGrid()
	g.Clips, g.Samplers = []string{"per-layer"}, []string{"twice"}
	rows, err := Run(context.Background(), g)
	if err != nil || len(rows) != 1 || rows[0].Err != "" {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	r := rows[0]
	cfg := g.Base
	cfg.Clip, cfg.Sampler = "per-layer", "twice"
	cfg.EvalEvery, cfg.OutDir, cfg.Plots, cfg.CheckpointEvery = 0, "", false, 0
	sum, err := trainer.Run(context.Background(), cfg, trainer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.TestAcc != sum.TestAcc || r.Samples != sum.Samples || r.Epsilon != sum.Best.Epsilon || r.Accountant != sum.Best.Accountant {
		t.Errorf("harness row (acc %v, %d samples, ε %v %s) differs from the trainer's run (acc %v, %d samples, ε %v %s)",
			r.TestAcc, r.Samples, r.Epsilon, r.Accountant, sum.TestAcc, sum.Samples, sum.Best.Epsilon, sum.Best.Accountant)
	}
	if r.SamplesPerSec != float64(r.Samples)/r.Seconds {
		t.Errorf("samples/s %v, want %d / %v", r.SamplesPerSec, r.Samples, r.Seconds)
	}
}
