package features

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// ChannelStats holds a per-channel mean and standard deviation of features
// laid out as n × [C, H, W].
type ChannelStats struct {
	Mean, Std []float64
}

// Apply standardises x in place, (x − Mean[c]) / Std[c] for every value of
// channel c. Stats that are fixed in advance (data-independent, e.g. from
// public data) cost no privacy; stats from PrivateChannelStats cost what
// that call declared. It panics if x does not hold n × shape values or the
// stats do not have shape[0] channels.
func (st ChannelStats) Apply(x []float32, n int, shape []int) {
	c, hw := splitShape(x, n, shape)
	if len(st.Mean) != c || len(st.Std) != c {
		panic(fmt.Sprintf("features: %d/%d stats for %d channels", len(st.Mean), len(st.Std), c))
	}
	for i := range n {
		for ch := range c {
			m, inv := float32(st.Mean[ch]), float32(1/st.Std[ch])
			p := x[(i*c+ch)*hw : (i*c+ch+1)*hw]
			for k := range p {
				p[k] = (p[k] - m) * inv
			}
		}
	}
}

func splitShape(x []float32, n int, shape []int) (c, hw int) {
	if len(shape) == 0 {
		panic("features: empty shape")
	}
	c, hw = shape[0], 1
	for _, d := range shape[1:] {
		hw *= d
	}
	if c <= 0 || n < 0 || len(x) != n*c*hw {
		panic(fmt.Sprintf("features: %d values for %d examples of shape %v", len(x), n, shape))
	}
	return c, hw
}

// GroupNormalize normalises each example on its own, without dataset
// statistics (so at no privacy cost): the C channels are split into groups
// consecutive groups, and each group's values (channels × spatial) are
// shifted and scaled to mean 0 and variance 1 (variance + eps under the
// square root). This is the GroupNorm without affine parameters that
// Tramèr & Boneh put in front of their ScatterNet models; they tune the
// group count (27 divides 243 and gives 9 channels per group). An error
// reports a group count that does not divide C.
func GroupNormalize(x []float32, n int, shape []int, groups int, eps float64) error {
	c, hw := splitShape(x, n, shape)
	if groups <= 0 || c%groups != 0 {
		return fmt.Errorf("group normalize: %d groups do not divide %d channels", groups, c)
	}
	if !(eps >= 0) {
		return fmt.Errorf("group normalize: eps = %v, want ≥ 0", eps)
	}
	size := c / groups * hw
	for g := range n * groups {
		p := x[g*size : (g+1)*size]
		var s, ss float64
		for _, v := range p {
			s += float64(v)
		}
		mean := s / float64(size)
		for _, v := range p {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(size)+eps)
		if math.IsInf(inv, 0) {
			inv = 0 // a constant group with eps = 0 maps to zeros
		}
		for k, v := range p {
			p[k] = float32((float64(v) - mean) * inv)
		}
	}
	return nil
}

// PrivateStatsConfig configures PrivateChannelStats.
type PrivateStatsConfig struct {
	// Clip bounds the L2 norm of each example's statistics vector
	// z_i = [w_c·mean_c(x_i) ; w_c²·meansq_c(x_i)] (2C numbers, w_c =
	// ChannelScale[c]); vectors above it are scaled down to it. It is the L2
	// sensitivity of the released sum. With ReferenceScales each weighted
	// coordinate is O(1), so the norm grows like sqrt(2C): on CIFAR-10's
	// 243 ScatterNet channels Clip = 30 clipped no training example and
	// Clip = 10 clipped 21% (biasing the means by 0.07 standard deviations);
	// see results/cifar10_import.md.
	Clip float64
	// Sigma is the noise multiplier: each sum coordinate gets N(0, (Sigma·Clip)²),
	// drawn exactly on a public lattice (lattice.Sum, docs/secure-noise.md).
	Sigma float64
	// ChannelScale, when set, weights channel c by w_c before clipping (and
	// divides it out after), so that channels of very different magnitude
	// (scattering orders 0, 1, 2 differ by about 10× each) share the clip
	// budget sensibly. It must not depend on the private data: use
	// ReferenceScales, or public data. Nil means all 1.
	ChannelScale []float64
	// Delta, when in (0,1), makes the result report this release's ε at δ
	// (RDP accountant, Balle et al. 2020 conversion); 0 skips it.
	Delta float64
	// MinVar floors the noisy variance (which can come out ≤ 0); 0 means 1e-8.
	MinVar float64
}

// PrivateStats is the result of PrivateChannelStats.
type PrivateStats struct {
	Stats ChannelStats
	// Event is what ran: one Gaussian mechanism with noise multiplier Sigma
	// on a sum of L2 sensitivity Sensitivity. Compose it with the training
	// events in the same accountant.
	Event       accountant.Event
	Sensitivity float64
	// Relation is add/remove-one: adding or removing an example moves the
	// sum by its clipped vector. The example count n is treated as public,
	// as DP-SGD's expected batch size q·n is.
	Relation accountant.Relation
	// Epsilon is this release's ε at Delta alone (0 when Delta was 0).
	Epsilon, Delta float64
}

// PrivateChannelStats estimates the per-channel mean and standard deviation
// of n examples of the given shape with the Gaussian mechanism: each
// example's per-channel spatial means and mean squares are clipped jointly
// to L2 norm cfg.Clip, summed and noised with N(0, (σ·Clip)²) per coordinate
// exactly on a public lattice (clippedSums), and
// divided by n; var = E[x²] − E[x]², floored at MinVar. Randomness comes from
// s (use rng.NewCrypto() outside tests).
func PrivateChannelStats(x []float32, n int, shape []int, cfg PrivateStatsConfig, s *rng.Stream) (PrivateStats, error) {
	var res PrivateStats
	if !(cfg.Clip > 0) || math.IsInf(cfg.Clip, 0) {
		return res, fmt.Errorf("private channel stats: clip = %v, want positive and finite", cfg.Clip)
	}
	ev := accountant.Gaussian{Sigma: cfg.Sigma}
	if err := ev.Validate(); err != nil {
		return res, fmt.Errorf("private channel stats: %w", err)
	}
	if n <= 0 {
		return res, fmt.Errorf("private channel stats: no examples")
	}
	if len(shape) == 0 || shape[0] <= 0 {
		return res, fmt.Errorf("private channel stats: bad shape %v", shape)
	}
	c := shape[0]
	w := cfg.ChannelScale
	if w == nil {
		w = make([]float64, c)
		for i := range w {
			w[i] = 1
		}
	}
	if len(w) != c {
		return res, fmt.Errorf("private channel stats: %d channel scales for %d channels", len(w), c)
	}
	for _, v := range w {
		if !(v > 0) || math.IsInf(v, 0) {
			return res, fmt.Errorf("private channel stats: channel scale %v, want positive and finite", v)
		}
	}
	minVar := cfg.MinVar
	if minVar == 0 {
		minVar = 1e-8
	}
	sum, err := clippedSums(x, n, shape, w, cfg.Clip, cfg.Sigma, s)
	if err != nil {
		return res, err
	}
	st := ChannelStats{Mean: make([]float64, c), Std: make([]float64, c)}
	for ch := range c {
		m := sum[ch] / float64(n) / w[ch]
		sq := sum[c+ch] / float64(n) / (w[ch] * w[ch])
		st.Mean[ch] = m
		st.Std[ch] = math.Sqrt(max(sq-m*m, minVar))
	}
	res = PrivateStats{Stats: st, Event: ev, Sensitivity: cfg.Clip, Relation: accountant.AddRemove}
	if cfg.Delta != 0 {
		a, err := accountant.NewRDP(accountant.WithRelation(accountant.AddRemove))
		if err != nil {
			return res, err
		}
		if err := a.Compose(ev, 1); err != nil {
			return res, err
		}
		b, err := a.Epsilon(cfg.Delta)
		if err != nil {
			return res, fmt.Errorf("private channel stats: %w", err)
		}
		res.Epsilon, res.Delta = b.Epsilon, cfg.Delta
	}
	return res, nil
}

// clippedSums returns the released Σ_i clip(z_i) + noise, with z_i the
// weighted per-channel means then mean squares of example i (2C values):
// each z_i is clipped to L2 norm clip and truncated onto a public lattice
// (spacing clip·2⁻ᵏ), the sum is exact in integers, and the noise of std
// sigma·clip is drawn exactly there (lattice.Sum, docs/secure-noise.md). A
// non-finite feature is an error that names neither the example nor the
// value (they may be a training record's).
func clippedSums(x []float32, n int, shape []int, w []float64, clip, sigma float64, s *rng.Stream) ([]float64, error) {
	c, hw := splitShape(x, n, shape)
	acc, err := lattice.NewSum(clip, sigma, 2*c, lattice.SumExponent(n))
	if err != nil {
		return nil, fmt.Errorf("private channel stats: %w", err)
	}
	z := make([]float64, 2*c)
	for i := range n {
		var norm2 float64
		for ch := range c {
			var s, ss float64
			for _, v := range x[(i*c+ch)*hw : (i*c+ch+1)*hw] {
				s += float64(v)
				ss += float64(v) * float64(v)
			}
			z[ch] = w[ch] * s / float64(hw)
			z[c+ch] = w[ch] * w[ch] * ss / float64(hw)
			norm2 += z[ch]*z[ch] + z[c+ch]*z[c+ch]
		}
		if math.IsNaN(norm2) || math.IsInf(norm2, 0) {
			return nil, fmt.Errorf("private channel stats: a non-finite feature value")
		}
		if _, err := acc.Add(z); err != nil {
			return nil, fmt.Errorf("private channel stats: %w", err)
		}
	}
	sum, err := acc.Release(s)
	if err != nil {
		return nil, fmt.Errorf("private channel stats: %w", err)
	}
	return sum, nil
}

// ReferenceScales returns data-independent channel scales for
// PrivateStatsConfig.ChannelScale: 1/RMS of each output channel of s on
// count images of independent uniform [0,1) pixels drawn from seed. They
// put the scattering orders on a common footing without looking at data.
func ReferenceScales(s *Scattering, channels, count int, seed uint64) []float64 {
	st := rng.New(seed)
	x := make([]float32, count*channels*s.h*s.w)
	for i := range x {
		x[i] = st.Float32()
	}
	shape := s.OutputShape(channels)
	out := make([]float32, count*shape[0]*shape[1]*shape[2])
	s.Transform(out, x, count, channels, 0)
	hw := shape[1] * shape[2]
	scales := make([]float64, shape[0])
	for ch := range shape[0] {
		var ss float64
		for i := range count {
			for _, v := range out[(i*shape[0]+ch)*hw : (i*shape[0]+ch+1)*hw] {
				ss += float64(v) * float64(v)
			}
		}
		scales[ch] = 1 / math.Sqrt(ss/float64(count*hw))
	}
	return scales
}
