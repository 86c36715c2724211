package benchmarks

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/trainer"
)

// tinyGrid: logistic regression on the synthetic Gaussian mixture
// (6000 points, 32 features, 10 classes; 5000 for training), 3 steps; the
// subspace cells use nested ranks 8, 16 estimated from 64 public examples.
func tinyGrid() Grid {
	cfg := trainer.Default()
	cfg.Dataset, cfg.Model = "synthetic", "logreg"
	cfg.Seeded = true // reproducible cells (trainer.Default draws the noise from crypto/rand)
	cfg.Steps, cfg.BatchSize = 3, 64
	cfg.Sigma, cfg.Epsilon, cfg.Delta = 1.3, 0, 1e-5
	cfg.ClipNorm, cfg.Q2, cfg.D0 = 0.7, 0.5, 50
	cfg.LR = 0.5
	cfg.SubspaceRanks, cfg.PublicN = []int{8, 16}, 64
	return Grid{Base: cfg, Clips: Clips, Samplers: Samplers}
}

// The trainer's refusal of subspace clipping with shuffling.
const subspaceShuffleRefusal = "clip subspace is accounted by the twice-sampling accountant, which needs sampler poisson or twice, not shuffle"

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
		k      = 16            // subspace: largest cumulative rank
		subN   = trainN - 64   // subspace: the public examples leave the private set
	)
	sigma, c, delta := g.Base.Sigma, g.Base.ClipNorm, g.Base.Delta
	q := float64(g.Base.BatchSize) / trainN
	// Independent ε: RDP of the Poisson subsampled Gaussian; shuffling is
	// charged, under replace-one, one Gaussian of sensitivity 2C (multiplier
	// σ/2) per epoch started: one epoch here.
	// Poisson cells report the tightest applicable bound: the PLD's.
	poissonEps, err := accountant.PLDPoissonEpsilon(q, sigma, g.Base.Steps, delta)
	if err != nil {
		t.Fatal(err)
	}
	// Subspace clipping's per-block noise has effective multiplier σ, so
	// with every coordinate kept (q2 = 1) the twice-sampling accountant
	// gives the Poisson subsampled Gaussian's ε at the private set's rate.
	subPoissonEps, err := accountant.PoissonEpsilon(float64(g.Base.BatchSize)/subN, sigma, g.Base.Steps, delta)
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
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	at := map[[2]string]Row{}
	i := 0
	for _, cl := range Clips {
		for _, s := range Samplers {
			r := rows[i]
			i++
			at[[2]string{cl, s}] = r
			t.Logf("%s × %s: %.0f samples/s, heap %.1f MiB, E‖e‖² = %.6g, ε = %.6g (%s), acc %.3f %s",
				r.Clip, r.Sampler, r.SamplesPerSec, r.PeakHeapMiB, r.NoiseVariance, r.Epsilon, r.Accountant, r.TestAcc, r.Err)
			if r.Clip != cl || r.Sampler != s {
				t.Errorf("row %d is %s × %s, want %s × %s", i, r.Clip, r.Sampler, cl, s)
				continue
			}
			if cl == "subspace" && s == "shuffle" {
				// Refused by the trainer: the row carries its error and
				// nothing measured.
				if !strings.Contains(r.Err, subspaceShuffleRefusal) || r.Steps != 0 || r.Samples != 0 || r.Epsilon != 0 || r.NoiseVariance != 0 || r.PeakHeapMiB != 0 {
					t.Errorf("subspace × shuffle: %+v; want only the trainer's refusal %q", r, subspaceShuffleRefusal)
				}
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
			if !(r.TestAcc >= 0 && r.TestAcc <= 1) {
				t.Errorf("%s × %s: test accuracy %v outside [0,1]", cl, s, r.TestAcc)
			}
			// Every variant's L2 sensitivity is C (per-layer splits C² over
			// the groups, L∞ clamps at C/√D, the subspace budgets satisfy
			// Σ c2_j² = C²).
			if !near(r.Sensitivity, c) || r.Sigma != sigma {
				t.Errorf("%s × %s: sensitivity %v, σ %v; want C = %v, σ = %v", cl, s, r.Sensitivity, r.Sigma, c, sigma)
			}
			if cl == "subspace" {
				// K principal coefficients and the D-dimensional residual
				// are released, with per-block noise (Theorem 4.6) of total
				// variance σ²(Σ_j c2_j√n_j)²: by Cauchy–Schwarz at most the
				// isotropic σ²C²(K+D), and at least σ²C²·min n_j (= 8).
				if r.Dim != k+d || r.TrainN != subN {
					t.Errorf("subspace × %s: released dim %d, private set %d; want K+D = %d, %d", s, r.Dim, r.TrainN, k+d, subN)
				}
				lo, hi := sigma*sigma*c*c*8, sigma*sigma*c*c*float64(k+d)
				if !(r.NoiseVariance > lo && r.NoiseVariance < hi) {
					t.Errorf("subspace × %s: noise variance %v outside (σ²C²·8, σ²C²(K+D)) = (%v, %v)", s, r.NoiseVariance, lo, hi)
				}
				if r.Accountant != "twice" || r.Relation != accountant.AddRemove.String() {
					t.Errorf("subspace × %s: ε by %q (%s), want the twice-sampling accountant (add-remove)", s, r.Accountant, r.Relation)
				}
				if s == "poisson" && !near(r.Epsilon, subPoissonEps.Epsilon) {
					t.Errorf("subspace × poisson: ε = %.10g, want PoissonEpsilon(%d/%d, σ) = %.10g", r.Epsilon, g.Base.BatchSize, subN, subPoissonEps.Epsilon)
				}
				continue
			}
			// Isotropic noise of std σ·Δ₂ = σC on every released
			// coordinate: E‖e‖² = σ²C²·D.
			want := sigma * sigma * c * c * d
			if !near(r.NoiseVariance, want) {
				t.Errorf("%s × %s: noise variance %.10g, want σ²C²·%d = %.10g", cl, s, r.NoiseVariance, d, want)
			}
			if r.Dim != d || r.TrainN != trainN {
				t.Errorf("%s × %s: released dim %d, private set %d; want %d, %d", cl, s, r.Dim, r.TrainN, d, trainN)
			}
			switch s {
			case "poisson":
				if !near(r.Epsilon, poissonEps.Epsilon) || r.Accountant != "pld" {
					t.Errorf("%s × poisson: ε = %.10g (%s), want PLDPoissonEpsilon = %.10g (pld)", cl, r.Epsilon, r.Accountant, poissonEps.Epsilon)
				}
			case "shuffle":
				if !near(r.Epsilon, fullEps.Epsilon) || r.Relation != accountant.ReplaceOne.String() {
					t.Errorf("%s × shuffle: ε = %.10g (%s), want one replace-one Gaussian per epoch: %.10g", cl, r.Epsilon, r.Relation, fullEps.Epsilon)
				}
			case "twice":
				if r.Accountant != "twice" || !(r.Epsilon > 0) {
					t.Errorf("%s × twice: ε = %v by %q, want a positive twice-sampling bound", cl, r.Epsilon, r.Accountant)
				}
			}
		}
	}
	// The basis, budgets and noise come from the public examples and the
	// seed, not the sampler: both subspace cells add the same noise, and
	// sampling coordinates at q2 = 0.5 only lowers ε.
	sp, st := at[[2]string{"subspace", "poisson"}], at[[2]string{"subspace", "twice"}]
	if sp.NoiseVariance != st.NoiseVariance || !(st.Epsilon < sp.Epsilon) {
		t.Errorf("subspace: E‖e‖² %v (poisson) vs %v (twice), ε %v vs %v; want equal noise and a smaller ε with twice sampling",
			sp.NoiseVariance, st.NoiseVariance, sp.Epsilon, st.Epsilon)
	}
}

// Unknown variants and refused settings become rows carrying the trainer's
// error.
func TestRunErrorRows(t *testing.T) {
	g := tinyGrid()
	g.Base.Steps = 1
	g.Clips = []string{"bogus", "subspace"}
	g.Samplers = []string{"poisson", "shuffle", "nosuch"}
	rows, err := Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ clip, sampler, err string }{
		{"bogus", "poisson", `clip "bogus"`},
		{"bogus", "shuffle", `clip "bogus"`},
		{"bogus", "nosuch", `sampler "nosuch"`},
		{"subspace", "poisson", ""},
		{"subspace", "shuffle", subspaceShuffleRefusal},
		{"subspace", "nosuch", `sampler "nosuch"`},
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
		if w.err != "" && !strings.HasPrefix(r.Err, trainer.ErrInvalidConfig.Error()) {
			t.Errorf("%s × %s: error %q is not the trainer's validation error", r.Clip, r.Sampler, r.Err)
		}
		if (w.err == "") != (r.Steps == 1) {
			t.Errorf("%s × %s: %d steps", r.Clip, r.Sampler, r.Steps)
		}
	}

	// Without subspace ranks the trainer refuses the subspace cells.
	g.Base.SubspaceRanks = nil
	g.Clips, g.Samplers = []string{"subspace"}, []string{"twice"}
	rows, err = Run(context.Background(), g)
	if err != nil || len(rows) != 1 || !strings.Contains(rows[0].Err, "subspace_ranks must list") {
		t.Errorf("subspace without ranks: rows %+v, err %v; want one row carrying the trainer's refusal", rows, err)
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

// A calibrated grid: σ comes from the target ε per cell, and every cell
// meets it with its own accountant (the subspace cell's twice-sampling
// accountant at the private set's rate).
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
	b, err := accountant.PLDPoissonEpsilon(64.0/5000, flat.Sigma, 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if !(flat.Epsilon <= 2) || math.Abs(b.Epsilon-flat.Epsilon) > 1e-9 || flat.Epsilon < 1.9 {
		t.Errorf("calibrated σ = %v gives ε = %v (independently %v); want just under 2", flat.Sigma, flat.Epsilon, b.Epsilon)
	}
	// The subspace cell: σ calibrated on its own account. At q2 = 1 its
	// event is the Poisson subsampled Gaussian of multiplier σ, which the
	// twice-sampling accountant bounds at integer orders only, so its ε is
	// never below the RDP accountant's (finer order grid) for the same σ.
	bs, err := accountant.PoissonEpsilon(64/float64(sub.TrainN), sub.Sigma, 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Accountant != "twice" || sub.TrainN != 5000-64 || !(sub.Epsilon <= 2) || sub.Epsilon < 1.9 || sub.Epsilon < bs.Epsilon-1e-9 {
		t.Errorf("subspace: calibrated σ = %v gives ε = %v by %q on %d examples (Poisson RDP: %v); want the twice accountant on %d, ε just under 2",
			sub.Sigma, sub.Epsilon, sub.Accountant, sub.TrainN, bs.Epsilon, 5000-64)
	}
	if !(sub.Sigma > flat.Sigma) {
		t.Errorf("subspace σ = %v, flat σ = %v: a larger rate on the same target needs more noise", sub.Sigma, flat.Sigma)
	}
}

// A harness cell reports what the trainer reports for the same seeded run,
// and samples/s is exactly samples over seconds.
func TestRunMatchesTrainer(t *testing.T) {
	for _, cell := range [][2]string{{"per-layer", "twice"}, {"subspace", "twice"}} {
		g := tinyGrid()
		g.Clips, g.Samplers = []string{cell[0]}, []string{cell[1]}
		rows, err := Run(context.Background(), g)
		if err != nil || len(rows) != 1 || rows[0].Err != "" {
			t.Fatalf("rows %+v, err %v", rows, err)
		}
		r := rows[0]
		cfg := g.Base
		cfg.Clip, cfg.Sampler = mechanism.Clip(cell[0]), mechanism.Sampler(cell[1])
		cfg.Noise = trainer.NoiseContinuous // the harness's noise without Noises
		cfg.EvalEvery, cfg.OutDir, cfg.Plots, cfg.CheckpointEvery = 0, "", false, 0
		sum, err := trainer.Run(context.Background(), cfg, trainer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.TestAcc != sum.TestAcc || r.Samples != sum.Samples || r.Epsilon != sum.Best.Epsilon || r.Accountant != sum.Best.Accountant {
			t.Errorf("%v: harness row (acc %v, %d samples, ε %v %s) differs from the trainer's run (acc %v, %d samples, ε %v %s)",
				cell, r.TestAcc, r.Samples, r.Epsilon, r.Accountant, sum.TestAcc, sum.Samples, sum.Best.Epsilon, sum.Best.Accountant)
		}
		if r.NoiseVariance != sum.NoiseVariance || r.Sensitivity != sum.Sensitivity || r.Sigma != sum.Sigma || r.TrainN != sum.CoveredN {
			t.Errorf("%v: harness row (E‖e‖² %v, Δ₂ %v, σ %v, n %d) differs from the trainer's (%v, %v, %v, %d)",
				cell, r.NoiseVariance, r.Sensitivity, r.Sigma, r.TrainN, sum.NoiseVariance, sum.Sensitivity, sum.Sigma, sum.CoveredN)
		}
		wantDim := sum.Params
		if mechanism.Clip(cell[0]) == "subspace" {
			wantDim += cfg.SubspaceRanks[len(cfg.SubspaceRanks)-1]
		}
		if r.Dim != wantDim {
			t.Errorf("%v: released dim %d, want %d", cell, r.Dim, wantDim)
		}
		if r.SamplesPerSec != float64(r.Samples)/r.Seconds {
			t.Errorf("%v: samples/s %v, want %d / %v", cell, r.SamplesPerSec, r.Samples, r.Seconds)
		}
	}
}

// DefaultGrid's cells are seeded (reproducible rows that differ only in clip
// and sampler), and the caption says where the noise came from.
func TestDescribeSeeding(t *testing.T) {
	g := DefaultGrid()
	if !g.Base.Seeded {
		t.Error("DefaultGrid is not seeded: its rows would not be reproducible")
	}
	if d := g.Describe(); !strings.Contains(d, "seed 1;") || strings.Contains(d, "crypto") {
		t.Errorf("seeded caption %q", d)
	}
	g.Base.Seeded = false
	if d := g.Describe(); !strings.Contains(d, "seed 1 (model only; noise and sampling from crypto/rand)") {
		t.Errorf("unseeded caption %q", d)
	}
}

// The noise axis: each clip × sampler cell once per noise kind; noise
// bandmf (2 bands) samples cyclically, so its ε is the amplified banded
// account of ⌈3/2⌉ steps at twice the rate, and the lattice runs both
// clips with the continuous noise's ε.
func TestRunNoiseAxis(t *testing.T) {
	g := tinyGrid()
	g.Clips, g.Samplers, g.Noises = []string{"flat", "per-layer"}, []string{"poisson"}, []string{"continuous", "lattice", "bandmf"}
	g.Base.Bands = 2
	rows, err := Run(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	byKey := map[string]Row{}
	for _, r := range rows {
		byKey[r.Clip+"/"+r.Noise] = r
	}
	for _, k := range []string{"flat/continuous", "flat/lattice", "flat/bandmf", "per-layer/continuous", "per-layer/lattice", "per-layer/bandmf"} {
		if byKey[k].Err != "" || byKey[k].Steps != 3 {
			t.Errorf("%s: %+v", k, byKey[k])
		}
	}
	for _, clip := range []string{"flat", "per-layer"} {
		if a, b := byKey[clip+"/lattice"].Epsilon, byKey[clip+"/continuous"].Epsilon; a != b {
			t.Errorf("%s: lattice ε %v, continuous %v", clip, a, b)
		}
	}
	want, err := accountant.PoissonEpsilon(2*64.0/5000, g.Base.Sigma, 2, g.Base.Delta)
	if r := byKey["flat/bandmf"]; r.Accountant == "pld" {
		want, err = accountant.PLDPoissonEpsilon(2*64.0/5000, g.Base.Sigma, 2, g.Base.Delta)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r := byKey["flat/bandmf"]; math.Abs(r.Epsilon-want.Epsilon) > 1e-9*want.Epsilon {
		t.Errorf("bandmf ε %v (%s), independent account %v", r.Epsilon, r.Accountant, want.Epsilon)
	}
	if a, b := byKey["flat/continuous"].Epsilon, byKey["flat/bandmf"].Epsilon; a == b {
		t.Errorf("bandmf and DP-SGD report the same ε %v", a)
	}
}
