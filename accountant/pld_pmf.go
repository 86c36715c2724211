package accountant

import (
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// plmf is a discretised privacy-loss distribution: p[i] is the mass (under
// the first distribution of a dominating pair) of the loss (lo+i)·h, and inf
// the mass of loss +∞. Every operation on it is pessimistic: the ε(δ) it
// gives is never below that of the distribution it stands for.
type plmf struct {
	h   float64
	lo  int
	p   []float64
	inf float64
}

// maxPLDBins bounds the support of one distribution (memory and FFT size).
const maxPLDBins = 1 << 24

func (m *plmf) loss(i int) float64 { return float64(m.lo+i) * m.h }

// identityPLMF is the distribution of a mechanism that reveals nothing.
func identityPLMF(h float64) *plmf { return &plmf{h: h, p: []float64{1}} }

// stdNormalSF is P(Z > t) for a standard normal Z, with full relative
// precision in the upper tail.
func stdNormalSF(t float64) float64 { return 0.5 * math.Erfc(t/math.Sqrt2) }

// pldDirection is one of the two dominating pairs of a Poisson-subsampled
// Gaussian under add/remove: removeDir has P = (1−q)N(0,σ²)+qN(1,σ²),
// Q = N(0,σ²); addDir swaps the roles (Q the mixture).
type pldDirection int

const (
	removeDir pldDirection = iota
	addDir
)

// sgmDelta is the exact hockey-stick divergence δ(ε) = sup_S P(S) − e^ε Q(S)
// of the Poisson-subsampled Gaussian (sensitivity 1, noise σ, rate q) in
// direction dir. q = 1 is the plain Gaussian mechanism.
func sgmDelta(dir pldDirection, q, sigma, eps float64) float64 {
	s2 := sigma * sigma
	if dir == removeDir {
		// Loss L(x) = log(1−q+q·e^{(2x−1)/(2σ²)}) ≥ log(1−q).
		if eps <= math.Log1p(-q) {
			return -math.Expm1(eps)
		}
		a := math.Expm1(eps) + q // e^ε − 1 + q > 0
		x := s2*(math.Log(a)-math.Log(q)) + 0.5
		d := q*stdNormalSF((x-1)/sigma) - a*stdNormalSF(x/sigma)
		return math.Max(d, 0)
	}
	// Loss −L(x) ≤ −log(1−q); the loss exceeds ε where x < x'.
	if q < 1 && eps >= -math.Log1p(-q) {
		return 0
	}
	a := math.Expm1(-eps) + q // e^{−ε} − 1 + q > 0
	x := s2*(math.Log(a)-math.Log(q)) + 0.5
	e := math.Exp(eps)
	d := (1-e*(1-q))*stdNormalSF(-x/sigma) - q*e*stdNormalSF((1-x)/sigma)
	return math.Max(d, 0)
}

// sgmLossRange returns losses below and above which each tail of the
// noise has mass at most tail/2: the range the discretisation covers.
func sgmLossRange(dir pldDirection, q, sigma, tail float64) (lo, hi float64) {
	z := math.Sqrt2 * math.Erfcinv(tail) // P(Z > z) = tail/2
	loss := func(x float64) float64 {    // remove-direction loss at x
		u := (2*x - 1) / (2 * sigma * sigma)
		if q == 1 {
			return u
		}
		return logAdd(math.Log1p(-q), math.Log(q)+u)
	}
	xlo, xhi := -sigma*z, 1+sigma*z
	if dir == removeDir {
		return loss(xlo), loss(xhi)
	}
	return -loss(xhi), -loss(xlo)
}

// sgmPLMF discretises the Poisson-subsampled Gaussian in direction dir on
// the loss grid of interval h by connect-the-dots (Doroshenko et al. 2022):
// the discrete pair's δ(ε) equals the exact one at every grid point and
// interpolates it linearly in e^ε in between, which bounds it from above
// because δ is convex in e^ε. δ at the top grid point (the tail beyond it)
// becomes the mass at +∞.
func sgmPLMF(dir pldDirection, q, sigma, h, tail float64) (*plmf, error) {
	if q == 0 || math.IsInf(sigma, 1) {
		return identityPLMF(h), nil
	}
	elo, ehi := sgmLossRange(dir, q, sigma, tail)
	ilo, ihi := math.Floor(elo/h), math.Ceil(ehi/h)
	if !(ihi-ilo < maxPLDBins) {
		return nil, fmt.Errorf("pld: loss range [%.4g, %.4g] at interval %g needs more than %d bins (noise multiplier %v too small or interval too fine)", elo, ehi, h, maxPLDBins, sigma)
	}
	lo, n := int(ilo), int(ihi-ilo)+1
	if n < 2 {
		n = 2
	}
	delta := make([]float64, n)
	for i := range delta {
		delta[i] = sgmDelta(dir, q, sigma, float64(lo+i)*h)
	}
	// On [ε_i, ε_{i+1}] the discrete δ is A_i − B_i·e^ε with
	// B_i = Σ_{j>i} p_j e^{−ε_j}; matching both ends gives B_i, and
	// p_j = (B_{j−1} − B_j)·e^{ε_j}. Work with e^{ε−ε_i} to stay in range.
	em1 := math.Expm1(h)
	m := &plmf{h: h, lo: lo, p: make([]float64, n), inf: delta[n-1]}
	// b[i] = B_i·e^{ε_i}.
	b := make([]float64, n-1)
	for i := range b {
		b[i] = math.Max((delta[i]-delta[i+1])/em1, 0)
	}
	for j := 1; j < n-1; j++ {
		m.p[j] = math.Max(b[j-1]*math.Exp(h)-b[j], 0) // (B_{j−1} − B_j)e^{ε_j}
	}
	m.p[n-1] = b[n-2] * math.Exp(h)
	// The remaining mass sits at the bottom grid point: total mass is 1.
	var rest float64
	for _, v := range m.p[1:] {
		rest += v
	}
	m.p[0] = math.Max(1-m.inf-rest, 0)
	return m, nil
}

// smoothSize is the smallest 2^a·3^b·5^c ≥ n (fast FFT lengths).
func smoothSize(n int) int {
	best := 1
	for best < n {
		best *= 2
	}
	for p3 := 1; p3 < best; p3 *= 3 {
		for p35 := p3; p35 < best; p35 *= 5 {
			v := p35
			for v < n {
				v *= 2
			}
			if v < best {
				best = v
			}
		}
	}
	return best
}

// convolve composes two distributions (independent losses add) by FFT,
// then truncates tails of mass at most tail (pessimistically).
func convolve(a, b *plmf, tail float64) *plmf {
	n := len(a.p) + len(b.p) - 1
	out := &plmf{h: a.h, lo: a.lo + b.lo, inf: a.inf + b.inf - a.inf*b.inf}
	if len(a.p) == 1 || len(b.p) == 1 || int64(len(a.p))*int64(len(b.p)) < 1<<14 {
		out.p = make([]float64, n)
		for i, x := range a.p {
			for j, y := range b.p {
				out.p[i+j] += x * y
			}
		}
	} else {
		size := smoothSize(n)
		f := fourier.NewFFT(size)
		xa := make([]float64, size)
		copy(xa, a.p)
		ca := f.Coefficients(nil, xa)
		clear(xa)
		copy(xa, b.p)
		cb := f.Coefficients(nil, xa)
		for i := range ca {
			ca[i] *= cb[i]
		}
		f.Sequence(xa, ca)
		scale := 1 / float64(size)
		out.p = xa[:n]
		for i := range out.p {
			out.p[i] *= scale
		}
	}
	out.truncate(tail)
	return out
}

// truncate clamps negative rounding noise (its size goes to +∞), moves the
// top tail of mass ≤ tail to +∞ and the bottom tail of mass ≤ tail up to
// the lowest kept loss: both only raise losses.
func (m *plmf) truncate(tail float64) {
	for i, v := range m.p {
		if v < 0 {
			m.inf -= v
			m.p[i] = 0
		}
	}
	hi := len(m.p)
	var top float64
	for hi > 1 && top+m.p[hi-1] <= tail {
		top += m.p[hi-1]
		hi--
	}
	lo := 0
	var bot float64
	for lo < hi-1 && bot+m.p[lo] <= tail {
		bot += m.p[lo]
		lo++
	}
	m.inf += top
	p := m.p[lo:hi]
	p[0] += bot
	m.p = p
	m.lo += lo
}

// selfCompose returns the T-fold composition of m by FFT powering on a
// window of the sum's support chosen by Chernoff bounds: below the window
// the mass (≤ tail) wraps around to higher losses (pessimistic); above it
// the mass (≤ tail, by the bound) is added to +∞ as well as wrapping.
func (m *plmf) selfCompose(T int, tail float64) (*plmf, error) {
	switch {
	case T == 0:
		return identityPLMF(m.h), nil
	case T == 1:
		c := *m
		c.p = append([]float64(nil), m.p...)
		return &c, nil
	}
	out := &plmf{h: m.h, inf: -math.Expm1(float64(T) * math.Log1p(-m.inf))}
	// Chernoff window [a, b] (in loss units) for the sum of T finite losses.
	a, b, beta := m.chernoffWindow(T, tail)
	aIdx := int(math.Floor(a / m.h))
	bIdx := int(math.Ceil(b / m.h))
	if lo := T * m.lo; aIdx < lo {
		aIdx = lo
	}
	if hi := T * (m.lo + len(m.p) - 1); bIdx > hi {
		bIdx = hi
	}
	if bIdx-aIdx+1 > maxPLDBins {
		return nil, fmt.Errorf("pld: %d compositions need %d bins (more than %d); use a coarser interval", T, bIdx-aIdx+1, maxPLDBins)
	}
	size := smoothSize(max(bIdx-aIdx+1, len(m.p)))
	f := fourier.NewFFT(size)
	x := make([]float64, size)
	copy(x, m.p)
	c := f.Coefficients(nil, x)
	ft := complex(float64(T), 0)
	for i, z := range c {
		if z != 0 {
			c[i] = cmplx.Exp(ft * cmplx.Log(z))
		}
	}
	f.Sequence(x, c)
	scale := 1 / float64(size)
	out.p = make([]float64, size)
	shift := ((T*m.lo-aIdx)%size + size) % size
	for r := range out.p {
		out.p[r] = x[((r-shift)%size+size)%size] * scale
	}
	out.lo = aIdx
	out.inf += beta
	out.truncate(tail)
	return out, nil
}

// chernoffWindow returns losses a ≤ b with P(sum < a) ≤ tail and
// P(sum > b) ≤ beta ≤ tail for the sum of T independent finite losses of m,
// from min over t of M(t)^T·e^{−tb} (M the moment generating function).
func (m *plmf) chernoffWindow(T int, tail float64) (a, b, beta float64) {
	// log M(t) by Horner's rule on the uniform grid: for t > 0,
	// M(t) = e^{t·ε_top} Σ p_i x^{top−i} with x = e^{−th} < 1; for t < 0 the
	// mirror image from the bottom. No exponential per point.
	n := len(m.p)
	logM := func(t float64) float64 {
		x := math.Exp(-math.Abs(t) * m.h)
		var s float64
		if t > 0 {
			for _, v := range m.p {
				s = s*x + v
			}
			return t*m.loss(n-1) + math.Log(s)
		}
		for i := n - 1; i >= 0; i-- {
			s = s*x + m.p[i]
		}
		return t*m.loss(0) + math.Log(s)
	}
	ft, lt := float64(T), math.Log(tail)
	a, b = ft*m.loss(0), ft*m.loss(len(m.p)-1)
	beta = 0
	for k := -30; k <= 50; k++ {
		t := math.Pow(10, float64(k)/10) // 0.001 … 1e5
		if ub := (ft*logM(t) - lt) / t; ub < b {
			b = ub
			beta = tail
		}
		if lb := (lt - ft*logM(-t)) / t; lb > a {
			a = lb
		}
	}
	return a, b, beta
}

// epsilon is the smallest ε ≥ 0 with δ(ε) ≤ delta, +Inf when the mass at +∞
// exceeds delta. Between grid points δ(ε) = A − C·e^{ε−ε_i}; it is solved
// exactly there.
func (m *plmf) epsilon(delta float64) float64 {
	if m.inf > delta {
		return math.Inf(1)
	}
	eh := math.Exp(-m.h)
	A, C := m.inf, 0.0 // at ε_i: A = inf + Σ_{j>i} p_j, C = Σ_{j>i} p_j e^{ε_i−ε_j}
	for i := len(m.p) - 1; i >= 0; i-- {
		// Move from ε_i down to ε_{i−1}.
		A2 := A + m.p[i]
		C2 := (C + m.p[i]) * eh
		if A2-C2 > delta {
			// δ(ε) = A2 − C2·e^{ε−ε_{i−1}} = delta on [ε_{i−1}, ε_i].
			return math.Max(m.loss(i-1)+math.Log((A2-delta)/C2), 0)
		}
		A, C = A2, C2
	}
	return 0
}

// delta is δ(ε) = inf + Σ_{ε_j > ε} p_j (1 − e^{ε−ε_j}).
func (m *plmf) delta(eps float64) float64 {
	d := m.inf
	for i := len(m.p) - 1; i >= 0; i-- {
		l := m.loss(i)
		if l <= eps {
			break
		}
		d += m.p[i] * -math.Expm1(eps-l)
	}
	return math.Min(d, 1)
}
