package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/internal/rng"
	"github.com/dptrain/dptrain/sampler"
	"github.com/dptrain/dptrain/trainer"
)

// Grid is one table: every clip in Clips crossed with every sampler in
// Samplers, each trained from Base.
type Grid struct {
	// Base is the run every cell starts from (model, dataset, steps, batch
	// size, σ or target ε, q2, d0, seed ...). Each cell overwrites Clip and
	// Sampler, and turns off evaluation during the run, output files and
	// plots.
	Base     trainer.Config
	Clips    []string // clip variants (Clips); "subspace" rows are kernel only
	Samplers []string // samplers (Samplers)
	// KernelSteps is the number of steps a kernel-only cell times (0: the
	// smaller of Base.Steps and 3; the hybrid subspace clip is slow, and a
	// rate needs few steps).
	KernelSteps int
	// MemEvery is the memory sampling period (0: 20 ms).
	MemEvery time.Duration
	// Log receives one line per finished cell (nil: nothing).
	Log io.Writer
}

// DefaultGrid is the default bench (about a minute on 2 cores): the MLP
// (784-256-10) on the embedded Fashion-MNIST subset, 30 steps of expected
// batch 128 at σ = 1, the trainer's four clip variants against every
// sampler (q2 = 0.5 for twice sampling). Add "subspace" to Clips for the
// kernel-only hybrid subspace rows.
func DefaultGrid() Grid {
	cfg := trainer.Default()
	cfg.Model = "mlp"
	cfg.Dataset = "embedded"
	cfg.Steps = 30
	cfg.BatchSize = 128
	cfg.Sigma, cfg.Epsilon = 1, 0
	cfg.Q2 = 0.5
	cfg.LR, cfg.ClipNorm = 0.5, 1
	return Grid{Base: cfg, Clips: slices.Clone(TrainerClips), Samplers: slices.Clone(Samplers)}
}

// Row is one cell of the table. Zero numeric fields are "not measured"
// when Err is set or (ε, accuracy) when KernelOnly.
type Row struct {
	Clip    string `json:"clip"`
	Sampler string `json:"sampler"`
	// KernelOnly: the clip was timed on random gradients outside the
	// trainer (no model, no ε, no accuracy).
	KernelOnly bool    `json:"kernel_only,omitempty"`
	Steps      int     `json:"steps"`
	Samples    int     `json:"samples"` // examples processed
	Seconds    float64 `json:"seconds"` // wall time of the cell
	// SamplesPerSec is Samples / Seconds.
	SamplesPerSec float64 `json:"samples_per_sec"`
	PeakHeapMiB   float64 `json:"peak_heap_mib"` // peak runtime HeapInuse
	PeakSysMiB    float64 `json:"peak_sys_mib"`  // peak runtime Sys: memory obtained from the OS, which only grows over the process's life
	Sigma         float64 `json:"sigma"`         // noise multiplier
	Sensitivity   float64 `json:"sensitivity"`   // L2 bound of one example's clipped contribution
	Dim           int     `json:"dim"`           // length of the released (noised) vector
	// NoiseVariance is E‖e‖² of one step's noise on the released sum.
	NoiseVariance float64 `json:"noise_variance"`
	Epsilon       float64 `json:"epsilon,omitempty"`    // ε after the run at Delta
	Delta         float64 `json:"delta"`                // δ of the run
	Accountant    string  `json:"accountant,omitempty"` // the accountant that gave Epsilon
	Relation      string  `json:"relation,omitempty"`   // its neighbouring relation
	TestAcc       float64 `json:"test_acc"`             // after the run's steps
	Err           string  `json:"error,omitempty"`
}

// cellInfo is what the trainer rows tell the kernel-only rows about the
// run: the model's dimension, the training-set size and σ per sampler.
type cellInfo struct {
	d, n  int
	sigma map[string]float64
}

// Run measures every cell of g, trainer cells first and the kernel-only
// subspace cells after them (they reuse the model's dimension). A cell that
// fails becomes a row with Err set; Run returns an error only when ctx is
// cancelled (with the rows done so far).
func Run(ctx context.Context, g Grid) ([]Row, error) {
	if g.MemEvery <= 0 {
		g.MemEvery = 20 * time.Millisecond
	}
	info := cellInfo{sigma: map[string]float64{}}
	var rows []Row
	rowAt := map[[2]string]int{}
	add := func(r Row) {
		rowAt[[2]string{r.Clip, r.Sampler}] = len(rows)
		rows = append(rows, r)
		if g.Log != nil {
			switch {
			case r.Err != "":
				fmt.Fprintf(g.Log, "bench %s × %s: error: %s\n", r.Clip, r.Sampler, r.Err)
			case r.KernelOnly:
				fmt.Fprintf(g.Log, "bench %s × %s: %.0f samples/s (kernel only)\n", r.Clip, r.Sampler, r.SamplesPerSec)
			default:
				fmt.Fprintf(g.Log, "bench %s × %s: %.0f samples/s, ε = %.3g, acc = %.3f\n", r.Clip, r.Sampler, r.SamplesPerSec, r.Epsilon, r.TestAcc)
			}
		}
	}
	for _, c := range g.Clips {
		if c == "subspace" {
			continue
		}
		for _, s := range g.Samplers {
			if err := ctx.Err(); err != nil {
				return ordered(g, rows, rowAt), err
			}
			r, sum := g.trainCell(ctx, c, s)
			if errors.Is(ctx.Err(), context.Canceled) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return ordered(g, rows, rowAt), ctx.Err()
			}
			if sum != nil {
				info.d, info.n = sum.Params, sum.TrainN
				if _, ok := info.sigma[s]; !ok {
					info.sigma[s] = sum.Sigma
				}
			}
			add(r)
		}
	}
	if slices.Contains(g.Clips, "subspace") {
		if info.d == 0 {
			// No trainer cell ran: a one-step probe gives the model's size.
			probe := g.Base
			probe.Clip, probe.Sampler, probe.Steps = "flat", "poisson", 1
			probe.EvalEvery, probe.OutDir, probe.Plots, probe.CheckpointEvery = 0, "", false, 0
			sum, err := trainer.Run(ctx, probe, trainer.Options{})
			if err != nil {
				for _, s := range g.Samplers {
					add(Row{Clip: "subspace", Sampler: s, KernelOnly: true, Delta: g.Base.Delta, Err: fmt.Sprintf("sizing the model: %v", err)})
				}
				return ordered(g, rows, rowAt), ctx.Err()
			}
			info.d, info.n = sum.Params, sum.TrainN
		}
		for _, s := range g.Samplers {
			if err := ctx.Err(); err != nil {
				return ordered(g, rows, rowAt), err
			}
			add(g.kernelCell(ctx, s, info))
		}
	}
	return ordered(g, rows, rowAt), ctx.Err()
}

// ordered lists the rows in the grid's order (clip-major).
func ordered(g Grid, rows []Row, at map[[2]string]int) []Row {
	out := make([]Row, 0, len(rows))
	for _, c := range g.Clips {
		for _, s := range g.Samplers {
			if i, ok := at[[2]string{c, s}]; ok {
				out = append(out, rows[i])
			}
		}
	}
	return out
}

// trainCell trains one cell through the trainer.
func (g Grid) trainCell(ctx context.Context, c, s string) (Row, *trainer.Summary) {
	cfg := g.Base
	cfg.Clip, cfg.Sampler = c, s
	cfg.EvalEvery, cfg.OutDir, cfg.Plots, cfg.CheckpointEvery = 0, "", false, 0
	r := Row{Clip: c, Sampler: s, Delta: cfg.Delta}
	mw := watchMemory(g.MemEvery)
	sum, err := trainer.Run(ctx, cfg, trainer.Options{})
	r.PeakHeapMiB, r.PeakSysMiB = mw.Stop()
	if err != nil {
		r.Err = err.Error()
		return r, nil
	}
	r.Steps, r.Samples, r.Seconds = sum.Steps, sum.Samples, sum.Seconds
	if sum.Seconds > 0 {
		r.SamplesPerSec = float64(sum.Samples) / sum.Seconds
	}
	r.Sigma, r.Sensitivity, r.Dim, r.NoiseVariance = sum.Sigma, sum.Sensitivity, sum.Params, sum.NoiseVariance
	r.Epsilon, r.Accountant, r.TestAcc = sum.Best.Epsilon, sum.Best.Accountant, sum.TestAcc
	if sum.Best.Accountant != "" {
		r.Relation = sum.Best.Relation.String()
	}
	if sum.Stopped != "" {
		r.Err = "stopped early: " + sum.Stopped
	}
	return r, sum
}

// kernelCell times the subspace clip on random gradients for the run's
// steps: each step draws a batch (and, for twice sampling, its masks) from
// the sampler, clips and sums that many gradients, and adds the noise.
func (g Grid) kernelCell(ctx context.Context, s string, info cellInfo) (r Row) {
	cfg := g.Base
	r = Row{Clip: "subspace", Sampler: s, KernelOnly: true, Delta: cfg.Delta}
	sigma := cfg.Sigma
	if sigma == 0 {
		sigma = info.sigma[s] // calibrated by a trainer cell of the same sampler
	}
	if sigma == 0 {
		r.Err = "σ unknown: calibrated σ comes from a trainer cell with the same sampler, and none ran"
		return r
	}
	steps := g.KernelSteps
	if steps == 0 {
		steps = min(cfg.Steps, 3)
	}
	if steps < 1 {
		r.Err = "kernel-only cells need a fixed number of steps (Base.Steps or KernelSteps)"
		return r
	}
	mw := watchMemory(g.MemEvery)
	defer func() { r.PeakHeapMiB, r.PeakSysMiB = mw.Stop() }()
	k, err := NewClipKernel(KernelConfig{Clip: "subspace", D: info.d, Chunk: cfg.MaxPhysicalBatch, ClipNorm: cfg.ClipNorm, Seed: cfg.Seed})
	if err != nil {
		r.Err = err.Error()
		return r
	}
	noise, err := clip.IsotropicFor(k.Clipper, sigma)
	if err != nil {
		r.Err = fmt.Sprintf("noise: %v", err)
		return r
	}
	r.Sigma, r.Sensitivity, r.Dim, r.NoiseVariance = sigma, k.Clipper.Sensitivity().L2, k.OutDim(), noise.TotalVariance()
	st := rng.NewSeeded(cfg.Seed).Child("kernel-sampler")
	q := float64(cfg.BatchSize) / float64(info.n)
	var (
		samp  sampler.Sampler
		twice *sampler.Twice
	)
	switch s {
	case "poisson":
		samp, err = sampler.NewPoisson(info.n, q, st)
	case "twice":
		twice, err = sampler.NewTwice(info.n, k.OutDim(), q, cfg.Q2, st)
		samp = twice
	case "shuffle":
		samp, err = sampler.NewShuffle(info.n, cfg.BatchSize, st)
	default:
		err = fmt.Errorf("unknown sampler %q (want one of %v)", s, Samplers)
	}
	if err != nil {
		r.Err = fmt.Sprintf("sampler: %v", err)
		return r
	}
	noiseRNG := rng.NewSeeded(cfg.Seed).Child("kernel-noise")
	var (
		idx   []int
		masks []*sampler.Mask
	)
	start := time.Now()
	for step := 0; step < steps; step++ {
		if ctx.Err() != nil {
			r.Err = fmt.Sprintf("interrupted after %d steps", step)
			return r
		}
		idx = samp.Next(idx)
		b := len(idx)
		var ms []*sampler.Mask
		if twice != nil {
			for len(masks) < b {
				masks = append(masks, sampler.NewMask(k.OutDim()))
			}
			ms = masks[:b]
			for _, m := range ms {
				twice.FillMask(m)
			}
		}
		k.Reset()
		k.ClipSum(b, ms)
		noise.Add(k.Sum(), noiseRNG)
		r.Samples += b
	}
	r.Steps = steps
	r.Seconds = time.Since(start).Seconds()
	if r.Seconds > 0 {
		r.SamplesPerSec = float64(r.Samples) / r.Seconds
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
	return fmt.Sprintf("%s on %s: %d steps, expected batch %d, %s, δ = %g, C = %g, q2 = %g, d0 = %g, lr = %g (%s), seed %d; %s, %s/%s, GOMAXPROCS %d",
		c.Model, c.Dataset, c.Steps, c.BatchSize, noise, c.Delta, c.ClipNorm, c.Q2, c.D0, c.LR, c.Optimizer, c.Seed,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
}
