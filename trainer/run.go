package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/lattice"
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
	// of the dataset Config.Dataset names (which becomes "memory"). Test
	// nil: a seeded 80/20 split of Train. The unit of privacy is one row
	// of Train as given.
	Train, Test *datasets.Dataset
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

// Summary is what a finished (or interrupted) run reports.
type Summary struct {
	Dataset     string                    `json:"dataset"`
	Source      string                    `json:"source"`
	Model       string                    `json:"model"`
	Params      int                       `json:"params"`
	TrainN      int                       `json:"train_n"`
	TestN       int                       `json:"test_n"`
	Steps       int                       `json:"steps"`         // steps completed
	PlannedStep int                       `json:"planned_steps"` // steps the run set out to take
	Sigma       float64                   `json:"sigma"`         // noise multiplier used
	Calibrated  bool                      `json:"calibrated"`    // σ was calibrated to the target ε
	Q           float64                   `json:"q"`
	Delta       float64                   `json:"delta"`
	TestAcc     float64                   `json:"test_acc"`
	TestLoss    float64                   `json:"test_loss"`
	Epsilon     map[string]float64        `json:"epsilon"`
	Best        accountant.Bound          `json:"best"`
	Bounds      []accountant.TrackedBound `json:"-"`
	Notes       []string                  `json:"notes,omitempty"`
	Stopped     string                    `json:"stopped,omitempty"` // why the run ended early
	Seconds     float64                   `json:"seconds"`
	OutDir      string                    `json:"out_dir,omitempty"`
	Private     bool                      `json:"private"` // outputs other than the final model are private state
	// Samples is the number of examples processed (the sum of realised
	// batch sizes): a statistic of the training data, written to private/
	// only.
	Samples int `json:"samples"`
	// NoiseVariance is E‖e‖² of one step's noise on the released sum.
	NoiseVariance float64 `json:"noise_variance"`
	// Sensitivity is the L2 bound of one example's clipped contribution.
	Sensitivity float64 `json:"sensitivity"`
	// NoiseSeeded is true when the DP noise and sampling were derived from
	// the fixed seed (Config.Seeded): reproducible, but anyone who knows
	// the seed can recompute the noise, so the run is not a private
	// release. False: crypto/rand-seeded streams.
	NoiseSeeded bool `json:"noise_seeded"`
	// Noise is the noise the steps added: "continuous" or "lattice"
	// (docs/secure-noise.md), with LatticeK the lattice exponent
	// (γ = C·2^-k).
	Noise    Noise `json:"noise"`
	LatticeK int   `json:"lattice_k,omitempty"`
	// PrivateRelease is false when the outputs are not a private release
	// (a seeded run: the noise can be recomputed from the seed).
	PrivateRelease bool `json:"private_release"`
	// CoveredN is the number of training records the claim covers (TrainN
	// less records carved out as public).
	CoveredN int `json:"covered_n"`
	// Claim states the privacy guarantee in words, with its caveats.
	Claim string `json:"claim"`
	// PrivateNotes are curator-only messages (they may name records);
	// written to private/summary.json only.
	PrivateNotes []string `json:"private_notes,omitempty"`
	// TestWithheld: the test figures were not computed (an interrupted
	// final-only run releases nothing about its iterate); TestAcc and
	// TestLoss are 0.
	TestWithheld bool `json:"test_withheld,omitempty"`

	cfg  Config      // the run's configuration, for the released summary
	acct *accounting // the run's account, for ComposeRuns
}

// ErrInterrupted is wrapped by Run's error when the context was cancelled;
// the run's checkpoint holds its state.
var ErrInterrupted = errors.New("training interrupted")

// state is one run in progress.
type state struct {
	cfg  Config
	opts Options
	data *prepared

	model    models.PerSampleModel
	samp     sampler.Sampler
	twice    *sampler.Twice
	clipper  clip.Clipper
	norm     clip.NormClipper     // nil: materialised path
	mech     *mechanism.Mechanism // what a step samples, clips, noises and charges
	noise    mechanism.Noise
	noiseRNG *rng.Stream
	lat      *mechanism.LatticeNoise // with noise lattice: the noise, which also quantises
	acc      []int64                 // with noise lattice: the step's exact lattice sum
	count    *clipCount              // released noised clipped count, or nil
	// rootState is the root random stream's state (its seed): fixed from
	// Config.Seed in a seeded run, drawn from crypto/rand otherwise, or
	// taken from the checkpoint on resume. Every privacy-relevant stream is
	// a child of it.
	rootState []byte
	opt       optim.Optimizer
	ema       *optim.EMA // average of the iterates, or nil
	acct      *accounting
	tracker   *accountant.Tracker
	sigma     float64
	steps     int
	lrAt      func(step int) float64

	// buffers, sized once
	idx     []int
	x       []float32
	y       []int
	normsSq []float64
	scales  []float32
	losses  []float32
	grads   []float32
	masks   []*sampler.Mask
	grad    gradients // the run's gradient strategy
	// factored clips Linear-only models' gradients in factored form on the
	// materialised path (twice sampling, hybrid clipping); nil otherwise.
	factored factoredModel
	// layered clips conv nets' gradients where the engine keeps them, per
	// layer (useFactored); nil otherwise.
	layered layeredModel
	sum     []float32

	out      *outputs    // nil: the run writes nothing
	metrics  *metricsLog // release/metrics.jsonl
	diag     *metricsLog // private/diagnostics.jsonl (PrivateDiagnostics), or nil
	notes    []string
	privNote []string // curator-only notes
	samples  int
	sub      *subspaceState // hybrid subspace clipping, or nil
	canary   *gradCanaries  // audit run's gradient canaries, or nil
	aug      *augmenter     // augmentation multiplicity (augmult > 1), or nil
	quant    *quantileState // adaptive clipping (clip_quantile), or nil
	dist     Reducer        // data-parallel ranks, or nil
	ownBuf   []int          // this rank's share of a batch
	ownMasks distMasks      // twice sampling's masks on one rank (distributed.go)
	input    *inputCanaries // audit run's input canaries, or nil
	stepNo   int            // the step being taken (1-based)
	piNorms  [][]float64    // per-instance: [step][example] gradient norms
	// targetBuf holds regression targets (linreg) for one chunk.
	targetBuf []float32
	// iterate holds the training iterate while the EMA parameters are in
	// the model for evaluation or saving.
	iterate []float32
	// lastEval is the most recent test evaluation, reused by the summary
	// when it was taken at the final parameters.
	lastEval struct {
		step      int
		acc, loss float64
	}
}

// Run trains cfg and returns its summary. Cancelling ctx stops the run at
// the end of the current step, writes a checkpoint (when OutDir is set) and
// returns an error wrapping ErrInterrupted.
func Run(ctx context.Context, cfg Config, opts Options) (*Summary, error) {
	if opts.Train != nil {
		cfg.Dataset = InMemory
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
	s := &state{cfg: cfg, opts: opts, dist: opts.Reducer}
	if err := s.syncSettings(); err != nil {
		return nil, err
	}
	if cfg.OutDir != "" && (s.dist == nil || s.dist.Rank() == 0) {
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
			return nil, fmt.Errorf("%w: checkpoint %s was written with different settings (%s); drop those flags to continue the run, or use a new out_dir", ErrInvalidConfig, s.checkpointPath(), strings.Join(settingsDiff(c.Config, cfg), "; "))
		default:
			ck = c
		}
	}
	if s.dist != nil && opts.Resume && cfg.OutDir != "" {
		// Rank 0 read the checkpoint; every rank continues from it.
		var b []byte
		if ck != nil {
			var err error
			if b, err = json.Marshal(ck); err != nil {
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
	if s.dist != nil {
		// Every stream derives from rank 0's root seed.
		root, err := s.broadcastBytes(s.rootState)
		if err != nil {
			return nil, fmt.Errorf("distributed start: %w", err)
		}
		s.rootState = root
	}
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
	}
	if s.out != nil {
		if err := s.openMetrics(first > 1, first-1); err != nil {
			return nil, err
		}
		defer s.closeMetrics()
	}
	sum, err := s.loop(ctx, first, start)
	if sum != nil {
		sum.Seconds = time.Since(start).Seconds()
		if s.out != nil {
			if werr := s.writeOutputs(sum); werr != nil && err == nil {
				err = werr
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

func (s *state) checkpointPath() string { return s.out.private("checkpoint.json") }

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
	if s.rootState == nil {
		if err := s.initRoot(nil); err != nil {
			return err
		}
	}
	root, err := s.root()
	if err != nil {
		return err
	}
	data, err := loadData(cfg, root, s.opts.Train, s.opts.Test)
	if err != nil {
		return err
	}
	if testDataHook != nil {
		testDataHook(data)
	}
	s.data = data
	s.notes = append(s.notes, data.notes...)
	if err := s.setupInputCanaries(root); err != nil {
		return err
	}
	n := data.train.N()
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
	s.twice, _ = s.samp.(*sampler.Twice)
	s.noiseRNG = root.Child("noise")
	if nc, ok := s.clipper.(clip.NormClipper); ok && s.twice == nil && cfg.Augmult <= 1 && !cfg.Noise.Lattice() {
		s.norm = precisionMargin(nc, cfg.Precision)
	}
	if s.mech, err = mechanism.New(spec, s.clipper); err != nil {
		return err
	}
	s.acct = &accounting{ledger: &mechanism.Ledger{}, cfg: cfg, mech: s.mech, q: s.mech.Q(), expected: expected, prefix: s.mech.Prefix()}
	if err := s.acct.usePLD(); err != nil && cfg.Accountant == AccountantPLD {
		return err
	}

	s.steps = cfg.Steps
	if s.steps == 0 {
		s.steps = int(math.Ceil(cfg.Epochs * float64(n) / float64(cfg.BatchSize)))
	}
	s.sigma = cfg.Sigma
	if s.sigma == 0 {
		if s.sigma, err = s.acct.calibrate(s.steps); err != nil {
			return err
		}
		by := "the run's primary accountant"
		if s.acct.calibPLD {
			by = "the PLD accountant"
		}
		s.notes = append(s.notes, fmt.Sprintf("σ = %.4f calibrated for ε = %g, δ = %g over %d steps by %s", s.sigma, cfg.Epsilon, cfg.Delta, s.steps, by))
	} else if cfg.Epsilon > 0 {
		k, err := s.acct.budgetSteps(s.sigma, s.steps)
		if err != nil {
			return fmt.Errorf("budget: %w", err)
		}
		if k < s.steps {
			s.notes = append(s.notes, fmt.Sprintf("budget: ε = %g is reached after %d of %d steps at σ = %g; the run stops there", cfg.Epsilon, k, s.steps, s.sigma))
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
	if s.noise, err = s.buildNoise(); err != nil {
		return fmt.Errorf("noise: %w", err)
	}
	if cfg.ClippedCountSigma > 0 {
		if s.count, err = newClipCount(cfg.ClippedCountSigma, s.mech.Q()*float64(n), root.Child("clipped-count")); err != nil {
			return err
		}
		s.notes = append(s.notes, clippedCountNote(s.sigma, cfg.ClippedCountSigma))
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
		if s.ema, err = optim.NewEMA(cfg.EMA, s.model.Params()); err != nil {
			return err
		}
		s.notes = append(s.notes, fmt.Sprintf("EMA d = %g: evaluation and model.bin use the averaged parameters (post-processing, no privacy cost); the training loss is the iterates'", cfg.EMA))
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
	s.notes = append(s.notes, tnotes...)
	if len(s.acct.prefix) > 0 {
		if note, err := s.acct.breakdown(s.sigma, s.steps); err == nil {
			s.notes = append(s.notes, note)
		}
	}
	s.allocate()
	return nil
}

func (s *state) allocate() {
	mb, d, in := s.model.MaxBatch(), s.model.NumParams(), s.model.InputSize()
	k := len(s.model.Groups())
	s.x = make([]float32, mb*in)
	s.y = make([]int, mb)
	s.losses = make([]float32, mb)
	s.sum = make([]float32, s.clipper.OutDim()+s.canaryDim())
	if s.norm != nil {
		s.normsSq = make([]float64, mb*k)
		s.scales = make([]float32, mb*k)
	} else if s.useFactored(); s.factored == nil && s.layered == nil && len(s.grads) != mb*d { // subspace setup may have made it
		s.grads = make([]float32, mb*d)
	}
	if s.twice != nil {
		s.masks = make([]*sampler.Mask, mb)
		for i := range s.masks {
			s.masks[i] = sampler.NewMask(s.clipper.OutDim())
		}
	}
	if s.lat != nil {
		s.acc = make([]int64, s.lat.Len())
	}
	s.grad = s.chooseGradients()
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
	if s.cfg.PerInstance > 0 {
		if err := s.trackNorms(); err != nil {
			return st, err
		}
	}
	s.idx = s.samp.Next(s.idx)
	clear(s.sum)
	sum := s.sum[:s.clipper.OutDim()]         // the model's part (audit canaries follow it)
	batch, mb := s.owned(s.idx), s.chunkLen() // this rank's examples (all of them in one process)
	s.grad.start(s.stepNo)
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
		clip.OuterClip(s.sum, s.acct.expected, s.cfg.ClipNorm)
	}
	if s.canary != nil {
		s.canary.addCanaries(s.sum[len(sum):])
	}
	if s.lat != nil {
		// The released sum is γ·(S + round(Z)) from the exact lattice sum;
		// the float sum the strategy left untouched is overwritten.
		if err := s.lat.Release(s.acc, s.sum, s.noiseRNG); err != nil {
			return st, fmt.Errorf("lattice noise: %w", err)
		}
	} else {
		s.noise.Add(s.sum, s.noiseRNG)
	}
	if s.quant != nil {
		s.quant.finish(s.sum) // back to C_t's scale; noisy count, next C
	}
	update := sum
	if s.sub != nil {
		// The released sum is [coefficients | residual]: map it back.
		s.clipper.(*clip.Subspace).Decode(s.sub.decoded, sum)
		update = s.sub.decoded
	}
	if s.canary != nil {
		s.canary.step(s.sum[len(sum):], s.lrAt(s.stepNo), s.acct.expected)
	}
	if err := s.opt.Step(s.model.Params(), update, s.acct.expected); err != nil {
		return st, err
	}
	if s.ema != nil {
		if err := s.ema.Update(s.model.Params()); err != nil {
			return st, err
		}
	}
	if err := s.acct.step(s.tracker, s.stepNo, s.acct.stepEvent(s.sigma, s.stepNo), s.sigma, s.lrAt(s.stepNo)); err != nil {
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

// targets converts the gathered labels into regression targets.
func (s *state) targets(b int) []float32 {
	if cap(s.targetBuf) < b {
		s.targetBuf = make([]float32, b)
	}
	t := s.targetBuf[:b]
	for i, y := range s.y[:b] {
		t[i] = float32(y)
	}
	return t
}

// evaluate returns accuracy and mean loss on the first n examples of ds
// (dropout off).
func (s *state) evaluate(ds *datasets.Dataset, n int) (acc, loss float64, err error) {
	s.model.SetTraining(false)
	defer s.model.SetTraining(true)
	mb, in := s.model.MaxBatch(), s.model.InputSize()
	n = min(n, ds.N())
	var lossSum float64
	correct := 0
	idx := make([]int, 0, mb)
	for off := 0; off < n; off += mb {
		if s.dist != nil && (off/mb)%s.dist.Size() != s.dist.Rank() {
			continue // another rank's chunk
		}
		idx = idx[:0]
		for i := off; i < min(off+mb, n); i++ {
			idx = append(idx, i)
		}
		b := len(idx)
		ds.Gather(idx, s.x[:b*in], s.y[:b])
		batch := models.Batch{X: s.x[:b*in], Y: s.y[:b], N: b}
		if s.cfg.Model == ModelLinReg {
			batch.T = s.targets(b)
		}
		l, c, err := s.model.Evaluate(batch)
		if err != nil {
			return 0, 0, err
		}
		lossSum += l
		correct += c
	}
	lossSum, correct, err = s.evalReduce(lossSum, correct)
	if err != nil {
		return 0, 0, err
	}
	nf := float64(max(n, 1))
	return float64(correct) / nf, lossSum / nf, nil
}

// withReleased runs f with the released parameters in the model: the EMA
// average when it is on (the iterate is put back bit for bit afterwards),
// else the iterate itself.
func (s *state) withReleased(f func() error) error {
	if s.ema == nil {
		return f()
	}
	p := s.model.Params()
	s.iterate = append(s.iterate[:0], p...)
	defer copy(p, s.iterate)
	if err := s.ema.Params(p); err != nil {
		return err
	}
	return f()
}

// evaluateTest evaluates the released parameters on the test set.
func (s *state) evaluateTest() (acc, loss float64, err error) {
	err = s.withReleased(func() error {
		var e error
		acc, loss, e = s.evaluate(s.data.test, s.data.test.N())
		return e
	})
	return acc, loss, err
}

// evaluateTrain is the released parameters' accuracy on the first
// min(train N, test N) training examples (the cost of one test
// evaluation): a diagnostic of the private data, not covered by the DP
// guarantee, like the per-step loss.
func (s *state) evaluateTrain() (float64, error) {
	var acc float64
	err := s.withReleased(func() error {
		var e error
		acc, _, e = s.evaluate(s.data.train, max(s.data.test.N(), 1))
		return e
	})
	return acc, err
}

// loop runs steps first..s.steps.
func (s *state) loop(ctx context.Context, first int, start time.Time) (*Summary, error) {
	cfg := &s.cfg
	rep := newReporter(s.opts.Progress, s.opts.Out, s.steps, first-1, cfg.PrivateDiagnostics)
	defer rep.finish()
	n := s.data.train.N()
	var (
		stopped string
		runErr  error
		done    = first - 1
	)
	for step := first; step <= s.steps; step++ {
		if stop, err := s.anyStop(ctx.Err() != nil); err != nil {
			return nil, err
		} else if stop {
			stopped, runErr = "interrupted", fmt.Errorf("%w at step %d: %v", ErrInterrupted, done, context.Canceled)
			break
		}
		if s.opts.StopAfter > 0 && step > s.opts.StopAfter {
			stopped, runErr = "stopped after the requested number of steps", fmt.Errorf("%w at step %d (StopAfter)", ErrInterrupted, done)
			break
		}
		if s.sub != nil && cfg.SubspaceRefresh > 0 && step > 1 && (step-1)%cfg.SubspaceRefresh == 0 {
			if err := s.refreshBasis(step - 1); err != nil {
				return nil, err
			}
		}
		s.stepNo = step
		st, err := s.step()
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
		done = step
		s.samples += st.n
		rec := &Record{Step: step, Epoch: float64(step) * float64(cfg.BatchSize) / float64(n),
			BatchSize: st.n, LR: s.lrAt(step), Elapsed: time.Since(start).Seconds()}
		if st.n > 0 {
			rec.Loss = st.lossSum / float64(st.n)
			if st.normsCount > 0 {
				rec.GradNormMean = st.normSum / float64(st.normsCount)
				rec.GradNormMax = st.normMax
			}
			rec.ClippedFrac = float64(st.clipped) / float64(st.n)
		}
		// A stop is a release (of the step it happens at), so it may rest on
		// released quantities only, never on the training loss (one record
		// of 3e38 makes it infinite; the clipper drops non-finite per-sample
		// gradients). A run releasing every step stops on its noised
		// parameters; a final-only run's iterates are hidden, so it checks
		// only the final, released one (see divergedAt in release.go).
		if s.divergedAt(step) {
			return nil, fmt.Errorf("step %d: training diverged (the parameters are not finite); lower lr (now %g) or clip_norm", step, cfg.LR)
		}
		if s.count != nil {
			c, f := s.count.release(st.clipped)
			rec.ClippedCountNoised, rec.ClippedFracNoised = &c, &f
		}
		// Deferred accountants (PLD) only at evaluation steps and the end.
		if full := step == s.steps || s.evaluateNow(step); !full {
			s.tracker.SkipDeferred(true)
			rec.Deferred = s.tracker.Deferred()
		}
		s.account(rec)
		s.tracker.SkipDeferred(false)
		if s.evaluateNow(step) {
			acc, loss, err := s.evaluateTest()
			if err != nil {
				return nil, fmt.Errorf("step %d: evaluation: %w", step, err)
			}
			rec.TestAcc, rec.TestLoss = &acc, &loss
			s.lastEval.step, s.lastEval.acc, s.lastEval.loss = step, acc, loss
			if cfg.PrivateDiagnostics {
				trainAcc, err := s.evaluateTrain()
				if err != nil {
					return nil, fmt.Errorf("step %d: evaluation on training examples: %w", step, err)
				}
				rec.TrainAcc = &trainAcc
			}
		}
		if err := s.record(rec, step); err != nil {
			return nil, err
		}
		rep.step(rec)
		if s.out != nil && cfg.CheckpointEvery > 0 && step%cfg.CheckpointEvery == 0 {
			if err := s.checkpoint(step); err != nil {
				return nil, err
			}
		}
	}
	if err := s.markInterruptedRelease(stopped); err != nil {
		return nil, err
	}
	if s.out != nil && stopped != "" {
		if err := s.checkpoint(done); err != nil {
			return nil, err
		}
		s.logf("checkpoint written at step %d (in %s); continue with --resume", done, s.out.private(""))
	}
	sum, err := s.summary(done, stopped)
	if err != nil {
		return nil, err
	}
	return sum, runErr
}

func finiteVec(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// account fills the record's privacy fields from the tracker.
func (s *state) account(rec *Record) {
	rec.Epsilon = map[string]float64{}
	for _, tb := range s.tracker.Bounds(s.cfg.Delta) {
		if tb.Err != nil {
			continue
		}
		rec.Epsilon[tb.Name] = tb.Epsilon
		if !tb.Applicable {
			if rec.NotApplicable == nil {
				rec.NotApplicable = map[string]string{}
			}
			rec.NotApplicable[tb.Name] = tb.Reason
		}
	}
	if b, ok := s.best(); ok {
		rec.EpsilonBest, rec.BestAccountant, rec.Relation = b.Epsilon, b.Accountant, b.Relation.String()
	}
}

// best is the tightest valid bound for the run's own relation: the primary
// accountant's relation (add/remove-one for Poisson and twice sampling);
// bounds of other relations are never compared with it.
func (s *state) best() (accountant.Bound, bool) {
	bs := s.tracker.Bounds(s.cfg.Delta)
	var rel accountant.Relation
	for _, tb := range bs {
		if tb.Name == s.acct.primary && tb.Err == nil {
			rel = tb.Relation
		}
	}
	if rel == 0 {
		return accountant.Bound{}, false
	}
	b, err := s.tracker.TightestFor(s.cfg.Delta, rel)
	return b, err == nil
}

func (s *state) summary(done int, stopped string) (*Summary, error) {
	acc, loss := s.lastEval.acc, s.lastEval.loss
	withheld := s.withholdTest(stopped)
	if withheld {
		acc, loss = 0, 0
	} else if s.lastEval.step != done || done == 0 {
		var err error
		if acc, loss, err = s.evaluateTest(); err != nil {
			return nil, fmt.Errorf("final evaluation: %w", err)
		}
	}
	sum := &Summary{
		Dataset: string(s.cfg.Dataset), Source: s.data.source, Model: string(s.cfg.Model), Params: s.model.NumParams(),
		TrainN: s.data.train.N(), TestN: s.data.test.N(), Steps: done, PlannedStep: s.steps,
		Sigma: s.sigma, Calibrated: s.cfg.Sigma == 0, Q: s.acct.q, Delta: s.cfg.Delta,
		TestAcc: acc, TestLoss: loss, Epsilon: map[string]float64{}, Notes: s.notes, Stopped: stopped,
		OutDir: s.cfg.OutDir, Private: s.cfg.FinalOnly, Samples: s.samples,
		NoiseVariance: s.noise.TotalVariance(), Sensitivity: s.clipper.Sensitivity().L2,
		NoiseSeeded: s.cfg.Seeded, PrivateRelease: !s.cfg.Seeded && s.opts.Noise == nil, CoveredN: s.data.train.N(),
		PrivateNotes: s.privNote, cfg: s.cfg, TestWithheld: withheld, acct: s.acct, Noise: NoiseContinuous,
	}
	if s.lat != nil {
		sum.Noise, sum.LatticeK = NoiseLattice, lattice.DefaultK
	}
	if s.sub != nil && s.sub.carved > 0 {
		// Records carved out of the training set as "public" are trained
		// on without protection: the claim covers the others only.
		sum.TrainN = s.data.train.N() + s.sub.carved
	}
	sum.Bounds = s.tracker.Bounds(s.cfg.Delta)
	for _, tb := range sum.Bounds {
		if tb.Err == nil {
			sum.Epsilon[tb.Name] = tb.Epsilon
		}
	}
	if b, ok := s.best(); ok {
		sum.Best = b
	}
	notes, err := s.instanceReport()
	if err != nil {
		return nil, err
	}
	sum.PrivateNotes = append(sum.PrivateNotes, notes...)
	sum.Claim = s.claim(sum)
	return sum, nil
}

func (s *state) checkpoint(step int) error {
	ck := &checkpoint{ConfigHash: s.cfg.Hash(), Config: s.cfg, Step: step, Sigma: s.sigma, Q: s.acct.q,
		Params: float32Bytes(s.model.Params()), Private: s.cfg.FinalOnly, Root: s.rootState, Samples: s.samples}
	var err error
	if ck.Optimizer, err = s.opt.MarshalBinary(); err != nil {
		return fmt.Errorf("checkpoint optimizer: %w", err)
	}
	if ck.Sampler, err = s.samp.MarshalBinary(); err != nil {
		return fmt.Errorf("checkpoint sampler: %w", err)
	}
	if ck.Noise, err = s.noiseRNG.MarshalBinary(); err != nil {
		return fmt.Errorf("checkpoint noise: %w", err)
	}
	if s.count != nil {
		if ck.CountNoise, err = s.count.rng.MarshalBinary(); err != nil {
			return fmt.Errorf("checkpoint clipped-count noise: %w", err)
		}
	}
	if ck.Tracker, err = s.tracker.MarshalJSON(); err != nil {
		return fmt.Errorf("checkpoint tracker: %w", err)
	}
	ck.Ledger = s.acct.ledger
	if s.sub != nil {
		ck.BasisAt, ck.BasisFrom = s.sub.basisAt, float32Bytes(s.sub.basisFrom)
	}
	if s.ema != nil {
		if ck.EMA, err = s.ema.MarshalBinary(); err != nil {
			return fmt.Errorf("checkpoint ema: %w", err)
		}
	}
	ck.InstanceNorms = s.piNorms
	if q := s.quant; q != nil {
		ck.ClipNow = q.c
		if ck.QuantileRNG, err = q.rng.MarshalBinary(); err != nil {
			return fmt.Errorf("checkpoint clip quantile: %w", err)
		}
	}
	if c := s.canary; c != nil {
		ck.CanaryParams, ck.CanaryCounts = float32Bytes(c.params), c.counts
		if ck.CanaryRNG, err = c.sample.MarshalBinary(); err != nil {
			return fmt.Errorf("checkpoint canaries: %w", err)
		}
	}
	var warn []string
	if s.cfg.FinalOnly {
		warn = append(warn, "PRIVATE STATE: this run releases only its final model; releasing this checkpoint voids the hidden-state bound")
	}
	if !s.cfg.Seeded {
		warn = append(warn, "SECRET: holds the crypto/rand seed of the DP noise and sampling streams; anyone holding this file can recompute the noise: never release it")
	}
	ck.Warning = strings.Join(warn, "; ")
	return saveCheckpoint(s.checkpointPath(), ck)
}

func (s *state) restore(ck *checkpoint) error {
	if ck.Step > s.steps {
		return fmt.Errorf("checkpoint %s is at step %d, beyond this run's %d steps", s.checkpointPath(), ck.Step, s.steps)
	}
	if err := setFloat32s(s.model.Params(), ck.Params); err != nil {
		return fmt.Errorf("checkpoint %s: %w", s.checkpointPath(), err)
	}
	if err := s.opt.UnmarshalBinary(ck.Optimizer); err != nil {
		return fmt.Errorf("checkpoint %s optimizer: %w", s.checkpointPath(), err)
	}
	if err := s.samp.UnmarshalBinary(ck.Sampler); err != nil {
		return fmt.Errorf("checkpoint %s sampler: %w", s.checkpointPath(), err)
	}
	if err := s.noiseRNG.UnmarshalBinary(ck.Noise); err != nil {
		return fmt.Errorf("checkpoint %s noise: %w", s.checkpointPath(), err)
	}
	if s.count != nil {
		if err := s.count.rng.UnmarshalBinary(ck.CountNoise); err != nil {
			return fmt.Errorf("checkpoint %s clipped-count noise: %w", s.checkpointPath(), err)
		}
	}
	if err := s.tracker.UnmarshalJSON(ck.Tracker); err != nil {
		return fmt.Errorf("checkpoint %s accountants: %w", s.checkpointPath(), err)
	}
	if s.ema != nil {
		if err := s.ema.UnmarshalBinary(ck.EMA); err != nil {
			return fmt.Errorf("checkpoint %s ema: %w", s.checkpointPath(), err)
		}
		if s.ema.Steps() != ck.Step {
			return fmt.Errorf("checkpoint %s: the parameter average has taken in %d steps, want %d", s.checkpointPath(), s.ema.Steps(), ck.Step)
		}
	}
	// The account continues at the checkpoint's σ: the noise is rebuilt
	// from it too, so the two can never disagree.
	if err := s.checkMechanism(ck); err != nil {
		return err
	}
	s.sigma = ck.Sigma
	if err := s.restoreLedger(ck); err != nil {
		return err
	}
	var err error
	if s.noise, err = s.buildNoise(); err != nil {
		return fmt.Errorf("noise: %w", err)
	}
	s.samples = ck.Samples
	if s.cfg.PerInstance > 0 && len(ck.InstanceNorms) != ck.Step {
		return fmt.Errorf("checkpoint %s holds %d steps of per-instance norms, want %d", s.checkpointPath(), len(ck.InstanceNorms), ck.Step)
	}
	s.piNorms = ck.InstanceNorms
	if q := s.quant; q != nil {
		if !(ck.ClipNow > 0) {
			return fmt.Errorf("checkpoint %s holds no adaptive clip norm", s.checkpointPath())
		}
		q.c = ck.ClipNow
		if err := q.rng.UnmarshalBinary(ck.QuantileRNG); err != nil {
			return fmt.Errorf("checkpoint %s clip quantile: %w", s.checkpointPath(), err)
		}
	}
	if c := s.canary; c != nil {
		if err := setFloat32s(c.params, ck.CanaryParams); err != nil || len(ck.CanaryCounts) != c.m {
			return fmt.Errorf("checkpoint %s: canary block does not match %d canaries", s.checkpointPath(), c.m)
		}
		copy(c.counts, ck.CanaryCounts)
		if err := c.sample.UnmarshalBinary(ck.CanaryRNG); err != nil {
			return fmt.Errorf("checkpoint %s canaries: %w", s.checkpointPath(), err)
		}
	}
	if s.sub != nil {
		from := make([]float32, s.model.NumParams())
		if err := setFloat32s(from, ck.BasisFrom); err != nil {
			return fmt.Errorf("checkpoint %s basis: %w", s.checkpointPath(), err)
		}
		if err := s.restoreBasis(ck.BasisAt, from); err != nil {
			return err
		}
	}
	return nil
}

// clipMaterialised clips b materialised per-sample gradients g (b×d) into
// sum, with twice sampling's coordinate masks and adaptive clipping's scale
// when on, and records their norms and clip counts.
func (s *state) clipMaterialised(g []float32, b, d int, sum []float32, st *stepStats) {
	if s.cfg.PrivateDiagnostics {
		// The raw norms are a private diagnostic; without it, a pass over
		// every materialised gradient saved (about a tenth of a twice step).
		for i := 0; i < b; i++ {
			st.addNorm(math.Sqrt(clip.SumSquares(g[i*d : (i+1)*d])))
		}
	}
	if s.quant != nil {
		s.quant.scaleRows(g, b, d)
	}
	st.addClip(s.clipper.ClipSum(g, b, s.drawMasks(b), sum))
}

// drawMasks draws twice sampling's coordinate masks for the b examples of a
// chunk, in example order (nil without twice sampling).
func (s *state) drawMasks(b int) []*sampler.Mask {
	if s.twice == nil {
		return nil
	}
	masks := s.masks[:b]
	if s.dist != nil && s.dist.Size() > 1 {
		return s.drawOwnedMasks(masks)
	}
	for _, m := range masks {
		s.twice.FillMask(m)
	}
	return masks
}
