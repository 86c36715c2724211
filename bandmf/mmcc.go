package bandmf

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
)

// MMCCTailFraction is the share of the run's δ that MMCC spends on the
// failure of its posterior bounds (docs/matrix-mechanism.md#mmcc): the
// rest is the PLD's. A fixed share keeps the events data-independent and
// the calibration one search.
const MMCCTailFraction = 0.1

// MMCCMaxBands caps b under MMCC: each row's mixture has up to 2^b
// components.
const MMCCMaxBands = 12

// MMCC is the account of BandMF under ordinary Poisson sampling (every
// example in every step independently at rate p) by conditional
// composition (Choquette-Choo, Ganesh, Steinke and Thakurta 2024;
// docs/matrix-mechanism.md#mmcc). Row i of C·x + Z, given the earlier rows,
// is dominated by a mixture of Gaussians whose participation probabilities
// p̃_ij bound the posterior of the example's earlier participations except
// with probability Φ̄(t) per pair (i, j); those failures are charged to δ.
type MMCC struct {
	s     Strategy
	p     float64
	steps int
	tail  float64 // δ spent on failures over the run
	beta  float64 // per pair (i, j): tail / pairs
	t     float64 // Φ̄(t) ≤ beta
	norm  float64 // ‖c‖, the largest column norm: the noise scale
}

// NewMMCC plans the account of steps rows of s at Poisson rate p, spending
// tail of δ on the posterior bounds' failures. It refuses what the proof
// does not cover: a negative coefficient (the shift Σ C_ik·x_k must be
// monotone in the participations), more than MMCCMaxBands bands, p outside
// (0, 1], tail outside (0, 1).
func NewMMCC(s Strategy, steps int, p, tail float64) (MMCC, error) {
	switch {
	case s.Bands() == 0:
		return MMCC{}, fmt.Errorf("bandmf: mmcc: no strategy")
	case steps < 1:
		return MMCC{}, fmt.Errorf("bandmf: mmcc: steps must be >= 1, got %d", steps)
	case !(p > 0 && p <= 1):
		return MMCC{}, fmt.Errorf("bandmf: mmcc: the sampling rate must be in (0, 1], got %v", p)
	case !(tail > 0 && tail < 1):
		return MMCC{}, fmt.Errorf("bandmf: mmcc: the failure budget must be in (0, 1), got %v", tail)
	case s.Bands() > MMCCMaxBands:
		return MMCC{}, fmt.Errorf("bandmf: mmcc: %d bands: each row is a mixture of up to 2^b Gaussians; at most %d bands are accounted", s.Bands(), MMCCMaxBands)
	}
	for k, c := range s.coef {
		if c < 0 {
			return MMCC{}, fmt.Errorf("bandmf: mmcc: coefficient c_%d = %v is negative: the analysis needs C ≥ 0 on the band (an example's shift must grow with its participations); use cyclic sampling (the banded theorem) for this strategy", k, c)
		}
	}
	m := MMCC{s: s, p: p, steps: steps, tail: tail, norm: s.MaxColumnNorm(steps)}
	if pairs := m.pairs(steps); pairs > 0 {
		m.beta = tail / float64(pairs)
		m.t = upperQuantile(m.beta)
	}
	return m, nil
}

// pairs is the number of pairs (i, j), j < i ≤ j + b − 1, among the first
// n rows: the posterior bounds that can fail.
func (m MMCC) pairs(n int) int {
	total := 0
	for i := range n {
		total += m.rowPairs(i)
	}
	return total
}

func (m MMCC) rowPairs(i int) int { return min(i, m.s.Bands()-1) }

// upperQuantile is the t with Φ̄(t) ≤ beta, as small as the float
// arithmetic allows.
func upperQuantile(beta float64) float64 {
	t := math.Sqrt2 * math.Erfcinv(2*beta)
	for normUpper(t) > beta {
		t = math.Nextafter(t, math.Inf(1)) + 1e-12*math.Abs(t)
	}
	return t
}

// normUpper is Φ̄(t) = P(N(0,1) > t).
func normUpper(t float64) float64 { return 0.5 * math.Erfc(t/math.Sqrt2) }

// Threshold is t, the z-score each posterior bound assumes (Φ̄(t) is the
// failure probability of one pair).
func (m MMCC) Threshold() float64 { return m.t }

// coef is c_m, zero outside the band.
func (m MMCC) coef(k int) float64 {
	if k < 0 || k >= len(m.s.coef) {
		return 0
	}
	return m.s.coef[k]
}

// innerBelow is ⟨C_j, C_k⟩ over rows < i: Σ_{r=max(j,k)}^{i−1} c_{r−j}·c_{r−k}.
func (m MMCC) innerBelow(i, j, k int) float64 {
	acc := 0.0
	for r := max(j, k); r < i; r++ {
		acc += m.coef(r-j) * m.coef(r-k)
	}
	return acc
}

// PTilde returns p̃_ij for j = i−b+1 … i (those ≥ 0), in that order, at
// noise multiplier sigma (noise std sigma·‖c‖ per coordinate of C·x + Z,
// clip norm 1): p̃_ii = p and, for j < i,
//
//	p̃_ij = p·L/(p·L + 1 − p),  log L = (t·s·‖C_j‖ + ‖C_j‖²/2 + Σ_{k≠j} |⟨C_k, C_j⟩|)/s²,
//
// s = sigma·‖c‖, the columns restricted to rows < i. Except with
// probability Φ̄(t), Pr[x_j = 1 | rows < i, x_{−j}] ≤ p̃_ij for every x_{−j}
// (docs/matrix-mechanism.md#mmcc).
func (m MMCC) PTilde(sigma float64, i int) []float64 {
	b := m.s.Bands()
	lo := max(0, i-b+1)
	out := make([]float64, 0, i-lo+1)
	s := sigma * m.norm
	for j := lo; j < i; j++ {
		nj := math.Sqrt(m.innerBelow(i, j, j))
		cross := 0.0
		for k := max(0, j-b+1); k < i; k++ {
			if k != j {
				cross += math.Abs(m.innerBelow(i, j, k))
			}
		}
		logL := (m.t*s*nj + nj*nj/2 + cross) / (s * s)
		// p·L/(p·L + 1 − p) = 1/(1 + (1−p)/p·e^{−log L}), rounded up.
		pt := 1 / (1 + (1-m.p)/m.p*math.Exp(-logL))
		out = append(out, math.Min(1, pt*(1+1e-15)))
	}
	return append(out, m.p)
}

// Row is the event row i (0-based) is charged at noise multiplier sigma:
// the mixture N(0, σ²) against Σ_x π(x)·N(Σ_k C_ik·x_k/‖c‖, σ²), x_k
// independent Bernoulli(p̃_ik), and the failure probability of its pairs.
func (m MMCC) Row(sigma float64, i int) accountant.Event {
	pt := m.PTilde(sigma, i)
	lo := i - len(pt) + 1
	n := len(pt)
	sens := make([]float64, 0, 1<<n)
	probs := make([]float64, 0, 1<<n)
	for mask := 0; mask < 1<<n; mask++ {
		sh, pr := 0.0, 1.0
		for u := range n {
			if mask&(1<<u) != 0 {
				sh += m.coef(i - (lo + u))
				pr *= pt[u]
			} else {
				pr *= 1 - pt[u]
			}
		}
		sens = append(sens, sh/m.norm)
		probs = append(probs, pr)
	}
	mix := accountant.MixtureOfGaussians{StandardDeviation: sigma, Sensitivities: sens, Probs: probs}
	if k := m.rowPairs(i); k > 0 {
		return accountant.Composed{Events: []accountant.Event{mix, accountant.FailureProbability{Delta: m.beta * float64(k)}}}
	}
	return mix
}

// steady is the first row from which every row's event is the same: the
// columns that reach row i and their inner products over rows < i no
// longer see the start once i ≥ 2(b−1).
func (m MMCC) steady() int { return 2 * (m.s.Bands() - 1) }

// Event is the event of rows 0 … k−1 at noise multiplier sigma: the
// first rows one by one, then the steady row self-composed.
func (m MMCC) Event(sigma float64, k int) accountant.Event {
	head := min(k, m.steady())
	evs := make([]accountant.Event, 0, head+1)
	for i := range head {
		evs = append(evs, m.Row(sigma, i))
	}
	if k > head {
		evs = append(evs, accountant.SelfComposed{Event: m.Row(sigma, head), Count: k - head})
	}
	return accountant.Composed{Events: evs}
}

// Tail is the δ the whole planned run spends on failures (at most the
// budget given to NewMMCC).
func (m MMCC) Tail() float64 { return m.beta * float64(m.pairs(m.steps)) }
