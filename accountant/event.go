package accountant

import (
	"errors"
	"fmt"
	"math"
)

// Event describes one privacy mechanism that ran. Events are immutable
// values; the set of event types is closed to this package so that every
// accountant can say exactly which it supports.
type Event interface {
	// Validate reports a clear error for impossible parameters
	// (σ ≤ 0, q outside (0,1], NaN, ...).
	Validate() error
	eventKind() string
}

// ErrUnsupported is wrapped by an accountant's error for events it cannot
// account for.
var ErrUnsupported = errors.New("event not supported by this accountant")

// ErrInvalid is wrapped by Validate errors.
var ErrInvalid = errors.New("invalid event")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Gaussian is the Gaussian mechanism with noise multiplier Sigma: noise
// standard deviation divided by the L2 sensitivity.
type Gaussian struct {
	Sigma float64
}

func (Gaussian) eventKind() string { return "gaussian" }

// Validate checks Sigma > 0 and finite.
func (e Gaussian) Validate() error {
	if !(e.Sigma > 0) || math.IsInf(e.Sigma, 0) {
		return invalidf("gaussian noise multiplier sigma must be positive and finite, got %v", e.Sigma)
	}
	return nil
}

// PoissonSampled runs Event on a Poisson subsample: each record independently
// with probability Q. Relation: add/remove-one.
type PoissonSampled struct {
	Q     float64
	Event Event
}

func (PoissonSampled) eventKind() string { return "poisson_sampled" }

// Validate checks 0 ≤ Q ≤ 1 and the inner event.
func (e PoissonSampled) Validate() error {
	if !(e.Q >= 0 && e.Q <= 1) {
		return invalidf("sampling probability q must be in [0,1], got %v", e.Q)
	}
	if e.Event == nil {
		return invalidf("poisson_sampled: missing inner event")
	}
	return e.Event.Validate()
}

// SampledWithoutReplacement runs Event on a uniformly random subset of
// exactly B of the N records. Relation: replace-one.
type SampledWithoutReplacement struct {
	N, B  int
	Event Event
}

func (SampledWithoutReplacement) eventKind() string { return "sampled_without_replacement" }

// Validate checks 1 ≤ B ≤ N and the inner event.
func (e SampledWithoutReplacement) Validate() error {
	if e.N < 1 || e.B < 1 || e.B > e.N {
		return invalidf("sampling without replacement needs 1 <= B <= N, got B=%d N=%d", e.B, e.N)
	}
	if e.Event == nil {
		return invalidf("sampled_without_replacement: missing inner event")
	}
	return e.Event.Validate()
}

// SelfComposed is Event run Count times in sequence (adaptively).
type SelfComposed struct {
	Event Event
	Count int
}

func (SelfComposed) eventKind() string { return "self_composed" }

// Validate checks Count ≥ 0 and the inner event.
func (e SelfComposed) Validate() error {
	if e.Count < 0 {
		return invalidf("self_composed: count must be >= 0, got %d", e.Count)
	}
	if e.Event == nil {
		return invalidf("self_composed: missing inner event")
	}
	return e.Event.Validate()
}

// Composed is the sequential composition of Events.
type Composed struct {
	Events []Event
}

func (Composed) eventKind() string { return "composed" }

// Validate checks every inner event.
func (e Composed) Validate() error {
	for i, ev := range e.Events {
		if ev == nil {
			return invalidf("composed: event %d is nil", i)
		}
		if err := ev.Validate(); err != nil {
			return fmt.Errorf("composed event %d: %w", i, err)
		}
	}
	return nil
}

// NoOp is a mechanism that releases nothing.
type NoOp struct{}

func (NoOp) eventKind() string { return "no_op" }

// Validate always succeeds.
func (NoOp) Validate() error { return nil }

// Unsupported returns an error wrapping ErrUnsupported that names the
// accountant and the event.
func Unsupported(accountant string, ev Event) error {
	kind := "<nil>"
	if ev != nil {
		kind = ev.eventKind()
	}
	return fmt.Errorf("%s accountant: %w: %s", accountant, ErrUnsupported, kind)
}

// Kind returns the event's kind name ("gaussian", "poisson_sampled", ...).
func Kind(ev Event) string {
	if ev == nil {
		return "<nil>"
	}
	return ev.eventKind()
}

// ProjectedSGD is one step of projected DP-SGD as paper 002 analyses it:
// sample a batch with rate P (Poisson, or b/n without replacement), take
// w − (LR/|B|)·Σ Clip_C(∇ℓ), add N(0, Sigma²·I) in parameter space, then
// project the FULL parameter vector onto a fixed, data-independent set of
// Euclidean diameter Diameter. Sigma is the noise standard deviation on the
// parameters (σ = η·z·C/b for an Abadi-style multiplier z). The event says
// nothing about what was released; whether the hidden-state bound applies
// to a run is decided by [HiddenStateRun.Qualifies].
type ProjectedSGD struct {
	P        float64
	Sigma    float64
	Clip     float64
	LR       float64
	Diameter float64
	// Poisson: the batch was a fresh Poisson sample of rate P (each record
	// independently). Otherwise a fresh uniform subset of fixed size b = P·n.
	// With Poisson sampling the bound also holds for add/remove-one
	// neighbours (see [HiddenAccountant.Epsilon]).
	Poisson bool
}

func (ProjectedSGD) eventKind() string { return "projected_sgd" }

// Validate checks 0 ≤ P ≤ 1, Sigma > 0, and finite non-negative Clip, LR and
// Diameter.
func (e ProjectedSGD) Validate() error { return e.segment(1).Validate() }

// Preprocessed is Event run on data that went through one NON-private,
// data-dependent preprocessing step π with L2 sensitivity Delta2 (largest
// move of any other record when one record is replaced) and L∞ sensitivity
// DeltaInf (number of other records that can move), declared a priori for
// the dataset collection (docs/srdp.md#sensitivities; preprocess.Sensitivity
// gives them). Chains of preprocessing steps must be declared as one π.
//
// Mu is the Lipschitz constant of one record's clipped contribution with
// respect to its input, in units of the clip norm (a record moved by r moves
// its contribution by ≤ Mu·r·C); 0 means unknown, and the clipping cap 2C per
// moved record is used (docs/srdp.md#training-steps).
type Preprocessed struct {
	Delta2, DeltaInf float64
	Mu               float64
	Event            Event
}

func (Preprocessed) eventKind() string { return "preprocessed" }

// Validate checks the sensitivities (finite, ≥ 0), Mu ≥ 0 and the inner event.
func (e Preprocessed) Validate() error {
	switch {
	case !(e.Delta2 >= 0) || math.IsInf(e.Delta2, 0):
		return invalidf("preprocessed: delta2 must be finite and >= 0, got %v", e.Delta2)
	case !(e.DeltaInf >= 0) || math.IsInf(e.DeltaInf, 0):
		return invalidf("preprocessed: deltainf must be finite and >= 0, got %v", e.DeltaInf)
	case !(e.Mu >= 0) || math.IsInf(e.Mu, 0):
		return invalidf("preprocessed: mu must be finite and >= 0, got %v", e.Mu)
	case e.Event == nil:
		return invalidf("preprocessed: missing inner event")
	}
	return e.Event.Validate()
}

// Tau is τ = Δ2·Δ∞.
func (e Preprocessed) Tau() float64 { return e.Delta2 * e.DeltaInf }

// Block is one subspace of hybrid clipping as the accountant sees it: Dim
// coordinates (r_j; the residual block of
// docs/twice-sampling.md#subspace-clipping has Dim = d), an
// L2 clip C2 on the block's coordinates, an L∞ clip c∞ = C2/√D0 on each
// coordinate, and independent N(0, Sigma²) noise on every coordinate of the
// block's noisy sum. Sigma is absolute (the noise std on the SUM of clipped
// contributions); only Sigma/C2 and D0 matter for privacy, so with C2 = 1
// Sigma is the noise multiplier.
type Block struct {
	// Dim is r_j, the number of coordinates. 0 means unknown: the worst case
	// over any dimension is used (as many coordinates as D0 allows), which
	// is an upper bound for every Dim.
	Dim int
	// C2 is the block's L2 clip norm (> 0).
	C2 float64
	// D0 is (C2/c∞)², possibly non-integer. D0 ≤ 1 (or 0) means no extra L∞
	// bound: c∞ = C2 and the block behaves like input-wise sampling.
	D0 float64
	// Sigma is the noise standard deviation per coordinate (> 0).
	Sigma float64
}

// Validate checks Dim ≥ 0, C2 > 0, D0 ≥ 0 and Sigma > 0, all finite.
func (b Block) Validate() error {
	switch {
	case b.Dim < 0:
		return invalidf("block dimension must be >= 0, got %d", b.Dim)
	case !(b.C2 > 0) || math.IsInf(b.C2, 0):
		return invalidf("block L2 clip c2 must be positive and finite, got %v", b.C2)
	case !(b.D0 >= 0 && b.D0 <= 1e12):
		return invalidf("block d0 = (c2/cinf)^2 must be in [0, 1e12], got %v", b.D0)
	case !(b.Sigma > 0) || math.IsInf(b.Sigma, 0):
		return invalidf("block noise sigma must be positive and finite, got %v", b.Sigma)
	}
	return nil
}

// TwiceSampled is one step of (Q1, Q2)-twice Poisson sampling (Algorithm 2,
// with hybrid clipping Algorithm 3): each record joins the batch with
// probability Q1, then each coordinate of each selected record's clipped
// contribution is kept independently with probability Q2, and each block's
// noisy sum gets N(0, σ_j²) per coordinate, drawn once. Relation:
// add/remove-one. Q2 = 1 with one block of D0 ≤ 1 is the ordinary sampled
// Gaussian; Q1 = 1 is coordinate-wise sampling alone.
type TwiceSampled struct {
	Q1, Q2 float64
	Blocks []Block
}

func (TwiceSampled) eventKind() string { return "twice_sampled" }

// Validate checks Q1, Q2 in (0,1] and every block.
func (e TwiceSampled) Validate() error {
	if !(e.Q1 > 0 && e.Q1 <= 1) {
		return invalidf("twice sampling: q1 must be in (0,1], got %v", e.Q1)
	}
	if !(e.Q2 > 0 && e.Q2 <= 1) {
		return invalidf("twice sampling: q2 must be in (0,1], got %v", e.Q2)
	}
	if len(e.Blocks) == 0 {
		return invalidf("twice sampling: no blocks")
	}
	for i, b := range e.Blocks {
		if err := b.Validate(); err != nil {
			return fmt.Errorf("twice sampling block %d: %w", i, err)
		}
	}
	return nil
}
