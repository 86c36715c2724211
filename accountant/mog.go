package accountant

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MixtureOfGaussians is the mixture-of-Gaussians mechanism of
// Choquette-Choo, Ganesh, Steinke and Thakurta 2024 (dp_accounting's
// MixtureOfGaussiansDpEvent): on a dataset it outputs N(0, σ²), on the
// neighbour with one more record Σ_i Probs[i]·N(Sensitivities[i], σ²), σ =
// StandardDeviation (absolute: the sensitivities are in the same units).
// The Poisson-subsampled Gaussian of rate q and multiplier s is
// {σ: s, Sensitivities: [0, 1], Probs: [1−q, q]}. Relation: add/remove-one
// (docs/accountants.md#mixture-of-gaussians).
//
// The vector mechanism whose sensitivity vectors have these norms is
// dominated by this scalar one (the paper's reduction), so a caller may pass
// norms. The PLD accountant composes it in both directions; the RDP
// accountant refuses it (no RDP bound of the remove direction is known in
// closed form).
type MixtureOfGaussians struct {
	StandardDeviation float64
	Sensitivities     []float64
	Probs             []float64
}

func (MixtureOfGaussians) eventKind() string { return "mixture_of_gaussians" }

// mogProbTolerance is how far the probabilities may sum from 1 (as
// dp_accounting's math.isclose).
const mogProbTolerance = 1e-9

// Validate checks σ > 0, one probability in [0, 1] per sensitivity, every
// sensitivity finite and ≥ 0, and probabilities summing to 1.
func (e MixtureOfGaussians) Validate() error {
	if !(e.StandardDeviation > 0) || math.IsInf(e.StandardDeviation, 0) {
		return invalidf("mixture of gaussians: standard deviation must be positive and finite, got %v", e.StandardDeviation)
	}
	if len(e.Sensitivities) == 0 || len(e.Sensitivities) != len(e.Probs) {
		return invalidf("mixture of gaussians: needs one probability per sensitivity, got %d sensitivities and %d probabilities",
			len(e.Sensitivities), len(e.Probs))
	}
	sum := 0.0
	for i, c := range e.Sensitivities {
		if !(c >= 0) || math.IsInf(c, 0) {
			return invalidf("mixture of gaussians: sensitivity %d must be finite and >= 0, got %v", i, c)
		}
		p := e.Probs[i]
		if !(p >= 0 && p <= 1) {
			return invalidf("mixture of gaussians: probability %d must be in [0,1], got %v", i, p)
		}
		sum += p
	}
	if math.Abs(sum-1) > mogProbTolerance {
		return invalidf("mixture of gaussians: probabilities must sum to 1, got %v", sum)
	}
	return nil
}

// mogMix is a mixture in canonical form: the positive sensitivities in
// increasing order (equal ones merged) with their probabilities, and p0,
// the probability of sensitivity 0. Probabilities that sum to less than 1
// (rounding, within mogProbTolerance) give the rest to the largest
// sensitivity, and ones that sum to more are scaled down: both only make
// the mixture less private (docs/accountants.md#mixture-of-gaussians).
type mogMix struct {
	sigma float64
	c, p  []float64
	p0    float64
}

func newMogMix(e MixtureOfGaussians) mogMix {
	idx := make([]int, 0, len(e.Sensitivities))
	m := mogMix{sigma: e.StandardDeviation}
	for i, c := range e.Sensitivities {
		switch {
		case e.Probs[i] == 0:
		case c == 0:
			m.p0 += e.Probs[i]
		default:
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(e.Sensitivities[a], e.Sensitivities[b]) })
	sum := m.p0
	for _, i := range idx {
		c, p := e.Sensitivities[i], e.Probs[i]
		if n := len(m.c); n > 0 && m.c[n-1] == c {
			m.p[n-1] += p
		} else {
			m.c, m.p = append(m.c, c), append(m.p, p)
		}
		sum += p
	}
	switch n := len(m.c); {
	case n == 0:
	case sum > 1:
		m.p0 /= sum
		for i := range m.p {
			m.p[i] /= sum
		}
	case sum < 1:
		m.p[n-1] += 1 - sum
	}
	return m
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// key is the mixture's canonical text, "c:p,c:p" from the zero part up,
// every float written exactly (the PLD account's key and saved form).
func (m mogMix) key() string {
	var parts []string
	if m.p0 > 0 {
		parts = append(parts, "0:"+strconv.FormatFloat(m.p0, 'g', -1, 64))
	}
	for i := range m.c {
		parts = append(parts, strconv.FormatFloat(m.c[i], 'g', -1, 64)+":"+strconv.FormatFloat(m.p[i], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// parseMogMix reads key's form back (sigma given apart).
func parseMogMix(sigma float64, key string) (mogMix, error) {
	ev := MixtureOfGaussians{StandardDeviation: sigma}
	for _, f := range strings.Split(key, ",") {
		cs, ps, ok := strings.Cut(f, ":")
		c, err1 := strconv.ParseFloat(cs, 64)
		p, err2 := strconv.ParseFloat(ps, 64)
		if !ok || err1 != nil || err2 != nil {
			return mogMix{}, fmt.Errorf("mixture %q: each part must be sensitivity:probability", key)
		}
		ev.Sensitivities, ev.Probs = append(ev.Sensitivities, c), append(ev.Probs, p)
	}
	if err := ev.Validate(); err != nil {
		return mogMix{}, err
	}
	m := newMogMix(ev)
	if len(m.c) == 0 {
		return mogMix{}, fmt.Errorf("mixture %q: no positive sensitivity", key)
	}
	return m, nil
}

// lossCurve is one direction of a mechanism whose privacy loss L(x) is a
// decreasing function of its output x: what connectTheDots discretises.
type lossCurve interface {
	lossRange() (lo, hi float64)
	lossInverse(l float64) float64
	split(xa, xb, l0, l1, em float64) (a, b float64)
	massP(a, b float64) float64
	describe() string
}

func (g gaussianDirection) describe() string { return fmt.Sprintf("σ = %g, q = %g", g.sigma, g.q) }

// mogDirection is one direction of the mixture (remove: P = Σ p_i N(−c_i,
// σ²) vs Q = N(0, σ²); add: P = N(0, σ²) vs Q = Σ p_i N(c_i, σ²), the p0
// part at 0), as gaussianDirection is for the subsampled Gaussian, whose
// mixture is {0: 1−q, 1: q} at σ = the multiplier. With every c_i ≥ 0 the
// loss is decreasing in x: convex in remove (a log-sum-exp of affine
// functions), concave in add (its negative).
type mogDirection struct {
	mogMix
	remove bool
	logp   []float64 // log p_i
	logp0  float64   // log p0 (−Inf without a zero part)
}

func (m mogMix) direction(remove bool) mogDirection {
	d := mogDirection{mogMix: m, remove: remove, logp: make([]float64, len(m.p)), logp0: math.Inf(-1)}
	for i, p := range m.p {
		d.logp[i] = math.Log(p)
	}
	if m.p0 > 0 {
		d.logp0 = math.Log(m.p0)
	}
	return d
}

func (d mogDirection) describe() string {
	return fmt.Sprintf("the mixture σ = %g, %s", d.sigma, d.key())
}

// lossSlope is L(x) and L'(x): log-sum-exp over the parts of
// log p_i ∓ c_i(2x ± c_i)/(2σ²), anchored at its largest term.
func (d mogDirection) lossSlope(x float64) (l, slope float64) {
	s2 := d.sigma * d.sigma
	sign := 1.0 // add: +c_i(2x − c_i); remove: −c_i(2x + c_i)
	if d.remove {
		sign = -1
	}
	term := func(i int) float64 { c := d.c[i]; return d.logp[i] + sign*c*(2*x-sign*c)/(2*s2) }
	top := d.logp0
	for i := range d.c {
		top = max(top, term(i))
	}
	sum, sumC := 0.0, 0.0
	if d.p0 > 0 {
		sum = math.Exp(d.logp0 - top)
	}
	for i, c := range d.c {
		w := math.Exp(term(i) - top)
		sum += w
		sumC += w * c
	}
	l = top + math.Log(sum)
	slope = -sumC / sum / s2 // both directions: −E_w[c]/σ²
	if !d.remove {
		l = -l
	}
	return l, slope
}

func (d mogDirection) loss(x float64) float64 { l, _ := d.lossSlope(x); return l }

func (d mogDirection) cmax() float64 { return d.c[len(d.c)-1] }

// lossRange is the interval of losses carrying all but a negligible mass
// (beyond 14σ of every component), clipped to the loss's bound where a
// zero part bounds it.
func (d mogDirection) lossRange() (lo, hi float64) {
	const z = 14
	w := d.cmax() + z*d.sigma
	hi, lo = d.loss(-w), d.loss(w)
	if d.p0 > 0 {
		if d.remove {
			lo = math.Max(lo, d.logp0)
		} else {
			hi = math.Min(hi, -d.logp0)
		}
	}
	return lo, hi
}

// lossInverse is the x with L(x) = l (+Inf at or below L's infimum, −Inf at
// or above its supremum), by Newton's method from the side where it cannot
// overshoot: from the left in remove (L convex), from the right in add (L
// concave). The start bounds L by its largest-sensitivity term.
func (d mogDirection) lossInverse(l float64) float64 {
	s2 := d.sigma * d.sigma
	k := len(d.c) - 1
	c, lp := d.c[k], d.logp[k]
	var x float64
	if d.remove {
		if d.p0 > 0 && l <= d.logp0 {
			return math.Inf(1)
		}
		x = s2*(lp-l)/c - c/2 // L(x) ≥ this term = l
	} else {
		if d.p0 > 0 && l >= -d.logp0 {
			return math.Inf(-1)
		}
		x = s2*(-l-lp)/c + c/2 // L(x) ≤ −(this term) = l
	}
	for range 200 {
		v, slope := d.lossSlope(x)
		if !(slope < 0) {
			break
		}
		step := (v - l) / slope
		next := x - step
		if d.remove && !(next > x) || !d.remove && !(next < x) || next == x {
			break // converged: the step stopped moving towards the root
		}
		x = next
	}
	return x
}

// pdfP is the density of P, under which the loss is taken.
func (d mogDirection) pdfP(x float64) float64 {
	s := d.sigma
	phi := func(z float64) float64 { return math.Exp(-0.5*z*z) / (s * math.Sqrt(2*math.Pi)) }
	if !d.remove {
		return phi(x / s)
	}
	v := d.p0 * phi(x/s)
	for i, c := range d.c {
		v += d.p[i] * phi((x+c)/s)
	}
	return v
}

// mix is Σ p_i·normMass over the parts shifted by sign·c_i, plus p0's.
func (d mogDirection) mix(a, b, sign float64) float64 {
	s := d.sigma
	m := 0.0
	if d.p0 > 0 {
		m = d.p0 * normMass(a/s, b/s)
	}
	for i, c := range d.c {
		m += d.p[i] * normMass((a-sign*c)/s, (b-sign*c)/s)
	}
	return m
}

// massP and massQ are P(a < x < b) and Q(a < x < b).
func (d mogDirection) massP(a, b float64) float64 {
	if d.remove {
		return d.mix(a, b, -1)
	}
	return normMass(a/d.sigma, b/d.sigma)
}

func (d mogDirection) massQ(a, b float64) float64 {
	if d.remove {
		return normMass(a/d.sigma, b/d.sigma)
	}
	return d.mix(a, b, 1)
}

// split is splitInterval for the mixture, whose components sit within
// cmax of 0.
func (d mogDirection) split(xa, xb, l0, l1, em float64) (a, b float64) {
	ext := max(math.Abs(xa), math.Abs(xb)) + d.cmax() + d.sigma
	return splitInterval(d, d.sigma, ext, xa, xb, l0, l1, em)
}

// curve is one direction of a PLD step: the subsampled Gaussian, or the
// mixture its Mix names.
func (m pldMech) curve(remove bool) (lossCurve, error) {
	if m.Mix == "" {
		return gaussianDirection{q: m.Q, sigma: m.Sigma, remove: remove}, nil
	}
	mix, err := parseMogMix(m.Sigma, m.Mix)
	if err != nil {
		return nil, fmt.Errorf("pld: %w", err)
	}
	return mix.direction(remove), nil
}

// mogMech is the PLD step of a mixture event (nil ok: no loss at all,
// every sensitivity 0). Q is the probability of a positive sensitivity.
func mogMech(e MixtureOfGaussians) (pldMech, bool) {
	m := newMogMix(e)
	if len(m.c) == 0 {
		return pldMech{}, false
	}
	return pldMech{Q: 1 - m.p0, Sigma: m.sigma, Mix: m.key()}, true
}

// mogRDPReason is why the RDP accountant refuses a mixture of Gaussians.
const mogRDPReason = "no RDP bound of the mixture of Gaussians is implemented: the add direction has a closed form at integer orders, " +
	"but the remove direction, with the mixture in the denominator, has none, and dp_accounting's RDP accountant has none either; " +
	"the PLD accountant accounts it"
