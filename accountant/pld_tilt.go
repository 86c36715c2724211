package accountant

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The certified composition (docs/accountants.md#pld): the T-fold
// composition of a PLD is formed by FFT after an exponential tilt
// p(ℓ) ↦ p(ℓ)·e^{λℓ−K}, which moves the losses that decide δ at the
// queried ε into the bulk of the composed distribution, where the FFT's
// rounding is small against the masses. Untilting multiplies the result by
// e^{TK−λs}, which shrinks the rounding above ε instead of leaving it at
// 1e-16 of the largest bin. Every float error is bounded and added to the
// masses, so the δ(ε) read from the result is an upper bound on the
// discretised composition's.

// unitRoundoff is float64's unit roundoff, 2^−53.
const unitRoundoff = 0x1p-53

// fftErrorConst is c in the normwise error bound of a length-N float FFT,
// ‖fl(DFT x) − DFT x‖₂ ≤ c·⌈log₂N⌉·u·‖DFT x‖₂ (radix-2 analysis with
// accurate twiddles gives about 6; the mixed radices 2, 3, 4 and 5 of the
// real transform used here are covered by the margin, checked in
// pld_tilt_test.go against a high-precision composition).
const fftErrorConst = 16

// pldTiltLowTail is the tilted mass the window may leave below its bottom:
// it wraps onto the top (extra mass, so δ can only grow), and its untilted
// weight there is far below δ.
const pldTiltLowTail = 1e-14

// pldTiltWrap is the tilted mass allowed to wrap around the cyclic grid
// onto the losses at or above the target (counted there in full: looser,
// never smaller).
const pldTiltWrap = 1e-8

// ErrPLDUncertified is wrapped by the PLD's errors for queries it cannot
// certify (its rounding bound too large, or δ below the mass at +∞): the
// caller's bound must then come from another accountant.
var ErrPLDUncertified = errors.New("the PLD accountant cannot certify this query")

// tiltTerm is k compositions of one step's PLD (finite part p, mass at +∞
// p.inf).
type tiltTerm struct {
	p *pmf
	k int
}

// tiltedMean is Σ k·E_λ[L], the mean of the composition tilted by e^{λL}.
// The weights e^{λ(ℓ−top)} are formed by a running product from the top
// loss down, stopping below 2⁻¹⁰⁰⁰ before they reach the subnormals, whose
// products cost a hundred cycles each (the tilt needs no more: any λ gives
// a valid bound).
func tiltedMean(terms []tiltTerm, lambda float64) float64 {
	m := 0.0
	for _, t := range terms {
		p := t.p
		r := math.Exp(-lambda * p.h)
		s, sl, f := 0.0, 0.0, 1.0
		for i := len(p.p) - 1; i >= 0 && f >= 0x1p-1000; i-- {
			if v := p.p[i]; v != 0 {
				w := v * f
				s += w
				sl += w * float64(p.lo+i) * p.h
			}
			f *= r
		}
		if s > 0 {
			m += float64(t.k) * sl / s
		}
	}
	return m
}

// solveTilt returns λ ≥ 0 with the tilted composition's mean at target
// (λ = 0 when the mean is already above it). Any λ gives a valid bound;
// this one makes it tight at losses near target.
func solveTilt(terms []tiltTerm, target float64) float64 {
	if tiltedMean(terms, 0) >= target {
		return 0
	}
	lo, hi := 0.0, 1e-3
	for tiltedMean(terms, hi) < target {
		lo = hi
		hi *= 4
		if hi > 1e7 {
			return hi
		}
	}
	for range 40 {
		mid := (lo + hi) / 2
		if lo > 0 {
			mid = math.Sqrt(lo * hi)
		}
		if tiltedMean(terms, mid) < target {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-4*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// tilted returns p tilted by e^{λℓ−K} with K = log Σ p e^{λℓ} (its float
// value, used again when untilting), every mass rounded up by a bound on
// its float error so that the untilted input is at least p.
func tilted(p *pmf, lambda float64) (*pmf, float64) {
	top := float64(p.hi()) * p.h
	s := 0.0
	for i, v := range p.p {
		s += v * math.Exp(lambda*(float64(p.lo+i)*p.h-top))
	}
	k := lambda*top + math.Log(s)
	out := &pmf{h: p.h, lo: p.lo, p: make([]float64, len(p.p)), inf: p.inf}
	maxArg := 0.0
	for i, v := range p.p {
		if v == 0 {
			continue
		}
		arg := lambda*(float64(p.lo+i)*p.h) - k
		maxArg = max(maxArg, math.Abs(arg))
		out.p[i] = v * math.Exp(arg)
	}
	// exp's argument carries an error of a few u times |λℓ| + |K|, exp
	// and the product one u each.
	up := 1 + 8*unitRoundoff*(1+maxArg+math.Abs(k)+math.Abs(lambda*top))
	for i := range out.p {
		out.p[i] *= up
	}
	return out, k
}

// certifiedComposition returns the composition of the terms as a PLD whose
// every mass is at least the exact composition's (and at most 1), accurate
// at losses near target, with the mass above its top charged at +∞ when it
// exceeds tauHi. It fails with errPLDTooWide when the window does not fit
// the grid and ErrPLDUncertified when the rounding bound is too large.
func certifiedComposition(terms []tiltTerm, target, tauHi float64) (*pmf, error) {
	h := terms[0].p.h
	// Each step's rarest largest losses go to +∞ (pessimistic), as long
	// as all steps together move at most tauHi: their tilted mass would
	// otherwise form far modes (a step of loss 5 among 10⁶ of loss 10⁻⁸)
	// that the cyclic grid must hold without wrapping onto the target.
	terms = capTails(terms, tauHi)
	// Any λ gives a valid bound; cap it where the rounding of λℓ alone
	// (relative 8u·λ|ℓ| per step, rounded up in tilted) would loosen the
	// masses by more than 1e-6 over the steps.
	lambda := solveTilt(terms, target)
	for _, t := range terms {
		top := math.Max(math.Abs(float64(t.p.lo)), math.Abs(float64(t.p.hi()))) * h
		if c := 1e-6 / (8 * unitRoundoff * top * float64(max(t.k, 1))); lambda > c {
			lambda = c
		}
	}
	tt := make([]tiltTerm, len(terms))
	var g logMGF
	sumK := 0.0  // Σ k·K_t: log of the untilt factor at loss 0
	absK := 0.0  // Σ |k·K_t|, for the rounding of sumK
	keep := 0.0  // log P(no term reaches +∞)
	steps := 0.0 // Σ k
	var supLo, supHi float64
	for i, t := range terms {
		if t.p.h != h {
			return nil, fmt.Errorf("pld: composing grids of interval %g and %g", t.p.h, h)
		}
		p, k := tilted(t.p, lambda)
		tt[i] = tiltTerm{p, t.k}
		kf := float64(t.k)
		g = addScaledMGF(g, p.mgf(), kf)
		sumK += kf * k
		absK += math.Abs(kf * k)
		keep += kf * math.Log1p(-t.p.inf)
		steps += kf
		supLo += kf * float64(t.p.lo)
		supHi += kf * float64(t.p.hi())
	}
	if math.Abs(supLo) > 1<<53 || math.Abs(supHi) > 1<<53 {
		return nil, errPLDTooWide
	}
	// Top: the untilted mass above t is at most
	// e^{ΣkK − λt}·P_λ(L > t) ≤ e^{ΣkK − λt + G(θ) − θt} for θ ≥ 0 (θ = 0:
	// P_λ ≤ its total mass, about 1).
	logTau := math.Log(tauHi)
	tHi := math.Inf(1)
	g0 := 0.0
	for _, t := range tt {
		s := 0.0
		for _, v := range t.p.p {
			s += v
		}
		g0 += float64(t.k) * math.Log(s)
	}
	if lambda > 0 {
		tHi = (sumK + g0 - logTau) / lambda
	}
	for i, th := range chernoffLambdas {
		if v := (sumK + g.up[i] - logTau) / (lambda + th); v < tHi {
			tHi = v
		}
	}
	hi, cutHi := int(supHi), false
	if x := math.Ceil(tHi / h); x < supHi {
		hi, cutHi = int(max(x, supLo)), true
	}
	// Bottom: the tilted mass below t is at most e^{G_down(θ) + θt}.
	tLo := math.Inf(-1)
	for i, th := range chernoffLambdas {
		if v := -(g.down[i] - math.Log(pldTiltLowTail)) / th; v > tLo {
			tLo = v
		}
	}
	lo := int(supLo)
	if x := math.Floor(min(tLo, target-h) / h); x > supLo {
		lo = int(x)
	}
	if lo > hi {
		lo = hi
	}
	// The cyclic grid: mass above its top wraps onto its bottom. Below
	// target that is harmless; the tilted mass that would wrap onto target
	// or above (beyond target + size) must be small, as it is read there
	// at its full untilted weight. The window is then the whole grid.
	n := hi - lo + 1
	tUp := math.Inf(1)
	for i, th := range chernoffLambdas {
		tUp = min(tUp, (g.up[i]-math.Log(pldTiltWrap))/th)
	}
	if w := math.Ceil((tUp-target)/h) + 1; w > float64(n) && w+float64(lo) <= supHi {
		n = int(w)
	} else if w+float64(lo) > supHi {
		n = int(supHi) - lo + 1
	}
	if n > maxPLDPoints {
		return nil, errPLDTooWide
	}
	size := powerFFTSize(n)
	if hi2 := lo + size - 1; hi2 >= int(supHi) {
		hi, cutHi = int(supHi), false
	} else {
		hi, cutHi = hi2, true
	}
	n = hi - lo + 1
	seq, ebin, err := cyclicPowerBound(tt, size)
	if err != nil {
		return nil, err
	}
	// The untilt factor's exponent ΣkK − λℓ carries an error of a few u
	// times its terms' sizes; round it up by that.
	out := &pmf{h: h, lo: lo, p: make([]float64, n)}
	off := lo - int(supLo)
	for i := range out.p {
		l := float64(lo+i) * h
		arg := sumK - lambda*l
		argErr := 4 * unitRoundoff * (absK + float64(len(terms))*absK + math.Abs(lambda*l) + math.Abs(arg) + 1)
		v := seq[(off+i)%size] + ebin
		if !(v > 0) {
			continue
		}
		out.p[i] = min(1, v*math.Exp(arg+argErr)*(1+4*unitRoundoff))
	}
	out.trimZerosKeepLow()
	// +∞: each term's, and the mass above the window (its Chernoff bound,
	// doubled for the rounding of the log-MGFs it is computed from).
	out.inf = -math.Expm1(keep) * (1 + 1e-9)
	if cutHi {
		out.inf += 2 * math.Exp(sumK+min(g0-lambda*float64(hi)*h, minChernoff(g, lambda, float64(hi)*h)))
	}
	return out, nil
}

// capTails returns the terms with each one's largest losses moved to +∞,
// at most tau/(k·len(terms)) of its mass (summed upward-rounded), so that
// the composition moves at most tau.
func capTails(terms []tiltTerm, tau float64) []tiltTerm {
	out := make([]tiltTerm, len(terms))
	for i, t := range terms {
		budget := tau / (float64(max(t.k, 1)) * float64(len(terms)))
		p := t.p
		cut, s := len(p.p), 0.0
		for cut > 1 {
			v := (s + p.p[cut-1]) * (1 + float64(len(p.p))*unitRoundoff)
			if v > budget {
				break
			}
			s = v
			cut--
		}
		if cut == len(p.p) {
			out[i] = t
			continue
		}
		out[i] = tiltTerm{&pmf{h: p.h, lo: p.lo, p: p.p[:cut], inf: p.inf + s}, t.k}
	}
	return out
}

// minChernoff is min over θ of G_up(θ) − (λ+θ)t.
func minChernoff(g logMGF, lambda, t float64) float64 {
	best := math.Inf(1)
	for i, th := range chernoffLambdas {
		best = min(best, g.up[i]-(lambda+th)*t)
	}
	return best
}

// cyclicPowerBound composes the terms' (tilted) masses on a cyclic grid of
// size points (index r: loss index r + Σ k·lo): the product of their DFTs,
// each raised to its count, transformed back. It returns the normalised
// sequence and a bound on the absolute error of each of its entries against
// the exact cyclic composition of the terms (docs/accountants.md#pld):
//
//	forward:  ‖ĉ_t − c_t‖₂ ≤ γ√N‖x_t‖₂ =: D_t, with γ = c⌈log₂N⌉u;
//	powers:   |Π ĉ_t^k − Π c_t^k| ≤ B Σ k_t|ĉ_t − c_t|/M_t per frequency,
//	          M_t = S_t + D_t ≥ |c_t|, |ĉ_t| (S_t: x_t's mass), B = Π M_t^k;
//	          forming ĉ^k by exp/log/sincos: |ĉ|^k·(4u·k(|log|ĉ|| + π + 1) + 8u);
//	inverse:  ‖fl(IDFT ŷ) − IDFT ŷ‖₂ ≤ γ√N‖ŷ‖₂;
//
// and an entry's error is at most the 2-norm of the errors, divided by N.
func cyclicPowerBound(terms []tiltTerm, size int) ([]float64, float64, error) {
	fft := fourier.NewFFT(size)
	gamma := fftErrorConst * math.Ceil(math.Log2(float64(size))) * unitRoundoff
	sqN := math.Sqrt(float64(size))
	var coef []complex128
	var relErr []float64 // per frequency: relative error of forming the powers
	logB, sumKD := 0.0, 0.0
	for _, t := range terms {
		buf := make([]float64, size)
		for i, v := range t.p.p {
			buf[i%size] += v
		}
		// Folding adds rounding: round every sum up by it.
		folds := float64(len(t.p.p)/size + 2)
		s, s2 := 0.0, 0.0
		for i, v := range buf {
			v *= 1 + 2*folds*unitRoundoff
			buf[i] = v
			s += v
			s2 += v * v
		}
		nu := float64(size) * unitRoundoff
		s *= 1 + nu
		d := gamma * sqN * math.Sqrt(s2) * (1 + nu)
		m := s + d
		kf := float64(t.k)
		logB += kf * math.Log(m)
		sumKD += kf * d / m
		c := fft.Coefficients(nil, buf)
		if coef == nil {
			coef = make([]complex128, len(c))
			relErr = make([]float64, len(c))
			for i := range coef {
				coef[i] = 1
			}
		}
		for i, x := range c {
			if coef[i] == 0 {
				continue
			}
			a := cmplx.Abs(x)
			la := math.Log(a)
			lr := kf * la
			if !(lr > -745) {
				coef[i] = 0
				continue
			}
			sn, co := math.Sincos(kf * cmplx.Phase(x))
			mag := math.Exp(lr)
			coef[i] *= complex(mag*co, mag*sn)
			relErr[i] += 4*unitRoundoff*kf*(math.Abs(la)+math.Pi+1) + 12*unitRoundoff
		}
	}
	if logB > 1 {
		return nil, 0, fmt.Errorf("%w: the transforms' rounding grows by e^%.3g over the steps", ErrPLDUncertified, logB)
	}
	// Full-spectrum norms from the half spectrum: the interior
	// frequencies stand for two each.
	var y2, e2 float64
	for i, c := range coef {
		w := 2.0
		if i == 0 || (size%2 == 0 && i == len(coef)-1) {
			w = 1
		}
		a := cmplx.Abs(c)
		y2 += w * a * a
		e := a * relErr[i]
		e2 += w * e * e
	}
	yErr := math.Exp(logB)*sumKD + math.Sqrt(e2)
	seq := fft.Sequence(make([]float64, size), coef)
	inv := 1 / float64(size)
	maxAbs := 0.0
	for i := range seq {
		seq[i] *= inv
		maxAbs = max(maxAbs, math.Abs(seq[i]))
	}
	ebin := (gamma*math.Sqrt(y2)+yErr)/sqN*(1+4*unitRoundoff) + 2*unitRoundoff*maxAbs
	if math.IsNaN(ebin) || math.IsInf(ebin, 0) {
		return nil, 0, ErrPLDUncertified
	}
	return seq, ebin, nil
}

// std is the standard deviation of p's finite part, normalised.
func (m *pmf) std() float64 {
	s, sl, sll := 0.0, 0.0, 0.0
	for i, v := range m.p {
		l := float64(m.lo+i) * m.h
		s += v
		sl += v * l
		sll += v * l * l
	}
	if !(s > 0) {
		return 0
	}
	mean := sl / s
	return math.Sqrt(max(0, sll/s-mean*mean))
}
