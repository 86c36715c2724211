package accountant

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// pmf is a discretised privacy loss distribution: mass p[i] at privacy loss
// (lo+i)·h, and mass inf at +∞. Every operation on it is pessimistic: mass
// only ever moves to larger losses, so δ(ε) computed from it is an upper
// bound on the true one.
type pmf struct {
	h   float64
	lo  int
	p   []float64
	inf float64
}

// pldTail is the mass a truncation may move per operation (to +∞ from the
// top, onto the lowest kept loss from the bottom).
const pldTail = 1e-14

// maxPLDPoints bounds a PMF's support (memory and time).
const maxPLDPoints = 1 << 24

// gaussianDirection is the hockey-stick curve δ(ε) of one direction of the
// Poisson-subsampled Gaussian (sensitivity 1, noise multiplier sigma,
// sampling rate q ∈ (0, 1]; q = 1 is the plain Gaussian mechanism), with
// the range of losses worth discretising.
type gaussianDirection struct {
	q, sigma float64
	remove   bool // remove: P = (1−q)N(0,σ²) + qN(−1,σ²) vs Q = N(0,σ²); add: P = N(0,σ²) vs Q = (1−q)N(0,σ²) + qN(1,σ²)
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// delta is the exact hockey-stick divergence δ(ε) = P(L > ε) − e^ε Q(L > ε).
// The privacy loss L(x) = log P(x)/Q(x) is decreasing in x in both
// directions, so {L > ε} = {x < x_ε}.
func (g gaussianDirection) delta(eps float64) float64 {
	q, s := g.q, g.sigma
	if g.remove {
		// L(x) = log(1 − q + q·exp((−2x−1)/(2σ²))) > log(1−q).
		if q < 1 && eps <= math.Log1p(-q) {
			return -math.Expm1(eps)
		}
		x := -s*s*(math.Log(math.Expm1(eps)+q)-math.Log(q)) - 0.5
		return math.Max(0, q*normCDF((x+1)/s)-(math.Expm1(eps)+q)*normCDF(x/s))
	}
	// add: L(x) = −log(1 − q + q·exp((2x−1)/(2σ²))) < −log(1−q).
	if q < 1 && eps >= -math.Log1p(-q) {
		return 0
	}
	x := s*s*(math.Log(math.Expm1(-eps)+q)-math.Log(q)) + 0.5
	return math.Max(0, normCDF(x/s)-math.Exp(eps)*((1-q)*normCDF(x/s)+q*normCDF((x-1)/s)))
}

// loss is L(x).
func (g gaussianDirection) loss(x float64) float64 {
	q, s2 := g.q, g.sigma*g.sigma
	if g.remove {
		return math.Log(1 - q + q*math.Exp((-2*x-1)/(2*s2)))
	}
	return -math.Log(1 - q + q*math.Exp((2*x-1)/(2*s2)))
}

// lossRange is the interval of losses carrying all but a negligible mass
// (tails beyond 14σ of either component: < 1e-44).
func (g gaussianDirection) lossRange() (lo, hi float64) {
	const z = 14
	xlo, xhi := -1-z*g.sigma, 1+z*g.sigma
	hi, lo = g.loss(xlo), g.loss(xhi)
	if g.remove && g.q < 1 {
		lo = math.Max(lo, math.Log1p(-g.q))
	}
	if !g.remove && g.q < 1 {
		hi = math.Min(hi, -math.Log1p(-g.q))
	}
	return lo, hi
}

// connectTheDots discretises a PLD given its hockey-stick curve (Doroshenko
// et al. 2022): masses on the grid ℓ_j = j·h whose δ-curve equals the true
// one at every grid point and, between grid points, is its chord in e^ε —
// above the true curve, which is convex in e^ε. So the discretisation is
// pessimistic without rounding every loss up a whole interval.
func connectTheDots(g gaussianDirection, h float64) (*pmf, error) {
	lo, hi := g.lossRange()
	// Check the size in floating point: a tiny σ puts the range beyond int.
	if span := math.Ceil(hi/h) - math.Floor(lo/h) + 1; !(span <= maxPLDPoints) {
		return nil, invalidf("pld: %g grid points for σ = %g, q = %g at interval %g (a coarser interval is needed)", span, g.sigma, g.q, h)
	}
	j0, jN := int(math.Floor(lo/h)), int(math.Ceil(hi/h))
	if jN <= j0 {
		jN = j0 + 1
	}
	if jN-j0+1 > maxPLDPoints {
		return nil, invalidf("pld: %d grid points for σ = %g, q = %g at interval %g (a coarser interval is needed)", jN-j0+1, g.sigma, g.q, h)
	}
	n := jN - j0 + 1
	d := make([]float64, n)
	for j := range d {
		d[j] = g.delta(float64(j0+j) * h)
	}
	// slope[j] = (D_j − D_{j+1}) / (e^{ℓ_{j+1}} − e^{ℓ_j}) = Σ_{i>j} p_i e^{−ℓ_i}.
	slope := make([]float64, n) // slope[n−1] = 0: no finite mass above the top
	for j := 0; j < n-1; j++ {
		lj := float64(j0+j) * h
		den := math.Exp(lj) * math.Expm1(h)
		slope[j] = math.Max(0, (d[j]-d[j+1])/den)
	}
	out := &pmf{h: h, lo: j0, p: make([]float64, n), inf: d[n-1]}
	total := out.inf
	for j := n - 1; j >= 1; j-- {
		v := math.Exp(float64(j0+j)*h) * (slope[j-1] - slope[j])
		if v < 0 { // rounding noise where the curve is numerically flat
			v = 0
		}
		out.p[j] = v
		total += v
	}
	// The lowest point takes the rest: the mass of every loss at or below
	// it, rounded up to it.
	out.p[0] = math.Max(0, 1-total)
	if total > 1 {
		// Numerical excess: remove it from the lowest losses first (moving
		// mass up keeps the result pessimistic only when nothing is lost
		// from the top).
		excess := total - 1
		for j := 1; j < n && excess > 0; j++ {
			take := math.Min(out.p[j], excess)
			out.p[j] -= take
			excess -= take
		}
	}
	out.truncate()
	return out, nil
}

// truncate drops negligible tails: the top's mass goes to +∞, the bottom's
// onto the lowest kept point; negative values (FFT noise) become 0.
func (m *pmf) truncate() {
	for i, v := range m.p {
		if v < 0 || math.IsNaN(v) {
			m.p[i] = 0
		}
	}
	top, acc := len(m.p), 0.0
	for top > 1 && acc+m.p[top-1] <= pldTail {
		top--
		acc += m.p[top]
	}
	m.inf += acc
	bot, low := 0, 0.0
	for bot < top-1 && low+m.p[bot] <= pldTail {
		low += m.p[bot]
		bot++
	}
	m.p[bot] += low
	m.p = m.p[bot:top]
	m.lo += bot
}

// convolve returns the PLD of composing a and b (independent mechanisms):
// the convolution of the finite parts by FFT, and the +∞ mass of either.
func convolve(a, b *pmf) (*pmf, error) {
	if a.h != b.h {
		return nil, fmt.Errorf("pld: composing grids of interval %g and %g", a.h, b.h)
	}
	n := len(a.p) + len(b.p) - 1
	if n > maxPLDPoints {
		return nil, invalidf("pld: composition needs %d grid points; use a coarser interval", n)
	}
	out := &pmf{h: a.h, lo: a.lo + b.lo, inf: a.inf + b.inf - a.inf*b.inf}
	if len(a.p) < 64 || len(b.p) < 64 {
		out.p = directConvolve(a.p, b.p)
	} else {
		out.p = fftConvolve(a.p, b.p)
	}
	out.truncate()
	return out, nil
}

func directConvolve(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		if x == 0 {
			continue
		}
		for j, y := range b {
			out[i+j] += x * y
		}
	}
	return out
}

// fftConvolve is a ∗ b through real FFTs of a power-of-two length.
func fftConvolve(a, b []float64) []float64 {
	n := len(a) + len(b) - 1
	size := 1
	for size < n {
		size <<= 1
	}
	fft := fourier.NewFFT(size)
	pa := make([]float64, size)
	copy(pa, a)
	ca := fft.Coefficients(nil, pa)
	clear(pa)
	copy(pa, b)
	cb := fft.Coefficients(nil, pa)
	for i := range ca {
		ca[i] *= cb[i]
	}
	seq := fft.Sequence(pa, ca)
	inv := 1 / float64(size)
	out := make([]float64, n)
	for i := range out {
		out[i] = seq[i] * inv
	}
	return out
}

// power is m composed with itself k ≥ 1 times, by repeated squaring.
func (m *pmf) power(k int) (*pmf, error) {
	var acc *pmf
	base := m
	for k > 0 {
		var err error
		if k&1 == 1 {
			if acc == nil {
				acc = base
			} else if acc, err = convolve(acc, base); err != nil {
				return nil, err
			}
		}
		k >>= 1
		if k > 0 {
			if base, err = convolve(base, base); err != nil {
				return nil, err
			}
		}
	}
	return acc, nil
}

// deltaAt is δ(ε) = inf + Σ_{ℓ_i > ε} p_i (1 − e^{ε−ℓ_i}).
func (m *pmf) deltaAt(eps float64) float64 {
	d := m.inf
	for i := len(m.p) - 1; i >= 0; i-- {
		l := float64(m.lo+i) * m.h
		if l <= eps {
			break
		}
		d += m.p[i] * -math.Expm1(eps-l)
	}
	return math.Min(1, d)
}

// epsilonAt is the smallest ε ≥ 0 with δ(ε) ≤ delta (+Inf when the +∞ mass
// alone exceeds delta). Between grid points δ(ε) = A − e^ε·B, solved
// exactly in the interval where it crosses delta.
func (m *pmf) epsilonAt(delta float64) float64 {
	if m.inf > delta {
		return math.Inf(1)
	}
	a, b := m.inf, 0.0 // A = inf + Σ_{i>k} p_i, B = Σ_{i>k} p_i e^{−ℓ_i}
	for k := len(m.p) - 1; k >= 0; k-- {
		l := float64(m.lo+k) * m.h
		// δ at ℓ_k (the masses above k are in a, b).
		if dk := a - math.Exp(l)*b; dk > delta {
			// Crossing in (ℓ_k, ℓ_{k+1}]: A − e^ε B = delta.
			eps := math.Log((a - delta) / b)
			return math.Max(0, eps)
		}
		if l <= 0 {
			return 0
		}
		a += m.p[k]
		b += m.p[k] * math.Exp(-l)
	}
	if d := a - b; d > delta { // below the lowest loss: δ(ε) = A − e^ε B at ε = 0
		return math.Max(0, math.Log((a-delta)/b))
	}
	return 0
}
