package accountant

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// pmf is a discretised privacy loss distribution: mass p[i] at privacy loss
// (lo+i)·h, and mass inf at +∞. Every operation on it is pessimistic: mass
// only ever moves to larger losses (or is over-counted), so δ(ε) computed
// from it is an upper bound on the true one.
type pmf struct {
	h   float64
	lo  int
	p   []float64
	inf float64
}

// pldTailBound is the mass a composition's window may leave out on each
// side, by a Chernoff bound: the upper side's goes to +∞, the lower side's
// onto the window's lowest loss. It is charged once per composition, not
// per step, so the mass at +∞ does not grow with the number of steps.
const pldTailBound = 1e-18

// maxPLDPoints bounds every distribution's support (memory and time): an
// account whose distributions would need more points runs on a coarser grid
// (a valid, looser ε) instead.
const maxPLDPoints = 1 << 22

// errPLDTooWide says a distribution does not fit maxPLDPoints on this grid.
var errPLDTooWide = errors.New("pld: distribution wider than the grid allows")

// gaussianDirection is the hockey-stick curve δ(ε) of one direction of the
// Poisson-subsampled Gaussian (sensitivity 1, noise multiplier sigma,
// sampling rate q ∈ (0, 1]; q = 1 is the plain Gaussian mechanism), with
// the range of losses worth discretising.
type gaussianDirection struct {
	q, sigma float64
	remove   bool // remove: P = (1−q)N(0,σ²) + qN(−1,σ²) vs Q = N(0,σ²); add: P = N(0,σ²) vs Q = (1−q)N(0,σ²) + qN(1,σ²)
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// logNormCDF is log Φ(z), accurate where Φ(z) underflows.
func logNormCDF(z float64) float64 {
	if z > -30 {
		return math.Log(normCDF(z))
	}
	return logErfc(-z/math.Sqrt2) - math.Ln2
}

// logExpm1Plus is log(e^x − 1 + q) for q ∈ (0, 1], without overflow.
func logExpm1Plus(x, q float64) float64 {
	if x < 1 {
		return math.Log(math.Expm1(x) + q)
	}
	return x + math.Log1p((q-1)*math.Exp(-x))
}

// delta is the exact hockey-stick divergence δ(ε) = P(L > ε) − e^ε Q(L > ε).
// The privacy loss L(x) = log P(x)/Q(x) is decreasing in x in both
// directions, so {L > ε} = {x < x_ε}. Products of e^ε and a Gaussian tail
// are formed in logs: both under- and overflow at large ε.
func (g gaussianDirection) delta(eps float64) float64 {
	q, s := g.q, g.sigma
	if g.remove {
		// L(x) = log(1 − q + q·exp((−2x−1)/(2σ²))) > log(1−q).
		if q < 1 && eps <= math.Log1p(-q) {
			return -math.Expm1(eps)
		}
		le := logExpm1Plus(eps, q)
		x := -s*s*(le-math.Log(q)) - 0.5
		return math.Max(0, q*normCDF((x+1)/s)-math.Exp(le+logNormCDF(x/s)))
	}
	// add: L(x) = −log(1 − q + q·exp((2x−1)/(2σ²))) < −log(1−q).
	if q < 1 && eps >= -math.Log1p(-q) {
		return 0
	}
	x := s*s*(math.Log(math.Expm1(-eps)+q)-math.Log(q)) + 0.5
	lq := math.Log(q) + logNormCDF((x-1)/s)
	if q < 1 {
		lq = logAdd(math.Log1p(-q)+logNormCDF(x/s), lq)
	}
	return math.Max(0, normCDF(x/s)-math.Exp(eps+lq))
}

// loss is L(x), in logs so that a tiny σ does not overflow it.
func (g gaussianDirection) loss(x float64) float64 {
	q, s2 := g.q, g.sigma*g.sigma
	l1q := math.Inf(-1)
	if q < 1 {
		l1q = math.Log1p(-q)
	}
	if g.remove {
		return logAdd(l1q, math.Log(q)+(-2*x-1)/(2*s2))
	}
	return -logAdd(l1q, math.Log(q)+(2*x-1)/(2*s2))
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

// gridSpan is the number of grid points connectTheDots needs for g at
// interval h (a float: a tiny σ puts it beyond int).
func (g gaussianDirection) gridSpan(h float64) float64 {
	lo, hi := g.lossRange()
	return math.Ceil(hi/h) - math.Floor(lo/h) + 1
}

// connectTheDots discretises a PLD pessimistically on the grid ℓ_j = j·h
// (Doroshenko et al. 2022): the mass of every loss ℓ ∈ [ℓ_j, ℓ_{j+1}] is
// split between the two ends, a to ℓ_j and b to ℓ_{j+1}, keeping both the
// mass and E[e^{−L}] (a + b = 1, a·e^{−ℓ_j} + b·e^{−ℓ_{j+1}} = e^{−ℓ}).
// The result's δ-curve equals the true one at every grid point and is its
// chord in e^ε between them, above the true curve (convex in e^ε). The split
// is integrated directly over each interval (not differenced from the
// δ-curve, whose rounding would leave spurious mass of about 1e-16/h in the
// far tail, where a tilted composition reads it). Losses above the grid's
// top are the mass at +∞; below its bottom, rounded up onto it.
func connectTheDots(g gaussianDirection, h float64) (*pmf, error) {
	lo, hi := g.lossRange()
	if span := g.gridSpan(h); !(span <= maxPLDPoints) {
		if math.IsNaN(span) || math.IsInf(span, 0) {
			return nil, invalidf("pld: the privacy loss of σ = %g, q = %g is beyond floating point", g.sigma, g.q)
		}
		return nil, errPLDTooWide
	}
	j0, jN := int(math.Floor(lo/h)), int(math.Ceil(hi/h))
	if jN <= j0 {
		jN = j0 + 1
	}
	n := jN - j0 + 1
	out := &pmf{h: h, lo: j0, p: make([]float64, n)}
	xs := make([]float64, n) // x(ℓ_j), decreasing; ±Inf beyond L's range
	for j := range xs {
		xs[j] = g.lossInverse(float64(j0+j) * h)
	}
	em := math.Expm1(h)
	for j := 0; j < n-1; j++ {
		a, b := g.split(xs[j+1], xs[j], float64(j0+j)*h, float64(j0+j+1)*h, em)
		out.p[j] += a
		out.p[j+1] += b
	}
	// Below the bottom: onto it; above the top: +∞.
	out.p[0] += g.massP(xs[0], math.Inf(1))
	out.inf = g.massP(math.Inf(-1), xs[n-1])
	out.trimZeros()
	return out, nil
}

// lossInverse is the x with L(x) = l: +Inf at or below L's infimum, −Inf
// at or above its supremum.
func (g gaussianDirection) lossInverse(l float64) float64 {
	q, s2 := g.q, g.sigma*g.sigma
	if g.remove {
		if q < 1 && l <= math.Log1p(-q) {
			return math.Inf(1)
		}
		return -s2*(logExpm1Plus(l, q)-math.Log(q)) - 0.5
	}
	if q < 1 && l >= -math.Log1p(-q) {
		return math.Inf(-1)
	}
	return s2*(math.Log(math.Expm1(-l)+q)-math.Log(q)) + 0.5
}

// pdfP is the density of P, the distribution the loss is taken under.
func (g gaussianDirection) pdfP(x float64) float64 {
	s := g.sigma
	phi := func(z float64) float64 { return math.Exp(-0.5*z*z) / (s * math.Sqrt(2*math.Pi)) }
	if g.remove {
		if g.q == 1 {
			return phi((x + 1) / s)
		}
		return (1-g.q)*phi(x/s) + g.q*phi((x+1)/s)
	}
	return phi(x / s)
}

// normMass is Φ(b) − Φ(a) for a < b, from the nearer tail.
func normMass(a, b float64) float64 {
	if b <= 0 {
		return normCDF(b) - normCDF(a)
	}
	if a >= 0 {
		return normCDF(-a) - normCDF(-b)
	}
	return 1 - normCDF(a) - normCDF(-b)
}

// massP and massQ are P(a < x < b) and Q(a < x < b).
func (g gaussianDirection) massP(a, b float64) float64 {
	s := g.sigma
	if g.remove {
		m := g.q * normMass((a+1)/s, (b+1)/s)
		if g.q < 1 {
			m += (1 - g.q) * normMass(a/s, b/s)
		}
		return m
	}
	return normMass(a/s, b/s)
}

func (g gaussianDirection) massQ(a, b float64) float64 {
	s := g.sigma
	if g.remove {
		return normMass(a/s, b/s)
	}
	m := g.q * normMass((a-1)/s, (b-1)/s)
	if g.q < 1 {
		m += (1 - g.q) * normMass(a/s, b/s)
	}
	return m
}

// splitWeight is the share of a loss d = l1 − L below the upper end of an
// interval of length h that goes to its lower end, (e^d − 1)/(e^h − 1)
// (em = e^h − 1), in a form that does not overflow for huge h.
func splitWeight(d, h, em float64) float64 {
	if h < 30 {
		return min(1, max(0, math.Expm1(d)/em))
	}
	return min(1, max(0, math.Exp(d-h)*-math.Expm1(-d)/-math.Expm1(-h)))
}

// gauss8 are the nodes and weights of 8-point Gauss–Legendre on [−1, 1].
var gauss8 = [8][2]float64{
	{-0.9602898564975363, 0.1012285362903763}, {-0.7966664774136267, 0.2223810344533745},
	{-0.5255324099163290, 0.3137066458778873}, {-0.1834346424956498, 0.3626837833783620},
	{0.1834346424956498, 0.3626837833783620}, {0.5255324099163290, 0.3137066458778873},
	{0.7966664774136267, 0.2223810344533745}, {0.9602898564975363, 0.1012285362903763},
}

// split returns the masses (a to l0, b to l1 = l0 + h) of the losses in
// [l0, l1], which are the x in [xa, xb]; em = e^h − 1. Where the Gaussian
// hardly changes over the interval the split weight
// a(x) = (e^{l1−L(x)} − 1)/em is integrated by Gauss–Legendre, which has no
// cancellation; elsewhere the interval is wide and a follows from the
// masses, a = (Q(I)·e^{l1} − P(I))/em.
func (g gaussianDirection) split(xa, xb, l0, l1, em float64) (a, b float64) {
	if !(xb > xa) {
		return 0, 0
	}
	w := xb - xa
	ext := max(math.Abs(xa), math.Abs(xb), math.Abs(xa+1), math.Abs(xb+1)) + g.sigma
	if !math.IsInf(w, 0) && w*ext <= g.sigma*g.sigma {
		mid, half := xa+w/2, w/2
		for _, nw := range gauss8 {
			x := mid + half*nw[0]
			m := g.pdfP(x) * half * nw[1]
			wa := splitWeight(l1-g.loss(x), l1-l0, em)
			a += m * wa
			b += m * (1 - wa)
		}
		return a, b
	}
	// (Q·e^{l1} − P)/(e^h − 1) = (Q·e^{l0} − P·e^{−h})/(1 − e^{−h}), whose
	// exponentials stay finite on coarse grids of huge losses.
	pI, qI := g.massP(xa, xb), g.massQ(xa, xb)
	a = (math.Exp(math.Log(qI)+l0) - pI*math.Exp(l0-l1)) / -math.Expm1(l0-l1)
	a = min(pI, max(0, a))
	return a, pI - a
}

// trimZeros drops zero masses at both ends (clamping negative values, FFT
// noise, to 0 first; adding mass never lowers δ).
func (m *pmf) trimZeros() {
	m.trimZerosKeepLow()
	bot := 0
	for bot < len(m.p)-1 && m.p[bot] == 0 {
		bot++
	}
	m.p = m.p[bot:]
	m.lo += bot
}

// hi is the grid index of the largest finite loss.
func (m *pmf) hi() int { return m.lo + len(m.p) - 1 }

// chernoffLambdas is the grid of λ > 0 over which Chernoff bounds are
// minimised (any λ gives a valid bound; a denser grid a tighter window).
var chernoffLambdas = func() []float64 {
	var out []float64
	for l := 1e-4; l < 2e7; l *= 1.5 {
		out = append(out, l)
	}
	return out
}()

// logMGF holds log E[e^{λL}] (up) and log E[e^{−λL}] (down) over the finite
// part of a PLD at each λ of chernoffLambdas. The log-MGF of a composition
// is the sum of its parts'.
type logMGF struct{ up, down []float64 }

// mgf computes m's logMGF, each sum anchored at its largest term so that
// nothing overflows.
func (m *pmf) mgf() logMGF { return m.mgfAt(nil) }

// mgfAt is mgf at the λ indices in use only (all when nil); the others are
// +Inf, which window ignores (any λ gives a valid bound).
func (m *pmf) mgfAt(use []bool) logMGF {
	g := logMGF{up: make([]float64, len(chernoffLambdas)), down: make([]float64, len(chernoffLambdas))}
	top, bot := m.hi(), m.lo
	for i, l := range chernoffLambdas {
		if use != nil && !use[i] {
			g.up[i], g.down[i] = math.Inf(1), math.Inf(1)
			continue
		}
		r := math.Exp(-l * m.h)
		s, f := 0.0, 1.0
		for k := len(m.p) - 1; k >= 0 && f > 0; k-- {
			s += m.p[k] * f
			f *= r
		}
		g.up[i] = l*float64(top)*m.h + math.Log(s)
		s, f = 0.0, 1.0
		for k := 0; k < len(m.p) && f > 0; k++ {
			s += m.p[k] * f
			f *= r
		}
		g.down[i] = -l*float64(bot)*m.h + math.Log(s)
	}
	return g
}

// addScaledMGF returns a + k·b (nil a: k·b).
func addScaledMGF(a, b logMGF, k float64) logMGF {
	out := logMGF{up: make([]float64, len(b.up)), down: make([]float64, len(b.down))}
	for i := range b.up {
		out.up[i], out.down[i] = k*b.up[i], k*b.down[i]
		if a.up != nil {
			out.up[i] += a.up[i]
			out.down[i] += a.down[i]
		}
	}
	return out
}

// window returns the grid indices [lo, hi] outside of which a distribution
// with log-MGF g on grid h and support [supLo, supHi] has at most
// pldTailBound of its mass on each side (Chernoff: P(L ≥ t) ≤ e^{−λt}·E e^{λL}),
// and whether each side cuts into the support.
func window(g logMGF, h float64, supLo, supHi int) (lo, hi int, cutLo, cutHi bool) {
	return windowTail(g, h, supLo, supHi, pldTailBound)
}

// windowTail is window leaving out at most tail on each side.
func windowTail(g logMGF, h float64, supLo, supHi int, tail float64) (lo, hi int, cutLo, cutHi bool) {
	c := -math.Log(tail)
	tHi, tLo := math.Inf(1), math.Inf(-1)
	for i, l := range chernoffLambdas {
		if v := (g.up[i] + c) / l; v < tHi {
			tHi = v
		}
		if v := -(g.down[i] + c) / l; v > tLo {
			tLo = v
		}
	}
	lo, hi = supLo, supHi
	if x := math.Ceil(tHi / h); x < float64(supHi) && x >= float64(supLo) {
		hi, cutHi = int(x), true
	}
	if x := math.Floor(tLo / h); x > float64(supLo) && x <= float64(hi) {
		lo, cutLo = int(x), true
	}
	return lo, hi, cutLo, cutHi
}

// nearOptimal marks the λ indices within d of those where g's upper and
// lower Chernoff bounds are tightest.
func nearOptimal(g logMGF, d int) []bool {
	c := -math.Log(pldTailBound)
	iu, id := 0, 0
	for i, l := range chernoffLambdas {
		if (g.up[i]+c)/l < (g.up[iu]+c)/chernoffLambdas[iu] {
			iu = i
		}
		if -(g.down[i]+c)/l > -(g.down[id]+c)/chernoffLambdas[id] {
			id = i
		}
	}
	use := make([]bool, len(chernoffLambdas))
	for i := range use {
		use[i] = (i >= iu-d && i <= iu+d) || (i >= id-d && i <= id+d)
	}
	return use
}

// fftSize is the smallest 2^a·3^b·5^c ≥ n (sizes gonum's FFT does fast)
// with at most 13 factors of 4, 2, 3 and 5 (its factor table's limit).
func fftSize(n int) int {
	best := 1
	for best < n {
		best <<= 1
	}
	for p5, c5 := 1, 0; p5 < best; p5, c5 = p5*5, c5+1 {
		for p35, c3 := p5, 0; p35 < best; p35, c3 = p35*3, c3+1 {
			v, c2 := p35, 0
			for v < n {
				v <<= 1
				c2++
			}
			if c2/2+c2%2+c3+c5 <= 13 {
				best = min(best, v)
			}
		}
	}
	return best
}

// fftCache holds a step's discrete Fourier transform on one cyclic grid.
type fftCache struct {
	size int
	fft  *fourier.FFT
	coef []complex128
}

// powerFFTSize is the cyclic grid of a power: the smallest 2^a, 5·2^a or
// 3·2^a ≥ n (a coarse ladder, so that a growing window keeps its size for
// a while).
func powerFFTSize(n int) int {
	best := 1
	for best < n {
		best <<= 1
	}
	for _, f := range []int{5, 3} {
		v := f
		for v < n {
			v <<= 1
		}
		best = min(best, v)
	}
	return best
}

// powerDirectMax is the largest power formed by one transform. The
// transform's rounding (about 1e-16 of its largest coefficient) grows k-fold
// in the k-th power and comes back spread evenly over the grid, far into
// the tails, where δ is small: at k = 7e5 it moved ε(1e-8) by 1e-4. Above
// it the power is formed in two stages, (m^{k1})^{k2} ∗ m^r with k1 ≈ √k:
// the second stage's transform is of a spread distribution, whose
// coefficients away from zero frequency are small, so its error stays near
// the bulk.
const powerDirectMax = 2048

// selfComposeStaged is selfCompose, in two stages above powerDirectMax.
// c2 caches m's transform on the second stage's grid.
func (m *pmf) selfComposeStaged(k int, g logMGF, c, c2 *fftCache) (*pmf, error) {
	if k <= powerDirectMax {
		return m.selfCompose(k, g, c, pldTailBound)
	}
	k1 := int(math.Sqrt(float64(k)))
	k2, r := k/k1, k%k1
	// The first stage's tails are charged k2 times over: cut them k2
	// times finer.
	a, err := m.selfCompose(k1, g, c, pldTailBound/float64(k2))
	if err != nil {
		return nil, err
	}
	// a's own log-MGF, needed for the second stage's window, only at the
	// λ near the optimum for m^k (a full set costs more than the stage).
	ga := a.mgfAt(nearOptimal(addScaledMGF(logMGF{}, g, float64(k)), 2))
	terms := []powerTerm{{a, k2, ga, nil}}
	if r > 0 {
		terms = append(terms, powerTerm{m, r, g, c2})
	}
	return cyclicPower(terms, pldTailBound)
}

// powerTerm is m^k, m's log-MGF g, and a cache of m's transform (nil: none).
type powerTerm struct {
	m *pmf
	k int
	g logMGF
	c *fftCache
}

// selfCompose returns m composed with itself k ≥ 1 times, whose log-MGF is
// k·g (g is m's), leaving out at most tail on each side (see cyclicPower).
func (m *pmf) selfCompose(k int, g logMGF, c *fftCache, tail float64) (*pmf, error) {
	if k == 1 {
		return &pmf{h: m.h, lo: m.lo, p: append([]float64(nil), m.p...), inf: m.inf}, nil
	}
	return cyclicPower([]powerTerm{{m, k, g, c}}, tail)
}

// cyclicPower returns the composition of the terms' powers. It multiplies
// their discrete Fourier transforms, each raised to its power, on a cyclic
// grid as long as the Chernoff window of the result: what lies beyond the
// window wraps around onto it (extra mass, never lowering δ) and is also
// charged by its bound tail, at +∞ from above and at the window's bottom
// from below.
func cyclicPower(terms []powerTerm, tail float64) (*pmf, error) {
	var g logMGF
	var supLo, supHi, fLo, fHi float64
	h := terms[0].m.h
	for _, t := range terms {
		g = addScaledMGF(g, t.g, float64(t.k))
		supLo += float64(t.k) * float64(t.m.lo)
		supHi += float64(t.k) * float64(t.m.hi())
	}
	if math.Abs(supLo) > 1<<53 || math.Abs(supHi) > 1<<53 {
		return nil, errPLDTooWide
	}
	fLo, fHi = supLo, supHi
	lo, hi, cutLo, cutHi := windowTail(g, h, int(fLo), int(fHi), tail)
	n := hi - lo + 1
	if n > maxPLDPoints {
		return nil, errPLDTooWide
	}
	size := powerFFTSize(n)
	fft := fourier.NewFFT(size)
	var coef []complex128
	keepInf := 0.0 // log of the probability that no term reaches +∞
	for _, t := range terms {
		c := t.c
		if c == nil {
			c = &fftCache{}
		}
		if c.size != size {
			// The term's transform on this cyclic grid, kept for the
			// next power of the same step (the size moves in steps of
			// 20–33%, so a growing run reuses it for many evaluations).
			buf := make([]float64, size)
			for i, v := range t.m.p {
				buf[i%size] += v
			}
			c.size, c.fft = size, fft
			c.coef = fft.Coefficients(nil, buf)
		}
		kf := float64(t.k)
		if coef == nil {
			coef = make([]complex128, len(c.coef))
			for i := range coef {
				coef[i] = 1
			}
		}
		for i, x := range c.coef {
			if coef[i] == 0 {
				continue
			}
			lr := kf * math.Log(cmplx.Abs(x))
			if !(lr > -745) {
				coef[i] = 0
				continue
			}
			s, co := math.Sincos(kf * cmplx.Phase(x))
			mag := math.Exp(lr)
			coef[i] *= complex(mag*co, mag*s)
		}
		keepInf += kf * math.Log1p(-t.m.inf)
	}
	seq := fft.Sequence(make([]float64, size), coef)
	out := &pmf{h: h, lo: lo, p: make([]float64, n)}
	inv := 1 / float64(size)
	off := lo - int(fLo) // linear index of the window's bottom
	for i := range out.p {
		out.p[i] = seq[(off+i)%size] * inv
	}
	out.trimZerosKeepLow()
	if cutLo {
		out.p[0] += tail
	}
	out.inf = -math.Expm1(keepInf)
	if cutHi {
		out.inf += tail
	}
	return out, nil
}

// trimZerosKeepLow clamps negative values to 0 and trims zeros at the top
// only (the bottom index is where a lower tail is charged).
func (m *pmf) trimZerosKeepLow() {
	for i, v := range m.p {
		if !(v > 0) {
			m.p[i] = 0
		}
	}
	top := len(m.p)
	for top > 1 && m.p[top-1] == 0 {
		top--
	}
	m.p = m.p[:top]
}

// convolveCut returns the PLD of composing a and b (independent
// mechanisms), cut to the grid indices [lo, hi]: the finite parts'
// convolution by FFT, its mass above hi moved to +∞ and below lo onto lo,
// and the +∞ mass of either.
func convolveCut(a, b *pmf, lo, hi int) (*pmf, error) {
	if a.h != b.h {
		return nil, fmt.Errorf("pld: composing grids of interval %g and %g", a.h, b.h)
	}
	n := len(a.p) + len(b.p) - 1
	if n > 2*maxPLDPoints {
		return nil, errPLDTooWide
	}
	var full []float64
	if len(a.p) < 64 || len(b.p) < 64 {
		full = directConvolve(a.p, b.p)
	} else {
		full = fftConvolve(a.p, b.p)
	}
	base := a.lo + b.lo
	lo, hi = max(lo, base), min(hi, base+n-1)
	out := &pmf{h: a.h, lo: lo, p: make([]float64, hi-lo+1), inf: a.inf + b.inf - a.inf*b.inf}
	for j, v := range full {
		if !(v > 0) {
			continue
		}
		switch k := base + j; {
		case k > hi:
			out.inf += v
		case k < lo:
			out.p[0] += v
		default:
			out.p[k-lo] += v
		}
	}
	out.trimZerosKeepLow()
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

// fftConvolve is a ∗ b through real FFTs.
func fftConvolve(a, b []float64) []float64 {
	n := len(a) + len(b) - 1
	size := fftSize(n)
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
	// Going down from the top loss: a = inf + Σ_{i>k} p_i and
	// c = Σ_{i>k} p_i e^{ℓ_k−ℓ_i} (every exponent ≤ 0, so huge losses
	// neither over- nor underflow), so δ(ℓ_k) = a − c.
	a, c, emh := m.inf, 0.0, math.Exp(-m.h)
	for k := len(m.p) - 1; k >= -1; k-- {
		l := float64(m.lo+k) * m.h
		if a-c > delta {
			// Crossing in (ℓ_k, ℓ_{k+1}]: a − e^{ε−ℓ_k}·c = delta. On a
			// grid so coarse that c underflows, ℓ_{k+1} (where δ was
			// at most delta).
			return math.Max(0, math.Min(l+m.h, l+math.Log((a-delta)/c)))
		}
		if l <= 0 || k < 0 {
			return 0
		}
		a += m.p[k]
		c = emh * (c + m.p[k])
	}
	return 0
}
