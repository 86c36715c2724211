package main

import (
	"context"
	"flag"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/preprocess"
	"io"
	"math"
	"strings"

	"github.com/dptrain/dptrain/accountant"
)

// The papers' accountants for `dptrain privacy --accountant twice|hidden|srdp`.

// commonPrivacyFlags are the flags every handler shares.
type commonPrivacyFlags struct {
	accountant *string
	q          *float64
	sigma      *float64
	steps      *int
	delta      *float64
	jsonOut    *bool
}

func addCommonPrivacyFlags(fs *flag.FlagSet, qHelp, sigmaHelp string) commonPrivacyFlags {
	return commonPrivacyFlags{
		accountant: fs.String("accountant", "rdp", "accountant: "+strings.Join(knownAccountants(), ", ")),
		q:          fs.Float64("q", math.NaN(), qHelp),
		sigma:      fs.Float64("sigma", math.NaN(), sigmaHelp),
		steps:      fs.Int("steps", -1, "number of training steps T (>= 1)"),
		delta:      fs.Float64("delta", math.NaN(), "target delta in (0,1)"),
		jsonOut:    fs.Bool("json", false, "print one JSON object"),
	}
}

// require reports the first missing flag among the common ones and extra
// ("--q is required", rather than a complaint about the NaN placeholder),
// then checks the common values.
func (c commonPrivacyFlags) require(fs *flag.FlagSet, extra ...string) error {
	if err := requireFlags(fs, append([]string{"q", "sigma", "steps", "delta"}, extra...)...); err != nil {
		return err
	}
	return c.check()
}

func (c commonPrivacyFlags) check() error {
	if err := inHalfOpenUnit("q", *c.q); err != nil {
		return err
	}
	if err := noiseMultiplier("sigma", *c.sigma); err != nil {
		return err
	}
	if *c.steps < 1 {
		return badInput("--steps must be an integer >= 1, got %d", *c.steps)
	}
	return inOpenUnit("delta", *c.delta)
}

// nonNegative checks v >= 0 and finite.
func nonNegative(name string, v float64) error {
	if err := finite(name, v); err != nil {
		return err
	}
	if !(v >= 0) {
		return badInput("--%s must be >= 0, got %v", name, v)
	}
	return nil
}

// runPrivacyTwice: (q1, q2)-twice Poisson sampling with L2 clip 1 and L∞ clip
// 1/√d0 (paper 003), RDP composed over --steps.
func runPrivacyTwice(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy --accountant twice", stdout)
	c := addCommonPrivacyFlags(fs, "sample-wise Poisson rate q1 in (0,1]", "noise multiplier (noise std / L2 clip) > 0")
	q2 := fs.Float64("q2", math.NaN(), "coordinate-wise sampling rate q2 in (0,1]")
	d0 := fs.Float64("d0", math.NaN(), "d0 = (c2/cinf)^2 >= 1, may be non-integer (1 = no extra L-inf clip)")
	alphaMax := fs.Int("alpha-max", 256, "largest integer RDP order (2..1024)")
	conv := fs.String("conversion", "balle", "RDP to (eps,delta) conversion: balle | paper (Lemma 2.3, as in Xiao, Wan and Devadas' tables)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.require(fs, "q2", "d0"); err != nil {
		return err
	}
	if err := inHalfOpenUnit("q2", *q2); err != nil {
		return err
	}
	if err := finite("d0", *d0); err != nil {
		return err
	}
	if !(*d0 >= 1) {
		return badInput("--d0 must be >= 1 (d0 = (c2/cinf)^2), got %v", *d0)
	}
	if *alphaMax < 2 || *alphaMax > 1024 {
		return badInput("--alpha-max must be in [2, 1024], got %d", *alphaMax)
	}
	var cv accountant.TwiceConversion
	switch *conv {
	case "balle":
		cv = accountant.TwiceBalle
	case "paper":
		cv = accountant.TwiceMironov
	default:
		return badInput("--conversion must be balle or paper, got %q", *conv)
	}
	tw, err := mechanism.New(mechanism.Spec{Sampler: mechanism.Twice, Rate: *c.q, Q2: *q2, Clip: mechanism.Hybrid, C: 1, D0: *d0}, nil)
	if err != nil {
		return asInput(err)
	}
	acc := accountant.NewTwiceWith(*alphaMax, cv)
	if err := acc.Compose(tw.Event(*c.sigma), *c.steps); err != nil {
		return asInput(err)
	}
	b, err := acc.Epsilon(*c.delta)
	if err != nil {
		return err
	}
	// The input-wise sampled Gaussian at rate q1·q2 with the same noise, for comparison.
	inputWise, err := mechanism.New(mechanism.Spec{Sampler: mechanism.Twice, Rate: *c.q * *q2, Q2: 1, Clip: mechanism.Flat, C: 1, D0: 1}, nil)
	if err != nil {
		return asInput(err)
	}
	base, _, err := accountant.TwiceEpsilon(inputWise.Event(*c.sigma).(accountant.TwiceSampled), *c.steps, *c.delta, *alphaMax, cv)
	if err != nil {
		return err
	}
	return writePrivacyResult(stdout, *c.jsonOut, b, map[string]any{
		"q2": *q2, "d0": *d0, "conversion": *conv, "input_wise_epsilon": base,
	})
}

// runPrivacyHidden: hidden-state bound of projected DP-SGD (paper 002).
func runPrivacyHidden(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy --accountant hidden", stdout)
	c := addCommonPrivacyFlags(fs, "sampling rate p in (0,1] (Poisson, or b/n without replacement)", "noise std added to the PARAMETERS each step, > 0")
	clip := fs.Float64("clip", math.NaN(), "per-example L2 clip norm C >= 0")
	lr := fs.Float64("lr", math.NaN(), "learning rate eta >= 0")
	diam := fs.Float64("diameter", math.NaN(), "Euclidean diameter D of the projection set (2R for an L2 ball of radius R)")
	pointMass := fs.Bool("point-mass-init", false, "the initial parameters are a fixed point (tightens step 1)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.require(fs, "clip", "lr", "diameter"); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"clip", *clip}, {"lr", *lr}, {"diameter", *diam}} {
		if err := nonNegative(f.name, f.v); err != nil {
			return err
		}
	}
	seg := accountant.HiddenSegment{Steps: *c.steps, P: *c.q, Diameter: *diam, LR: *lr, Clip: *clip, Sigma: *c.sigma}
	if math.IsInf(seg.R(), 0) || math.IsNaN(seg.R()) {
		return badInput("(diameter + 2*lr*clip)/sigma is not finite")
	}
	h := accountant.HiddenState{Segments: []accountant.HiddenSegment{seg}, PointMassInit: *pointMass}
	eps := h.Epsilon(*c.delta)
	if math.IsInf(eps, 1) {
		return badInput("no epsilon <= 1024 reaches delta=%v with r=%v", *c.delta, seg.R())
	}
	b := accountant.Bound{Accountant: "hidden", Epsilon: eps, Delta: *c.delta, Relation: accountant.ReplaceOne}
	return writePrivacyResult(stdout, *c.jsonOut, b, map[string]any{
		"r":                   seg.R(),
		"epsilon_limit":       accountant.HiddenStateEpsilonLimit(*c.delta, *c.q, seg.R()),
		"epsilon_closed_form": accountant.HiddenStateEpsilonClosedForm(*c.delta, *c.q, seg.R()),
		"note":                "valid only if parameters are projected every step, plain SGD, and only the final model is released",
	})
}

// runPrivacySRDP: DP-SGD (Poisson-subsampled Gaussian) on data that went
// through non-private preprocessing with sensitivities (Δ2, Δ∞) (paper 000).
func runPrivacySRDP(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy --accountant srdp", stdout)
	c := addCommonPrivacyFlags(fs, "Poisson sampling rate q in (0,1] (1 = full batch)", "noise multiplier (noise std / L2 clip) > 0")
	d2 := fs.Float64("delta2", math.NaN(), "preprocessing L2 sensitivity: largest move of any other record (>= 0)")
	dinf := fs.Float64("deltainf", math.NaN(), "preprocessing L-inf sensitivity: number of other records that can move (>= 0)")
	mu := fs.Float64("mu", 0, "Lipschitz constant of a record's clipped contribution w.r.t. its input, in clip units (0 = unknown: cap 2)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.require(fs, "delta2", "deltainf"); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"delta2", *d2}, {"deltainf", *dinf}, {"mu", *mu}} {
		if err := nonNegative(f.name, f.v); err != nil {
			return err
		}
	}
	srdp := func(pre preprocess.Sensitivity, mu float64) (accountant.Event, error) {
		m, err := mechanism.New(mechanism.Spec{Sampler: mechanism.Poisson, Rate: *c.q, Clip: mechanism.Flat, C: 1, Preprocess: &pre, LipschitzMu: mu}, nil)
		if err != nil {
			return nil, asInput(err)
		}
		return m.StepEvent(*c.sigma, 1), nil
	}
	ev, err := srdp(preprocess.Sensitivity{L2: *d2, LInf: *dinf}, *mu)
	if err != nil {
		return err
	}
	acc := accountant.NewSRDP()
	if err := acc.Compose(ev, *c.steps); err != nil {
		return asInput(err)
	}
	b, err := acc.Epsilon(*c.delta)
	if err != nil {
		return err
	}
	bare, err := srdp(preprocess.Sensitivity{}, 0)
	if err != nil {
		return err
	}
	plain := accountant.NewSRDP()
	if err := plain.Compose(bare, *c.steps); err != nil {
		return err
	}
	pb, err := plain.Epsilon(*c.delta)
	if err != nil {
		return err
	}
	return writePrivacyResult(stdout, *c.jsonOut, b, map[string]any{
		"tau": *d2 * *dinf, "epsilon_without_preprocessing": pb.Epsilon,
	})
}
