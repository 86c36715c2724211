package trainer

import (
	"context"
	"fmt"
	"slices"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/optim"
	"github.com/dptrain/dptrain/preprocess"
)

// buildModel picks the zoo model for cfg and checks it fits the data.
func buildModel(cfg *Config, train *datasets.Dataset) (*models.Net, error) {
	spec := models.Spec{InputSize: train.Dim(), Classes: train.NumClasses, WeightStd: cfg.WeightStd}
	switch cfg.Model {
	case ModelLogReg:
		spec.Arch = "logreg"
	case ModelLinReg:
		spec.Arch, spec.Classes = "linreg", 0
	case ModelMLP:
		spec.Arch, spec.Widths = "mlp", cfg.Hidden
		if len(spec.Widths) == 0 {
			spec.Widths = []int{256}
		}
	case ModelCNN:
		spec.Arch = "mnistcnn"
		if err := imageShape("cnn (the MNIST CNN)", train, []int{1, 28, 28}); err != nil {
			return nil, err
		}
	case ModelScatCNN:
		spec.Arch, spec.Shape = "scatcnn", train.Shape
		if len(train.Shape) != 3 {
			return nil, fmt.Errorf("model scatcnn needs feature maps [C,H,W] (use features scatternet); dataset %s has shape %v", train.Name, train.Shape)
		}
	case ModelResNet20, ModelResNet22:
		spec.Arch = map[Model]string{ModelResNet20: "resnet20gn", ModelResNet22: "resnet22"}[cfg.Model]
		if err := imageShape(string(cfg.Model), train, []int{3, 32, 32}); err != nil {
			return nil, err
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

// imageShape checks that train holds images of shape want (C, H, W) for
// model; its error says what to do: a table needs a table model, an image
// folder of another size converts with --channels and --resize. The output
// width is the public class count, any of at least 2.
func imageShape(model string, train *datasets.Dataset, want []int) error {
	switch {
	case len(train.Shape) == 1:
		return fmt.Errorf("%w: model %s takes %d×%d×%d images; dataset %s is a table of %d features: use --model logreg or mlp for tables", ErrInvalidConfig, model, want[0], want[1], want[2], train.Name, train.Dim())
	case !slices.Equal(train.Shape, want):
		return fmt.Errorf("%w: model %s takes %d×%d×%d images; dataset %s has shape %v (an image folder converts with --channels %d --resize %dx%d)", ErrInvalidConfig, model, want[0], want[1], want[2], train.Name, train.Shape, want[0], want[1], want[2])
	case train.NumClasses < 2:
		return fmt.Errorf("%w: model %s needs at least 2 classes; dataset %s has %d", ErrInvalidConfig, model, train.Name, train.NumClasses)
	}
	return nil
}

// mechanismSpec is the run's mechanism over n private records, with the
// data's private preprocessing events and declared preprocessing.
func mechanismSpec(cfg *Config, n int, data *prepared) mechanism.Spec {
	sp := mechanism.Spec{
		Sampler: cfg.Sampler, N: n, Batch: cfg.BatchSize, Q2: cfg.Q2,
		Clip: cfg.Clip, C: cfg.ClipNorm, D0: cfg.D0, SubspaceRanks: cfg.SubspaceRanks,
		ClippedCountSigma: cfg.ClippedCountSigma,
		ClipQuantile:      cfg.ClipQuantile, QuantileCountSigma: cfg.QuantileCountSigma,
		FinalOnly: cfg.FinalOnly, Radius: cfg.Radius, LipschitzMu: cfg.LipschitzMu,
	}
	if cfg.Noise == NoiseBandMF {
		// Sampler cyclic: b parts, the amplified banded theorem; the
		// default Poisson: every example at every step, accounted by MMCC.
		sp.Bands = cfg.Bands
		if cfg.Sampler == mechanism.Cyclic {
			sp.Parts = cfg.Bands
		}
	}
	if data != nil {
		sp.Preprocess, sp.Prefix = data.pre, data.prefix
	} else if cfg.Preprocess != PreprocessNone {
		sp.Preprocess = &preprocess.Sensitivity{} // declared; its value is known once fitted
	}
	return sp
}

func buildOptimizer(cfg *Config, steps int, proj optim.Projector) (optim.Optimizer, error) {
	var lr optim.Schedule = optim.Constant(cfg.LR)
	if cfg.Schedule == ScheduleCosine {
		lr = optim.Cosine{Base: cfg.LR, Min: 0, Total: steps}
	}
	switch cfg.Optimizer {
	case OptimizerSGD:
		return optim.NewSGD(optim.SGDConfig{LR: lr, WeightDecay: cfg.WeightDecay, Project: proj})
	case OptimizerMomentum:
		return optim.NewSGD(optim.SGDConfig{LR: lr, Momentum: cfg.Momentum, WeightDecay: cfg.WeightDecay, Project: proj})
	case OptimizerAdam:
		return optim.NewAdam(optim.AdamConfig{LR: lr, WeightDecay: cfg.WeightDecay, Project: proj})
	}
	return nil, fmt.Errorf("unknown optimizer %q", cfg.Optimizer)
}

// accounting is the run's account: the accountants the mechanism decided
// on (mechanism.Accounts), calibration and the budget, and the ledger of
// every charged event.
type accounting struct {
	cfg      *Config
	mech     *mechanism.Mechanism
	accounts *mechanism.Accounts // which accountants run, and each one's event
	q        float64             // sampling rate (q1 for twice sampling)
	expected float64             // optimizer divisor
	prefix   []accountant.Event
	primary  string // the primary accountant's name
	pld      bool   // the PLD accountant runs beside the primary one
	calibPLD bool   // and calibrates σ (Config.Accountant "" or "pld")
	// ledger records every event charged to the primary accountant (step 0:
	// the private preprocessing); it is kept in the checkpoint.
	ledger *mechanism.Ledger
}

// newAccounting is the run's account of the mechanism, with the
// accountants the mechanism decides on. With Config.Accountant "pld" a run
// the PLD accountant cannot describe is refused.
func newAccounting(cfg *Config, mech *mechanism.Mechanism, expected float64) (*accounting, error) {
	acc, err := mech.Accounts(mechanism.Run{Optimizer: string(cfg.Optimizer), Momentum: cfg.Momentum,
		WeightDecay: cfg.WeightDecay, RDPOnly: cfg.Accountant == AccountantRDP})
	if err != nil {
		return nil, err
	}
	if acc.PLDErr != nil && cfg.Accountant == AccountantPLD {
		return nil, acc.PLDErr
	}
	return &accounting{ledger: &mechanism.Ledger{}, cfg: cfg, mech: mech, accounts: acc, q: mech.Q(), expected: expected,
		prefix: mech.Prefix(), pld: acc.PLD, calibPLD: acc.CalibratePLD}, nil
}

// newPrimary returns a fresh accountant of the run's primary kind.
func (a *accounting) newPrimary() (accountant.Accountant, error) { return a.mech.NewAccountant() }

// stepEvent describes step number step (1-based) with noise multiplier
// sigma to the primary accountant.
func (a *accounting) stepEvent(sigma float64, step int) accountant.Event {
	return a.mech.StepEvent(sigma, step)
}

// outerClip reports whether steps clip the mean clipped gradient to C for
// the hidden-state bound (mechanism.Accounts.OuterClip).
func (a *accounting) outerClip() bool { return a.accounts.OuterClip() }

// epsilonAfter is the calibrating accountant's ε (PLD or the primary's)
// after the prefix events and k steps at noise multiplier sigma. Where the
// PLD cannot be evaluated (a σ so small its grid would not fit) the
// primary's ε, also a valid bound, is used.
func (a *accounting) epsilonAfter(sigma float64, k int) (float64, error) {
	return a.epsilon(a.charges(k))(sigma)
}

// charges is the event of k steps at the noise multiplier given.
func (a *accounting) charges(k int) func(sigma float64) (accountant.Event, int) {
	return func(sigma float64) (accountant.Event, int) { return a.mech.Charges(sigma, k) }
}

// epsilon is the calibrating accountant's ε after the prefix events and the
// steps event describes at a parameter; the primary's where the PLD cannot
// be evaluated.
func (a *accounting) epsilon(event func(x float64) (accountant.Event, int)) func(x float64) (float64, error) {
	primary := accountant.Account(a.newPrimary, event, a.cfg.Delta, a.prefix...)
	if !a.calibPLD {
		return primary
	}
	pld := accountant.Account(newPLD(), event, a.cfg.Delta, a.prefix...)
	return func(x float64) (float64, error) {
		if e, err := pld(x); err == nil {
			return e, nil
		}
		return primary(x)
	}
}

// newPLD is a factory of PLD accountants with the given options.
func newPLD(opts ...accountant.PLDOption) func() (accountant.Accountant, error) {
	return func() (accountant.Accountant, error) { return accountant.NewPLD(opts...) }
}

// calibrate returns σ meeting the target ε over steps: by PLD certified on
// its default grid (searched on the coarse grid from the RDP σ down), else
// by the primary accountant.
func (a *accounting) calibrate(ctx context.Context, steps int) (float64, error) {
	if err := a.checkCountBudget(steps); err != nil {
		return 0, err
	}
	charges := a.charges(steps)
	eps := a.epsilon(charges)
	var opts []accountant.CalibrateOption
	if a.calibPLD {
		eps = accountant.Account(newPLD(), charges, a.cfg.Delta, a.prefix...)
		opts = append(opts, accountant.WithPLDCertification(
			cancellable(ctx, accountant.Account(newPLD(accountant.WithPLDInterval(accountant.CalibrationPLDInterval)), charges, a.cfg.Delta, a.prefix...)),
			cancellable(ctx, accountant.Account(a.newPrimary, charges, a.cfg.Delta, a.prefix...))))
	}
	eps = cancellable(ctx, eps)
	sigma, err := accountant.Calibrate(eps, a.cfg.Epsilon, opts...)
	if err != nil {
		return 0, fmt.Errorf("calibrating sigma for ε=%g over %d steps: %w", a.cfg.Epsilon, steps, err)
	}
	return sigma, nil
}

// budgetSteps is the largest number of steps ≤ steps that keeps ε within
// the target at noise multiplier sigma.
func (a *accounting) budgetSteps(sigma float64, steps int) (int, error) {
	k, err := accountant.Calibrate(a.epsilon(func(x float64) (accountant.Event, int) { return a.mech.Charges(sigma, int(x)) }),
		a.cfg.Epsilon, accountant.WithMaxSteps(steps))
	return int(k), err
}

// newTracker builds the run's tracker with the accountants the mechanism
// decided on and composes the prefix.
func (a *accounting) newTracker() (*accountant.Tracker, []string, error) {
	t, primary, notes, err := a.accounts.NewTracker()
	if err != nil {
		return nil, nil, err
	}
	a.primary = primary
	for _, ev := range a.prefix {
		if err := a.step(t, 0, ev, 0, 0); err != nil {
			return nil, nil, err
		}
	}
	return t, notes, nil
}

// step records one event in the ledger and composes it into the tracker,
// each accountant charged the event the mechanism gives it (a NoOp for
// prefix events at the hidden-state accountant, which never sees them).
func (a *accounting) step(t *accountant.Tracker, step int, ev accountant.Event, sigma, lr float64) error {
	a.ledger.Charge(step, ev)
	if evs := a.accounts.Events(a.primary, ev, sigma, lr); evs != nil {
		return t.StepEach(evs)
	}
	return t.Step(ev)
}

// cancellable is eps that fails with ctx's error once ctx is done, so an
// interrupt during calibration (several seconds with the certified PLD)
// ends the search at its next evaluation instead of after it.
func cancellable(ctx context.Context, eps func(float64) (float64, error)) func(float64) (float64, error) {
	if ctx == nil { // a state set up outside Run (tests, benchmarks)
		ctx = context.Background()
	}
	return func(x float64) (float64, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return eps(x)
	}
}
