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
