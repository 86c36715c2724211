package lattice

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/internal/vec"
	"github.com/dptrain/dptrain/rng"
)

// adversarial returns float32 examples whose norms sit exactly at, or one
// float32 step around, the clip norm c, with huge, tiny and subnormal
// coordinates, up to d = 10⁶.
func adversarial(c float64) []struct {
	name string
	x    []float32
	want Outcome
} {
	src := rand.New(rand.NewPCG(3, 4))
	fill := func(d int, f func(i int) float32) []float32 {
		x := make([]float32, d)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	// toNorm scales x in float32 so that its float64 norm is c, then moves
	// every coordinate `ulps` float32 steps away from zero.
	toNorm := func(x []float32, ulps int) []float32 {
		s := c / math.Sqrt(SumSquaresExact(x))
		for i, v := range x {
			y := float32(float64(v) * s)
			dir := float32(math.Copysign(math.Inf(1), float64(y)))
			if ulps < 0 {
				dir = 0
			}
			for range max(ulps, -ulps) {
				y = math.Nextafter32(y, dir)
			}
			x[i] = y
		}
		return x
	}
	c32 := float32(c)
	return []struct {
		name string
		x    []float32
		want Outcome
	}{
		{"one coordinate at C", fill(10, func(i int) float32 { return map[bool]float32{true: c32}[i == 3] }), Clipped},
		{"four coordinates C/2, norm exactly C", fill(4, func(int) float32 { return c32 / 2 }), Clipped},
		{"d=1e4 random at C", toNorm(fill(10_000, func(int) float32 { return float32(src.NormFloat64()) }), 0), Either},
		{"d=1e6 random at C plus one ulp", toNorm(fill(1_000_000, func(int) float32 { return float32(src.NormFloat64()) }), 1), Clipped},
		{"d=1e6 equal at C minus one ulp", toNorm(fill(1_000_000, func(int) float32 { return 1 }), -1), Either},
		{"float64 norm rounds down", roundsDown(c32), Clipped},
		{"huge coordinates", fill(1000, func(i int) float32 { return float32(math.MaxFloat32) * float32(1-2*(i%2)) }), Clipped},
		{"huge and subnormal", fill(1001, func(i int) float32 {
			if i == 0 {
				return 3e38
			}
			return math.SmallestNonzeroFloat32
		}), Clipped},
		{"tiny: below one lattice step", fill(100, func(int) float32 { return float32(c) * 1e-15 }), Kept},
		{"half the norm", toNorm(fill(5000, func(int) float32 { return float32(src.Float64() - 0.5) }), 0)[:1250], Kept},
		{"zero", make([]float32, 7), Kept},
		{"NaN", fill(5, func(i int) float32 { return float32(map[bool]float64{true: math.NaN()}[i == 2]) }), NonFinite},
		{"Inf", fill(5, func(i int) float32 { return float32(map[bool]float64{true: math.Inf(-1)}[i == 4]) }), NonFinite},
	}
}

// Either marks a case at the clip norm up to float32 rounding, which may
// be clipped or kept.
const Either Outcome = -1

// roundsDown returns x with x₀ = c and 1000 coordinates c·2⁻²⁷ on the lane
// of vec.SumSquares that holds x₀: each square is half an ulp of c², so the
// float64 sum stays c² while the true squared norm is c²(1 + 1000·2⁻⁵⁴).
func roundsDown(c float32) []float32 {
	x := make([]float32, 4004)
	x[0] = c
	for i := 4; i < len(x); i += 4 {
		x[i] = c * 0x1p-27
	}
	return x
}

// SumSquaresExact is Σx² of float32 values in exact arithmetic, rounded
// once (the squares are exact in float64 and span at most 2⁻²⁹⁸…2²⁵⁶, so
// 640 bits hold a sum of 2²⁰ of them exactly).
func SumSquaresExact(x []float32) float64 {
	s := new(big.Float).SetPrec(640)
	t := new(big.Float).SetPrec(640)
	for _, v := range x {
		t.SetFloat64(float64(v))
		s.Add(s, t.Mul(t, t))
	}
	f, _ := s.Float64()
	return f
}

// The quantised example's exact squared norm Σq² (big integers) is at most
// 2²ᵏ, i.e. ‖γq‖ ≤ C, for every adversarial input and lattice; no
// coordinate grows in magnitude or changes sign; and the norm is not
// wasted: ‖q‖ ≥ min(‖x‖/γ, 2ᵏ(1−η))·(1−2η) − √d (the computed norm is
// within η of the true one, and truncation loses under one step per
// coordinate).
func TestQuantizeNormBound(t *testing.T) {
	for _, c := range []float64{1, 0.1, 3.7} {
		cases := adversarial(c)
		norms := make([]float64, len(cases))
		for i, tc := range cases {
			if tc.want != NonFinite {
				norms[i] = math.Sqrt(SumSquaresExact(tc.x))
			}
		}
		for _, k := range []int{12, DefaultK, 52} {
			nz, err := New(c, 1, 1, k)
			if err != nil {
				t.Fatal(err)
			}
			bound := new(big.Int).Lsh(big.NewInt(1), uint(2*k))
			for i, tc := range cases {
				acc := make([]int64, len(tc.x))
				if got := nz.Quantize(tc.x, acc); got != tc.want && (tc.want != Either || got == NonFinite) {
					t.Errorf("C=%v k=%d %s: outcome %v, want %v", c, k, tc.name, got, tc.want)
				}
				ss := bigSumSquares(acc)
				if ss.Cmp(bound) > 0 {
					t.Errorf("C=%v k=%d %s: Σq² = %v exceeds 2^%d", c, k, tc.name, ss, 2*k)
				}
				for j, q := range acc {
					x := float64(tc.x[j])
					if q != 0 && (math.Signbit(x) != (q < 0) || math.Abs(float64(q))*nz.Gamma() > math.Abs(x)*(1+1e-15)) {
						t.Fatalf("C=%v k=%d %s: coordinate %d: %v became %d lattice steps", c, k, tc.name, j, x, q)
					}
				}
				if tc.want != NonFinite {
					norm, _ := new(big.Float).SetInt(ss).Float64()
					exact := norms[i] / nz.Gamma()
					lower := math.Min(exact, math.Ldexp(1-Margin(len(tc.x)), k))*(1-2*Margin(len(tc.x))) - math.Sqrt(float64(len(tc.x)))
					if math.Sqrt(norm) < lower {
						t.Errorf("C=%v k=%d %s: ‖q‖ = %v below 2^k(1−η) − √d = %v", c, k, tc.name, math.Sqrt(norm), lower)
					}
				}
			}
		}
	}
}

// Without the margin the bound fails: on roundsDown's input the float64
// norm equals C, so clipping "to C" by the computed norm keeps the example,
// and its exact lattice point (k = 52 puts float32 values on the lattice)
// has Σq² > 2²ᵏ. The margin is what TestQuantizeNormBound relies on.
func TestQuantizeNeedsMargin(t *testing.T) {
	const k = 52
	x := roundsDown(1)
	norm := math.Sqrt(vec.SumSquares(x))
	if norm != 1 {
		t.Fatalf("computed norm %v, want 1: the input no longer defeats the float64 sum", norm)
	}
	t0 := math.Ldexp(1, k) / norm // η = 0: no clipping, since the computed norm is C
	q := make([]int64, len(x))
	for i, v := range x {
		q[i] = int64(float64(v) * t0)
	}
	if bigSumSquares(q).Cmp(new(big.Int).Lsh(big.NewInt(1), 2*k)) <= 0 {
		t.Fatal("with η = 0 the bound held: the test cannot show that η matters")
	}
	nz, err := New(1, 1, 1, k)
	if err != nil {
		t.Fatal(err)
	}
	clear(q)
	if got := nz.Quantize(x, q); got != Clipped || bigSumSquares(q).Cmp(new(big.Int).Lsh(big.NewInt(1), 2*k)) > 0 {
		t.Fatalf("Quantize: outcome %v, Σq² = %v > 2^%d", got, bigSumSquares(q), 2*k)
	}
}

// The int64 sum is exact: it equals the sum of the quantised examples in
// exact integers in any order, split over "ranks" whose partial sums are
// reduced in any order (wrapping int64 arithmetic is exact mod 2⁶⁴, so even
// an intermediate overflow reduces exactly), and γ·acc as a rational equals
// Σ γ·q_i.
func TestSumExactOrderFree(t *testing.T) {
	src := rand.New(rand.NewPCG(7, 8))
	const d, b = 300, 64
	nz, err := New(1, 1, d, DefaultK)
	if err != nil {
		t.Fatal(err)
	}
	xs := make([][]float32, b)
	qs := make([][]int64, b)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			xs[i][j] = float32(src.NormFloat64() * math.Pow(10, float64(src.IntN(12)-6)))
		}
		qs[i] = make([]int64, d)
		nz.Quantize(xs[i], qs[i])
	}
	exact := make([]*big.Int, d)
	for j := range exact {
		exact[j] = new(big.Int)
		for i := range qs {
			exact[j].Add(exact[j], big.NewInt(qs[i][j]))
		}
	}
	for trial := 0; trial < 5; trial++ {
		perm := src.Perm(b)
		ranks := 1 + src.IntN(7)
		parts := make([][]int64, ranks)
		for r := range parts {
			parts[r] = make([]int64, d)
		}
		for n, i := range perm {
			nz.Quantize(xs[i], parts[n%ranks])
		}
		if trial == 4 { // force wrap-around in one partial sum
			parts[0][0] += math.MaxInt64
			parts = append(parts, make([]int64, d))
			parts[len(parts)-1][0] = -math.MaxInt64
		}
		total := make([]int64, d)
		for _, r := range src.Perm(len(parts)) {
			for j, v := range parts[r] {
				total[j] += v
			}
		}
		for j := range total {
			if !exact[j].IsInt64() || exact[j].Int64() != total[j] {
				t.Fatalf("trial %d coordinate %d: reduced %d, exact %v", trial, j, total[j], exact[j])
			}
			g := new(big.Rat).SetFloat64(nz.Gamma())
			want := new(big.Rat).Mul(g, new(big.Rat).SetInt(exact[j]))
			if got := new(big.Rat).Mul(g, new(big.Rat).SetInt64(total[j])); got.Cmp(want) != 0 {
				t.Fatalf("coordinate %d: γ·acc %v ≠ Σγq %v", j, got, want)
			}
		}
	}
}

// Lattice noise added to zero has variance γ²·Var(round(Z)): the exact
// PMF's variance for a small scale (where the rounding's ≈ γ²/12 shows) and
// (σC)² + γ²/12 for large ones, within 5 standard errors of 2·10⁵ draws;
// the mean is zero within 5 standard errors.
func TestReleaseVariance(t *testing.T) {
	const d = 200_000
	for _, tc := range []struct {
		c, sigma float64
		k        int
	}{{1, 0.5 / 1024, 10}, {1, 1.0 / 1024, 10}, {2, 1.1, DefaultK}, {0.5, 0.01, 30}} {
		nz, err := New(tc.c, tc.sigma, d, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		s := nz.LatticeStd()[0]
		var want float64 // Var(round(Z)) in lattice steps², from the exact PMF
		if s < 10 {
			for m := -40.0; m <= 40; m++ {
				want += m * m * pmf(m, s)
			}
		} else {
			want = s*s + 1.0/12
		}
		want *= nz.Gamma() * nz.Gamma()
		acc := make([]int64, d)
		out := make([]float32, d)
		if err := nz.Release(acc, out, rng.New(9)); err != nil {
			t.Fatal(err)
		}
		var m, v float64
		for _, o := range out {
			m += float64(o)
			v += float64(o) * float64(o)
		}
		m /= d
		v = v/d - m*m
		// se(var) = √(2/d)·var for a normal; round(Z) at s = ½ has a lighter
		// kurtosis than that, so the normal figure is conservative.
		if se := math.Sqrt(2.0/d) * want; math.Abs(v-want) > 5*se || math.Abs(m) > 5*math.Sqrt(want/d) {
			t.Errorf("C=%v σ=%v k=%d: mean %.4g, variance %.6g, want 0 and %.6g ± %.3g", tc.c, tc.sigma, tc.k, m, v, want, 5*se)
		}
		if s >= 10 {
			if cont := tc.sigma * tc.c * tc.sigma * tc.c; math.Abs(want-cont) > 1e-9*cont {
				t.Errorf("large scale: variance %v, continuous %v", want, cont)
			}
		}
	}
}

// Release is S + round(Z) scaled by γ: with the same stream it adds the
// same integers to any S (the draws never see S, so every rank that holds
// the reduced S and the shared stream releases the same point), and Add,
// on a float sum that is a lattice point, releases what Release does.
func TestReleaseSharedNoise(t *testing.T) {
	const d = 1000
	nz, err := NewBlocks(1, DefaultK, []int{400, 600}, []float64{0.7, 2.5})
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]int64, d)
	s := make([]int64, d)
	for j := range s {
		s[j] = int64(j*7919) - 3_000_000
	}
	sNoised := slices.Clone(s)
	if err := nz.AddNoise(zero, rng.New(5)); err != nil {
		t.Fatal(err)
	}
	if err := nz.AddNoise(sNoised, rng.New(5)); err != nil {
		t.Fatal(err)
	}
	for j := range s {
		if sNoised[j]-s[j] != zero[j] {
			t.Fatalf("coordinate %d: noise %d on S, %d on zero", j, sNoised[j]-s[j], zero[j])
		}
	}
	// Per-block scale: the empirical std of each block within 10%.
	for b, blk := range [][2]int{{0, 400}, {400, 1000}} {
		var v float64
		for _, m := range zero[blk[0]:blk[1]] {
			v += float64(m) * float64(m)
		}
		sd := math.Sqrt(v/float64(blk[1]-blk[0])) / math.Ldexp(1, DefaultK)
		if want := []float64{0.7, 2.5}[b]; math.Abs(sd/want-1) > 0.1 {
			t.Errorf("block %d: std %v·C, want %v·C", b, sd, want)
		}
	}
	out := make([]float32, d)
	acc := slices.Clone(s)
	if err := nz.Release(acc, out, rng.New(6)); err != nil {
		t.Fatal(err)
	}
	sum := make([]float32, d)
	nz.ToFloat(s, sum)
	nz.Add(sum, rng.New(6))
	if !slices.Equal(out, sum) {
		t.Fatal("Add on a lattice point differs from Release")
	}
}

func TestAddNoiseOverflow(t *testing.T) {
	nz, err := New(1, 1, 20, DefaultK)
	if err != nil {
		t.Fatal(err)
	}
	acc := make([]int64, 20)
	for i := range acc {
		acc[i] = []int64{math.MaxInt64, math.MinInt64}[i%2]
	}
	err = nz.AddNoise(acc, rng.New(1))
	// Noise of ±2⁴⁰ steps pushes each extreme over with probability ½; the
	// overflowed coordinates saturate rather than wrap.
	if !errors.Is(err, ErrOverflow) {
		t.Fatalf("AddNoise at the int64 limits: error %v, want ErrOverflow (acc %v)", err, acc)
	}
	for i, v := range acc {
		if lim := []int64{math.MaxInt64, math.MinInt64}[i%2]; (i%2 == 0 && v < lim-1<<50) || (i%2 == 1 && v > lim+1<<50) {
			t.Fatalf("coordinate %d wrapped to %d", i, v)
		}
	}
}

func TestNewChecks(t *testing.T) {
	cases := []struct {
		c      float64
		k      int
		sizes  []int
		sigmas []float64
		want   string
	}{
		{0, 40, []int{3}, []float64{1}, "clip norm"},
		{math.Inf(1), 40, []int{3}, []float64{1}, "clip norm"},
		{1, 0, []int{3}, []float64{1}, "exponent"},
		{1, 53, []int{3}, []float64{1}, "exponent"},
		{1, 40, nil, nil, "one multiplier per block"},
		{1, 40, []int{3, 4}, []float64{1}, "one multiplier per block"},
		{1, 40, []int{0}, []float64{1}, "size 0"},
		{1, 40, []int{3}, []float64{0}, "outside"},
		{1, 40, []int{3}, []float64{math.NaN()}, "outside"},
		{1, 10, []int{3}, []float64{1e-7}, "outside"},
		{1, 40, []int{3}, []float64{1e5}, "outside"},
		{1e-310, 40, []int{3}, []float64{1}, "not exact"},
	}
	for _, c := range cases {
		_, err := NewBlocks(c.c, c.k, c.sizes, c.sigmas)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewBlocks(%v, %d, %v, %v): error %v, want one containing %q", c.c, c.k, c.sizes, c.sigmas, err, c.want)
		}
	}
	nz, err := New(2, 1.5, 10, 40)
	if err != nil {
		t.Fatal(err)
	}
	if nz.Gamma() != 2*0x1p-40 || nz.LatticeStd()[0] != 1.5*0x1p40 || nz.Len() != 10 || nz.MaxExamples() != 1<<22 {
		t.Fatalf("γ %v, std %v, len %d, max examples %d", nz.Gamma(), nz.LatticeStd(), nz.Len(), nz.MaxExamples())
	}
}

// RotatedBound reserves γ√d and the float margin; a clip to its value,
// rotated by an orthonormal map and truncated onto the lattice, stays
// within the bound in the rotated basis.
func TestRotatedBound(t *testing.T) {
	nz, err := New(1, 1, 1, 8) // γ = 2⁻⁸: a coarse lattice makes the margin visible
	if err != nil {
		t.Fatal(err)
	}
	got, err := nz.RotatedBound(1, 64)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 - 8*0x1p-8; math.Abs(got-want) > 1e-12 || got >= want {
		t.Fatalf("RotatedBound(1, 64) = %v, want just below %v", got, want)
	}
	if _, err := nz.RotatedBound(1, 1<<16); err == nil {
		t.Fatal("a margin γ√d = 1 ≥ c was accepted")
	}
	// 2-D rotation by θ of coefficients at norm `got`: truncate the natural
	// coordinates, rotate back and check the norm.
	src := rand.New(rand.NewPCG(9, 10))
	for range 1000 {
		th, ph := src.Float64()*2*math.Pi, src.Float64()*2*math.Pi
		b, _ := nz.RotatedBound(1, 2)
		c0, c1 := b*math.Cos(ph), b*math.Sin(ph)
		x0 := math.Trunc((math.Cos(th)*c0-math.Sin(th)*c1)/nz.Gamma()) * nz.Gamma()
		x1 := math.Trunc((math.Sin(th)*c0+math.Cos(th)*c1)/nz.Gamma()) * nz.Gamma()
		if n := math.Hypot(x0, x1); n > 1 {
			t.Fatalf("rotated truncation norm %v > 1", n)
		}
	}
}

// Truncate is the exact truncation toward zero of x/γ, checked in big
// rationals for lattices whose γ is not a power of two (C = 0.1, 3.7) and
// coordinates next to lattice points, and it refuses non-finite or
// out-of-range vectors without touching the sum.
func TestTruncateExact(t *testing.T) {
	src := rand.New(rand.NewPCG(11, 12))
	for _, c := range []float64{1, 0.1, 3.7} {
		for _, k := range []int{8, DefaultK, 52} {
			nz, err := New(c, 1, 1, k)
			if err != nil {
				t.Fatal(err)
			}
			g := new(big.Rat).SetFloat64(nz.Gamma())
			x := make([]float32, 2000)
			for i := range x {
				switch i % 3 {
				case 0: // a lattice point, or one float32 step off it
					q := float64(src.Int64N(1 << min(k, 24)))
					y := float32(q * nz.Gamma())
					x[i] = []float32{y, math.Nextafter32(y, 0), math.Nextafter32(y, 10)}[src.IntN(3)]
				case 1:
					x[i] = float32(src.Float64() * c)
				default:
					x[i] = float32(src.Float64() * c * math.Pow(2, float64(-src.IntN(60))))
				}
				if src.IntN(2) == 0 {
					x[i] = -x[i]
				}
			}
			acc := make([]int64, len(x))
			if !nz.Truncate(x, acc) {
				t.Fatalf("C=%v k=%d: refused a finite vector", c, k)
			}
			for i, v := range x {
				r := new(big.Rat).Quo(new(big.Rat).SetFloat64(float64(v)), g)
				want := new(big.Int).Quo(r.Num(), r.Denom()) // truncates toward zero
				if want.Int64() != acc[i] {
					t.Fatalf("C=%v k=%d: trunc(%v/γ) = %v, got %d", c, k, v, want, acc[i])
				}
			}
		}
	}
	nz, err := New(1, 1, 1, DefaultK)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][]float32{{1, float32(math.NaN())}, {float32(math.Inf(-1))}, {0x1p22, 0}} {
		acc := []int64{5, 7}[:len(x)]
		if nz.Truncate(x, acc) || acc[0] != 5 {
			t.Errorf("Truncate(%v) accepted or changed the sum: %v", x, acc)
		}
	}
}

// ClipFactorTo bounds a block by its own c: for every adversarial block
// (norms at, and one float32 step around, c), every ratio c/C (one, and
// ones whose quotient rounds) and three lattices, the block's exact
// lattice point satisfies Σq²·C² ≤ 2²ᵏ·c² in exact rationals (C and c are
// exact float64 values), and no coordinate grows.
func TestClipFactorToBound(t *testing.T) {
	for _, C := range []float64{1, 3.7} {
		for _, ratio := range []float64{1, 1 / math.Sqrt(3), 0.3, 1e-3} {
			c := C * ratio
			for _, k := range []int{12, DefaultK, 52} {
				nz, err := New(C, 1, 1, k)
				if err != nil {
					t.Fatal(err)
				}
				want := new(big.Rat).SetFloat64(c)
				want.Mul(want, want)
				want.Mul(want, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(2*k))))
				for _, tc := range adversarial(c) {
					f, out := nz.ClipFactorTo(vec.SumSquares(tc.x), len(tc.x), c)
					if (out == NonFinite) != (tc.want == NonFinite) {
						t.Fatalf("C=%v c=%v %s: outcome %v", C, c, tc.name, out)
					}
					if out == NonFinite {
						continue
					}
					acc := make([]int64, len(tc.x))
					AddScaled(tc.x, f, acc)
					got := new(big.Rat).SetInt(bigSumSquares(acc))
					cc := new(big.Rat).SetFloat64(C)
					got.Mul(got, cc.Mul(cc, cc))
					if got.Cmp(want) > 0 {
						t.Errorf("C=%v c=%v k=%d %s: Σq²·C² exceeds 2^2k·c²", C, c, k, tc.name)
					}
					for j, q := range acc {
						if x := float64(tc.x[j]); q != 0 && (math.Signbit(x) != (q < 0) || math.Abs(float64(q))*nz.Gamma() > math.Abs(x)*(1+1e-15)) {
							t.Fatalf("C=%v c=%v k=%d %s: coordinate %d: %v became %d steps", C, c, k, tc.name, j, x, q)
						}
					}
				}
			}
		}
	}
}

// FloorSteps is the largest Q with Q·γ ≤ c, checked in exact rationals
// for bounds on, just below and just above lattice points, tiny and at C;
// AddScaledClamped truncates, clamps to ±qmax and skips masked
// coordinates, against a direct computation.
func TestFloorStepsAndClamp(t *testing.T) {
	nz, err := New(3.7, 1, 1, DefaultK)
	if err != nil {
		t.Fatal(err)
	}
	g := nz.Gamma()
	for _, c := range []float64{0, g / 2, g, 3 * g, math.Nextafter(3*g, 0), math.Nextafter(3*g, 4), 0.1, 1 / math.Sqrt(7), 3.7 / 100, math.Nextafter(3.7, 0), 3.7, 50} {
		q := nz.FloorSteps(c)
		if c >= 3.7 {
			if q != 1<<DefaultK {
				t.Errorf("FloorSteps(%v) = %d, want 2^k", c, q)
			}
			continue
		}
		cr, gr := new(big.Rat).SetFloat64(c), new(big.Rat).SetFloat64(g)
		lo := new(big.Rat).Mul(new(big.Rat).SetInt64(q), gr)
		hi := new(big.Rat).Mul(new(big.Rat).SetInt64(q+1), gr)
		if lo.Cmp(cr) > 0 || hi.Cmp(cr) <= 0 {
			t.Errorf("FloorSteps(%v) = %d: not the largest Q with Qγ ≤ c", c, q)
		}
	}
	x := []float32{1, -1, 0.25, -0.25, 3, -3, 0.5, 7}
	words := []uint64{0b01111111} // coordinate 7 masked out
	for _, tc := range []struct {
		qmax  int64
		words []uint64
		want  []int64
	}{
		{100, nil, []int64{40, -40, 10, -10, 100, -100, 20, 100}},
		{15, nil, []int64{15, -15, 10, -10, 15, -15, 15, 15}},
		{15, words, []int64{15, -15, 10, -10, 15, -15, 15, 0}},
	} {
		acc := make([]int64, len(x))
		AddScaledClamped(x, 40, tc.qmax, tc.words, 0, acc)
		if !slices.Equal(acc, tc.want) {
			t.Errorf("qmax %d mask %v: %v, want %v", tc.qmax, tc.words, acc, tc.want)
		}
	}
	// An offset into the mask: coordinates 64.. of a longer vector.
	acc := make([]int64, 2)
	AddScaledClamped([]float32{1, 1}, 2, 10, []uint64{0, 0b10}, 64, acc)
	if !slices.Equal(acc, []int64{0, 2}) {
		t.Errorf("mask offset 64: %v, want [0 2]", acc)
	}
}

// A large AddNoise is drawn in chunks on parallel workers: the values are
// the same for 1, 2 and 3 workers, the parent stream advances by exactly
// one word (the nonce), each chunk's noise (and each block's, across a
// chunk boundary) has the block's std within 4%, and neighbouring chunks
// are uncorrelated (|r| < 5/√noiseChunk), not copies of each other.
func TestAddNoiseChunks(t *testing.T) {
	sizes := []int{2*noiseChunk + 1000, 3*noiseChunk - 1000 + 77}
	sigmas := []float64{0.5, 3}
	nz, err := NewBlocks(1, DefaultK, sizes, sigmas)
	if err != nil {
		t.Fatal(err)
	}
	d := nz.Len()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []int64
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		acc, r := make([]int64, d), rng.New(11)
		if err := nz.AddNoise(acc, r); err != nil {
			t.Fatal(err)
		}
		ref := rng.New(11)
		ref.Uint64()
		if r.Uint64() != ref.Uint64() {
			t.Fatalf("GOMAXPROCS=%d: the stream did not advance by exactly one word", procs)
		}
		if first == nil {
			first = acc
			continue
		}
		if !slices.Equal(acc, first) {
			t.Fatalf("GOMAXPROCS=%d: noise differs from one worker's", procs)
		}
	}
	unit := math.Ldexp(1, DefaultK)
	for c := 0; c*noiseChunk < d; c++ {
		lo, hi := c*noiseChunk, min(d, (c+1)*noiseChunk)
		for b, off := range []int{0, sizes[0]} {
			l, h := max(lo, off), min(hi, off+sizes[b])
			if h-l < 1000 {
				continue
			}
			var v float64
			for _, m := range first[l:h] {
				v += float64(m) * float64(m)
			}
			if sd := math.Sqrt(v/float64(h-l)) / unit; math.Abs(sd/sigmas[b]-1) > 0.04 {
				t.Errorf("chunk %d block %d: std %.4f, want %v", c, b, sd, sigmas[b])
			}
		}
	}
	var xy, xx, yy float64 // chunks 0 and 1, both in block 0
	for i := range noiseChunk {
		x, y := float64(first[i]), float64(first[noiseChunk+i])
		xy, xx, yy = xy+x*y, xx+x*x, yy+y*y
	}
	if r := xy / math.Sqrt(xx*yy); math.Abs(r) > 5/math.Sqrt(noiseChunk) {
		t.Errorf("chunks 0 and 1 correlate: r = %.4f", r)
	}
}
