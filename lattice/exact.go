package lattice

import (
	"math"
	"math/big"
	"math/bits"
)

// urand is a uniform deviate in (0, 1) whose binary digits are drawn only
// when a comparison needs them, 64 at a time (Karney's "u-rand"): digit 0
// holds bits 1–64 after the binary point, digit 1 bits 65–128, and so on.
// The first digits live in the struct, so that the common case (one digit
// decides) is a few instructions and no slice. (Drawing 16 or 8 bits at a
// time from a bit pool uses fewer ChaCha8 words but measured slower.)
type urand struct {
	n    int
	d    [2]uint64
	more []uint64
}

func (u *urand) reset() { u.n = 0; u.more = u.more[:0] }

// start resets u with its first digit already drawn.
func (u *urand) start(d0 uint64) { u.reset(); u.d[0], u.n = d0, 1 }

// first returns digit 0, drawing it if needed.
func (u *urand) first(r *words) uint64 {
	if u.n == 0 {
		u.d[0], u.n = r.Uint64(), 1
	}
	return u.d[0]
}

// digit returns digit i, drawing digits up to it.
func (u *urand) digit(i int, r *words) uint64 {
	for u.n <= i {
		if u.n < len(u.d) {
			u.d[u.n] = r.Uint64()
		} else {
			u.more = append(u.more, r.Uint64())
		}
		u.n++
	}
	if i < len(u.d) {
		return u.d[i]
	}
	return u.more[i-len(u.d)]
}

// less reports a < b for two independent u-rands, drawing digits until they
// differ (equality has probability zero; the first digit decides except
// with probability 2⁻⁶⁴).
func less(a, b *urand, r *words) bool {
	if x, y := a.first(r), b.first(r); x != y {
		return x < y
	}
	for i := 1; ; i++ {
		if x, y := a.digit(i, r), b.digit(i, r); x != y {
			return x < y
		}
	}
}

// exactNormal draws round(s·N), N ~ N(0, 1), exactly: Karney's algorithm N
// yields N as an integer part k and a u-rand fraction x, and round(s·(k+x))
// is decided from as many digits of x as it needs. The scratch u-rands are
// reused so that a draw allocates nothing after the first.
type exactNormal struct {
	x, w, u1, u2 urand
	tab          []uint64   // binWords, once fetched
	big          [4]big.Int // rare path: rounding undecided after 64 digits
}

func newExactNormal() *exactNormal { return &exactNormal{} }

// sampleK returns k ≥ 0 with probability exp(−k²/2)/Θ, Θ = Σ_j exp(−j²/2),
// exactly: the first j with U < F(j) for a uniform u-rand U and the CDF F,
// compared digit by digit (kDigit): the first digit decides except with
// probability about 2⁻⁶⁴ per comparison. It replaces steps 1–2 of Karney's
// algorithm N (a geometric k, then acceptance with probability
// exp(−k(k−1)/2)), which give the same distribution with several Bernoulli
// trials of probability exp(−½) each.
func (e *exactNormal) sampleK(r *words) int {
	u := &e.w
	u.reset()
	for j := 0; ; j++ {
		f := kWord[min(j, len(kWord)-1)]
		if j >= len(kWord) {
			f = kDigit(j, 1) // probability below exp(−128)
		}
		if u0 := u.first(r); u0 != f {
			if u0 < f {
				return j
			}
			continue
		}
		for n := 2; ; n++ { // U and F(j) agree so far: compare further digits
			if a, b := u.digit(n-1, r), kDigit(j, n); a != b {
				if a < b {
					return j
				}
				break
			}
		}
	}
}

// kWord[j] is the first 64-bit digit of F(j), kDigit(j, 1), written out
// because kDigit takes about 0.1 s (TestKDigits checks every entry).
var kWord = [...]uint64{
	0x92025b19482ce72b, 0xea91798547a0ef93, 0xfe5415c6e9da4bae, 0xfff3523319908c11,
	0xffffdc31b8ef5942, 0xffffffdaa2d72344, 0xfffffffff1a20da4, 0xfffffffffffdf76c,
	0xffffffffffffffe4, 0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff,
	0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff,
}

// kDigit returns the n-th 64-bit digit (n ≥ 1) after the binary point of
// F(j) = Σ_{i≤j} c^(i²) / Σ_{i≥0} c^(i²), c = exp(−1/2), in exact
// rationals: c ∈ [cL, cH] from the alternating series, so
// A = Σ_{i≤j} c^(i²) ∈ [A_L, A_H] and B = Σ_{i>j} c^(i²) ∈ [B_L, B_H]
// (terms up to J, and for B_H the tail bound c^((J+1)²)/(1 − c^(2J+3))),
// and F = A/(A+B) ∈ [A_L/(A_L+B_H), A_H/(A_H+B_L)]. The precision grows
// until both ends agree on the first 64n bits (which ends unless F(j) is a
// dyadic rational; sampleK needs this with probability about 2⁻⁶⁴).
func kDigit(j, n int) uint64 {
	scale := new(big.Int).Lsh(big.NewInt(1), uint(64*n))
	for prec := 64*n + 32; ; prec += 64 {
		cL, cH := expNegBracket(1, prec) // exp(−1/2)
		J := j + 2
		for float64((J+1)*(J+1))/2*math.Log2E < float64(prec+8) {
			J++
		}
		aL, aH, bL, bH := new(big.Rat), new(big.Rat), new(big.Rat), new(big.Rat)
		for i := 0; i <= J; i++ {
			l, h := ratPow(cL, i*i), ratPow(cH, i*i)
			if i <= j {
				aL.Add(aL, l)
				aH.Add(aH, h)
			} else {
				bL.Add(bL, l)
				bH.Add(bH, h)
			}
		}
		tail := ratPow(cH, (J+1)*(J+1))
		tail.Quo(tail, new(big.Rat).Sub(big.NewRat(1, 1), ratPow(cH, 2*J+3)))
		bH.Add(bH, tail)
		fL := new(big.Rat).Quo(aL, new(big.Rat).Add(aL, bH))
		fH := new(big.Rat).Quo(aH, new(big.Rat).Add(aH, bL))
		lo := new(big.Int).Quo(new(big.Int).Mul(fL.Num(), scale), fL.Denom())
		hi := new(big.Int).Quo(new(big.Int).Mul(fH.Num(), scale), fH.Denom())
		if lo.Cmp(hi) == 0 {
			return new(big.Int).And(lo, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))).Uint64()
		}
	}
}

// ratPow returns x^e for e ≥ 0.
func ratPow(x *big.Rat, e int) *big.Rat {
	ee := big.NewInt(int64(e))
	return new(big.Rat).SetFrac(new(big.Int).Exp(x.Num(), ee, nil), new(big.Int).Exp(x.Denom(), ee, nil))
}

// bern returns true with probability exp(−x(2k+x)/(2k+2)) for the current
// u-rand e.x. Let p = x·c with c = (2k+x)/(2k+2). A step succeeds when a
// fresh u-rand z is below the previous one (below x for the first) and an
// independent event of probability c occurs (f uniform in [0, 2k+2): f < 2k,
// or f = 2k and a fresh u-rand w < x). Then P(n steps succeed) = xⁿ/n!·cⁿ =
// pⁿ/n!, and P(the first failure comes after an even number) = exp(−p).
func (e *exactNormal) bern(k int, r *words) bool {
	m := uint64(2*k + 2)
	n, z, p := 0, &e.u1, &e.x
	for {
		z.reset()
		if !less(z, p, r) {
			break
		}
		f := r.Uint64N(m)
		if f == m-1 {
			break
		}
		if f == m-2 {
			e.w.reset()
			if !less(&e.w, &e.x, r) {
				break
			}
		}
		n++
		if n == 1 {
			p = &e.u2
		}
		p, z = z, p
	}
	return n%2 == 0
}

// scale is s = a·2^e (a < 2⁵³) split for exact integer arithmetic.
type scale struct {
	a uint64
	e int
}

func newScale(s float64) scale {
	f, exp := math.Frexp(s) // s = f·2^exp, f ∈ [½, 1)
	return scale{a: uint64(math.Ldexp(f, 53)), e: exp - 53}
}

// sampleKarney returns round(s·N) for N ~ N(0, 1), exactly. It was the
// noise sampler before the binned one (sample, bins.go), which has the same
// output distribution at a fraction of the random words; it stays as the
// reference the tests and benchmarks compare against.
//
// Karney (2016), algorithm N, with its steps 1–2 replaced by sampleK:
// (1) k ≥ 0 with probability ∝ exp(−k²/2); (2) x uniform in (0, 1);
// (3) accept with probability exp(−x(2k+x)/2), as k+1 successes of bern,
// else restart from (1); (4) a random sign. Step 3 multiplies the weight of
// k by exp(−x(2k+x)/2), so k+x has density ∝ exp(−(k+x)²/2) on [0, ∞): the
// half-normal.
func (e *exactNormal) sampleKarney(sc scale, r *words) int64 {
	for {
		k := e.sampleK(r)
		ok := true
		e.x.reset()
		for j := 0; ok && j <= k; j++ {
			ok = e.bern(k, r)
		}
		if !ok {
			continue
		}
		m := e.round(sc, k, r)
		if r.Uint64()&1 == 1 {
			m = -m
		}
		return m
	}
}

// round returns floor(s·(k+x) + ½) for the u-rand e.x, drawing digits of x
// until every x consistent with them gives the same integer. With n digit
// words, x ∈ [X, X+1)·2⁻⁶⁴ⁿ, so s·(k+x) + ½ lies in [L, L + a)·2^(e−64n)
// with L = a·(k·2⁶⁴ⁿ + X) + 2^(64n−e−1); the answer is decided when
// L >> (64n−e) equals (L + a − 1) >> (64n−e). (The symmetric sign makes the
// tie rule irrelevant: ties have probability zero.)
func (e *exactNormal) round(sc scale, k int, r *words) int64 {
	sh := 64 - sc.e // in [70, 132] for s·2⁻⁶ with s in [2⁻¹⁰, 2⁵²] (New checks)
	if k < 1<<10 && sh > 0 && sh < 127 {
		x := e.x.first(r)
		hi, lo := bits.Mul64(sc.a, x)
		// a·k·2⁶⁴: a < 2⁵³ and k < 2¹⁰, so hi < a(k+1) ≤ 2⁶³, and the
		// half (below 2⁶¹ in hi) and a − 1 leave no overflow.
		hi += sc.a * uint64(k)
		ph, pl := pow2(sh - 1)
		hi, lo = add128(hi, lo, ph, pl)
		h2, l2 := add128(hi, lo, 0, sc.a-1)
		if v, w := shr128(hi, lo, sh), shr128(h2, l2, sh); v == w && v < 1<<62 {
			return int64(v)
		}
	}
	return e.roundBig(sc, k, r)
}

// roundBig is round for any number of digits, in big integers.
func (e *exactNormal) roundBig(sc scale, k int, r *words) int64 {
	lo, hi, t, a := &e.big[0], &e.big[1], &e.big[2], &e.big[3]
	a.SetUint64(sc.a)
	for n := 1; ; n++ {
		lo.SetInt64(int64(k))
		for i := 0; i < n; i++ {
			lo.Lsh(lo, 64)
			lo.Or(lo, t.SetUint64(e.x.digit(i, r)))
		}
		lo.Mul(lo, a)
		sh := 64*n - sc.e
		if sh < 1 {
			continue // cannot happen for s ≤ 2⁵²; keeps the shifts valid
		}
		lo.Add(lo, t.Lsh(t.SetInt64(1), uint(sh-1)))
		hi.Add(lo, a)
		hi.Sub(hi, t.SetInt64(1))
		lo.Rsh(lo, uint(sh))
		hi.Rsh(hi, uint(sh))
		if lo.Cmp(hi) == 0 {
			if !lo.IsInt64() {
				return math.MaxInt64 // |N| > 2⁶²/s: s ≤ 2⁵², probability below exp(−2¹⁹)
			}
			return lo.Int64()
		}
	}
}

func pow2(n int) (hi, lo uint64) {
	if n >= 64 {
		return 1 << (n - 64), 0
	}
	return 0, 1 << n
}

func add128(hi, lo, bhi, blo uint64) (uint64, uint64) {
	lo, c := bits.Add64(lo, blo, 0)
	hi, _ = bits.Add64(hi, bhi, c)
	return hi, lo
}

// shr128 returns (hi·2⁶⁴ + lo) >> n for 0 < n < 128.
func shr128(hi, lo uint64, n int) uint64 {
	if n >= 64 {
		return hi >> (n - 64)
	}
	return hi<<(64-n) | lo>>n
}
