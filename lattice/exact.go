package lattice

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/dptrain/dptrain/internal/rng"
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

// first returns digit 0, drawing it if needed.
func (u *urand) first(r *rng.Stream) uint64 {
	if u.n == 0 {
		u.d[0], u.n = r.Uint64(), 1
	}
	return u.d[0]
}

// digit returns digit i, drawing digits up to it.
func (u *urand) digit(i int, r *rng.Stream) uint64 {
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
func less(a, b *urand, r *rng.Stream) bool {
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
	big          [4]big.Int // rare path: rounding undecided after 64 digits
}

func newExactNormal() *exactNormal { return &exactNormal{} }

// halfExp returns true with probability exp(−1/2), exactly: it compares a
// uniform U with c = exp(−1/2) digit by digit. The first 64-bit digit of c
// is computed once; further digits, needed only when U's first digit
// equals c's (probability 2⁻⁶⁴), come from expDigits.
func (e *exactNormal) halfExp(r *rng.Stream) bool {
	if u := r.Uint64(); u != halfExpWord {
		return u < halfExpWord
	}
	for n := 2; ; n++ {
		if u, c := r.Uint64(), expDigits(n); u != c {
			return u < c
		}
	}
}

// halfExpWord is floor(exp(−1/2)·2⁶⁴).
var halfExpWord = expDigits(1)

// expDigits returns the n-th 64-bit digit after the binary point of
// exp(−1/2), from the alternating series Σ_j (−½)ʲ/j! in exact rationals:
// consecutive partial sums bracket the value, and the series is summed
// until both ends of the bracket have the same first 64n bits (the value is
// irrational, so this ends).
func expDigits(n int) uint64 {
	scale := new(big.Int).Lsh(big.NewInt(1), uint(64*n))
	sum, term := big.NewRat(1, 1), big.NewRat(1, 1)
	prev := new(big.Rat)
	lo, hi := new(big.Int), new(big.Int)
	for j := int64(1); ; j++ {
		term.Mul(term, big.NewRat(-1, 2*j))
		prev.Set(sum)
		sum.Add(sum, term)
		a, b := prev, sum
		if a.Cmp(b) > 0 {
			a, b = b, a
		}
		lo.Quo(new(big.Int).Mul(a.Num(), scale), a.Denom())
		hi.Quo(new(big.Int).Mul(b.Num(), scale), b.Denom())
		if j > 2 && lo.Cmp(hi) == 0 {
			mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
			return lo.And(lo, mask).Uint64()
		}
	}
}

// bern returns true with probability exp(−x(2k+x)/(2k+2)) for the current
// u-rand e.x. Let p = x·c with c = (2k+x)/(2k+2). A step succeeds when a
// fresh u-rand z is below the previous one (below x for the first) and an
// independent event of probability c occurs (f uniform in [0, 2k+2): f < 2k,
// or f = 2k and a fresh u-rand w < x). Then P(n steps succeed) = xⁿ/n!·cⁿ =
// pⁿ/n!, and P(the first failure comes after an even number) = exp(−p).
func (e *exactNormal) bern(k int, r *rng.Stream) bool {
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

// sample returns round(s·N) for N ~ N(0, 1), exactly.
//
// Karney (2016), algorithm N: (1) k ≥ 0 with probability ∝ exp(−k/2)
// (count successes of halfExp); (2) accept with probability
// exp(−k(k−1)/2) (k(k−1) more successes), else restart; (3) x uniform in
// (0, 1); (4) accept with probability exp(−x(2k+x)/2), as k+1 successes of
// bern, else restart; (5) a random sign. Steps 1–2 give k with probability
// ∝ exp(−k²/2) and step 4 multiplies by exp(−x(2k+x)/2), so k+x has density
// ∝ exp(−(k+x)²/2) on [0, ∞): the half-normal.
func (e *exactNormal) sample(sc scale, r *rng.Stream) int64 {
	for {
		k := 0
		for e.halfExp(r) {
			k++
		}
		ok := true
		for j := 0; ok && j < k*(k-1); j++ {
			ok = e.halfExp(r)
		}
		if !ok {
			continue
		}
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
func (e *exactNormal) round(sc scale, k int, r *rng.Stream) int64 {
	sh := 64 - sc.e // in [64, 126] for s in [2⁻¹⁰, 2⁵²] (New checks)
	if k < 1<<8 && sh > 0 && sh < 127 {
		x := e.x.first(r)
		hi, lo := bits.Mul64(sc.a, x)
		hi += sc.a * uint64(k) // a·k·2⁶⁴: a < 2⁵³, k < 2⁸, no overflow
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
func (e *exactNormal) roundBig(sc scale, k int, r *rng.Stream) int64 {
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
