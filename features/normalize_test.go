package features

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
)

// exactStats computes per-channel mean and population std the plain way.
func exactStats(x []float32, n int, shape []int) ChannelStats {
	c, hw := shape[0], shape[1]*shape[2]
	st := ChannelStats{Mean: make([]float64, c), Std: make([]float64, c)}
	for ch := range c {
		var vals []float64
		for i := range n {
			for _, v := range x[(i*c+ch)*hw : (i*c+ch+1)*hw] {
				vals = append(vals, float64(v))
			}
		}
		var m float64
		for _, v := range vals {
			m += v
		}
		m /= float64(len(vals))
		var ss float64
		for _, v := range vals {
			ss += (v - m) * (v - m)
		}
		st.Mean[ch], st.Std[ch] = m, math.Sqrt(ss/float64(len(vals)))
	}
	return st
}

func TestPrivateChannelStatsNoiselessIsExact(t *testing.T) {
	shape := []int{4, 3, 5}
	const n = 50
	x := randomPlanes(11, n*60)
	for i := range x {
		x[i] = x[i]*float32(1+i%4) - 1 // channels of different scale and mean
	}
	want := exactStats(x, n, shape)
	for _, scale := range [][]float64{nil, {1, 2, 0.5, 10}} {
		// Clip 10⁴ is above every example's norm; σ = 10⁻¹² gives noise
		// std 10⁻⁸ on each sum, and the lattice step is 10⁴·2⁻⁴⁰ ≈ 9·10⁻⁹:
		// together far below the tolerance.
		got, err := PrivateChannelStats(x, n, shape, PrivateStatsConfig{Clip: 1e4, Sigma: 1e-12, ChannelScale: scale}, rng.New(1))
		if err != nil {
			t.Fatal(err)
		}
		for ch := range 4 {
			if math.Abs(got.Stats.Mean[ch]-want.Mean[ch]) > 1e-6 || math.Abs(got.Stats.Std[ch]-want.Std[ch]) > 1e-6 {
				t.Errorf("scale %v channel %d: got (%g, %g), want (%g, %g)", scale, ch,
					got.Stats.Mean[ch], got.Stats.Std[ch], want.Mean[ch], want.Std[ch])
			}
		}
	}
}

// The declared sensitivity holds: removing any one example moves the
// released lattice sum by at most Clip in L2, even for an outlier far above
// it (both releases draw the same noise: it does not depend on the data).
func TestPrivateChannelStatsSensitivity(t *testing.T) {
	shape := []int{3, 2, 2}
	const n, clip = 20, 0.7
	x := randomPlanes(12, n*12)
	for k := range 12 {
		x[5*12+k] = 40 // an outlier example
	}
	w := []float64{1, 3, 0.2}
	all, err := clippedSums(x, n, shape, w, clip, 1e-9, rng.New(5))
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i := range n {
		rest := append(append([]float32{}, x[:i*12]...), x[(i+1)*12:]...)
		s, err := clippedSums(rest, n-1, shape, w, clip, 1e-9, rng.New(5))
		if err != nil {
			t.Fatal(err)
		}
		var d2 float64
		for k := range s {
			d2 += (all[k] - s[k]) * (all[k] - s[k])
		}
		worst = max(worst, math.Sqrt(d2))
	}
	if worst > clip+1e-12 || worst < clip-1e-9 {
		t.Errorf("max change from removing one example %g, want exactly the clip %g (the outlier is clipped)", worst, clip)
	}
}

// Monte Carlo: the released mean of each channel has standard deviation
// σ·Clip/(n·w_c) around the exact mean (Clip is above every example's norm).
func TestPrivateChannelStatsNoiseScale(t *testing.T) {
	shape := []int{2, 2, 2}
	const n, clip, sigma, runs = 10, 20.0, 1.5, 4000
	x := randomPlanes(13, n*8)
	w := []float64{1, 4}
	exact := exactStats(x, n, shape)
	s := rng.New(99)
	var sum, sum2 [2]float64
	for range runs {
		got, err := PrivateChannelStats(x, n, shape, PrivateStatsConfig{Clip: clip, Sigma: sigma, ChannelScale: w}, s)
		if err != nil {
			t.Fatal(err)
		}
		for ch := range 2 {
			d := got.Stats.Mean[ch] - exact.Mean[ch]
			sum[ch] += d
			sum2[ch] += d * d
		}
	}
	for ch := range 2 {
		want := sigma * clip / n / w[ch]
		sd := math.Sqrt(sum2[ch]/runs - (sum[ch]/runs)*(sum[ch]/runs))
		// 4000 draws: the sample sd is within ±4% of the truth with
		// probability > 0.99; the bias within 4 standard errors.
		if math.Abs(sd/want-1) > 0.04 || math.Abs(sum[ch]/runs) > 4*want/math.Sqrt(runs) {
			t.Errorf("channel %d: noise sd %g (bias %g), want %g", ch, sd, sum[ch]/runs, want)
		}
	}
}

func TestPrivateChannelStatsAccounting(t *testing.T) {
	x := randomPlanes(14, 5*4)
	res, err := PrivateChannelStats(x, 5, []int{1, 2, 2}, PrivateStatsConfig{Clip: 1, Sigma: 4, Delta: 1e-5}, rng.New(2))
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := res.Event.(accountant.Gaussian); !ok || g.Sigma != 4 {
		t.Errorf("event %#v, want Gaussian{Sigma: 4}", res.Event)
	}
	if res.Sensitivity != 1 || res.Relation != accountant.AddRemove {
		t.Errorf("sensitivity %v relation %v", res.Sensitivity, res.Relation)
	}
	// One Gaussian with σ = 4: RDP α/(2σ²); the classic conversion
	// min_α α/32 + ln(1/δ)/(α−1) = 1/32 + 2·sqrt(ln(1e5)/32) ≈ 1.230 bounds
	// the tighter Balle et al. value from above; the analytic Gaussian
	// (Balle & Wang) ε ≈ 0.92 at δ=1e-5 bounds every RDP conversion from below.
	classic := 1.0/32 + 2*math.Sqrt(math.Log(1e5)/32)
	if !(res.Epsilon > 0.9 && res.Epsilon < classic) {
		t.Errorf("ε = %g, want in (0.9, %g)", res.Epsilon, classic)
	}
	t.Logf("σ=4, one release: ε = %.4f at δ = 1e-5 (classic RDP bound %.4f)", res.Epsilon, classic)
	for _, cfg := range []PrivateStatsConfig{{Clip: 0, Sigma: 1}, {Clip: 1, Sigma: 0}, {Clip: 1, Sigma: math.NaN()},
		{Clip: 1, Sigma: 1, ChannelScale: []float64{1, 2}}, {Clip: 1, Sigma: 1, ChannelScale: []float64{-1}}} {
		if _, err := PrivateChannelStats(x, 5, []int{1, 2, 2}, cfg, rng.New(2)); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	bad := append([]float32{}, x...)
	bad[7] = float32(math.NaN())
	if _, err := PrivateChannelStats(bad, 5, []int{1, 2, 2}, PrivateStatsConfig{Clip: 1, Sigma: 1}, rng.New(2)); err == nil {
		t.Error("NaN feature accepted")
	}
}

func TestGroupNormalize(t *testing.T) {
	shape := []int{6, 2, 3}
	const n, groups = 3, 3
	x := randomPlanes(15, n*36)
	// Each group of example 1 is an affine image of example 0's: group
	// normalisation must map both to the same values.
	for k := range 36 {
		g := k / 12
		x[36+k] = x[k]*float32(g+2) + float32(g) - 5
	}
	if err := GroupNormalize(x, n, shape, groups, 0); err != nil {
		t.Fatal(err)
	}
	for g := range n * groups {
		var s, ss float64
		for _, v := range x[g*12 : (g+1)*12] {
			s += float64(v)
			ss += float64(v) * float64(v)
		}
		if math.Abs(s/12) > 1e-6 || math.Abs(ss/12-1) > 1e-5 {
			t.Errorf("group %d: mean %g, mean square %g, want 0 and 1", g, s/12, ss/12)
		}
	}
	for k := range 36 {
		if math.Abs(float64(x[k]-x[36+k])) > 1e-5 {
			t.Fatalf("affine-related examples normalise differently at %d: %g vs %g", k, x[k], x[36+k])
		}
	}
	if err := GroupNormalize(x, n, shape, 4, 0); err == nil {
		t.Error("4 groups of 6 channels accepted")
	}
}

func TestChannelStatsApply(t *testing.T) {
	x := []float32{1, 3, 10, 20, 5, 7, 30, 40}
	ChannelStats{Mean: []float64{2, 25}, Std: []float64{1, 5}}.Apply(x, 2, []int{2, 2})
	want := []float32{-1, 1, -3, -1, 3, 5, 1, 3}
	for i := range want {
		if x[i] != want[i] {
			t.Fatalf("got %v, want %v", x, want)
		}
	}
}

func TestReferenceScales(t *testing.T) {
	s, err := NewScattering(32, 32, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sc := ReferenceScales(s, 1, 4, 1)
	// Order 0 of uniform noise is ≈ its mean 0.5·φ̂(0): scale ≈ 2.
	if math.Abs(sc[0]-2) > 0.1 {
		t.Errorf("order-0 reference scale %g, want ≈ 2", sc[0])
	}
	// Higher orders are smaller, so their scales are larger.
	for k := 1; k < 81; k++ {
		if !(sc[k] > sc[0]) {
			t.Errorf("scale of coefficient %d = %g not above order 0's %g", k, sc[k], sc[0])
		}
	}
}
