package lattice

import (
	"math"
	"math/big"
	"math/bits"
	"sync"
)

// The fast exact sampler (docs/secure-noise.md, "The fast sampler"): the
// half-normal is cut into bins of width h = 2^-binBits; a bin i is drawn
// from a table with probability ∝ exp(−(ih)²/2), the density's value at the
// bin's left end, a uniform u-rand u places the point y = (i+u)·h in it,
// and y is accepted with probability exp(−(y² − (ih)²)/2), which is above
// 0.98 for every bin the table holds. The accepted y has density
// ∝ exp(−y²/2): the half-normal, exactly. The table comparison reads U's
// digits until they differ from F(i)'s (exact, like sampleK), and the
// acceptance is a von Neumann trial (like bern), so no probability is
// rounded anywhere and the output is round(s·N) exactly, as for sample.
const (
	binBits = 6                 // h = 2⁻⁶: 64 bins per unit of N
	binExp  = 2*binBits + 1     // h²/2 = 2^-binExp
	binMod  = 1 << binExp       // the acceptance's event denominator for bins i < 2^(binExp-1)
	binLast = 1<<(binExp-1) - 1 // the last bin whose acceptance is one trial
)

// binTable holds the first 64-bit digit of each F(j) = Σ_{i≤j} w_i / Σ_i w_i,
// w_i = exp(−(ih)²/2), up to the first that is all ones (about j = 600,
// N ≈ 9.4), and a guide: guide[t] is the first j whose digit is at least
// t·2^(64−guideBits), so a draw nearly always reads one entry (a data-
// dependent scan of several mispredicts a branch per draw).
// guideBits is the guide's index width: 4096 entries (8 KiB) against 587
// bins, so about 14% of draws land where a bin boundary is.
const guideBits = 12

var binTable struct {
	once  sync.Once
	word  []uint64
	guide [1 << guideBits]uint16
}

func binWords() []uint64 {
	binTable.once.Do(func() {
		const prec, jmax = 128, 800
		lo, hi := binCDFBracket(prec, jmax)
		var w []uint64
		for j := 0; j <= jmax; j++ {
			a, okA := digitOf(lo[j], 1)
			b, okB := digitOf(hi[j], 1)
			if !okA || !okB || a != b {
				a = binDigit(j, 1)
			}
			w = append(w, a)
			if a == math.MaxUint64 {
				break
			}
		}
		if w[len(w)-1] != math.MaxUint64 {
			panic("lattice: bin table does not reach the all-ones digit") // a constant: TestBinDigits
		}
		binTable.word = w
		j := 0
		for t := range binTable.guide {
			for w[j] < uint64(t)<<(64-guideBits) {
				j++
			}
			binTable.guide[t] = uint16(j)
		}
	})
	return binTable.word
}

// sampleBin returns bin j with probability F(j) − F(j−1): the first j with
// U < F(j) for the uniform u-rand e.w, whose first digit decides unless it
// equals F(j)'s (probability about 2⁻⁶⁴ per draw; binTie goes on).
func (e *exactNormal) sampleBin(r *words) int {
	w := binWords()
	u := &e.w
	u.reset()
	u0 := u.first(r)
	j := int(binTable.guide[u0>>(64-guideBits)])
	for w[j] < u0 { // ends: the last entry is all ones
		j++
	}
	if w[j] > u0 {
		return j
	}
	return e.binTie(j, r)
}

// binTie continues sampleBin when U's first digit equals F(j)'s: further
// digits of both decide, bin by bin, as in sampleK.
func (e *exactNormal) binTie(j int, r *words) int {
	u := &e.w
	w := binWords()
	for ; ; j++ {
		var f uint64
		if j < len(w) {
			f = w[j]
		} else {
			f = binDigit(j, 1)
		}
		if u0 := u.first(r); u0 != f {
			if u0 < f {
				return j
			}
			continue
		}
		for n := 2; ; n++ {
			if a, b := u.digit(n-1, r), binDigit(j, n); a != b {
				if a < b {
					return j
				}
				break
			}
		}
	}
}

// binAccept draws the u-rand e.x and returns whether y = (i + x)·h is
// accepted (see binAcceptDrawn) and an independent random sign.
func (e *exactNormal) binAccept(i int, r *words) (accept, negative bool) {
	e.x.reset()
	w := r.Uint64() // bit 63 is the sign, bits 0..binExp−1 the first event
	return e.binAcceptDrawn(i, w&(binMod-1), r), w>>63 == 1
}

// binAcceptDrawn returns whether y = (i + x)·h is accepted, for the u-rand
// e.x as it stands, with probability exp(−x(2i + x)·h²/2) =
// exp(−x(2i+x)/2^binExp). The probability is the product over R factors
// exp(−x·c), c = (2i + x)/(R·2^binExp) ≤ 1 (R = 1 for i ≤ binLast), each a
// von Neumann trial: step j succeeds when an event of probability c occurs
// (f uniform in [0, R·2^binExp): f < 2i, or f = 2i and a fresh u-rand below
// x) and a fresh u-rand falls below the previous one (below x for the
// first), so n steps succeed with probability (xc)ⁿ/n!, and the number of
// successes is even with probability exp(−xc). The event comes first
// because it nearly always fails (c ≤ 0.16 in the table), ending the trial
// after one word. f0, uniform in [0, 2^binExp) and independent of x, is the
// first event's draw when R = 1 (the caller's spare bits).
func (e *exactNormal) binAcceptDrawn(i int, f0 uint64, r *words) bool {
	R := 1 + i/(binMod/2)
	m, twoI := uint64(R)*binMod, uint64(2*i)
	first := R == 1
	for range R {
		n, z, p := 0, &e.u1, &e.x
		for {
			var f uint64
			if first {
				f, first = f0, false
			} else {
				f = r.Uint64N(m)
			}
			if f > twoI {
				break
			}
			if f == twoI {
				e.w.reset()
				if !less(&e.w, &e.x, r) {
					break
				}
			}
			z.reset()
			if !less(z, p, r) {
				break
			}
			n++
			if n == 1 {
				p = &e.u2
			}
			p, z = z, p
		}
		if n%2 == 1 {
			return false
		}
	}
	return true
}

// spareBits is how many low bits of the second word of a draw carry the
// sign and the acceptance's first event; its other 64 − spareBits bits are
// the first bits of x.
const spareBits = 1 + binExp

// sample returns round(s·N) for N ~ N(0, 1), exactly; binScale is s·h.
// An attempt is rejected with probability below 0.02 (0.006 on average).
//
// A draw takes two words in the common case: one picks the bin
// (sampleBin's comparison), the other holds the sign (bit 0), the
// acceptance's first event (bits 1..binExp) and x's first 64 − spareBits
// bits. When the event fails at once (probability above 0.95) y is
// accepted, and round(s·h·(i + x)) is nearly always decided by those bits
// of x alone (undecided with probability about s·h·2^(spareBits−64));
// otherwise x's first 64-bit digit is completed with spareBits fresh bits
// and binAcceptDrawn and round go on from it. Every bit used is a fresh
// uniform bit used once, so this is the algorithm of binAccept and round
// (the two words are taken together, before a tie's further digits of U,
// which are as fresh).
func (e *exactNormal) sample(binScale scale, r *words) int64 {
	tab := e.table()
	for {
		var u0, a uint64
		if r.i+2 <= len(r.buf) { // words' Uint64 twice, inline
			u0, a = r.buf[r.i], r.buf[r.i+1]
			r.i += 2
		} else {
			u0, a = r.Uint64(), r.Uint64()
		}
		i := int(binTable.guide[u0>>(64-guideBits)])
		for tab[i] < u0 { // ends: the last entry is all ones
			i++
		}
		if tab[i] == u0 {
			e.w.start(u0)
			i = e.binTie(i, r)
		}
		f := a >> 1 & (binMod - 1)
		var m int64
		if i <= binLast && f > uint64(2*i) {
			v, ok := binScale.roundTop(i, a>>spareBits)
			if !ok {
				e.x.start(completeTop(a, r))
				v = e.round(binScale, i, r)
			}
			m = v
		} else {
			e.x.start(completeTop(a, r))
			if !e.binAcceptDrawn(i, f, r) {
				continue
			}
			m = e.round(binScale, i, r)
		}
		if a&1 == 1 {
			m = -m
		}
		return m
	}
}

// completeTop is x's first 64-bit digit: the top 64 − spareBits bits of
// the draw's second word a, and spareBits fresh ones.
func completeTop(a uint64, r *words) uint64 {
	const low = 1<<spareBits - 1
	return a&^low | r.Uint64()&low
}

// roundTop returns floor(s·(k + x) + ½) when the top 64 − spareBits bits t
// of x decide it, as round does for a whole digit: x ∈ [t, t+1)·2^(spareBits−64),
// so the value lies in [L, L + a·2^spareBits)·2^(e−64n) with
// L = a·(k·2⁶⁴ + t·2^spareBits) + 2^(sh−1).
func (sc scale) roundTop(k int, t uint64) (int64, bool) {
	sh := 64 - sc.e
	if k >= 1<<10 || sh <= 0 || sh >= 127 {
		return 0, false
	}
	hi, lo := bits.Mul64(sc.a, t<<spareBits)
	hi += sc.a * uint64(k) // below 2⁶³, as in round
	ph, pl := pow2(sh - 1)
	hi, lo = add128(hi, lo, ph, pl)
	h2, l2 := add128(hi, lo, sc.a>>(64-spareBits), sc.a<<spareBits)
	l2, borrow := bits.Sub64(l2, 1, 0)
	h2 -= borrow
	if v, w := shr128(hi, lo, sh), shr128(h2, l2, sh); v == w && v < 1<<62 {
		return int64(v), true
	}
	return 0, false
}

// table returns the bin table, kept by the sampler after the first call
// (binWords' sync.Once costs a few ns per draw).
func (e *exactNormal) table() []uint64 {
	if e.tab == nil {
		e.tab = binWords()
	}
	return e.tab
}

// binScaleOf returns the scale the sampler needs for noise std s: s·h,
// exact (h is a power of two).
func binScaleOf(s float64) scale { return newScale(math.Ldexp(s, -binBits)) }

// binDigit returns the n-th 64-bit digit (n ≥ 1) of F(j), raising the
// precision of binCDFBracket until both ends of the bracket agree on the
// first 64n bits (which ends unless F(j) is a dyadic rational; it is
// needed with probability about 2⁻⁶⁴ per draw).
func binDigit(j, n int) uint64 {
	for prec := uint(64*n + 64); ; prec += 64 {
		lo, hi := binCDFBracket(prec, j)
		a, okA := digitOf(lo[j], n)
		b, okB := digitOf(hi[j], n)
		if okA && okB && a == b {
			return a
		}
	}
}

// digitOf returns the n-th 64-bit digit of x ∈ [0, 1) and whether x < 1
// (an upper bound of F(j) may reach 1).
func digitOf(x *big.Float, n int) (uint64, bool) {
	if x.Cmp(big.NewFloat(1)) >= 0 {
		return 0, false
	}
	v, _ := new(big.Float).SetMantExp(x, 64*n).Int(nil) // floor: x ≥ 0
	return v.Uint64(), true                             // the low 64 bits
}

// binCDFBracket returns lower and upper bounds of F(j) for j = 0 … jmax,
// F(j) = Σ_{i≤j} c^(i²) / Σ_{i≥0} c^(i²), c = exp(−2^-binExp), with about
// prec correct bits: c is bracketed by rationals (expNegBracket), every
// operation on positive numbers rounds toward −∞ for the lower bound and
// +∞ for the upper, the weights c^(i²) run up to J with
// c^((J+1)²) < 2^-(prec+16), and the rest of the total is bounded by the
// geometric tail c^((J+1)²)/(1 − c^(2J+3)) (the gaps between squares
// grow). F = A/(A + B) with A the first j+1 weights and B the others is
// increasing in A and decreasing in B, so A_L/(A_L + B_H) ≤ F ≤
// A_H/(A_H + B_L).
func binCDFBracket(prec uint, jmax int) (lo, hi []*big.Float) {
	wp := prec + 64
	down := func() *big.Float { return new(big.Float).SetPrec(wp).SetMode(big.ToNegativeInf) }
	up := func() *big.Float { return new(big.Float).SetPrec(wp).SetMode(big.ToPositiveInf) }
	cLr, cHr := expNegBracket(binExp, int(wp)+8)
	cL, cH := down().SetRat(cLr), up().SetRat(cHr)
	J := jmax + 2
	for float64((J+1)*(J+1))*math.Ldexp(math.Log2E, -binExp) < float64(prec+16) {
		J++
	}
	// Weights c^(i²) for i ≤ J+1 by p_{i+1} = p_i·q_i, q_{i+1} = q_i·c².
	pL, pH := make([]*big.Float, J+2), make([]*big.Float, J+2)
	qL, qH := down().Set(cL), up().Set(cH)
	c2L, c2H := down().Mul(cL, cL), up().Mul(cH, cH)
	pL[0], pH[0] = down().SetInt64(1), up().SetInt64(1)
	for i := 0; i <= J; i++ {
		pL[i+1], pH[i+1] = down().Mul(pL[i], qL), up().Mul(pH[i], qH)
		qL.Mul(qL, c2L)
		qH.Mul(qH, c2H)
	}
	// qH is now an upper bound of c^(2J+3).
	tail := up().Quo(pH[J+1], down().Sub(down().SetInt64(1), qH))
	// Suffix sums B(j) = Σ_{i>j} w_i: lower without the tail, upper with it.
	bL, bH := make([]*big.Float, J+1), make([]*big.Float, J+1)
	sL, sH := down(), up().Set(tail)
	for j := J; j >= 0; j-- {
		bL[j], bH[j] = down().Set(sL), up().Set(sH)
		sL.Add(sL, pL[j])
		sH.Add(sH, pH[j])
	}
	aL, aH := down(), up()
	for j := 0; j <= jmax; j++ {
		aL.Add(aL, pL[j])
		aH.Add(aH, pH[j])
		lo = append(lo, down().Quo(aL, up().Add(aL, bH[j])))
		hi = append(hi, up().Quo(aH, down().Add(aH, bL[j])))
	}
	return lo, hi
}

// expNegBracket returns rationals lo ≤ exp(−2⁻ᵉ) ≤ hi with hi − lo ≤
// 2^−prec: consecutive partial sums of the alternating series
// Σ_j (−2⁻ᵉ)ʲ/j!, whose terms decrease in magnitude.
func expNegBracket(e, prec int) (*big.Rat, *big.Rat) {
	eps := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(prec)))
	x := new(big.Rat).SetFrac(big.NewInt(-1), new(big.Int).Lsh(big.NewInt(1), uint(e)))
	sum, term := big.NewRat(1, 1), big.NewRat(1, 1)
	for j := int64(1); ; j++ {
		term.Mul(term, x)
		term.Quo(term, big.NewRat(j, 1))
		prev := new(big.Rat).Set(sum)
		sum.Add(sum, term)
		if new(big.Rat).Abs(term).Cmp(eps) <= 0 {
			if prev.Cmp(sum) > 0 {
				return sum, prev
			}
			return prev, sum
		}
	}
}
