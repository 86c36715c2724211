package preprocess

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
)

func TestParseFeatureBounds(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.txt")
	if err := os.WriteFile(file, []byte("# declared\n0:1  # a\n-2:2.5\n\n10:20 # c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in     string
		d      int
		lo, hi []float64
		err    bool
	}{
		{"0:16", 3, []float64{0, 0, 0}, []float64{16, 16, 16}, false},
		{"0:1, -2:2.5,10:20", 3, []float64{0, -2, 10}, []float64{1, 2.5, 20}, false},
		{"@" + file, 3, []float64{0, -2, 10}, []float64{1, 2.5, 20}, false},
		{"0:1,2:3", 3, nil, nil, true},        // neither one pair nor d
		{"1:1", 2, nil, nil, true},            // lo < hi
		{"3:1", 2, nil, nil, true},            // lo < hi
		{"0-1", 1, nil, nil, true},            // not lo:hi
		{"0:inf", 1, nil, nil, true},          // finite
		{"a:1", 1, nil, nil, true},            // numbers
		{"@" + file + "x", 3, nil, nil, true}, // missing file
	} {
		b, err := ParseFeatureBounds(tc.in, tc.d)
		if (err != nil) != tc.err {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if !tc.err && (!slices.Equal(b.Lo, tc.lo) || !slices.Equal(b.Hi, tc.hi)) {
			t.Errorf("%q: %v %v, want %v %v", tc.in, b.Lo, b.Hi, tc.lo, tc.hi)
		}
	}
}

func TestFeatureBoundsClip(t *testing.T) {
	b := FeatureBounds{Lo: []float64{0, -1}, Hi: []float64{16, 1}}
	for _, tc := range []struct{ in, want []float32 }{
		{[]float32{-3, 0.5, 20, -7}, []float32{0, 0.5, 16, -1}},
		{[]float32{0, -1, 16, 1}, []float32{0, -1, 16, 1}},
		{[]float32{7.25, 2}, []float32{7.25, 1}},
	} {
		x := slices.Clone(tc.in)
		b.Clip32(x, len(x)/2, 2)
		if !slices.Equal(x, tc.want) {
			t.Errorf("clip %v = %v, want %v", tc.in, x, tc.want)
		}
	}
	c, s := b.MinMax()
	if !slices.Equal(c, []float64{0, -1}) || !slices.Equal(s, []float64{16, 2}) {
		t.Errorf("minmax %v %v", c, s)
	}
}

// With negligible noise the released statistics are the clipped records'
// exact mean and (population) std; out-of-bound values count as the bound.
func TestBoundedStandardizerClippedStatistics(t *testing.T) {
	b := FeatureBounds{Lo: []float64{0, -10}, Hi: []float64{10, 10}}
	for _, tc := range []struct {
		x         []float32
		mean, std []float64
	}{
		// feature 0: 2, 4, 10(clipped from 50), 0(clipped from -5): mean 4, var (4+0+36+16)/4 = 14
		// feature 1: 1, -1, 3, -3: mean 0, var 5
		{[]float32{2, 1, 4, -1, 50, 3, -5, -3}, []float64{4, 0}, []float64{math.Sqrt(14), math.Sqrt(5)}},
		// constant features: the variance floor, 1% of the range
		{[]float32{5, 0, 5, 0}, []float64{5, 0}, []float64{0.1, 0.2}},
	} {
		n := len(tc.x) / 2
		st, ev, err := BoundedStandardizer{Bounds: b, Sigma: 1e-9}.Fit(tc.x, n, 2, rng.New(1))
		if err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			if math.Abs(st.Mean[j]-tc.mean[j]) > 1e-6 || math.Abs(st.Std[j]-tc.std[j]) > 1e-6 {
				t.Errorf("%v: feature %d mean %v std %v, want %v %v", tc.x, j, st.Mean[j], st.Std[j], tc.mean[j], tc.std[j])
			}
		}
		if ev != (accountant.Gaussian{Sigma: 1e-9}) {
			t.Errorf("event %#v", ev)
		}
	}
}

// The noise on every released coordinate has std Sigma·Δ with
// Δ = √(d/4 + d/16) (n public, not released), for the Gaussian{Sigma}
// event charged: measured on the released sums of all-zero records
// (Σv = −n/2, Σv² = n/4 exactly) over many draws.
func TestBoundedStandardizerNoiseMatchesEvent(t *testing.T) {
	for _, tc := range []struct {
		d     int
		sigma float64
		delta float64 // Δ
	}{
		{1, 2, math.Sqrt(1.0/4 + 1.0/16)},
		{30, 8.63, math.Sqrt(30.0 * 5 / 16)},
		{64, 0.5, math.Sqrt(64.0 * 5 / 16)},
	} {
		if got := StandardizeSensitivity(tc.d); math.Abs(got-tc.delta) > 1e-12 {
			t.Errorf("d=%d: Δ %v, want %v", tc.d, got, tc.delta)
		}
		n := 5
		x := make([]float32, n*tc.d)
		bs := BoundedStandardizer{Bounds: FeatureBounds{Lo: make([]float64, tc.d), Hi: slices.Repeat([]float64{1}, tc.d)}, Sigma: tc.sigma}
		const draws = 4000
		var ss float64
		var m int
		for i := range draws {
			st, ev, err := bs.Fit(x, n, tc.d, rng.New(uint64(i)))
			if err != nil {
				t.Fatal(err)
			}
			if g, ok := ev.(accountant.Gaussian); !ok || g.Sigma != tc.sigma || st.NoiseStd != g.Sigma*tc.delta {
				t.Fatalf("d=%d: event %#v, noise std %v; want Gaussian{%v} and %v", tc.d, ev, st.NoiseStd, tc.sigma, tc.sigma*tc.delta)
			}
			if st.Count != float64(n) || len(st.Released) != 2*tc.d {
				t.Fatalf("d=%d: count %v, %d released values", tc.d, st.Count, len(st.Released))
			}
			for j, v := range st.Released {
				want := -float64(n) / 2
				if j >= tc.d {
					want = float64(n) / 4
				}
				ss += (v - want) * (v - want)
				m++
			}
		}
		// The sample std of at least 4000 normals is within 5% of the
		// truth with probability > 0.999.
		if got, want := math.Sqrt(ss/float64(m)), tc.sigma*tc.delta; math.Abs(got/want-1) > 0.05 {
			t.Errorf("d=%d: measured noise std %v, want %v", tc.d, got, want)
		}
	}
}

func TestScaleSigma(t *testing.T) {
	for _, tc := range []struct{ frac, eps, delta float64 }{{0.1, 4, 1e-5}, {0.3, 1, 1e-5}} {
		got, err := ScaleSigma(tc.frac, tc.eps, tc.delta)
		want, err2 := AnalyticGaussianSigma(tc.frac*tc.eps, tc.delta)
		if err != nil || err2 != nil || got != want {
			t.Errorf("%+v: %v %v, want %v", tc, got, err, want)
		}
	}
	for _, frac := range []float64{0, 1, -0.1} {
		if _, err := ScaleSigma(frac, 4, 1e-5); err == nil {
			t.Errorf("fraction %v accepted", frac)
		}
	}
}
