package lattice

import (
	"math"
	"math/big"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dptrain/dptrain/rng"
)

// binCDFIndependent returns F(j) = Σ_{i≤j} w_i / Σ_i w_i, w_i =
// exp(−(i/64)²/2), for j < n, in big.Float at 450 bits by a route that
// shares nothing with binCDFBracket: each exp(x) is its Taylor series at
// x/2¹⁶ squared sixteen times, and exp(−x) its reciprocal, for every i up
// to 1600 (the rest weighs below 2⁻⁴⁰⁰).
func binCDFIndependent(n int) []*big.Float {
	const prec = 450
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	expNeg := func(x *big.Float) *big.Float {
		y := nf().SetMantExp(x, -16)
		sum, term := nf().SetInt64(1), nf().SetInt64(1)
		for j := int64(1); j < 60; j++ {
			term.Mul(term, y)
			term.Quo(term, nf().SetInt64(j))
			sum.Add(sum, term)
		}
		for range 16 {
			sum.Mul(sum, sum)
		}
		return nf().Quo(nf().SetInt64(1), sum)
	}
	var w []*big.Float
	total := nf()
	for i := int64(0); i <= 1600; i++ {
		x := nf().SetInt64(i * i)
		x.SetMantExp(x, -13) // (i/64)²/2 = i²/2¹³
		w = append(w, expNeg(x))
		total.Add(total, w[i])
	}
	var f []*big.Float
	acc := nf()
	for j := range n {
		acc.Add(acc, w[j])
		f = append(f, nf().Quo(acc, total))
	}
	return f
}

// floorWords returns floor(x·2¹²⁸) as its two 64-bit digits.
func floorWords(x *big.Float) (hi, lo uint64) {
	v, _ := new(big.Float).SetPrec(x.Prec()).SetMantExp(x, 128).Int(nil)
	lo = new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return new(big.Int).Rsh(v, 64).Uint64(), lo
}

// The bin table's digits are those of the independently computed CDF: every
// table entry's first digit, the second digits of the first bins and of
// bins near the table's end, and the first digit of bins beyond it (which
// binTie reads from binDigit). The table ends at the first all-ones digit
// and its guide points at the first entry at or above each top byte.
func TestBinDigits(t *testing.T) {
	w := binWords()
	f := binCDFIndependent(len(w) + 3)
	for j := range w {
		hi, _ := floorWords(f[j])
		if w[j] != hi {
			t.Fatalf("F(%d): table digit %#x, independent %#x", j, w[j], hi)
		}
		if (j == len(w)-1) != (hi == math.MaxUint64) {
			t.Fatalf("F(%d) = %#x: the table must end exactly at the first all-ones digit (length %d)", j, hi, len(w))
		}
	}
	for _, j := range []int{0, 1, 2, 63, 300, len(w) - 3, len(w) - 1, len(w), len(w) + 2} {
		hi, lo := floorWords(f[j])
		if got := binDigit(j, 1); got != hi {
			t.Errorf("binDigit(%d, 1) = %#x, independent %#x", j, got, hi)
		}
		if got := binDigit(j, 2); got != lo {
			t.Errorf("binDigit(%d, 2) = %#x, independent %#x", j, got, lo)
		}
	}
	for tb, g := range binTable.guide {
		if lo := uint64(tb) << (64 - guideBits); w[g] < lo || (g > 0 && w[g-1] >= lo) {
			t.Fatalf("guide[%d] = %d does not point at the first digit ≥ %#x", tb, g, lo)
		}
	}
	t.Logf("table: %d bins (N up to %.2f)", len(w), float64(len(w))/64)
}

// sampleBin returns the first j with U < F(j) also when U's first digit
// ties with F(j)'s: U's second digit just below and just above F(j)'s
// second digit, against the independent 128-bit values, for bins in the
// table's body and at its all-ones end.
func TestSampleBinTies(t *testing.T) {
	w := binWords()
	f := binCDFIndependent(len(w) + 3)
	r := rng.New(5)
	e := newExactNormal()
	for _, j := range []int{0, 5, 200, len(w) - 2, len(w) - 1} {
		hi, lo := floorWords(f[j])
		for _, d := range []int64{-1, +1} {
			u1 := uint64(int64(lo) + d)
			e.w.set(hi, u1)
			got := e.binTie(sortSearch(w, hi), streamWords(r))
			// Exact: the first j' with (hi, u1, more digits) < F(j').
			want := 0
			for want < len(f) {
				h, l := floorWords(f[want])
				if hi < h || (hi == h && u1 < l) {
					break
				}
				want++
			}
			if got != want {
				t.Errorf("tie at bin %d, second digit %+d: bin %d, want %d", j, d, got, want)
			}
		}
	}
}

// sortSearch is the first j with w[j] ≥ v, as sampleBin's scan finds it.
func sortSearch(w []uint64, v uint64) int {
	j := 0
	for w[j] < v {
		j++
	}
	return j
}

// Bins are drawn with probability F(j) − F(j−1): 2·10⁶ draws, Pearson's χ²
// over the 64 bins of each of N's first four units and the rest merged,
// against the independent CDF, rejecting at p < 10⁻⁶.
func TestSampleBinFrequencies(t *testing.T) {
	const n = 2_000_000
	f := binCDFIndependent(256)
	probs := make([]float64, 257)
	prev := 0.0
	for j := range 256 {
		v, _ := f[j].Float64()
		probs[j], prev = v-prev, v
	}
	probs[256] = 1 - prev
	counts := make([]int, 257)
	r, e := rng.New(6), newExactNormal()
	for range n {
		counts[min(e.sampleBin(streamWords(r)), 256)]++
	}
	if _, p := chiSquare(counts, probs); p < 1e-6 {
		t.Errorf("bin frequencies rejected: p = %.3g", p)
	}
}

// binAccept accepts with probability exp(−x(2i+x)/2¹³) for u-rands x
// with a fixed first digit, in a bin of one trial (i ≤ 4095) and bins of
// two and three (i ≥ 4096, far beyond any table draw); 10⁶ trials each,
// within 5 binomial standard errors. The sign is fair.
func TestBinAccept(t *testing.T) {
	const n = 1_000_000
	r := rng.New(7)
	e := newExactNormal()
	for _, c := range []struct {
		i int
		x uint64
	}{{0, 1 << 63}, {64, math.MaxUint64}, {600, 3 << 62}, {4095, 1 << 62}, {4096, 1 << 63}, {9000, 1 << 61}} {
		x := (float64(c.x) + 0.5) * 0x1p-64
		want := math.Exp(-x * (2*float64(c.i) + x) / binMod)
		hits, negs := 0, 0
		for range n {
			ok, neg := e.binAcceptWith(c.i, c.x, r)
			if ok {
				hits++
			}
			if neg {
				negs++
			}
		}
		se := math.Sqrt(want * (1 - want) / n)
		if got := float64(hits) / n; math.Abs(got-want) > 5*se {
			t.Errorf("i=%d x=%#x: accepted %.6f, want %.6f ± %.6f", c.i, c.x, got, want, 5*se)
		}
		if math.Abs(float64(negs)/n-0.5) > 5*math.Sqrt(0.25/n) {
			t.Errorf("i=%d: sign negative %.5f of the time", c.i, float64(negs)/n)
		}
	}
}

// binAcceptWith is binAccept with the first digit of x fixed (the rest
// drawn as needed).
func (e *exactNormal) binAcceptWith(i int, x uint64, r *rng.Stream) (bool, bool) {
	e.x.set(x)
	w := r.Uint64()
	return e.binAcceptDrawn(i, w&(binMod-1), streamWords(r)), w>>63 == 1
}

// The fast sampler's output is round(s·N): on 4·10⁶ draws at the lattice's
// usual scale s = 2⁴⁰ (σ = 1, k = 40), at s = 3.7 and at s = 0.7·2⁵² (where
// the first 50 bits of x leave 4% of roundings to a completed digit), Pearson's χ² over
// 1000 equiprobable bins (a fine histogram) and over the residue mod 8
// (large s), the first four moments against the exact PMF, and the two
// tails P(|N| > 4) and P(|N| > 4.5) within 5 binomial standard errors.
// The same test rejects the old exact sampler at σ·1.01, which shows its
// power at this n.
func TestBinnedSamplerDistribution(t *testing.T) {
	const n = 4_000_000
	for i, s := range []float64{0x1p40, 3.7, 0x1p52 * 0.7} {
		var edges []int64
		for j := 1; j < 1000; j++ {
			edges = append(edges, int64(math.Round(s*distuv.UnitNormal.Quantile(float64(j)/1000))))
		}
		if s < 10 { // few integers: one bin per integer with mass ≥ 10⁻⁵
			edges = edges[:0]
			for m := int64(-40); m <= 40; m++ {
				if pmf(float64(m-1), s) >= 1e-5 && pmf(float64(m), s) >= 1e-5 {
					edges = append(edges, m)
				}
			}
		}
		probs := binProbs(edges, s)
		check := func(name string, sample func() int64, wantReject bool) {
			counts, res := make([]int, len(probs)), make([]int, 8)
			var m1, m2, m3, m4 float64
			var t4, t45 int
			for range n {
				m := sample()
				counts[binOf(edges, m)]++
				res[m&7]++
				z := float64(m) / s
				m1 += z
				m2 += z * z
				m3 += z * z * z
				m4 += z * z * z * z
				if math.Abs(z) > 4 {
					t4++
				}
				if math.Abs(z) > 4.5 {
					t45++
				}
			}
			_, p := chiSquare(counts, probs)
			if wantReject {
				if p >= 1e-6 {
					t.Errorf("s=%v %s: χ² does not reject a sampler off by 1%% (p = %.3g): no power", s, name, p)
				}
				return
			}
			if p < 1e-6 {
				t.Errorf("s=%v %s: χ² over %d bins rejects, p = %.3g", s, name, len(probs), p)
			}
			if s > 10 {
				if _, p := chiSquare(res, []float64{.125, .125, .125, .125, .125, .125, .125, .125}); p < 1e-6 {
					t.Errorf("s=%v %s: residues mod 8 reject, p = %.3g", s, name, p)
				}
			}
			// Exact moments of round(sN)/s from the PMF (large s: N's
			// own 0, 1, 0, 3 up to Sheppard terms below 10⁻²⁰).
			e1, e2, e4 := 0.0, 1+1/(12*s*s), 3.0
			if s < 10 {
				a, b, c := pmfMoments(s)
				e1, e2, e4 = a/s, b/(s*s), c/(s*s*s*s)
			}
			for _, c := range []struct {
				name      string
				got, want float64
				sd        float64 // the standard deviation of one term
			}{
				{"mean", m1 / n, e1, math.Sqrt(e2)},
				{"E[z²]", m2 / n, e2, math.Sqrt(e4 - e2*e2)},
				{"E[z³]", m3 / n, 0, math.Sqrt(15 * e2 * e2 * e2 * 1.1)},
				{"E[z⁴]", m4 / n, e4, math.Sqrt(105*1.2 - e4*e4)},
			} {
				if math.Abs(c.got-c.want) > 5*c.sd/math.Sqrt(n) {
					t.Errorf("s=%v %s %s: %.6f, want %.6f ± %.6f", s, name, c.name, c.got, c.want, 5*c.sd/math.Sqrt(n))
				}
			}
			for _, c := range []struct {
				x   float64
				got int
			}{{4, t4}, {4.5, t45}} {
				want := 2 * (1 - cdf((math.Floor(c.x*s)+0.5)/s)) // P(|m| > x·s)
				se := math.Sqrt(want * (1 - want) / n)
				if math.Abs(float64(c.got)/n-want) > 5*se {
					t.Errorf("s=%v %s: P(|z| > %v) = %.3g, want %.3g ± %.2g", s, name, c.x, float64(c.got)/n, want, 5*se)
				}
			}
		}
		r := rng.New(uint64(40 + i))
		e := newExactNormal()
		sc := binScaleOf(s)
		check("binned", func() int64 { return e.sample(sc, streamWords(r)) }, false)
		wrong := newScale(s * 1.01)
		check("Karney at σ·1.01", func() int64 { return e.sampleKarney(wrong, streamWords(r)) }, true)
	}
}

// roundTop decides round(s·(k + x)) from x's top 64 − spareBits bits only
// when every x with those bits gives the same integer: its verdict is
// checked against the interval computed in big integers, and a decided
// value against round on the lowest and highest x sharing those bits.
// Scales from the smallest std the lattice takes to the largest, bins
// across the table, and top bits drawn at random and at the ends.
func TestRoundTopAgreesWithRound(t *testing.T) {
	r := rng.New(5)
	e := newExactNormal()
	const low = 1<<spareBits - 1
	for _, s := range []float64{0x1p-10, 3.7, 1000.5, 0x1p40, 0x1p40 * 1.1, 0x1p52 * 0.7, 0x1p52} {
		sc := binScaleOf(s)
		sh := 64 - sc.e
		decided := 0
		for n := range 20000 {
			k := int(r.Uint64N(600))
			top := r.Uint64() >> spareBits
			switch n {
			case 0:
				top = 0
			case 1:
				top = math.MaxUint64 >> spareBits
			}
			// [L, L + a·2^spareBits) in units of 2^(e−64), shifted by sh.
			a := new(big.Int).SetUint64(sc.a)
			L := new(big.Int).Lsh(big.NewInt(int64(k)), 64)
			L.Add(L, new(big.Int).Lsh(new(big.Int).SetUint64(top), spareBits))
			L.Mul(L, a)
			U := new(big.Int).Add(L, new(big.Int).Lsh(a, spareBits))
			U.Sub(U, big.NewInt(1))
			if sh > 0 {
				L.Add(L, new(big.Int).Lsh(big.NewInt(1), uint(sh-1)))
				U.Add(U, new(big.Int).Lsh(big.NewInt(1), uint(sh-1)))
			}
			vl, vu := new(big.Int).Rsh(L, uint(max(sh, 0))), new(big.Int).Rsh(U, uint(max(sh, 0)))
			want := vl.Cmp(vu) == 0 && vl.IsInt64() && vl.Int64() < 1<<62 && sh > 0 && sh < 127
			v, ok := sc.roundTop(k, top)
			if ok != want {
				t.Fatalf("s=%v k=%d top=%#x: roundTop decided = %v, the interval says %v", s, k, top, ok, want)
			}
			if !ok {
				continue
			}
			decided++
			e.x.set(top << spareBits)
			lo := e.round(sc, k, streamWords(r))
			e.x.set(top<<spareBits | low)
			hi := e.round(sc, k, streamWords(r))
			if v != vl.Int64() || v != lo || v != hi {
				t.Fatalf("s=%v k=%d top=%#x: roundTop gives %d, the interval %d, round %d and %d at the ends", s, k, top, v, vl, lo, hi)
			}
		}
		t.Logf("s=%v: decided %d of 20000", s, decided)
	}
}
