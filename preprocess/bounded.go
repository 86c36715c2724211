package preprocess

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// FeatureBounds are the per-feature bounds [Lo[j], Hi[j]] a user declares
// from public knowledge of the features (docs/tabular.md). They are never
// read off the data: every record is clipped to them.
type FeatureBounds struct {
	Lo, Hi []float64
}

// ParseFeatureBounds reads declared bounds for d features: "lo:hi" (every
// feature), "lo:hi,lo:hi,…" (one per feature), or "@path" (a file holding
// such a list, separated by commas or newlines; '#' starts a comment).
func ParseFeatureBounds(s string, d int) (FeatureBounds, error) {
	if path, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return FeatureBounds{}, fmt.Errorf("feature bounds: %w", err)
		}
		var keep []string
		for line := range strings.SplitSeq(string(b), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if line = strings.TrimSpace(line); line != "" {
				keep = append(keep, line)
			}
		}
		s = strings.Join(keep, ",")
	}
	parts := strings.Split(s, ",")
	if len(parts) != 1 && len(parts) != d {
		return FeatureBounds{}, fmt.Errorf("feature bounds: %d pairs for %d features (give one lo:hi for all, or one per feature)", len(parts), d)
	}
	fb := FeatureBounds{Lo: make([]float64, d), Hi: make([]float64, d)}
	for j := range d {
		p := parts[0]
		if len(parts) == d {
			p = parts[j]
		}
		los, his, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			return FeatureBounds{}, fmt.Errorf("feature bounds: %q is not lo:hi", p)
		}
		lo, err1 := strconv.ParseFloat(strings.TrimSpace(los), 64)
		hi, err2 := strconv.ParseFloat(strings.TrimSpace(his), 64)
		if err1 != nil || err2 != nil {
			return FeatureBounds{}, fmt.Errorf("feature bounds: %q is not lo:hi with numbers", p)
		}
		fb.Lo[j], fb.Hi[j] = lo, hi
	}
	return fb, fb.Validate(d)
}

// Validate checks d finite pairs with lo < hi.
func (b FeatureBounds) Validate(d int) error {
	if len(b.Lo) != d || len(b.Hi) != d {
		return fmt.Errorf("feature bounds: %d/%d bounds for %d features", len(b.Lo), len(b.Hi), d)
	}
	for j := range d {
		lo, hi := b.Lo[j], b.Hi[j]
		if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) {
			return fmt.Errorf("feature bounds: feature %d needs finite lo < hi, got %v:%v", j, lo, hi)
		}
	}
	return nil
}

// Clip32 clips n records of d features in place to the bounds.
func (b FeatureBounds) Clip32(x []float32, n, d int) {
	for i := range n {
		for j := range d {
			v := float64(x[i*d+j])
			x[i*d+j] = float32(min(max(v, b.Lo[j]), b.Hi[j]))
		}
	}
}

// MinMax is the data-independent scaling by the declared bounds: Centre Lo,
// Scale Hi−Lo, so a clipped feature lies in [0, 1]. It costs no privacy.
func (b FeatureBounds) MinMax() (centre, scale []float64) {
	centre, scale = make([]float64, len(b.Lo)), make([]float64, len(b.Lo))
	for j := range b.Lo {
		centre[j], scale[j] = b.Lo[j], b.Hi[j]-b.Lo[j]
	}
	return centre, scale
}

// BoundedStandardizer releases each feature's mean and standard deviation
// by one Gaussian mechanism (docs/tabular.md). Each record's features are
// clipped to the bounds and mapped to v = (x−lo)/(hi−lo) − ½ ∈ [−½, ½]; the
// released vector is (Σv_j, Σv_j²) over the records, whose L2 sensitivity
// under add/remove-one is Δ = √(d/4 + d/16). The record count n is public
// (as everywhere in the project's claims) and is not noised. The sums are
// made on a public lattice and noised exactly (lattice.Sum): every
// coordinate gets rounded-Gaussian noise of std Sigma·Δ, a post-processing
// of the Gaussian{Sigma} event charged.
type BoundedStandardizer struct {
	Bounds FeatureBounds
	Sigma  float64 // noise multiplier of the event
}

// BoundedStats are the released statistics, in the features' units.
type BoundedStats struct {
	Mean, Std []float64
	Count     float64   // the record count n (public)
	NoiseStd  float64   // std of the noise on each released coordinate: Sigma·Δ
	Released  []float64 // the released (Σv_j, then Σv_j²): γ times a lattice point
}

// VarianceFloor is the smallest variance released, as a fraction of the
// squared range (hi−lo)²: std ≥ 1% of the declared range. The floor used is
// the larger of it and the noise's std on the variance estimate,
// NoiseStd/n (public), so that noise cannot blow up a feature whose true
// variance it swamps.
const VarianceFloor = 1e-4

// StandardizeSensitivity is Δ above for d features.
func StandardizeSensitivity(d int) float64 {
	return math.Sqrt(float64(d)/4 + float64(d)/16)
}

// Fit clips the n records x (d features, read only) to the bounds and
// releases their statistics with noise from s, and the event to charge.
func (bs BoundedStandardizer) Fit(x []float32, n, d int, s *rng.Stream) (*BoundedStats, accountant.Event, error) {
	if err := bs.Bounds.Validate(d); err != nil {
		return nil, nil, err
	}
	if !finitePositive(bs.Sigma) {
		return nil, nil, fmt.Errorf("bounded standardize: noise multiplier must be positive and finite, got %v", bs.Sigma)
	}
	if len(x) != n*d {
		return nil, nil, fmt.Errorf("bounded standardize: %d values for %d records of %d features", len(x), n, d)
	}
	if n < 1 {
		return nil, nil, fmt.Errorf("bounded standardize: no records")
	}
	delta := StandardizeSensitivity(d)
	sum, err := lattice.NewSum(delta, bs.Sigma, 2*d, lattice.SumExponent(n))
	if err != nil {
		return nil, nil, fmt.Errorf("bounded standardize: %w", err)
	}
	rec := make([]float64, 2*d)
	for i := range n {
		for j := range d {
			lo, hi := bs.Bounds.Lo[j], bs.Bounds.Hi[j]
			v := (min(max(float64(x[i*d+j]), lo), hi)-lo)/(hi-lo) - 0.5
			rec[j], rec[d+j] = v, v*v
		}
		if _, err := sum.Add(rec); err != nil {
			return nil, nil, fmt.Errorf("bounded standardize: %w", err)
		}
	}
	// The noise is drawn in a fixed order whatever the data: sums, then squares.
	out, err := sum.Release(s)
	if err != nil {
		return nil, nil, fmt.Errorf("bounded standardize: %w", err)
	}
	std := bs.Sigma * delta
	c := float64(n)
	st := &BoundedStats{Mean: make([]float64, d), Std: make([]float64, d), Count: c, NoiseStd: std, Released: out}
	floor := max(VarianceFloor, std/c)
	for j := range d {
		m1 := min(max(out[j]/c, -0.5), 0.5)
		v := min(max(out[d+j]/c-m1*m1, floor), 0.25)
		r := bs.Bounds.Hi[j] - bs.Bounds.Lo[j]
		st.Mean[j] = bs.Bounds.Lo[j] + r*(m1+0.5)
		st.Std[j] = r * math.Sqrt(v)
	}
	return st, accountant.Gaussian{Sigma: bs.Sigma}, nil
}

// ScaleSigma is the noise multiplier that spends the fraction frac of
// (eps, delta) on the statistics alone (analytic Gaussian); the run's
// accountant then composes it with the steps (usually for less).
func ScaleSigma(frac, eps, delta float64) (float64, error) {
	if !(frac > 0 && frac < 1) {
		return 0, fmt.Errorf("scale: epsilon fraction must be in (0, 1), got %v", frac)
	}
	return AnalyticGaussianSigma(frac*eps, delta)
}
