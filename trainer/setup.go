package trainer

import (
	"fmt"
	"math"
	"slices"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/internal/rng"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/optim"
	"github.com/dptrain/dptrain/preprocess"
	"github.com/dptrain/dptrain/sampler"
)

// buildModel picks the zoo model for cfg and checks it fits the data.
func buildModel(cfg *Config, train *datasets.Dataset) (*models.Net, error) {
	spec := models.Spec{InputSize: train.Dim(), Classes: train.NumClasses, WeightStd: cfg.WeightStd}
	switch cfg.Model {
	case "logreg":
		spec.Arch = "logreg"
	case "linreg":
		spec.Arch, spec.Classes = "linreg", 0
	case "mlp":
		spec.Arch, spec.Widths = "mlp", cfg.Hidden
		if len(spec.Widths) == 0 {
			spec.Widths = []int{256}
		}
	case "cnn":
		spec.Arch = "mnistcnn"
		if !slices.Equal(train.Shape, []int{1, 28, 28}) || train.NumClasses != 10 {
			return nil, fmt.Errorf("model cnn (the MNIST CNN) needs 1×28×28 images in 10 classes; dataset %s has shape %v and %d classes", train.Name, train.Shape, train.NumClasses)
		}
	case "scatcnn":
		spec.Arch, spec.Shape = "scatcnn", train.Shape
		if len(train.Shape) != 3 {
			return nil, fmt.Errorf("model scatcnn needs feature maps [C,H,W] (use features scatternet); dataset %s has shape %v", train.Name, train.Shape)
		}
	case "resnet20", "resnet22":
		spec.Arch = map[Model]string{"resnet20": "resnet20gn", "resnet22": "resnet22"}[cfg.Model]
		if !slices.Equal(train.Shape, []int{3, 32, 32}) {
			return nil, fmt.Errorf("model %s needs 3×32×32 images; dataset %s has shape %v", cfg.Model, train.Name, train.Shape)
		}
	default:
		return nil, fmt.Errorf("unknown model %q", cfg.Model)
	}
	m, err := models.New(spec, models.Options{MaxBatch: cfg.MaxPhysicalBatch, Seed: cfg.Seed})
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", cfg.Model, err)
	}
	return m, nil
}

// buildSampler returns the sampler and the divisor of the noisy sum (the
// expected, never the realised, batch size).
func buildSampler(cfg *Config, n, dim int, s *rng.Stream) (sampler.Sampler, float64, error) {
	if cfg.BatchSize > n {
		return nil, 0, fmt.Errorf("%w: batch_size %d exceeds the %d training examples", ErrInvalidConfig, cfg.BatchSize, n)
	}
	q := float64(cfg.BatchSize) / float64(n)
	switch cfg.Sampler {
	case "poisson":
		p, err := sampler.NewPoisson(n, q, s)
		if err != nil {
			return nil, 0, err
		}
		return p, p.ExpectedBatch(), nil
	case "twice":
		t, err := sampler.NewTwice(n, dim, q, cfg.Q2, s)
		if err != nil {
			return nil, 0, err
		}
		return t, t.ExpectedCoordBatch(), nil
	case "shuffle":
		sh, err := sampler.NewShuffle(n, cfg.BatchSize, s)
		if err != nil {
			return nil, 0, err
		}
		return sh, sh.ExpectedBatch(), nil
	}
	return nil, 0, fmt.Errorf("unknown sampler %q", cfg.Sampler)
}

// buildClipper returns the clipping rule and the d0 it implies for the
// twice-sampling accountant (1: no extra L∞ bound).
func buildClipper(cfg *Config, m models.PerSampleModel) (clip.Clipper, float64, error) {
	d, groups := m.NumParams(), m.Groups()
	switch cfg.Clip {
	case "flat":
		c, err := clip.NewL2(cfg.ClipNorm, d, groups)
		return c, 1, err
	case "per-layer":
		c, err := clip.NewPerLayer(cfg.ClipNorm, d, groups, clip.GroupSizeWeights(groups))
		return c, 1, err
	case "linf":
		// clip_norm is the L2 sensitivity: every coordinate is clamped to
		// C/√D, so the L2 norm of a clipped vector is at most C.
		c, err := clip.NewLInf(cfg.ClipNorm/math.Sqrt(float64(d)), d)
		return c, float64(d), err
	case "hybrid":
		// c∞ = C/√d0. With fewer than d0 parameters the L∞ bound would
		// shrink the L2 sensitivity to √D·C/√d0 and the noise with it,
		// while the twice-sampling account assumes d0 coordinates at noise
		// σ·C: d0 = min(d0, D) keeps the noise and the account one mechanism.
		d0 := math.Min(cfg.D0, float64(d))
		c, err := clip.NewL2LInf(cfg.ClipNorm, d0, d)
		return c, d0, err
	}
	return nil, 0, fmt.Errorf("unknown clip %q", cfg.Clip)
}

func buildOptimizer(cfg *Config, steps int, proj optim.Projector) (optim.Optimizer, error) {
	var lr optim.Schedule = optim.Constant(cfg.LR)
	if cfg.Schedule == "cosine" {
		lr = optim.Cosine{Base: cfg.LR, Min: 0, Total: steps}
	}
	switch cfg.Optimizer {
	case "sgd":
		return optim.NewSGD(optim.SGDConfig{LR: lr, WeightDecay: cfg.WeightDecay, Project: proj})
	case "momentum":
		return optim.NewSGD(optim.SGDConfig{LR: lr, Momentum: cfg.Momentum, WeightDecay: cfg.WeightDecay, Project: proj})
	case "adam":
		return optim.NewAdam(optim.AdamConfig{LR: lr, WeightDecay: cfg.WeightDecay, Project: proj})
	}
	return nil, fmt.Errorf("unknown optimizer %q", cfg.Optimizer)
}

// accounting knows how to describe one step of this run to each accountant.
type accounting struct {
	cfg      *Config
	n        int
	q        float64 // sampling rate (q1 for twice sampling)
	expected float64 // optimizer divisor
	d0       float64
	prefix   []accountant.Event
	pre      *preprocess.Sensitivity // non-private preprocessing (SRDP), or nil
	hidden   bool                    // the hidden-state accountant runs beside the primary one
	primary  string
	plain    string // name of the comparison RDP account when preprocessing is accounted by SRDP
	perEpoch int    // shuffling: batches per epoch
	pld      bool   // the PLD accountant runs beside the primary one
	calibPLD bool   // and calibrates σ (Config.Accountant "" or "pld")
	sub      *subspaceState
}

// newPrimary returns a fresh accountant of the run's primary kind.
func (a *accounting) newPrimary() (accountant.Accountant, error) {
	switch {
	case a.pre != nil:
		return accountant.NewSRDP(), nil
	case a.cfg.Sampler == "twice" || a.sub != nil:
		return accountant.NewTwice(), nil
	case a.cfg.Sampler == "shuffle":
		return accountant.NewRDP(accountant.WithRelation(accountant.ReplaceOne))
	default:
		return accountant.NewRDP()
	}
}

// stepEvent describes step number step (1-based) with noise multiplier
// sigma to the primary accountant.
func (a *accounting) stepEvent(sigma float64, step int) accountant.Event {
	ev := a.mechanismEvent(sigma)
	if a.cfg.Sampler == "shuffle" && (step-1)%a.perEpoch != 0 {
		// Shuffling: the epoch's Gaussian was charged at its first step.
		ev = accountant.NoOp{}
	}
	if a.pre != nil {
		return a.pre.Preprocessed(ev, a.cfg.LipschitzMu)
	}
	return ev
}

// mechanismEvent is the step's mechanism on the data as it is trained on.
func (a *accounting) mechanismEvent(sigma float64) accountant.Event {
	g := accountant.Gaussian{Sigma: sigma}
	if a.sub != nil {
		q2 := 1.0
		if a.cfg.Sampler == "twice" {
			q2 = a.cfg.Q2
		}
		return a.sub.event(a.q, q2, sigma)
	}
	switch a.cfg.Sampler {
	case "twice":
		return accountant.NewTwiceSampled(a.q, a.cfg.Q2, sigma, a.d0)
	case "shuffle":
		// Shuffling cuts a data-independent permutation of the indices into
		// disjoint batches, so replacing one record changes exactly one batch
		// per epoch: by parallel composition an epoch is one Gaussian whose
		// sensitivity is 2C under replace-one (noise σ·C, so multiplier σ/2).
		// Charged at each epoch's first step; no amplification is claimed.
		return accountant.Gaussian{Sigma: sigma / 2}
	default:
		// With a released clipped count: the joint Gaussian (clipcount.go).
		g.Sigma = jointSigma(sigma, a.cfg.ClippedCountSigma)
		return accountant.PoissonSampled{Q: a.q, Event: g}
	}
}

// outerClip reports whether steps clip the mean clipped gradient to C
// (specs/002 §6 A3) for the hidden-state bound. Only where the account
// rests on the sum's L2 sensitivity alone: a global rescale is 1-Lipschitz
// in L2 but not per coordinate (twice sampling's L∞ bound) nor per block
// (subspace clipping's anisotropic noise), so there it is not applied and
// the hidden-state bound is marked not applicable.
func (a *accounting) outerClip() bool {
	return a.hidden && a.sub == nil && a.cfg.Sampler != "twice"
}

// hiddenEvent describes one step to the hidden-state accountant: plain
// SGD, noise std in parameter space η·σ·C/E[B], projection diameter 2R.
func (a *accounting) hiddenEvent(sigma, lr float64) accountant.Event {
	// The step applies the outer clip (see Run's step), so the bounded
	// update of §6 A3 holds; with Poisson batches the bound also covers
	// add/remove neighbours and is compared with RDP.
	return accountant.ProjectedSGD{P: a.q, Sigma: lr * sigma * a.cfg.ClipNorm / a.expected,
		Clip: a.cfg.ClipNorm, LR: lr, Diameter: 2 * a.cfg.Radius, Poisson: a.cfg.Sampler == "poisson"}
}

// usePLD decides whether the PLD accountant applies to the run: DP-SGD
// with Poisson sampling whose every event it supports.
func (a *accounting) usePLD() error {
	if a.pre != nil || a.sub != nil || a.cfg.Sampler != "poisson" {
		return fmt.Errorf("accountant pld: needs Poisson sampling without preprocessing or subspace clipping")
	}
	p, err := accountant.NewPLD()
	if err != nil {
		return err
	}
	for _, ev := range append(slices.Clone(a.prefix), a.stepEvent(1, 1)) {
		if err := p.Supports(ev); err != nil {
			return err
		}
	}
	a.pld = true
	a.calibPLD = a.cfg.Accountant != "rdp"
	return nil
}

// epsilonAfter is the calibrating accountant's ε (PLD or the primary's)
// after the prefix events and k steps at noise multiplier sigma. Where the
// PLD cannot be evaluated (a σ so small its grid would not fit) the
// primary's ε, also a valid bound, is used.
func (a *accounting) epsilonAfter(sigma float64, k int) (float64, error) {
	if a.calibPLD {
		if e, err := a.epsilonBy(func() (accountant.Accountant, error) { return accountant.NewPLD() }, sigma, k); err == nil {
			return e, nil
		}
	}
	return a.epsilonBy(a.newPrimary, sigma, k)
}

// epsilonBy is the ε of a fresh accountant from newAcc after the prefix
// events and k steps at noise multiplier sigma.
func (a *accounting) epsilonBy(newAcc func() (accountant.Accountant, error), sigma float64, k int) (float64, error) {
	acc, err := newAcc()
	if err != nil {
		return 0, err
	}
	for _, ev := range a.prefix {
		if err := acc.Compose(ev, 1); err != nil {
			return 0, err
		}
	}
	ev, count := a.stepEvent(sigma, 1), k
	if a.cfg.Sampler == "shuffle" {
		count = (k + a.perEpoch - 1) / a.perEpoch // epochs started
	}
	if err := acc.Compose(ev, count); err != nil {
		return 0, err
	}
	b, err := acc.Epsilon(a.cfg.Delta)
	if err != nil {
		return 0, err
	}
	return b.Epsilon, nil
}

// calibrate returns σ meeting the target ε over steps: by PLD as
// PLDPoissonSigma does (searched on the coarse grid from the RDP σ down,
// certified on the default grid), else by the primary accountant.
func (a *accounting) calibrate(steps int) (float64, error) {
	if err := a.checkCountBudget(steps); err != nil {
		return 0, err
	}
	var sigma float64
	var err error
	if a.calibPLD {
		pldAt := func(opts ...accountant.PLDOption) func(float64) (float64, error) {
			return func(s float64) (float64, error) {
				return a.epsilonBy(func() (accountant.Accountant, error) { return accountant.NewPLD(opts...) }, s, steps)
			}
		}
		rdp := func(s float64) (float64, error) { return a.epsilonBy(a.newPrimary, s, steps) }
		sigma, err = accountant.CalibrateSigmaPLDGrids(pldAt(), pldAt(accountant.WithPLDInterval(accountant.CalibrationPLDInterval)), rdp, a.cfg.Epsilon)
	} else {
		sigma, err = accountant.CalibrateSigma(func(s float64) (float64, error) { return a.epsilonAfter(s, steps) }, a.cfg.Epsilon)
	}
	if err != nil {
		return 0, fmt.Errorf("calibrating sigma for ε=%g over %d steps: %w", a.cfg.Epsilon, steps, err)
	}
	return sigma, nil
}

// budgetSteps is the largest number of steps ≤ steps that keeps ε within
// the target at noise multiplier sigma.
func (a *accounting) budgetSteps(sigma float64, steps int) (int, error) {
	return accountant.CalibrateSteps(func(k int) (float64, error) { return a.epsilonAfter(sigma, k) }, a.cfg.Epsilon, steps)
}

// newTracker builds the run's tracker, composes the prefix, and decides
// whether the hidden-state bound applies.
func (a *accounting) newTracker() (*accountant.Tracker, []string, error) {
	prim, err := a.newPrimary()
	if err != nil {
		return nil, nil, err
	}
	a.primary = prim.Name()
	t, err := accountant.NewTracker(prim)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if a.pld {
		p, err := accountant.NewPLD()
		if err != nil {
			return nil, nil, err
		}
		if err := t.Add(p); err != nil {
			return nil, nil, err
		}
		if err := t.SetDeferred(p.Name(), true); err != nil {
			return nil, nil, err
		}
	}
	if a.pre != nil {
		// Plain RDP of the same steps, shown for comparison: it ignores the
		// data-dependent preprocessing, so it is not a bound for this run.
		plain, err := accountant.NewRDP(accountant.WithName("rdp-ignoring-preprocessing"))
		if err != nil {
			return nil, nil, err
		}
		if err := t.Add(plain); err != nil {
			return nil, nil, err
		}
		if err := t.SetApplicable(plain.Name(), false, "ignores the non-private preprocessing fitted on the training data"); err != nil {
			return nil, nil, err
		}
		a.plain = plain.Name()
	}
	if a.cfg.Radius > 0 && a.pre == nil {
		if len(a.prefix) > 0 {
			notes = append(notes, "hidden-state bound not computed: private feature preprocessing is not a projected SGD step")
		} else {
			a.hidden = true
			if err := t.Add(accountant.NewHidden()); err != nil {
				return nil, nil, err
			}
			run := accountant.HiddenStateRun{
				ProjectEveryStep: true,
				Optimizer:        string(a.cfg.Optimizer),
				Momentum:         a.cfg.Momentum,
				// A final-only run writes nothing intermediate to release/
				// (metrics carry only the account, evaluation is at the end,
				// checkpoints stay in private/).
				FinalModelOnly: a.cfg.FinalOnly,
				WeightDecay:    a.cfg.WeightDecay,
				Sampling:       map[string]string{"poisson": "poisson", "shuffle": "shuffle", "twice": "twice"}[a.cfg.Sampler],
				// Without the outer clip the expected-batch divisor breaks A3.
				ExpectedBatchNormalization: !a.outerClip(),
			}
			if a.cfg.Optimizer != "momentum" {
				run.Momentum = 0
			}
			if err := run.MarkTracker(t); err != nil {
				return nil, nil, err
			}
			if ok, why := run.Qualifies(); !ok {
				notes = append(notes, "hidden-state bound shown but not valid for this run: "+why)
			} else if a.cfg.ClippedCountSigma > 0 {
				if err := t.SetApplicable("hidden", false, hiddenCountReason); err != nil {
					return nil, nil, err
				}
				notes = append(notes, "hidden-state bound shown but not valid for this run: "+hiddenCountReason)
			}
		}
	}
	for _, ev := range a.prefix {
		if err := a.step(t, ev, 0, 0); err != nil {
			return nil, nil, err
		}
	}
	return t, notes, nil
}

// step composes one event into the tracker: ev for the primary accountant
// and, when the hidden-state accountant runs, its own description of the
// same step (a NoOp for prefix events, which never reach it).
func (a *accounting) step(t *accountant.Tracker, ev accountant.Event, sigma, lr float64) error {
	if !a.hidden && a.plain == "" {
		return t.Step(ev)
	}
	evs := map[string]accountant.Event{a.primary: ev}
	if a.hidden {
		var h accountant.Event = accountant.NoOp{}
		if sigma > 0 {
			h = a.hiddenEvent(sigma, lr)
		}
		evs["hidden"] = h
	}
	if a.plain != "" {
		evs[a.plain] = a.mechanismEvent(sigma)
	}
	if a.pld {
		evs["pld"] = ev
	}
	return t.StepEach(evs)
}

// replaceOne restates a private preprocessing event for a replace-one
// account. The preprocessing's Gaussian multipliers are relative to its
// add/remove sensitivity (one record's bounded contribution to a sum);
// replacing a record removes one contribution and adds another, so the
// sum moves by up to twice as much and each multiplier halves.
func replaceOne(ev accountant.Event) (accountant.Event, error) {
	switch e := ev.(type) {
	case accountant.Gaussian:
		return accountant.Gaussian{Sigma: e.Sigma / 2}, nil
	case accountant.NoOp:
		return e, nil
	case accountant.SelfComposed:
		in, err := replaceOne(e.Event)
		if err != nil {
			return nil, err
		}
		return accountant.SelfComposed{Event: in, Count: e.Count}, nil
	case accountant.Composed:
		out := accountant.Composed{Events: make([]accountant.Event, len(e.Events))}
		for i, in := range e.Events {
			var err error
			if out.Events[i], err = replaceOne(in); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("private preprocessing event %T has no replace-one form (use the Poisson sampler)", ev)
}
