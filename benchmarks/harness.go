package benchmarks

import (
	"context"
	"fmt"
	"github.com/dptrain/dptrain/mechanism"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/dptrain/dptrain/trainer"
)

// Grid is one table: every clip in Clips crossed with every sampler in
// Samplers, each trained from Base.
type Grid struct {
	// Base is the run every cell starts from (model, dataset, steps, batch
	// size, σ or target ε, q2, d0, seed, and for the "subspace" cells the
	// subspace ranks, public_n, power_iters and subspace_refresh ...). Each
	// cell overwrites Clip and Sampler, and turns off evaluation during the
	// run, output files and plots.
	Base     trainer.Config
	Clips    []string // clip variants (Clips)
	Samplers []string // samplers (Samplers)
	// Noises are the noise kinds (Noises; nil: continuous only), the third
	// axis: noise bandmf takes Base.Bands.
	Noises []string
	// MemEvery is the memory sampling period (0: 20 ms).
	MemEvery time.Duration
	// Log receives one line per finished cell (nil: nothing).
	Log io.Writer
}

// DefaultSubspaceRanks are DefaultGrid's nested cumulative ranks for the
// hybrid subspace clip: two principal blocks of rank 16 (K = 32).
var DefaultSubspaceRanks = []int{16, 32}

// DefaultGrid is the default bench (about a minute on 2 cores): the MLP
// (784-256-10) on the embedded Fashion-MNIST subset, 30 steps of expected
// batch 128 at σ = 1, the clip variants of DefaultClips against every
// sampler (q2 = 0.5 for twice sampling). Base also carries the settings of
// hybrid subspace clipping (ranks DefaultSubspaceRanks, the trainer's
// default public_n and power_iters, basis estimated once): add "subspace"
// to Clips for its rows.
func DefaultGrid() Grid {
	cfg := trainer.Default()
	cfg.Model = "mlp"
	cfg.Dataset = "embedded"
	cfg.Steps = 30
	// Seeded: every cell draws its noise and batches from Seed, so the rows
	// differ only in clip and sampler and a table is reproducible. A bench
	// run measures; it is not a private release.
	cfg.Seeded = true
	cfg.BatchSize = 128
	cfg.Sigma, cfg.Epsilon = 1, 0
	cfg.Q2 = 0.5
	cfg.LR, cfg.ClipNorm = 0.5, 1
	cfg.SubspaceRanks = slices.Clone(DefaultSubspaceRanks)
	return Grid{Base: cfg, Clips: slices.Clone(DefaultClips), Samplers: slices.Clone(Samplers)}
}

// Row is one cell of the table. Zero numeric fields are "not measured"
// when Err is set.
type Row struct {
	Clip    string `json:"clip"`
	Sampler string `json:"sampler"`
	Noise   string `json:"noise"`
	Steps   int    `json:"steps"`
	// TrainN is the size of the private training set; subspace cells train
	// on Base.PublicN fewer examples (declared public for the basis), so
	// their sampling rate q is larger.
	TrainN  int     `json:"train_n"`
	Samples int     `json:"samples"` // examples processed
	Seconds float64 `json:"seconds"` // wall time of the cell
	// SamplesPerSec is Samples / Seconds.
	SamplesPerSec float64 `json:"samples_per_sec"`
	PeakHeapMiB   float64 `json:"peak_heap_mib"` // peak runtime HeapInuse
	PeakSysMiB    float64 `json:"peak_sys_mib"`  // peak runtime Sys: memory obtained from the OS, which only grows over the process's life
	Sigma         float64 `json:"sigma"`         // noise multiplier
	Sensitivity   float64 `json:"sensitivity"`   // L2 bound of one example's clipped contribution
	// Dim is the length of the released (noised) vector: the model's D, or
	// K + D for the subspace clip (K principal coefficients and the
	// D-dimensional residual).
	Dim int `json:"dim"`
	// NoiseVariance is E‖e‖² of one step's noise on the released sum.
	NoiseVariance float64 `json:"noise_variance"`
	Epsilon       float64 `json:"epsilon,omitempty"`    // ε after the run at Delta
	Delta         float64 `json:"delta"`                // δ of the run
	Accountant    string  `json:"accountant,omitempty"` // the accountant that gave Epsilon
	Relation      string  `json:"relation,omitempty"`   // its neighbouring relation
	TestAcc       float64 `json:"test_acc"`             // after the run's steps
	Err           string  `json:"error,omitempty"`
	// NotPrivate: the cell's noise and sampling were seeded (every bench
	// cell's are), so its ε describes the mechanism, not a private release.
	NotPrivate bool `json:"not_private,omitempty"`
}

// Run trains every cell of g in the grid's order (clip-major). A cell that
// fails, or that the trainer refuses (e.g. subspace × shuffle), becomes a
// row with Err set to the trainer's error; Run returns an error only when
// ctx is cancelled (with the rows done so far).
func Run(ctx context.Context, g Grid) ([]Row, error) {
	if g.MemEvery <= 0 {
		g.MemEvery = 20 * time.Millisecond
	}
	noises := g.Noises
	if len(noises) == 0 {
		noises = []string{string(trainer.NoiseContinuous)}
	}
	var rows []Row
	for _, c := range g.Clips {
		for _, s := range g.Samplers {
			for _, nz := range noises {
				if err := ctx.Err(); err != nil {
					return rows, err
				}
				r := g.trainCell(ctx, c, s, nz)
				if err := ctx.Err(); err != nil {
					return rows, err // the cell was interrupted: no row
				}
				rows = append(rows, r)
				if g.Log != nil {
					if r.Err != "" {
						fmt.Fprintf(g.Log, "bench %s × %s × %s: error: %s\n", r.Clip, r.Sampler, r.Noise, r.Err)
					} else {
						fmt.Fprintf(g.Log, "bench %s × %s × %s: %.0f samples/s, ε = %.3g, acc = %.3f\n", r.Clip, r.Sampler, r.Noise, r.SamplesPerSec, r.Epsilon, r.TestAcc)
					}
				}
			}
		}
	}
	return rows, nil
}

// trainCell trains one cell through the trainer.
func (g Grid) trainCell(ctx context.Context, c, s, nz string) Row {
	cfg := g.Base
	cfg.Clip, cfg.Sampler, cfg.Noise = mechanism.Clip(c), mechanism.Sampler(s), trainer.Noise(nz)
	if cfg.Noise != trainer.NoiseBandMF {
		cfg.Bands = 0
	} else if cfg.Sampler == mechanism.Poisson {
		// The bench's bandmf cells sample cyclically over the bands (the
		// banded theorem), as before MMCC: its account is the cheap one to
		// calibrate and, at these rates, the tighter (docs/matrix-mechanism.md#mmcc).
		cfg.Sampler = mechanism.Cyclic
	}
	cfg.EvalEvery, cfg.OutDir, cfg.Plots, cfg.CheckpointEvery = 0, "", false, 0
	r := Row{Clip: c, Sampler: s, Noise: nz, Delta: cfg.Delta}
	if cfg.ClipQuantile > 0 {
		// Adaptive clipping where the cell accepts it (L2 clips, Poisson);
		// the other cells run at the fixed clip_norm.
		if trainer.QuantileApplies(cfg) {
			r.Clip = fmt.Sprintf("%s+q%g", c, cfg.ClipQuantile)
		} else {
			cfg = trainer.WithoutQuantile(cfg)
		}
	}
	if err := cfg.Validate(); err != nil {
		// Refused before any work (trainer.Run would return the same
		// error): nothing to measure, not even memory.
		r.Err = err.Error()
		return r
	}
	mw := watchMemory(g.MemEvery)
	sum, err := trainer.Run(ctx, cfg, trainer.Options{})
	r.PeakHeapMiB, r.PeakSysMiB = mw.Stop()
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Steps, r.TrainN, r.Samples, r.Seconds = sum.Steps, sum.CoveredN, sum.Samples, sum.Seconds
	if sum.Seconds > 0 {
		r.SamplesPerSec = float64(sum.Samples) / sum.Seconds
	}
	r.Sigma, r.Sensitivity, r.Dim, r.NoiseVariance = sum.Sigma, sum.Sensitivity, sum.Params, sum.NoiseVariance
	if c == "subspace" {
		// The summary gives the model's D; the subspace clip releases the K
		// principal coefficients too (clip.Subspace.OutDim = K + D), K the
		// largest cumulative rank (a run succeeded, so ranks are set).
		r.Dim += cfg.SubspaceRanks[len(cfg.SubspaceRanks)-1]
	}
	r.Epsilon, r.Accountant, r.TestAcc, r.NotPrivate = sum.Best.Epsilon, sum.Best.Accountant, sum.TestAcc, !sum.PrivateRelease
	if sum.Best.Accountant != "" {
		r.Relation = sum.Best.Relation.String()
	}
	if sum.Stopped != "" {
		r.Err = "stopped early: " + sum.Stopped
	}
	return r
}

// Describe says in one line what every cell of g shares, for the caption
// of a table.
func (g Grid) Describe() string {
	c := g.Base
	noise := fmt.Sprintf("σ = %g", c.Sigma)
	if c.Sigma == 0 {
		noise = fmt.Sprintf("σ calibrated per cell to ε = %g", c.Epsilon)
	}
	sub := ""
	if slices.Contains(g.Clips, "subspace") {
		refresh := "estimated once"
		if c.SubspaceRefresh > 0 {
			refresh = fmt.Sprintf("refreshed every %d steps", c.SubspaceRefresh)
		}
		sub = fmt.Sprintf(", subspace ranks %v from %d public examples (%d power iterations, basis %s)",
			c.SubspaceRanks, c.PublicN, c.PowerIters, refresh)
	}
	seed := fmt.Sprintf("seed %d", c.Seed)
	if !c.Seeded {
		seed += " (model only; noise and sampling from crypto/rand)"
	}
	return fmt.Sprintf("%s on %s: %d steps, expected batch %d, %s, δ = %g, C = %g, q2 = %g, d0 = %g%s, lr = %g (%s), %s; %s, %s/%s, GOMAXPROCS %d",
		c.Model, c.Dataset, c.Steps, c.BatchSize, noise, c.Delta, c.ClipNorm, c.Q2, c.D0, sub, c.LR, c.Optimizer, seed,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
}
