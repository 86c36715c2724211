package bandmf

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
)

// Participations is the most steps one example can take part in over T
// steps of cyclic sampling with the given number of parts: ⌈T/parts⌉
// (part 0's count).
func Participations(steps, parts int) int { return (steps + parts - 1) / parts }

// AmplifiedEvent is the privacy event of T steps of BandMF with strategy s
// under cyclic Poisson sampling (sampler.CyclicPoisson) with the given
// number of parts at rate q, where the noise added to C·x has standard
// deviation sigma·clip·‖c‖ per coordinate (‖c‖ the largest column norm):
//
//	SelfComposed(PoissonSampled(q, Gaussian(sigma)), ⌈T/parts⌉).
//
// The condition is parts ≥ b: an example's steps are then at least b apart,
// its columns of C are orthogonal, and each participation is a Poisson-
// subsampled Gaussian of noise multiplier at least sigma (the amplified
// BandMF theorem; docs/matrix-mechanism.md). With b = 1 and one part this
// is DP-SGD's event. Anything else is refused, with the reason.
func AmplifiedEvent(s Strategy, steps, parts int, q, sigma float64) (accountant.Event, error) {
	switch {
	case s.Bands() == 0:
		return nil, fmt.Errorf("bandmf: no strategy")
	case steps < 1:
		return nil, fmt.Errorf("bandmf: steps must be >= 1, got %d", steps)
	case parts < s.Bands():
		return nil, fmt.Errorf("bandmf: %d bands need cyclic sampling with at least %d parts (got %d): "+
			"an example's steps must be at least b apart for its columns of C to be orthogonal", s.Bands(), s.Bands(), parts)
	}
	ev := accountant.SelfComposed{
		Event: accountant.PoissonSampled{Q: q, Event: accountant.Gaussian{Sigma: sigma}},
		Count: Participations(steps, parts),
	}
	if err := ev.Validate(); err != nil {
		return nil, fmt.Errorf("bandmf: %w", err)
	}
	return ev, nil
}
