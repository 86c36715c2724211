package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/trainer"
)

// intList is a comma-separated list of ints flag (MLP widths).
type intList struct{ v *[]int }

func (l intList) String() string {
	if l.v == nil {
		return ""
	}
	s := make([]string, len(*l.v))
	for i, x := range *l.v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func (l intList) Set(s string) error {
	*l.v = (*l.v)[:0]
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("not a list of integers: %q", s)
		}
		*l.v = append(*l.v, x)
	}
	return nil
}

// stringList is a comma-separated list of names flag (class names).
type stringList struct{ v *[]string }

func (l stringList) String() string {
	if l.v == nil {
		return ""
	}
	return strings.Join(*l.v, ",")
}

func (l stringList) Set(s string) error {
	*l.v = strings.Split(s, ",")
	return nil
}

// classesUsage documents --classes for train and eval.
const classesUsage = "dataset csv or folder: the public class `names`, comma-separated (label NAME_i is class i); default: the test set's labels. A training record outside them is refused; the class set is never taken from the training data"

// channelsUsage and resizeUsage document the image-folder conversions of
// train, eval and predict (datasets.ImageFolderOptions defines them).
const (
	channelsUsage = "dataset folder: convert every image to N channels: 1 (grey; colour by luminance 0.299 R + 0.587 G + 0.114 B) or 3 (RGB; grey replicated). Default 0: no conversion, grey images load as 1 channel and colour as 3, and a folder mixing them is an error"
	resizeUsage   = "dataset folder: resize every image to `HxW` (height x width, e.g. 28x28) by bilinear interpolation (half-pixel centres, as PyTorch's align_corners=False); default: every image must have the test images' size"
)

// trainFlags binds every Config field to a flag on fs.
func trainFlags(fs *flag.FlagSet, c *trainer.Config) {
	fs.TextVar(&c.Dataset, "dataset", c.Dataset, "embedded | fashion-mnist | mnist | cifar10 | synthetic | csv (--train, --test) | npy (--train X.npy,y.npy --test Xt.npy,yt.npy; float32 features memory-mapped, float64/uint8 converted into memory at 4 bytes a value) | folder (--data DIR with train/ and test/ image folders)")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory (else $DPTRAIN_DATA, /usr/share/datasets, embedded)")
	fs.StringVar(&c.TrainFile, "train", c.TrainFile, "dataset csv: the training table (numbers; a header line is detected); dataset npy: FEATURES.npy,LABELS.npy")
	fs.StringVar(&c.TestFile, "test", c.TestFile, "dataset csv: the test table; dataset npy: FEATURES.npy,LABELS.npy (its labels set the classes)")
	fs.StringVar(&c.LabelColumn, "label-column", c.LabelColumn, "dataset csv: label column, header name or 0-based index (default: the last)")
	fs.Var(stringList{&c.Classes}, "classes", classesUsage)
	fs.IntVar(&c.Channels, "channels", c.Channels, channelsUsage)
	fs.StringVar(&c.Resize, "resize", c.Resize, resizeUsage)
	fs.IntVar(&c.TrainLimit, "train-limit", c.TrainLimit, "use only the first N training examples (0 = all)")
	fs.IntVar(&c.TestLimit, "test-limit", c.TestLimit, "use only the first N test examples (0 = all)")
	fs.TextVar(&c.Features, "features", c.Features, `feature map: "" (raw) or scatternet`)
	fs.TextVar(&c.FeatureNorm, "feature-norm", c.FeatureNorm, "scatternet normalisation: group (no privacy cost) | private (accounted) | none")
	fs.IntVar(&c.FeatureGroups, "feature-groups", c.FeatureGroups, "scatternet group normalisation: channel groups")
	fs.Float64Var(&c.FeatureNormSigma, "feature-norm-sigma", c.FeatureNormSigma, "scatternet private normalisation: noise multiplier")
	fs.Float64Var(&c.FeatureNormClip, "feature-norm-clip", c.FeatureNormClip, "scatternet private normalisation: clip of each example's statistics")
	fs.StringVar(&c.FeatureCache, "feature-cache", c.FeatureCache, "directory for cached features (default: the user cache dir)")
	fs.TextVar(&c.Model, "model", c.Model, "logreg | linreg | mlp | cnn | resnet20 | resnet22 | scatcnn (CNN on ScatterNet features)")
	fs.Var(intList{&c.Hidden}, "hidden", "MLP hidden `widths`, comma-separated (default 256: one hidden layer)")
	fs.BoolVar(&c.DPSGDF, "dpsgdf", c.DPSGDF, "DPSGD-F: private feature centring before DP-SGD (Sun, Suresh and Menon)")
	fs.TextVar(&c.DPSGDFVariant, "dpsgdf-variant", c.DPSGDFVariant, "DPSGD-F algorithm: practical (Algorithm 3, the paper's experiments; default) | theory (Algorithm 2: private mean and quantile from --epsilon, the variant with the utility guarantee)")
	fs.Float64Var(&c.FeatureEps, "feature-epsilon", c.FeatureEps, "ε_F spent on DPSGD-F's private mean (practical variant)")
	fs.Float64Var(&c.FeatureCF, "feature-clip", c.FeatureCF, "DPSGD-F feature norm C_F (practical); the public bound R on every record's norm (theory)")
	fs.TextVar(&c.Scale, "scale", c.Scale, "tabular scaling by --feature-bounds: minmax (to [0,1], no privacy cost) | standardize (private mean and std, composed into ε); docs/tabular.md")
	fs.StringVar(&c.FeatureBounds, "feature-bounds", c.FeatureBounds, "declared per-feature `bounds` for --scale, from public knowledge (never the data): lo:hi for all features, lo:hi,lo:hi,… one per feature, or @file")
	fs.Float64Var(&c.ScaleSigma, "scale-sigma", c.ScaleSigma, "--scale standardize: noise multiplier of the released statistics (0: derived from --scale-epsilon-fraction)")
	fs.Float64Var(&c.ScaleEpsFraction, "scale-epsilon-fraction", c.ScaleEpsFraction, "--scale standardize: fraction of --epsilon the statistics would spend alone when --scale-sigma is 0 (0: 0.1)")
	fs.TextVar(&c.Preprocess, "preprocess", c.Preprocess, "non-private preprocessing accounted by SRDP: pca | standardize")
	fs.IntVar(&c.PCAK, "pca-k", c.PCAK, "PCA components")
	fs.BoolVar(&c.PCADim, "pca-dim", c.PCADim, "PCA dimension reduction (R^k) instead of rank reduction")
	fs.Float64Var(&c.EigenGapMin, "eigen-gap-min", c.EigenGapMin, "PCA: declared minimum eigengap over the dataset collection")
	fs.Float64Var(&c.SigmaMin, "sigma-min", c.SigmaMin, "standardize: declared smallest feature std over the dataset collection")
	fs.Float64Var(&c.LipschitzMu, "lipschitz-mu", c.LipschitzMu, "SRDP: Lipschitz constant of a clipped gradient in its input, in units of C (0: 2C cap)")
	fs.TextVar(&c.Sampler, "sampler", c.Sampler, "poisson | twice | shuffle | cyclic (noise bandmf only: its bands as parts)")
	fs.TextVar(&c.Accountant, "accountant", c.Accountant, "accountant calibrating σ: \"\" (the tightest that applies: pld for poisson DP-SGD) | rdp | pld")
	fs.IntVar(&c.BatchSize, "batch", c.BatchSize, "expected (Poisson) or fixed (shuffle) batch size")
	fs.Float64Var(&c.Q2, "q2", c.Q2, "coordinate sampling rate for --sampler twice")
	fs.TextVar(&c.Clip, "clip", c.Clip, "flat | per-layer | linf | hybrid | subspace")
	fs.Float64Var(&c.ClipNorm, "clip-norm", c.ClipNorm, "L2 clip norm C")
	fs.Float64Var(&c.D0, "d0", c.D0, "hybrid clipping: c∞ = C/√d0")
	fs.Var(intList{&c.SubspaceRanks}, "subspace-ranks", "clip subspace: nested cumulative `ranks` of the principal blocks, e.g. 8,16")
	fs.IntVar(&c.PublicN, "public-n", c.PublicN, "clip subspace: training examples declared public for the basis (removed from the private set)")
	fs.IntVar(&c.PowerIters, "power-iters", c.PowerIters, "clip subspace: power iterations per basis estimate")
	fs.IntVar(&c.SubspaceRefresh, "subspace-refresh", c.SubspaceRefresh, "clip subspace: re-estimate the basis every N steps (0: once)")
	fs.Float64Var(&c.Sigma, "sigma", c.Sigma, "noise multiplier (0: calibrate to --epsilon)")
	fs.TextVar(&c.Noise, "noise", c.Noise, "continuous | lattice | bandmf (default "+trainer.DefaultNoise.String()+" where the lattice supports the run, else continuous): the float Gaussian; the exact lattice sum with exactly sampled integer noise, immune to floating-point attacks (every clip but subspace, every sampler; not final_only or radius: docs/secure-noise.md); or noise correlated across steps by a banded matrix factorization (--bands; with the default Poisson sampling accounted by MMCC, with --sampler cyclic by the amplified banded theorem; docs/matrix-mechanism.md)")
	fs.IntVar(&c.Bands, "bands", c.Bands, "noise bandmf: the strategy's bands b, also the parts of --sampler cyclic (1: DP-SGD)")
	fs.Float64Var(&c.Epsilon, "epsilon", c.Epsilon, "target ε (calibrates σ when --sigma is 0; else stops at the budget)")
	fs.Float64Var(&c.Delta, "delta", c.Delta, "δ")
	fs.Float64Var(&c.Epochs, "epochs", c.Epochs, "epochs (when --steps is 0)")
	fs.IntVar(&c.Steps, "steps", c.Steps, "steps (0: from --epochs)")
	fs.TextVar(&c.Optimizer, "optimizer", c.Optimizer, "sgd | momentum | adam")
	fs.Float64Var(&c.LR, "lr", c.LR, "learning rate")
	fs.Float64Var(&c.Momentum, "momentum", c.Momentum, "momentum (with --optimizer momentum)")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "weight decay")
	fs.TextVar(&c.Schedule, "schedule", c.Schedule, "constant | cosine")
	fs.Float64Var(&c.Radius, "radius", c.Radius, "project onto the L2 ball of this radius after each step, for hidden-state accounting (Asoodeh and Diaz; the mean clipped gradient is then clipped to C too) (0 = off)")
	fs.BoolVar(&c.FinalOnly, "final-only", c.FinalOnly, "release only the final model: no intermediate evaluation, release/ holds the final model, its test figures and the account (required for the hidden-state bound)")
	fs.Float64Var(&c.EMA, "ema", c.EMA, "average the iterates with decay D in [0,1) (De et al. 2022; warm-up min(D, (1+t)/(10+t))): test evaluation and model.bin use the average; post-processing, no privacy cost (0 = off; not with --final-only)")
	fs.BoolVar(&c.WeightStd, "weight-std", c.WeightStd, "weight-standardised convolutions in the ResNets (De et al. 2022, with GroupNorm)")
	fs.IntVar(&c.Augmult, "augmult", c.Augmult, "augmentation multiplicity K: each example's gradient is the mean over K random crops (reflect pad 4) and flips, clipped once; sensitivity and ε unchanged (images only; 0 or 1 = off)")
	fs.Float64Var(&c.ClipQuantile, "clip-quantile", c.ClipQuantile, "adaptive clipping (Andrew et al. 2021): the clip norm starts at --clip-norm and follows a private estimate of this quantile of the gradient norms; σ accounts gradient and noisy count together (clip flat or per-layer, poisson; 0 = off)")
	fs.Float64Var(&c.QuantileLR, "quantile-lr", c.QuantileLR, "adaptive clipping: geometric step η_C (0: 0.2)")
	fs.Float64Var(&c.QuantileCountSigma, "quantile-count-sigma", c.QuantileCountSigma, "adaptive clipping: std σ_b of the count noise (0: expected batch/20)")
	fs.IntVar(&c.PerInstance, "per-instance", c.PerInstance, "track the per-instance RDP of the first N training examples (curator-only diagnostic)")
	fs.IntVar(&c.MaxPhysicalBatch, "max-physical-batch", c.MaxPhysicalBatch, "largest chunk of per-sample gradients in memory")
	fs.TextVar(&c.Precision, "precision", c.Precision, "f32 (default) | bf16: bfloat16 operands and float32 sums in the engine's matrix products, on CPUs with AVX-512 BF16 only (refused elsewhere); the norm-only path clips to C/ρ, ρ = (1+2^-8)²(1+2^-20) (docs/precision.md)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the initialisation; given explicitly on the command line it also seeds the DP noise and sampling: reproducible, NOT private for release (a config file's \"seed\" fixes the initialisation only unless it also says \"seeded\": true)")
	fs.BoolVar(&c.Seeded, "seeded", c.Seeded, "derive the DP noise and sampling from --seed (reproducible; anyone who knows the seed can subtract the noise) instead of crypto/rand; implied by an explicit --seed, --seeded=false overrides")
	fs.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "evaluate on the test set every N steps (0: only at the end)")
	fs.StringVar(&c.OutDir, "out", c.OutDir, "output directory: OUT/release/ (publishable: model.bin, summary.json, metrics.jsonl, test and ε plots; replaced whole when a run or an interrupted part of one ends) and OUT/private/ (0700, never publish: checkpoint, diagnostics)")
	fs.TextVar(&c.Distributed, "distributed", c.Distributed, "mpi: one rank of a data-parallel run (mpirun -np N dptrain train --distributed mpi; needs a build with -tags mpi)")
	fs.BoolVar(&c.PrivateDiagnostics, "private-diagnostics", c.PrivateDiagnostics, "also record raw training statistics (batch loss, gradient norms, clipped fraction, train accuracy) in OUT/private/ and show the batch loss; NOT covered by ε, never publish them")
	fs.BoolVar(&c.KeepCheckpoint, "keep-checkpoint", c.KeepCheckpoint, "keep OUT/private/checkpoint.json after the run completes (it holds the noise seed; removed by default)")
	fs.Float64Var(&c.ClippedCountSigma, "clipped-count-sigma", c.ClippedCountSigma, "release each step's count of clipped examples + N(0, σ_b²) (this σ_b; 0 = off) in OUT/release/metrics.jsonl; its cost is composed into ε (the step is charged at σ_eff = (σ⁻² + σ_b⁻²)^(−1/2)); poisson sampler, clip flat or linf")
	fs.StringVar(&c.PublicData, "public-data", c.PublicData, "subspace clipping: a public dataset for the basis (a dataset name other than the private one, or test: the first --public-n test records); without it the first --public-n training records are carved out, unprotected")
	fs.IntVar(&c.CheckpointEvery, "checkpoint-every", c.CheckpointEvery, "checkpoint every N steps (0: only before the first step, which holds the settings and seed, and on interrupt)")
	fs.BoolVar(&c.Plots, "plots", c.Plots, "write training and ε plots (PNG and SVG) to --out")
}

// trainRunFlags are the train flags that are not Config fields.
type trainRunFlags struct {
	resume, overwrite, quiet, interruptedTest, jsonOut *bool
	rankTimeout                                        *time.Duration
}

// registerTrainFlags registers every `dptrain train` flag on fs, the
// configuration's into c. A resumed run parses the flags again onto the
// checkpoint's configuration through the same function, so the two parses
// accept the same flags.
func registerTrainFlags(fs *flag.FlagSet, c *trainer.Config) trainRunFlags {
	fs.String("config", "", "JSON config file (flags override it); see configs/")
	trainFlags(fs, c)
	return trainRunFlags{
		resume:          fs.Bool("resume", false, "continue from --out's private/checkpoint.json"),
		overwrite:       fs.Bool("overwrite", false, "replace the run --out holds (without it, a directory holding a run is refused)"),
		quiet:           fs.Bool("quiet", false, "no progress bar"),
		rankTimeout:     fs.Duration("rank-timeout", 60*time.Second, "distributed runs: how long a rank waits in one collective before ending the job (a rank that hangs); 0: forever"),
		interruptedTest: fs.Bool("interrupted-test", false, "final-only run: if interrupted, still evaluate and release the interrupted iterate's test figures (withheld by default); a second release, so the hidden-state bound no longer applies, to this run or its resumption"),
		jsonOut:         fs.Bool("json", false, "print every step's released record and the released summary as JSON lines (with --private-diagnostics, the raw records too)"),
	}
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// The config file is read first so that flags override it.
	cfg := trainer.Default()
	cfg.OutDir = "runs/latest"
	if path, ok, err := scanFlagValue(args, "config"); err != nil {
		return asInput(err)
	} else if ok {
		if cfg, err = trainer.LoadConfig(path, cfg); err != nil {
			return asInput(err)
		}
	}
	fs := newFlagSet("train", stdout)
	f := registerTrainFlags(fs, &cfg)
	fs.Usage = func() { trainUsage(fs) }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// An explicit --seed asks for a reproducible run; --seeded given
	// explicitly has the last word. (A config file's "seed" does not.)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["seed"] && !set["seeded"] {
		cfg.Seeded = true
	}
	if *f.resume {
		// The checkpoint holds the run's settings; the flags given now are
		// applied on top of them, and Run names any that conflicts.
		if ckCfg, err := trainer.CheckpointConfig(cfg.OutDir); err == nil {
			fs2 := newFlagSet("train", stdout)
			registerTrainFlags(fs2, &ckCfg)
			if err := parseFlags(fs2, args); err != nil {
				return err
			}
			if set["seed"] && !set["seeded"] {
				ckCfg.Seeded = true
			}
			if _, ok, _ := scanFlagValue(args, "config"); !ok {
				cfg = ckCfg
			}
		}
	}
	if err := cfg.Validate(); err != nil {
		return asInput(err)
	}
	warnLearningRate(stderr, cfg.LR)
	opts := trainer.Options{Progress: trainer.ProgressBar, Out: stderr, Log: stderr, Resume: *f.resume, Overwrite: *f.overwrite, InterruptedTest: *f.interruptedTest}
	if !isTerminal(stderr) {
		opts.Progress = trainer.ProgressLines
	}
	switch {
	case *f.jsonOut:
		opts.Progress, opts.Out, opts.Log = trainer.ProgressJSON, stdout, nil
	case *f.quiet:
		opts.Progress, opts.Out = trainer.ProgressQuiet, nil
	}
	red, printer, done, err := startDistributed(&cfg, *f.rankTimeout, stderr)
	if err != nil {
		return err
	}
	defer done()
	if !printer {
		// Ranks other than 0 train silently; rank 0 reports and writes.
		opts.Progress, opts.Out, opts.Log = trainer.ProgressQuiet, nil, nil
		stdout = io.Discard
	}
	opts.Reducer = red
	sum, err := trainer.Run(ctx, cfg, opts)
	if sum != nil {
		if *f.jsonOut {
			b, _ := sum.ReleasedSummaryJSON()
			if cfg.PrivateDiagnostics {
				b, _ = json.Marshal(sum)
			}
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			printSummary(stdout, sum)
		}
	}
	if acct := trainer.PartialAccount(err); acct != nil && acct.Best.Accountant != "" {
		// The steps a failed run took drew on the training data: say what
		// they cost, as for any run.
		fmt.Fprintf(stderr, "dptrain train: the run failed after %d of %d steps, all charged: ε = %.4f (δ = %g, %s, %s)\n",
			acct.Steps, acct.PlannedStep, acct.Best.Epsilon, acct.Delta, acct.Best.Relation, acct.Best.Accountant)
	}
	if errors.Is(err, trainer.ErrFinished) {
		// Nothing went wrong: the run asked for is complete (exit 0).
		fmt.Fprintf(stderr, "dptrain train: %v\n", err)
		return nil
	}
	if err != nil {
		if errors.Is(err, trainer.ErrInvalidConfig) || errors.Is(err, datasets.ErrBadData) {
			return asInput(err)
		}
		return err
	}
	return nil
}

func printSummary(w io.Writer, s *trainer.Summary) {
	fmt.Fprintf(w, "data      %s (%s): %d train, %d test\n", s.Dataset, s.Source, s.TrainN, s.TestN)
	fmt.Fprintf(w, "model     %s, %d parameters\n", s.Model, s.Params)
	fmt.Fprintf(w, "training  %d of %d steps, q = %.5f, σ = %.4f%s, %.1f s\n", s.Steps, s.PlannedStep, s.Q, s.Sigma,
		map[bool]string{true: " (calibrated)", false: ""}[s.Calibrated], s.Seconds)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note      %s\n", n)
	}
	if s.Stopped != "" {
		fmt.Fprintf(w, "stopped   %s\n", s.Stopped)
	}
	if s.NoiseSeeded {
		fmt.Fprintln(w, "noise     SEEDED from --seed (reproducible): anyone who knows the seed can recompute the noise; not a private release")
	} else {
		fmt.Fprintln(w, "noise     crypto/rand-seeded (the seed is kept only in the private checkpoint while the run is unfinished)")
	}
	if s.TestWithheld {
		fmt.Fprintln(w, "test      withheld: an interrupted final-only run releases nothing about its iterate (--interrupted-test releases it, at the cost of the hidden-state bound)")
	} else {
		fmt.Fprintf(w, "test      accuracy %.4f, loss %.4f\n", s.TestAcc, s.TestLoss)
	}
	for _, b := range s.Bounds {
		switch {
		case b.Err != nil:
			fmt.Fprintf(w, "privacy   %-7s no bound: %v\n", b.Name, b.Err)
		case !b.Applicable:
			fmt.Fprintf(w, "privacy   %-7s ε = %.4f (δ = %g, %s) NOT valid for this run: %s\n", b.Name, b.Epsilon, b.Delta, b.Relation, b.Reason)
		default:
			order := ""
			if b.Order > 0 {
				order = fmt.Sprintf(", order %g", b.Order)
			}
			fmt.Fprintf(w, "privacy   %-7s ε = %.4f (δ = %g, %s%s)\n", b.Name, b.Epsilon, b.Delta, b.Relation, order)
		}
	}
	if s.CoveredN > 0 && s.Delta >= 1/float64(s.CoveredN) {
		fmt.Fprintf(w, "warning   δ = %g is at least 1/n = %.3g: publishing one random record in full meets this guarantee; choose δ well below 1/n\n", s.Delta, 1/float64(s.CoveredN))
	}
	if s.Best.Accountant != "" {
		caveat := ""
		if s.CoveredN < s.TrainN {
			caveat = fmt.Sprintf(" for %d of the %d training records (the other %d were carved out as public, unprotected)", s.CoveredN, s.TrainN, s.TrainN-s.CoveredN)
		}
		if s.Noise.Lattice() {
			caveat += fmt.Sprintf("; lattice noise (γ = C·2^-%d)", s.LatticeK)
		}
		if !s.PrivateRelease {
			caveat += "; NOT a private release (seeded noise)"
		}
		acc := fmt.Sprintf(", test accuracy %.2f%%", 100*s.TestAcc)
		if s.TestWithheld {
			acc = ""
		}
		fmt.Fprintf(w, "result    (ε = %.4f, δ = %g)-DP under %s %s (%s)%s%s\n", s.Best.Epsilon, s.Delta, s.Best.Relation, trainer.NPublic, s.Best.Accountant, caveat, acc)
	}
	if s.OutDir != "" {
		rel, priv := filepath.Join(s.OutDir, "release"), filepath.Join(s.OutDir, "private")
		if s.PrivateRelease {
			fmt.Fprintf(w, "publish   %s/ (model.bin, summary.json, metrics.jsonl, test and ε plots): covered by the result above or computed from public data\n", rel)
		} else {
			fmt.Fprintf(w, "outputs   %s/ (model.bin, summary.json, metrics.jsonl, plots): a seeded run, so not a private release\n", rel)
		}
		fmt.Fprintf(w, "private   %s/ (mode 0700): checkpoint, training statistics, per-instance files; never publish\n", priv)
	}
	if s.Private {
		fmt.Fprintln(w, "note      final-only run: release/ holds the final model, its test figures and the account, nothing intermediate")
	}
}

// isTerminal reports whether w is a character device (a terminal), where a
// redrawn progress bar makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// scanFlagValue finds "-name V", "--name V", "-name=V" or "--name=V" in args.
func scanFlagValue(args []string, name string) (string, bool, error) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, p := range []string{"-" + name, "--" + name} {
			if a == p {
				if i+1 >= len(args) {
					return "", false, fmt.Errorf("flag needs an argument: %s", p)
				}
				return args[i+1], true, nil
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v, true, nil
			}
		}
	}
	return "", false, nil
}
