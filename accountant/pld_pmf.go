package accountant

import (
	"errors"
	"math"
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

// logExpm1Plus is log(e^x − 1 + q) for q ∈ (0, 1], without overflow.
func logExpm1Plus(x, q float64) float64 {
	if x < 1 {
		return math.Log(math.Expm1(x) + q)
	}
	return x + math.Log1p((q-1)*math.Exp(-x))
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

// gridSpan is the number of grid points connectTheDots needs for c at
// interval h (a float: a tiny σ puts it beyond int).
func gridSpan(c lossCurve, h float64) float64 {
	lo, hi := c.lossRange()
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
func connectTheDots(g lossCurve, h float64) (*pmf, error) {
	lo, hi := g.lossRange()
	if span := gridSpan(g, h); !(span <= maxPLDPoints) {
		if math.IsNaN(span) || math.IsInf(span, 0) {
			return nil, invalidf("pld: the privacy loss of %s is beyond floating point", g.describe())
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

// split is splitInterval for the subsampled Gaussian, whose components sit
// at 0 and ∓1.
func (g gaussianDirection) split(xa, xb, l0, l1, em float64) (a, b float64) {
	ext := max(math.Abs(xa), math.Abs(xb), math.Abs(xa+1), math.Abs(xb+1)) + g.sigma
	return splitInterval(g, g.sigma, ext, xa, xb, l0, l1, em)
}

// densityCurve is what splitInterval reads of one direction of a PLD.
type densityCurve interface {
	pdfP(x float64) float64
	loss(x float64) float64
	massP(a, b float64) float64
	massQ(a, b float64) float64
}

// splitInterval returns the masses (a to l0, b to l1 = l0 + h) of the
// losses in [l0, l1], which are the x in [xa, xb]; em = e^h − 1, sigma the
// components' standard deviation and ext a bound on |x − mean| over the
// interval and every component, plus sigma. Where the densities hardly
// change over the interval (w·ext ≤ σ²) the split weight
// a(x) = (e^{l1−L(x)} − 1)/em is integrated by Gauss–Legendre, which has no
// cancellation; elsewhere the interval is wide and a follows from the
// masses, a = (Q(I)·e^{l1} − P(I))/em.
func splitInterval(c densityCurve, sigma, ext, xa, xb, l0, l1, em float64) (a, b float64) {
	if !(xb > xa) {
		return 0, 0
	}
	w := xb - xa
	if !math.IsInf(w, 0) && w*ext <= sigma*sigma {
		mid, half := xa+w/2, w/2
		for _, nw := range gauss8 {
			x := mid + half*nw[0]
			m := c.pdfP(x) * half * nw[1]
			wa := splitWeight(l1-c.loss(x), l1-l0, em)
			a += m * wa
			b += m * (1 - wa)
		}
		return a, b
	}
	// (Q·e^{l1} − P)/(e^h − 1) = (Q·e^{l0} − P·e^{−h})/(1 − e^{−h}), whose
	// exponentials stay finite on coarse grids of huge losses.
	pI, qI := c.massP(xa, xb), c.massQ(xa, xb)
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
		g.up[i] = l*float64(top)*m.h + math.Log(geomSum(m.p, r, true))
		g.down[i] = -l*float64(bot)*m.h + math.Log(geomSum(m.p, r, false))
	}
	return g
}

// geomSum is Σ_j p_j·r^j over p in order (reversed: p's last entry takes
// r⁰), for 0 < r ≤ 1 and masses p_j ≥ 0 summing to at most 2. It keeps
// eight partial sums so that the multiplications do not wait on each other,
// and once r^j falls below 2⁻¹⁰⁰⁰ it adds 2·r^j for all the rest instead of
// running r^j through the subnormals, which cost a hundred cycles each (the
// single running sum down to underflow made the log-MGFs most of a PLD
// query's time). The result stays an upper bound on the sum up to its
// rounding, which the log-MGFs' users allow for (they double the tail bounds
// computed from them).
func geomSum(p []float64, r float64, reversed bool) float64 {
	const tiny = 0x1p-1000
	n := len(p)
	f0 := 1.0
	f1 := r
	f2 := f1 * r
	f3 := f2 * r
	f4 := f3 * r
	f5 := f4 * r
	f6 := f5 * r
	f7 := f6 * r
	r8 := f7 * r
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	j := 0
	for ; j+8 <= n && f0 >= tiny; j += 8 {
		var b0, b1, b2, b3, b4, b5, b6, b7 float64
		if reversed {
			b := p[n-j-8 : n-j]
			b0, b1, b2, b3, b4, b5, b6, b7 = b[7], b[6], b[5], b[4], b[3], b[2], b[1], b[0]
		} else {
			b := p[j : j+8]
			b0, b1, b2, b3, b4, b5, b6, b7 = b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
		}
		s0 += b0 * f0
		s1 += b1 * f1
		s2 += b2 * f2
		s3 += b3 * f3
		s4 += b4 * f4
		s5 += b5 * f5
		s6 += b6 * f6
		s7 += b7 * f7
		f0 *= r8
		f1 *= r8
		f2 *= r8
		f3 *= r8
		f4 *= r8
		f5 *= r8
		f6 *= r8
		f7 *= r8
	}
	s := ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
	for f := f0; j < n; j++ {
		if f < tiny {
			return s + 2*f
		}
		if reversed {
			s += p[n-1-j] * f
		} else {
			s += p[j] * f
		}
		f *= r
	}
	return s
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

// powerFFTSize is the cyclic grid of a composition: the smallest 2^a,
// 5·2^a or 3·2^a ≥ n (sizes the FFT does fast).
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
