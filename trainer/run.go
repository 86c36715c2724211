package trainer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/optim"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// Options control how a run reports and whether it resumes; they do not
// change what is trained.
type Options struct {
	Progress Progress
	// Out receives the progress bar or JSON lines (nil: nothing).
	Out io.Writer
	// Log receives one-line human messages (nil: nothing).
	Log io.Writer
	// Resume continues from OutDir/checkpoint.json when it exists.
	Resume bool
	// StopAfter, when > 0, ends the run after that many steps as if
	// interrupted (checkpoint written): for tests of resumption.
	StopAfter int
	// Reducer, when set, makes this process one rank of a data-parallel
	// run (see Reducer); only rank 0 writes outputs. nil: one process.
	Reducer Reducer
	// Model, when set, is trained instead of the zoo model Config.Model
	// names: any PerSampleModel, e.g. a Gorgonia graph (models/graph). Its
	// InputSize must match the data; it is initialised by its builder.
	Model models.PerSampleModel
	// Train and Test, when Train is set, are the data the run uses instead
	// of the dataset Config.Dataset names (which becomes "memory"). The
	// test set is public: its figures are published as they are. The unit
	// of privacy is one row of Train as given. Columns and class names set
	// with datasets.Dataset.SetSchema are recorded in the model.
	Train, Test *datasets.Dataset
	// HoldOut, with Test nil, holds that fraction (in (0, 1)) of Train's
	// rows out as the test set, by a seeded split: those rows are not
	// protected (their accuracy is published) and the claim covers only
	// the rows trained on. Without Test or HoldOut, Run refuses.
	HoldOut float64
	heldOut int // rows held out of Train (set by Run)
	// resume is the checkpoint's record of the data on a resume (nil on a
	// fresh run): the data must match its digest, and its released
	// statistics are reused (resumedata.go). Set by Run.
	resume *dataRecord
	// Overwrite lets a new run (not Resume) replace the run OutDir holds;
	// without it that is an error.
	Overwrite bool
	// InterruptedTest releases the test figures of an interrupted
	// final-only run's iterate (by default withheld): a second release, so
	// the hidden-state bound stops applying, for this run and its resumption.
	InterruptedTest bool
	// Noise, when set, is added to each step's released sum INSTEAD of the
	// mechanism's noise while the account still charges the mechanism's
	// event: for tests only (the audit's negative controls). A run with it
	// is not a private release.
	Noise mechanism.Noise
}

// ErrInterrupted is wrapped by Run's error when the context was cancelled;
// the run's checkpoint holds its state.
var ErrInterrupted = errors.New("training interrupted")

// state is one run in progress.
type state struct {
	cfg  Config
	opts Options
	ctx  context.Context // the run's: setup's long searches (σ calibration) stop on it
	data *prepared

	model    models.PerSampleModel
	samp     sampler.Sampler
	share    batchShare // this rank's share of a batch and twice sampling's masks
	clipper  clip.Clipper
	noise    mechanism.Noise
	noiseRNG *rng.Stream
	// rootState is the root random stream's state (its seed): fixed from
	// Config.Seed in a seeded run, drawn from crypto/rand otherwise, or
	// taken from the checkpoint on resume. Every privacy-relevant stream is
	// a child of it.
	rootState []byte
	opt       optim.Optimizer
	acct      *accounting
	tracker   *accountant.Tracker
	sigma     float64
	steps     int
	lrAt      func(step int) float64

	grad gradients // the run's gradient strategy
	now  stepNow   // the step being taken

	out      *outputs // nil: the run writes nothing
	logs     runLogs  // release/metrics.jsonl and the private diagnostics
	notes    runNotes
	samples  int
	sub      *subspaceState // hybrid subspace clipping, or nil
	canaries auditCanaries  // an audit run's canaries
	quant    *quantileState // adaptive clipping (clip_quantile), or nil
	dist     Reducer        // data-parallel ranks, or nil
	features []feature      // the optional features that are on, in setup order
	batches  batchBuilder   // the run's one way to make a models.Batch
	eval     evalCache      // the iterate set aside and the last test evaluation
}

// Run trains cfg and returns its summary. Cancelling ctx stops the run at
// the end of the current step, writes a checkpoint (when OutDir is set) and
// returns an error wrapping ErrInterrupted.
func Run(ctx context.Context, cfg Config, opts Options) (*Summary, error) {
	if opts.Train != nil {
		cfg.Dataset = InMemory
		if err := opts.holdOut(cfg.Seed); err != nil {
			return nil, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	restore, err := usePrecision(cfg.Precision)
	if err != nil {
		return nil, err
	}
	defer restore()
	start := time.Now()
	s := &state{cfg: cfg, opts: opts, dist: opts.Reducer, ctx: ctx}
	if s.dist == nil {
		s.dist = oneProcess{}
	}
	if err := s.syncSettings(); err != nil {
		return nil, err
	}
	if cfg.OutDir != "" && s.dist.Rank() == 0 {
		started := runStarted(cfg.OutDir)
		unlock, err := lockOutDir(cfg.OutDir)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if err := recoverOutDir(cfg.OutDir); err != nil {
			return nil, err
		}
		if !opts.Resume {
			if err := claimOutDir(cfg.OutDir, opts.Overwrite); err != nil {
				return nil, err
			}
		}
		out, err := newOutputs(cfg.OutDir)
		if err != nil {
			return nil, err
		}
		s.out = out
		if opts.Resume && started {
			if err := s.checkFinished(); err != nil {
				return nil, err
			}
			if _, err := os.Stat(s.checkpointPath()); errors.Is(err, os.ErrNotExist) {
				if err := s.checkResumable(); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("%w: --resume: %s holds a run that wrote no checkpoint (it was interrupted before its first), so its settings and noise cannot be continued; start it afresh with --overwrite (without --resume) or use a new --out", ErrInvalidConfig, cfg.OutDir)
			}
		}
	}
	// The checkpoint is read before setup: it holds the root seed from
	// which the private preprocessing's noise, the sampler and the DP noise
	// are derived, so a resumed crypto-seeded run redraws none of them.
	var ck *checkpoint
	if opts.Resume && s.out != nil {
		c, err := loadCheckpoint(s.checkpointPath())
		switch {
		case errors.Is(err, ErrNoCheckpoint):
			if err := s.checkResumable(); err != nil {
				return nil, err
			}
			s.logf("no checkpoint in %s; starting afresh", s.out.private(""))
		case err != nil:
			return nil, err
		case c.ConfigHash != cfg.Hash():
			return nil, fmt.Errorf("%w: checkpoint %s was written with different settings (%s); drop those flags to continue the run, or use a new out_dir", ErrInvalidConfig, s.checkpointPath(), strings.Join(settingsDiff(c.Config, c.ConfigHash, cfg), "; "))
		case c.Data == nil:
			return nil, fmt.Errorf("%w: cannot resume from checkpoint %s: %v; start the run afresh (without --resume, with --overwrite, which discards the checkpoint) or use a new out_dir", ErrInvalidConfig, s.checkpointPath(), errNoDigest)
		default:
			ck = c
		}
	}
	if s.dist.Size() > 1 && opts.Resume && cfg.OutDir != "" {
		// Rank 0 read the checkpoint; every rank continues from it.
		var b []byte
		if ck != nil {
			var err error
			if b, err = encodeCheckpoint(ck); err != nil {
				return nil, err
			}
		}
		b, err := s.broadcastBytes(b)
		if err != nil {
			return nil, fmt.Errorf("distributed resume: %w", err)
		}
		if ck == nil && len(b) > 0 {
			if ck, err = parseCheckpoint(b); err != nil {
				return nil, fmt.Errorf("distributed resume: %w", err)
			}
		}
	}
	if err := s.initRoot(ck); err != nil {
		return nil, err
	}
	if ck != nil {
		s.opts.resume = ck.Data
	}
	// Every stream derives from rank 0's root seed.
	root, err := s.broadcastBytes(s.rootState)
	if err != nil {
		return nil, fmt.Errorf("distributed start: %w", err)
	}
	s.rootState = root
	if err := s.setup(); err != nil {
		return nil, err
	}
	first := 1
	if ck != nil {
		if err := s.restore(ck); err != nil {
			return nil, err
		}
		first = ck.Step + 1
		s.logf("resumed from step %d of %d", ck.Step, s.steps)
	} else if s.out != nil {
		// The run's settings and seed, durable before the first step: a
		// resume after a crash at any point continues this run.
		if err := s.checkpoint(0); err != nil {
			return nil, err
		}
	}
	if s.out != nil {
		if err := s.openMetrics(first > 1, first-1); err != nil {
			return nil, err
		}
		defer s.closeMetrics()
	}
	sum, err := s.loop(ctx, first, start)
	if sum == nil && err != nil {
		// Every step taken so far (this process's and the checkpoint's)
		// is charged, whatever ended the run.
		err = s.failedRun(err, max(s.now.step, first-1))
	}
	if derr := s.describeReturned(); derr != nil && err == nil {
		err = derr
	}
	if sum != nil {
		sum.Seconds = time.Since(start).Seconds()
		if s.out != nil {
			if werr := s.writeOutputs(sum); werr != nil {
				// Nothing was published: no summary for the caller to
				// print as a result, the failure and its account instead.
				if err != nil {
					werr = fmt.Errorf("%w; writing its outputs failed: %v", err, werr)
				}
				return nil, s.failedRun(werr, sum.Steps)
			}
		}
	}
	return sum, err
}

func (s *state) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, format+"\n", args...)
	}
}

// newCryptoRoot draws the root stream of an unseeded run (a variable so
// that tests can tell a resumed run's streams from freshly drawn ones).
var newCryptoRoot = rng.NewCrypto

// initRoot fixes the run's root random stream: the checkpoint's on resume,
// else derived from Config.Seed when Seeded, else seeded from crypto/rand.
func (s *state) initRoot(ck *checkpoint) error {
	switch {
	case ck != nil && len(ck.Root) > 0:
		s.rootState = ck.Root
	case ck != nil && !s.cfg.Seeded:
		return fmt.Errorf("checkpoint %s holds no root seed (written by an older dptrain): a crypto-seeded run cannot be resumed with the same random streams; start afresh in a new out_dir", s.checkpointPath())
	default:
		root := rng.New(s.cfg.Seed)
		if !s.cfg.Seeded {
			var err error
			if root, err = newCryptoRoot(); err != nil {
				return err
			}
		}
		st, err := root.MarshalBinary()
		if err != nil {
			return err
		}
		s.rootState = st
	}
	_, err := s.root()
	return err
}

// root returns a fresh copy of the run's root stream. Only its children
// are drawn from, so every copy derives the same streams.
func (s *state) root() (*rng.Stream, error) {
	var r rng.Stream
	if err := r.UnmarshalBinary(s.rootState); err != nil {
		return nil, fmt.Errorf("root random stream: %w", err)
	}
	return &r, nil
}

// setup loads data, builds every component and fixes σ and the number of steps.
func (s *state) setup() error {
	cfg := &s.cfg
	if s.dist == nil {
		s.dist = oneProcess{} // a state built without Run (tests)
	}
	if s.rootState == nil {
		if err := s.initRoot(nil); err != nil {
			return err
		}
	}
	root, err := s.root()
	if err != nil {
		return err
	}
	data, err := loadData(cfg, root, s.opts.Train, s.opts.Test, s.opts.resume)
	err = s.syncData(data, err) // the ranks agree on their data
	if errors.Is(err, ErrDataChanged) {
		return fmt.Errorf("cannot resume from checkpoint %s: %w; a resume over changed data would release statistics of them with the same noise: start afresh (without --resume, with --overwrite) or use a new out_dir", s.checkpointPath(), err)
	}
	if err != nil {
		return err
	}
	if testDataHook != nil {
		testDataHook(data)
	}
	s.data = data
	s.notes.public = append(s.notes.public, data.notes...)
	s.notes.private = append(s.notes.private, data.privNotes...)
	s.logData()
	if err := s.setupInputCanaries(root); err != nil {
		return err
	}
	n := data.train.N()
	s.batches = batchBuilder{regression: cfg.Model == ModelLinReg}
	if s.opts.Model != nil {
		if s.model = s.opts.Model; s.model.InputSize() != data.train.Dim() {
			return fmt.Errorf("model takes %d inputs; dataset %s has %d features", s.model.InputSize(), data.train.Name, data.train.Dim())
		}
	} else if s.model, err = buildModel(cfg, data.train); err != nil {
		return err
	}
	if cfg.Clip == mechanism.Subspace {
		// Declared-public examples leave the private training set.
		if err := s.setupSubspace(root); err != nil {
			return err
		}
		n = s.data.train.N()
	}
	spec := mechanismSpec(cfg, n, data)
	if cfg.Clip != mechanism.Subspace {
		if s.clipper, err = spec.NewClipper(s.model.NumParams(), s.model.Groups()); err != nil {
			return fmt.Errorf("clip: %w", err)
		}
	}
	// Sampling randomness is part of the mechanism (a known Poisson stream
	// reveals who was in each batch): like the noise, it follows the seed
	// only when the run asks to be reproducible.
	if cfg.BatchSize > n {
		return fmt.Errorf("sampler: %w: batch_size %d exceeds the %d training examples; use --batch %d or less", ErrInvalidConfig, cfg.BatchSize, n, n)
	}
	sampSpec := spec
	if h := testAuditHooks; h != nil && h.rateScale > 0 {
		sampSpec.Batch = int(math.Round(float64(cfg.BatchSize) * h.rateScale)) // negative control: the account keeps q
	}
	var expected float64
	if s.samp, expected, err = sampSpec.NewSampler(s.clipper.OutDim(), root.Child("sampler")); err != nil {
		return fmt.Errorf("sampler: %w", err)
	}
	s.share.twice, _ = s.samp.(*sampler.Twice)
	s.noiseRNG = root.Child("noise")
	mech, err := mechanism.New(spec, s.clipper)
	if err != nil {
		return err
	}
	if s.acct, err = newAccounting(cfg, mech, expected); err != nil {
		return err
	}

	s.steps = cfg.Steps
	if s.steps == 0 {
		if s.steps, err = epochSteps(cfg.Epochs, n, cfg.BatchSize); err != nil {
			return err
		}
	}
	var band *bandmfFeature
	if cfg.Noise == NoiseBandMF && mech.MMCC() {
		// MMCC's events depend on the strategy: optimise it for the planned
		// steps before calibrating.
		if band, err = newBandMF(cfg, s.steps, func() *mechanism.CorrelatedNoise { return s.noise.(*mechanism.CorrelatedNoise) }); err != nil {
			return err
		}
		if err := mech.UseStrategy(band.strategy, s.steps, cfg.Delta); err != nil {
			return fmt.Errorf("noise bandmf: %w", err)
		}
	}
	s.sigma = cfg.Sigma
	if s.sigma == 0 {
		if s.sigma, err = s.acct.calibrate(s.ctx, s.steps); err != nil {
			return err
		}
		by := "the run's primary accountant"
		if s.acct.calibPLD {
			by = "the PLD accountant"
		}
		s.notes.public = append(s.notes.public, fmt.Sprintf("σ = %.4f calibrated for ε = %g, δ = %g over %d steps by %s", s.sigma, cfg.Epsilon, cfg.Delta, s.steps, by))
	} else if cfg.Epsilon > 0 {
		k, err := s.acct.budgetSteps(s.sigma, s.steps)
		if err != nil {
			return fmt.Errorf("budget: %w", err)
		}
		if k < s.steps {
			s.notes.public = append(s.notes.public, fmt.Sprintf("budget: ε = %g is reached after %d of %d steps at σ = %g; the run stops there", cfg.Epsilon, k, s.steps, s.sigma))
			s.steps = k
		}
	}
	if s.steps < 1 {
		return fmt.Errorf("budget: not even one step fits in ε = %g at σ = %g", cfg.Epsilon, s.sigma)
	}
	if err := s.setupCanaries(root); err != nil {
		return err
	}
	if err := s.setupRecipes(root); err != nil {
		return err
	}
	if cfg.Noise == NoiseBandMF {
		f := band
		if f == nil {
			if f, err = newBandMF(cfg, s.steps, func() *mechanism.CorrelatedNoise { return s.noise.(*mechanism.CorrelatedNoise) }); err != nil {
				return err
			}
		}
		s.features = append(s.features, f)
		s.notes.public = append(s.notes.public, f.note(s.acct.mech))
	}
	if s.noise, err = s.buildNoise(); err != nil {
		return fmt.Errorf("noise: %w", err)
	}
	if cfg.ClippedCountSigma > 0 {
		c, err := newClipCount(cfg.ClippedCountSigma, s.acct.mech.Q()*float64(n), root.Child("clipped-count"))
		if err != nil {
			return err
		}
		s.features = append(s.features, &countFeature{c: c})
		s.notes.public = append(s.notes.public, clippedCountNote(s.sigma, cfg.ClippedCountSigma))
	}
	var proj optim.Projector
	if cfg.Radius > 0 {
		if proj, err = optim.NewL2Ball(nil, cfg.Radius); err != nil {
			return err
		}
		if pj := proj.(*optim.L2Ball); pj != nil {
			pj.Project(s.model.Params()) // start inside the set
		}
	}
	if s.opt, err = buildOptimizer(cfg, s.steps, proj); err != nil {
		return fmt.Errorf("optimizer: %w", err)
	}
	if cfg.EMA > 0 {
		// a₀ = θ₀, the (projected) initial parameters.
		avg, err := optim.NewEMA(cfg.EMA, s.model.Params())
		if err != nil {
			return err
		}
		s.features = append(s.features, &emaFeature{avg: avg, params: s.model.Params})
		s.notes.public = append(s.notes.public, fmt.Sprintf("EMA d = %g: evaluation and model.bin use the averaged parameters (post-processing, no privacy cost); the training loss is the iterates'", cfg.EMA))
	}
	s.lrAt = func(step int) float64 {
		if cfg.Schedule == ScheduleCosine {
			return optim.Cosine{Base: cfg.LR, Total: s.steps}.LR(step - 1)
		}
		return cfg.LR
	}
	var tnotes []string
	if s.tracker, tnotes, err = s.acct.newTracker(); err != nil {
		return err
	}
	s.notes.public = append(s.notes.public, tnotes...)
	if cfg.PerInstance > 0 {
		s.features = append(s.features, &instanceFeature{s: s})
	}
	if len(s.acct.prefix) > 0 {
		if note, err := s.acct.breakdown(s.sigma, s.steps); err == nil {
			s.notes.public = append(s.notes.public, note)
		}
	}
	return s.allocate()
}

func (s *state) allocate() error {
	mb, in := s.model.MaxBatch(), s.model.InputSize()
	s.batches.x = make([]float32, mb*in)
	s.batches.y = make([]int, mb)
	s.batches.losses = make([]float32, mb)
	s.now.sum = make([]float32, s.clipper.OutDim()+s.extraDim())
	if s.share.twice != nil {
		s.share.masks = make([]*sampler.Mask, mb)
		for i := range s.share.masks {
			s.share.masks[i] = sampler.NewMask(s.clipper.OutDim())
		}
	}
	var err error
	s.grad, err = s.newGradients()
	return err
}

// stepNow is the step being taken: its number (1-based), its batch's
// indices and the released vector (the model's clipped sum, then the
// features' coordinates), noised in place.
type stepNow struct {
	step int
	idx  []int
	sum  []float32
}

// stepStats are the (non-private) diagnostics of one step.
type stepStats struct {
	lossSum    float64
	n          int
	normSum    float64
	normMax    float64
	clipped    int
	nonFinite  int
	normsCount int
}

// step runs one DP-SGD step and returns its diagnostics: sample, clip the
// per-sample gradients (the run's gradient strategy), reduce over ranks,
// add the mechanism's noise, take the optimizer step, and charge the
// mechanism's event.
func (s *state) step() (stepStats, error) {
	var st stepStats
	for _, f := range s.features {
		if err := f.beforeStep(s.now.step); err != nil {
			return st, err
		}
	}
	s.now.idx = s.samp.Next(s.now.idx)
	clear(s.now.sum)
	sum := s.now.sum[:s.clipper.OutDim()]              // the model's part (the features' coordinates follow it)
	batch, mb := s.owned(s.now.idx), s.grad.chunkLen() // this rank's examples (all of them in one process)
	s.grad.start(s.now.step)
	for off := 0; off < len(batch); off += mb {
		if err := s.grad.chunk(batch[off:min(off+mb, len(batch))], sum, &st); err != nil {
			return st, err
		}
	}
	if err := s.reduceStep(sum, &st); err != nil {
		return st, err
	}
	if s.acct.outerClip() {
		// The hidden-state bound's bounded update ‖update‖ ≤ ηC: a
		// projection onto a ball is 1-Lipschitz, so the sum's L2
		// sensitivity is unchanged (mechanism.Mechanism.OuterClip).
		clip.OuterClip(s.now.sum, s.acct.expected, s.cfg.ClipNorm)
	}
	for _, f := range s.features {
		f.addExtra(s.now.sum)
	}
	if err := s.grad.release(s.now.sum); err != nil {
		return st, err
	}
	update := sum
	for _, f := range s.features {
		var err error
		if update, err = f.afterNoise(s.now.sum, update); err != nil {
			return st, err
		}
	}
	if err := s.opt.Step(s.model.Params(), update, s.acct.expected); err != nil {
		return st, err
	}
	for _, f := range s.features {
		if err := f.afterUpdate(); err != nil {
			return st, err
		}
	}
	if err := s.acct.step(s.tracker, s.now.step, s.acct.stepEvent(s.sigma, s.now.step), s.sigma, s.lrAt(s.now.step)); err != nil {
		return st, fmt.Errorf("accounting: %w", err)
	}
	return st, nil
}

func (st *stepStats) addNorm(v float64) {
	st.normSum += v
	st.normMax = max(st.normMax, v)
	st.normsCount++
}

// addClip records a chunk's clip counts.
func (st *stepStats) addClip(cs clip.Stats) {
	st.clipped += cs.Clipped
	st.nonFinite += cs.NonFinite
}
