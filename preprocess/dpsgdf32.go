package preprocess

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
)

// FitInPlace32 is Fit for the Practical variant (Algorithm 3) on float32
// features held row-major in x (n rows of d), transformed in place: every
// row is normalised to C_F, the private mean is drawn exactly as Fit draws it
// (same stream, same order), and subtracted. It exists for large feature
// matrices (ScatterNet: 50,000 × 15,552), where Fit's float64 copies do not
// fit in memory. It returns the centring for the test set and the event.
func (c DPSGDF) FitInPlace32(x []float32, n, d int, s *rng.Stream) (*Centering, []accountant.Event, error) {
	if c.Variant != Practical {
		return nil, nil, fmt.Errorf("dpsgdf: FitInPlace32 implements the practical variant only")
	}
	if n < 1 || d < 1 || len(x) != n*d {
		return nil, nil, fmt.Errorf("dpsgdf: %d values for %d×%d features", len(x), n, d)
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, nil, fmt.Errorf("dpsgdf: feature %d has a non-finite value", i%d)
		}
	}
	gm := GaussianMean{EpsF: c.EpsF, Delta: c.Delta, CF: c.CF}
	sigma, err := gm.Sigma()
	if err != nil {
		return nil, nil, err
	}
	normalize32(x, n, d, c.CF)
	row := make([]float64, d)
	mu, err := latticeMean(n, d, c.CF, sigma, func(i int) []float64 {
		for j, v := range x[i*d : (i+1)*d] {
			row[j] = float64(v)
		}
		return row
	}, s.Child("dpsgdf/mean"))
	if err != nil {
		return nil, nil, err
	}
	cen := &Centering{NormC: c.CF, Mu: mu}
	centre32(x, n, d, mu)
	return cen, []accountant.Event{accountant.Gaussian{Sigma: sigma}}, nil
}

// ApplyInPlace32 applies a Practical centring to float32 rows in place
// (normalise to NormC, subtract μ̂), as Transform does.
func (c *Centering) ApplyInPlace32(x []float32, n, d int) error {
	if c.Tau > 0 {
		return fmt.Errorf("dpsgdf: ApplyInPlace32 implements the practical centring only")
	}
	if len(c.Mu) != d || len(x) != n*d {
		return fmt.Errorf("dpsgdf: centring for %d features applied to %d values of %d×%d", len(c.Mu), len(x), n, d)
	}
	if c.NormC > 0 {
		normalize32(x, n, d, c.NormC)
	}
	centre32(x, n, d, c.Mu)
	return nil
}

func normalize32(x []float32, n, d int, cf float64) {
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		var ss float64
		for _, v := range row {
			ss += float64(v) * float64(v)
		}
		if ss == 0 {
			continue
		}
		f := cf / math.Sqrt(ss)
		for j, v := range row {
			row[j] = float32(float64(v) * f)
		}
	}
}

func centre32(x []float32, n, d int, mu []float64) {
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		for j, v := range row {
			row[j] = float32(float64(v) - mu[j])
		}
	}
}

// ApplyInPlace32 rescales every float32 row of x (n rows of d) to L2 norm C,
// as Transform does, without a float64 copy.
func (s Normalize) ApplyInPlace32(x []float32, n, d int) {
	normalize32(x, n, d, s.C)
}
