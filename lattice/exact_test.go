package lattice

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dptrain/dptrain/rng"
)

// The two Bernoulli building blocks hit their exact probabilities:
// 10⁶ trials each, within 5 binomial standard errors.
func TestBernoulliBlocks(t *testing.T) {
	const n = 1_000_000
	r := rng.New(1)
	e := newExactNormal()
	cases := []struct {
		name string
		k    int
		x    uint64 // first digit word of x, when fixed
		want float64
		draw func() bool
	}{}
	for _, c := range []struct {
		k int
		x uint64
	}{{0, 1 << 63}, {1, 3 << 62}, {3, 1 << 60}, {7, math.MaxUint64}} {
		x := (float64(c.x) + 0.5) * 0x1p-64 // the u-rand is x's first word plus random lower digits
		c := c
		cases = append(cases, struct {
			name string
			k    int
			x    uint64
			want float64
			draw func() bool
		}{name: "bern", k: c.k, x: c.x, want: math.Exp(-x * (2*float64(c.k) + x) / (2*float64(c.k) + 2)), draw: func() bool {
			e.x.set(c.x)
			return e.bern(c.k, streamWords(r))
		}})
	}
	for _, c := range cases {
		hits := 0
		for range n {
			if c.draw() {
				hits++
			}
		}
		got := float64(hits) / n
		se := math.Sqrt(c.want * (1 - c.want) / n)
		if math.Abs(got-c.want) > 5*se {
			t.Errorf("%s k=%d x=%#x: frequency %.5f, want %.5f ± %.5f", c.name, c.k, c.x, got, c.want, 5*se)
		}
	}
}

// round's 128-bit fast path and its big-integer fallback agree, and both
// equal floor(s·(k+x)+½) computed in exact rationals, for digit words that
// put s·(k+x) near and far from a rounding boundary.
func TestRoundExact(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	r := rng.New(2)
	e := newExactNormal()
	for _, s := range []float64{0x1p-10, 0.5, 1, 3.7, 1e3, 1e6, 0x1p40, 1.3 * 0x1p45, 0x1p52} {
		sc := newScale(s)
		for trial := 0; trial < 2000; trial++ {
			k := src.IntN(6)
			w0, w1 := src.Uint64(), src.Uint64()
			if trial%2 == 1 { // put x just below a half-integer boundary of s·(k+x)
				m := math.Floor(s*float64(k)) + float64(src.IntN(int(math.Min(s, 1000))+1)) + 0.5
				xf := (m - s*float64(k)) / s
				if xf <= 0 || xf >= 1 {
					continue
				}
				w0 = uint64(math.Ldexp(xf, 64))
			}
			e.x.set(w0, w1)
			fast := e.round(sc, k, streamWords(r))
			e.x.n = 2
			slow := e.roundBig(sc, k, streamWords(r))
			// Exact value with the two known words; it decides whenever
			// the lower digits cannot move the result.
			x := new(big.Rat).SetFrac(new(big.Int).Or(new(big.Int).Lsh(new(big.Int).SetUint64(w0), 64), new(big.Int).SetUint64(w1)), new(big.Int).Lsh(big.NewInt(1), 128))
			v := new(big.Rat).Add(x, new(big.Rat).SetInt64(int64(k)))
			v.Mul(v, new(big.Rat).SetFloat64(s))
			v.Add(v, big.NewRat(1, 2))
			want := new(big.Int).Quo(v.Num(), v.Denom())
			if fast != slow || (e.x.n == 2 && want.Int64() != slow) {
				t.Fatalf("s=%v k=%d x=%#x:%#x: fast %d, big %d, exact %v", s, k, w0, w1, fast, slow, want)
			}
		}
	}
}

// set makes u the u-rand with the given leading digits.
func (u *urand) set(ws ...uint64) {
	u.reset()
	for _, w := range ws {
		if u.n < len(u.d) {
			u.d[u.n] = w
		} else {
			u.more = append(u.more, w)
		}
		u.n++
	}
}

// pmf is P(round(Z) = m), Z ~ N(0, s²).
func pmf(m, s float64) float64 { return cdf((m+0.5)/s) - cdf((m-0.5)/s) }

func cdf(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// chiSquare returns Pearson's statistic of counts against probabilities
// (which sum to 1) and its p-value.
func chiSquare(counts []int, probs []float64) (stat, p float64) {
	n := 0
	for _, c := range counts {
		n += c
	}
	for i, c := range counts {
		e := probs[i] * float64(n)
		stat += (float64(c) - e) * (float64(c) - e) / e
	}
	return stat, 1 - distuv.ChiSquared{K: float64(len(counts) - 1)}.CDF(stat)
}

// bins cut the integers into intervals [edges[i], edges[i+1]) (with −∞ and
// +∞ at the ends) and returns each interval's probability under round(Z).
func binProbs(edges []int64, s float64) []float64 {
	p := make([]float64, len(edges)+1)
	lo := 0.0
	for i := range p {
		hi := 1.0
		if i < len(edges) {
			hi = cdf((float64(edges[i]) - 0.5) / s)
		}
		p[i] = hi - lo
		lo = hi
	}
	return p
}

func binOf(edges []int64, m int64) int {
	i := 0
	for i < len(edges) && m >= edges[i] {
		i++
	}
	return i
}

// The sampled round(Z) matches the exact PMF of the rounded Gaussian:
// Pearson's χ² at fixed seeds over 4·10⁵ draws, rejecting at p < 10⁻⁶.
// Small scales test every integer with mass ≥ 10⁻⁴ (tails merged); large
// scales test 40 equiprobable bins and, separately, the residue mod 4 (the
// low bits, which a float sampler gets wrong first). Each case also runs a
// wrong sampler through the same test and asserts it is rejected: σ off by
// 1.5%, or only even values (σ/2 rounded, doubled) for the residue test —
// the power the test is claimed to have at this n.
func TestRoundedGaussianDistribution(t *testing.T) {
	const n = 400_000
	for i, s := range []float64{0.5, 1, 3.7, 1e3, 1e6, 0x1p40} {
		var edges []int64
		if s < 10 {
			for m := -int64(10 * s); m <= int64(10*s)+1; m++ {
				if pmf(float64(m-1), s) >= 1e-4 && pmf(float64(m), s) >= 1e-4 {
					edges = append(edges, m)
				}
			}
		} else {
			for j := 1; j < 40; j++ {
				edges = append(edges, int64(math.Round(s*distuv.UnitNormal.Quantile(float64(j)/40))))
			}
		}
		probs := binProbs(edges, s)
		mod4 := []float64{0.25, 0.25, 0.25, 0.25}
		// Stated power against σ·1.015: the noncentrality
		// λ = n·Σ(p₁−p₀)²/p₀ and Patnaik's approximation of the
		// noncentral χ² give P(reject at p < 10⁻⁶).
		alt := binProbs(edges, s*1.015)
		var lambda float64
		for j, p0 := range probs {
			lambda += n * (alt[j] - p0) * (alt[j] - p0) / p0
		}
		df := float64(len(probs) - 1)
		crit := distuv.ChiSquared{K: df}.Quantile(1 - 1e-6)
		c, h := (df+2*lambda)/(df+lambda), (df+lambda)*(df+lambda)/(df+2*lambda)
		power := 1 - distuv.ChiSquared{K: h}.CDF(crit/c)
		if power < 0.99 {
			t.Errorf("s=%v: power against σ·1.015 is %.3f (λ = %.1f)", s, power, lambda)
		}
		draw := func(sampler func() int64) (pBins, pMod float64) {
			counts, res := make([]int, len(probs)), make([]int, 4)
			for range n {
				m := sampler()
				counts[binOf(edges, m)]++
				res[m&3]++
			}
			_, pBins = chiSquare(counts, probs)
			_, pMod = chiSquare(res, mod4)
			return
		}
		r := rng.New(uint64(100 + i))
		e := newExactNormal()
		// The binned sampler (the noise's) and Karney's (the reference).
		for _, sm := range []struct {
			name string
			draw func(s float64) int64
		}{
			{"binned", func(s float64) int64 { return e.sample(binScaleOf(s), streamWords(r)) }},
			{"Karney", func(s float64) int64 { return e.sampleKarney(newScale(s), streamWords(r)) }},
		} {
			pBins, pMod := draw(func() int64 { return sm.draw(s) })
			if pBins < 1e-6 {
				t.Errorf("s=%v %s: χ² over %d bins rejects the exact sampler, p = %.2g", s, sm.name, len(probs), pBins)
			}
			if s >= 1e3 && pMod < 1e-6 {
				t.Errorf("s=%v %s: residues mod 4 reject the exact sampler, p = %.2g", s, sm.name, pMod)
			}
			if p, _ := draw(func() int64 { return sm.draw(s * 1.015) }); p >= 1e-6 {
				t.Errorf("s=%v %s: σ·1.015 not rejected (p = %.2g): the test has no power", s, sm.name, p)
			}
			if s >= 1e3 {
				if _, p := draw(func() int64 { return 2 * sm.draw(s/2) }); p >= 1e-6 {
					t.Errorf("s=%v %s: even-only sampler not rejected mod 4 (p = %.2g)", s, sm.name, p)
				}
			}
			t.Logf("s=%v %s: %d bins p = %.3f, mod 4 p = %.3f; power against σ·1.015 %.4f (λ = %.0f)", s, sm.name, len(probs), pBins, pMod, power, lambda)
		}
	}
}

// theta returns the probabilities P(k) = exp(−k²/2)/Θ for k < 60 and the
// CDF values F(j), computed in big.Float at 400 bits independently of
// kDigit (exp by its Taylor series at x = −1/2, powers by multiplication).
func theta() (p, f []*big.Float) {
	const prec = 400
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	c, term := nf().SetInt64(1), nf().SetInt64(1)
	for j := int64(1); j < 120; j++ {
		term.Quo(term, nf().SetInt64(-2*j))
		c.Add(c, term)
	}
	w := make([]*big.Float, 60)
	total := nf()
	for k := range w {
		w[k] = nf().SetInt64(1)
		for range k * k {
			w[k].Mul(w[k], c)
		}
		total.Add(total, w[k])
	}
	acc := nf()
	for k := range w {
		p = append(p, nf().Quo(w[k], total))
		acc.Add(acc, p[k])
		f = append(f, nf().Set(acc))
	}
	return p, f
}

// kDigit gives the binary digits of the CDF F(j) of P(k) ∝ exp(−k²/2): the
// first two, joined, equal floor(F(j)·2¹²⁸) from theta for j = 0 … 3, and
// the first equals kWord[j] for every entry of the table.
func TestKDigits(t *testing.T) {
	_, f := theta()
	for j := range kWord {
		want, _ := nfMant(f[j], 128).Int(nil)
		want.And(want, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1)))
		if hi := new(big.Int).Rsh(want, 64).Uint64(); kWord[j] != hi || (j < len(kWord)-1 && kDigit(j, 1) != hi) {
			t.Fatalf("F(%d): kWord %x, want %x", j, kWord[j], hi)
		}
		if j < 4 {
			if lo := new(big.Int).And(want, new(big.Int).SetUint64(math.MaxUint64)).Uint64(); kDigit(j, 2) != lo {
				t.Fatalf("F(%d): second digit %x, want %x", j, kDigit(j, 2), lo)
			}
		}
	}
}

func nfMant(x *big.Float, shift int) *big.Float {
	return new(big.Float).SetPrec(x.Prec()).SetMantExp(x, shift)
}

// sampleK hits P(k) = exp(−k²/2)/Θ: 10⁶ draws, each of k = 0 … 3 and the
// tail k ≥ 4 within 5 binomial standard errors.
func TestSampleK(t *testing.T) {
	const n = 1_000_000
	p, _ := theta()
	r := rng.New(3)
	e := newExactNormal()
	counts := make([]int, 5)
	for range n {
		counts[min(e.sampleK(streamWords(r)), 4)]++
	}
	tail := 1.0
	for k, c := range counts {
		want := tail
		if k < 4 {
			want, _ = p[k].Float64()
			tail -= want
		}
		se := math.Sqrt(want * (1 - want) / n)
		if got := float64(c) / n; math.Abs(got-want) > 5*se {
			t.Errorf("P(k = %d%s) = %.6f, want %.6f ± %.6f", k, map[bool]string{true: "+"}[k == 4], got, want, 5*se)
		}
	}
}
