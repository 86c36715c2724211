package sampler

import "github.com/dptrain/dptrain/accountant"

// The GaussianEvent methods build a step's event from what actually ran:
// N(0, std²) noise per coordinate on a sum of per-example contributions each
// of L2 norm ≤ l2 (a clipper's Sensitivity().L2). They put the noise
// multiplier relative to the sensitivity under the sampler's own
// neighbouring relation (DESIGN decision 6), which is easy to get wrong by
// hand: add/remove-one moves the sum by ≤ l2, replace-one by ≤ 2·l2.

// GaussianEvent is PoissonSampled{Q, Gaussian{std/l2}} (add/remove-one).
func (p *Poisson) GaussianEvent(std, l2 float64) accountant.Event {
	return p.Event(accountant.Gaussian{Sigma: std / l2})
}

// GaussianEvent is SampledWithoutReplacement{N, B, Gaussian{std/(2·l2)}}:
// replace-one, so the sensitivity is 2·l2.
func (w *WithoutReplacement) GaussianEvent(std, l2 float64) accountant.Event {
	return w.Event(accountant.Gaussian{Sigma: std / (2 * l2)})
}

// GaussianEvent is Gaussian{std/(2·l2)} with no amplification: under
// replace-one, fixing the permutations, exactly one batch of an epoch
// changes, by ≤ 2·l2, so charging every step the full Gaussian is valid.
func (sh *Shuffle) GaussianEvent(std, l2 float64) accountant.Event {
	return sh.Event(accountant.Gaussian{Sigma: std / (2 * l2)})
}
