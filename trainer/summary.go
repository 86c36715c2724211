package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/lattice"
)

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

	// Sweep, for a run of a sweep once the sweep has finished
	// (StampSweepTotal), is the sweep's total that covers the run.
	Sweep *SweepShare `json:"sweep,omitempty"`

	cfg  Config      // the run's configuration, for the released summary
	acct *accounting // the run's account, for ComposeRuns
	// partial marks a failed run's account (FailedRunError): nothing of
	// it was released.
	partial bool
}

func (s *state) summary(done int, stopped string) (*Summary, error) {
	acc, loss := s.eval.last.acc, s.eval.last.loss
	withheld := s.withholdTest(stopped)
	if withheld {
		acc, loss = 0, 0
	} else if s.eval.last.step != done || done == 0 {
		var err error
		if acc, loss, err = s.evaluateTest(); err != nil {
			return nil, fmt.Errorf("final evaluation: %w", err)
		}
	}
	sum := &Summary{
		Dataset: string(s.cfg.Dataset), Source: s.data.source, Model: string(s.cfg.Model), Params: s.model.NumParams(),
		TrainN: s.data.train.N(), TestN: s.data.test.N(), Steps: done, PlannedStep: s.steps,
		Sigma: s.sigma, Calibrated: s.cfg.Sigma == 0, Q: s.acct.q, Delta: s.cfg.Delta,
		TestAcc: acc, TestLoss: loss, Epsilon: map[string]float64{}, Notes: s.notes.public, Stopped: stopped,
		OutDir: s.cfg.OutDir, Private: s.cfg.FinalOnly, Samples: s.samples,
		NoiseVariance: s.noise.TotalVariance(), Sensitivity: s.clipper.Sensitivity().L2,
		NoiseSeeded: s.cfg.Seeded, PrivateRelease: !s.cfg.Seeded && s.opts.Noise == nil, CoveredN: s.data.train.N(),
		PrivateNotes: s.notes.private, cfg: s.cfg, TestWithheld: withheld, acct: s.acct, Noise: NoiseContinuous,
	}
	if _, ok := s.grad.(*latticeGradients); ok {
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
	for _, f := range s.features {
		notes, err := f.notes()
		if err != nil {
			return nil, err
		}
		sum.PrivateNotes = append(sum.PrivateNotes, notes...)
	}
	sum.Claim = s.claim(sum)
	return sum, nil
}

// runNotes are the run's notes for its summary: public (released) and
// curator-only (they may name records).
type runNotes struct {
	public, private []string
}
