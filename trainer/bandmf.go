package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/bandmf"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/optim"
)

// featureBandMF is the checkpoint name of banded noise's correlator state.
const featureBandMF = "bandmf"

// bandmfFeature is noise bandmf's part of a run: the strategy, optimised
// once for the run's workload, and the correlator's state in the
// checkpoint (the last b−1 noise rows: private, like the noise seed). It
// adds nothing to the step; the noise itself is the mechanism's
// (mechanism.CorrelatedNoise), asked for once per step like any noise.
type bandmfFeature struct {
	noHooks
	strategy bandmf.Strategy
	report   bandmf.Report
	noise    func() *mechanism.CorrelatedNoise
}

// newBandMF optimises the b-banded strategy for the run's workload: the
// iterates of SGD (with its momentum and learning-rate schedule) over the
// run's steps. Adam's iterates are not linear in the gradients: it gets
// the plain SGD workload with its schedule, which costs accuracy, not
// privacy (any strategy is private at its own sensitivity).
func newBandMF(cfg *Config, steps int, noise func() *mechanism.CorrelatedNoise) (*bandmfFeature, error) {
	lr := make([]float64, steps)
	for t := range lr {
		lr[t] = cfg.LR
		if cfg.Schedule == ScheduleCosine {
			lr[t] = optim.Cosine{Base: cfg.LR, Total: steps}.LR(t)
		}
		lr[t] = max(lr[t], 1e-12*cfg.LR) // the cosine's last step is 0; the workload needs > 0
	}
	beta := 0.0
	if cfg.Optimizer == OptimizerMomentum {
		beta = cfg.Momentum
	}
	w, err := bandmf.Momentum(steps, beta, lr)
	if err != nil {
		return nil, fmt.Errorf("noise bandmf: %w", err)
	}
	s, rep, err := bandmf.Optimize(w, cfg.Bands)
	if err != nil {
		return nil, fmt.Errorf("noise bandmf: %w", err)
	}
	return &bandmfFeature{strategy: s, report: rep, noise: noise}, nil
}

func (f *bandmfFeature) name() string { return featureBandMF }

// note says what the strategy gains, for the summary: the released
// workload's error relative to independent noise, at equal σ, and which
// analysis accounts the sampling.
func (f *bandmfFeature) note(m *mechanism.Mechanism) string {
	head := fmt.Sprintf("noise bandmf: %d-banded strategy (‖c‖ = %.4g) optimised over %d steps in %d evaluations; workload error %.4g of DP-SGD's at equal σ; ",
		f.strategy.Bands(), f.strategy.MaxColumnNorm(f.report.Steps), f.report.Steps, f.report.Evaluations,
		f.report.Error/f.report.DPSGDError)
	if sp := m.Spec(); sp.Sampler == mechanism.Cyclic {
		return head + fmt.Sprintf("cyclic Poisson sampling over %d parts, each example charged at most ⌈T/%d⌉ times (docs/matrix-mechanism.md)", sp.Parts, sp.Parts)
	}
	if m.MMCC() {
		return head + fmt.Sprintf("ordinary Poisson sampling accounted by MMCC (conditional composition), %g of δ spent on its posterior bounds (docs/matrix-mechanism.md#mmcc)", bandmf.MMCCTailFraction)
	}
	return head + "one band: DP-SGD's Poisson sampling and account"
}

func (f *bandmfFeature) save() (any, error) {
	b, err := f.noise().MarshalBinary()
	return rngState{RNG: b}, err
}

func (f *bandmfFeature) load(states featureStates, step int) error {
	var st rngState
	if err := states.get(featureBandMF, &st); err != nil {
		return err
	}
	if err := f.noise().UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("bandmf: %w", err)
	}
	return nil
}
