package lattice

import (
	"math"
	"math/big"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// pmfMoments returns E[M], E[M²] and E[M⁴] of M = round(Z), Z ~ N(0, s²),
// summed over the exact PMF (every integer with mass above 10⁻³⁰⁰).
func pmfMoments(s float64) (m1, m2, m4 float64) {
	lim := int(math.Ceil(40*s)) + 2
	for m := -lim; m <= lim; m++ {
		p := pmf(float64(m), s)
		x := float64(m)
		m1 += p * x
		m2 += p * x * x
		m4 += p * x * x * x * x
	}
	return m1, m2, m4
}

// Released counts are the count plus exact rounded-Gaussian noise: their
// first, second and fourth moments about the count match the PMF's sums
// within 5 standard errors over 2·10⁵ draws, every release is an integer
// whose offset from the count does not depend on the count, and a std
// outside the sampler's range is refused.
func TestCountNoiseMoments(t *testing.T) {
	const n = 200_000
	for i, s := range []float64{0.3, 1, 2.5, 17} {
		cn, err := NewCountNoise(s)
		if err != nil {
			t.Fatal(err)
		}
		r1, r2 := rng.New(uint64(10+i)), rng.New(uint64(10+i))
		var s1, s2, s4 float64
		for j := range n {
			c := int64(j % 1000)
			v, err := cn.Release(c, r1)
			if err != nil {
				t.Fatal(err)
			}
			w, err := cn.Release(c+12345, r2)
			if err != nil {
				t.Fatal(err)
			}
			if w-12345 != v {
				t.Fatalf("σ=%g: the noise depends on the count: %d and %d", s, v-c, w-c-12345)
			}
			x := float64(v - c)
			s1 += x
			s2 += x * x
			s4 += x * x * x * x
		}
		m1, m2, m4 := pmfMoments(s)
		// Standard errors from the PMF's own higher moments (m3 = 0, m6 ≤ 15σ⁶-ish: use 15m2³+1).
		se1 := math.Sqrt(m2 / n)
		se2 := math.Sqrt((m4 - m2*m2) / n)
		se4 := math.Sqrt((105*m2*m2*m2*m2 + 1 - m4*m4) / n)
		for _, c := range []struct {
			name           string
			got, want, tol float64
		}{{"mean", s1 / n, m1, 5 * se1}, {"E[M²]", s2 / n, m2, 5 * se2}, {"E[M⁴]", s4 / n, m4, 5 * se4}} {
			if math.Abs(c.got-c.want) > c.tol {
				t.Errorf("σ=%g %s: %.5g, exact %.5g ± %.3g", s, c.name, c.got, c.want, c.tol)
			}
		}
	}
	for _, s := range []float64{0, 0x1p-11, 0x1p53, math.NaN(), math.Inf(1)} {
		if _, err := NewCountNoise(s); err == nil {
			t.Errorf("NewCountNoise(%v) accepted", s)
		}
	}
}

// sumRecords are finite records of d = 3 coordinates, some far beyond the
// bound, some exactly on it, some subnormal or huge.
func sumRecords(bound float64) [][]float64 {
	r := rng.New(7)
	out := [][]float64{
		{bound, 0, 0}, {0, -bound, 0}, {bound / math.Sqrt(3), bound / math.Sqrt(3), bound / math.Sqrt(3)},
		{math.Nextafter(bound, math.Inf(1)), 0, 0}, {1e300, -1e300, 1e300}, {math.MaxFloat64, math.MaxFloat64, 0},
		{5e-324, -5e-324, 0}, {0, 0, 0},
	}
	for range 200 {
		scale := math.Exp(6 * (r.Float64() - 0.5))
		out = append(out, []float64{bound * scale * (r.Float64() - 0.5), bound * scale * (r.Float64() - 0.5), bound * scale * (r.Float64() - 0.5)})
	}
	return out
}

// Every record's lattice point has ‖q‖₂ ≤ 2ᵏ in exact integers, the margin
// alone ensures it (the exact check never has to act), and the integer sum
// is the exact sum of the records' points, the same in any order.
func TestSumBoundAndExactness(t *testing.T) {
	for _, bound := range []float64{1, 0.1, 37.5} {
		for _, k := range []int{10, 40, 52} {
			recs := sumRecords(bound)
			fwd, err := NewSum(bound, 0x1p-10, 3, k)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]*big.Int, 3)
			for j := range want {
				want[j] = new(big.Int)
			}
			lim := new(big.Int).Lsh(big.NewInt(1), uint(2*k))
			for _, x := range recs {
				q := make([]int64, 3)
				if _, ok := fwd.quantize(x, q); !ok {
					t.Fatalf("finite record %v dropped", x)
				}
				if bigSumSquares(q).Cmp(lim) > 0 {
					t.Errorf("Δ=%g k=%d: record %v → %v exceeds 2^k", bound, k, x, q)
				}
				for j := range q {
					want[j].Add(want[j], big.NewInt(q[j]))
				}
			}
			if fwd.adjusted != 0 {
				t.Errorf("Δ=%g k=%d: the exact check adjusted %d records; the margin should suffice", bound, k, fwd.adjusted)
			}
			rev, _ := NewSum(bound, 0x1p-10, 3, k)
			for i := range recs {
				if _, err := fwd.Add(recs[i]); err != nil {
					t.Fatal(err)
				}
				if _, err := rev.Add(recs[len(recs)-1-i]); err != nil {
					t.Fatal(err)
				}
			}
			for j := range 3 {
				if fwd.acc[j] != rev.acc[j] || big.NewInt(fwd.acc[j]).Cmp(want[j]) != 0 {
					t.Errorf("Δ=%g k=%d coordinate %d: sums %d and %d, exact %v", bound, k, j, fwd.acc[j], rev.acc[j], want[j])
				}
			}
		}
	}
}

// Without the margin, 1000 coordinates of Δ·2⁻²⁷ beside one of Δ leave the
// float64 norm at Δ while the true norm exceeds it: the exact check is what
// then keeps ‖q‖₂ ≤ 2ᵏ.
func TestSumExactCheckActsWithoutMargin(t *testing.T) {
	const k = 52
	x := make([]float64, 1001)
	x[0] = 1
	for j := 1; j < len(x); j++ {
		x[j] = 0x1p-27
	}
	if m, n, _ := norm2(x); m*n != 1 {
		t.Fatalf("setup: float norm %v, want exactly 1", n)
	}
	s, err := NewSum(1, 0x1p-52, len(x), k)
	if err != nil {
		t.Fatal(err)
	}
	s.eta = 0
	q := make([]int64, len(x))
	s.quantize(x, q)
	if s.adjusted != 1 {
		t.Fatalf("exact check adjusted %d records, want 1", s.adjusted)
	}
	if bigSumSquares(q).Cmp(new(big.Int).Lsh(big.NewInt(1), 2*k)) > 0 {
		t.Errorf("‖q‖² = %v > 2^%d", bigSumSquares(q), 2*k)
	}
}

// Non-finite records add nothing; the released vector is γ times integers
// whose noise has the rounded Gaussian's variance (σ·2ᵏ)² + 1/12 within
// 5 standard errors over 20000 coordinates.
func TestSumRelease(t *testing.T) {
	const d, sigma = 20000, 0.75
	k := SumExponent(1000)
	s, err := NewSum(2, sigma, d, k)
	if err != nil {
		t.Fatal(err)
	}
	bad := make([]float64, d)
	bad[3] = math.NaN()
	if out, _ := s.Add(bad); out != NonFinite {
		t.Errorf("NaN record: outcome %v, want NonFinite", out)
	}
	bad[3] = math.Inf(-1)
	s.Add(bad)
	for j, v := range s.acc {
		if v != 0 {
			t.Fatalf("non-finite record added %d at %d", v, j)
		}
	}
	out, err := s.Release(rng.New(3))
	if err != nil {
		t.Fatal(err)
	}
	g := s.Gamma()
	if g != math.Ldexp(2, -k) {
		t.Fatalf("γ = %v, want 2·2^-%d", g, k)
	}
	ls := math.Ldexp(sigma, k)
	var ss float64
	for i, v := range out {
		m := v / g
		if m != math.Trunc(m) || m != float64(s.acc[i]) {
			t.Fatalf("coordinate %d: %v is not γ times the lattice point %d", i, v, s.acc[i])
		}
		ss += m * m
	}
	want := ls*ls + 1.0/12
	if got, se := ss/d, want*math.Sqrt(2.0/d); math.Abs(got-want) > 5*se {
		t.Errorf("noise variance %.6g lattice steps², want %.6g ± %.3g", got, want, 5*se)
	}
}

func TestSumExponent(t *testing.T) {
	for _, c := range []struct{ n, k int }{{0, 40}, {1, 40}, {1 << 20, 40}, {1<<21 - 1, 40}, {1 << 21, 39}, {1 << 40, 20}} {
		if got := SumExponent(c.n); got != c.k {
			t.Errorf("SumExponent(%d) = %d, want %d", c.n, got, c.k)
		}
		if c.n > 0 && float64(c.n)*math.Ldexp(1, SumExponent(c.n)) > 0x1p61 {
			t.Errorf("n = %d records of 2^k overflow 2^61", c.n)
		}
	}
}

// Exact is γ·S before the noise: for records inside the bound (Δ = 1, so
// the scaling by 2ᵏ is exact) S_j = Σ trunc(x_j·2ᵏ), and the release then
// differs from it by γ times integers.
func TestSumExactIsTheNoiseFreeSum(t *testing.T) {
	const k = 30
	s, err := NewSum(1, 2, 3, k)
	if err != nil {
		t.Fatal(err)
	}
	recs := [][]float64{{0.5, -0.25, 0.1}, {-0.3, 0.3, 1e-12}, {0, 0.7, -0.7}}
	want := make([]float64, 3)
	for _, x := range recs {
		if out, err := s.Add(x); err != nil || out != Kept {
			t.Fatalf("Add(%v) = %v, %v", x, out, err)
		}
		for j, v := range x {
			want[j] += math.Trunc(math.Ldexp(v, k))
		}
	}
	got := s.Exact()
	for j := range want {
		if got[j] != math.Ldexp(want[j], -k) {
			t.Errorf("Exact()[%d] = %v, want %v", j, got[j], math.Ldexp(want[j], -k))
		}
	}
	rel, err := s.Release(rng.New(5))
	if err != nil {
		t.Fatal(err)
	}
	for j := range rel {
		if n := math.Ldexp(rel[j]-got[j], k); n != math.Round(n) || n == 0 {
			t.Errorf("release %v minus the exact sum %v is %v steps: want a nonzero integer (σ·2ᵏ = 2³¹)", rel[j], got[j], n)
		}
	}
}
