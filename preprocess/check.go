package preprocess

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrOutsideCollection is wrapped by Check when the training set violates
// the declared bounds, so the sensitivities (and the privacy guarantee
// conditional on them) do not apply.
var ErrOutsideCollection = errors.New("preprocess: data outside the declared collection")

// Check tests whether the training rows X satisfy the bounds the given step
// relies on: b_max for dedup/quantization, p and missing entries per record
// for imputation, σ_min for standard scaling, the feature ranges for min-max
// scaling, the eigengap condition δ^k ≥ EigenGapMin (and δ^1 ≥ TopGapMin)
// for PCA, and that every record lies in the unit ball.
//
// Check reads the private data and its outcome is NOT differentially
// private (docs/srdp.md#declared-collection): refusing to run on failure leaks
// one bit. Use it as a diagnostic, or make the test private
// (propose-test-release) before acting on it; the guarantee stays conditional
// on the declared collection.
func Check(step Step, X *mat.Dense, b Bounds) error {
	n, d := X.Dims()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: "+format, append([]any{step.Name(), ErrOutsideCollection}, args...)...)
	}
	if b.N != 0 && b.N != n {
		return fail("%d records, declared N = %d", n, b.N)
	}
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range X.RawRowView(i) {
			if !math.IsNaN(v) {
				s += v * v
			}
		}
		if s > 1+1e-12 {
			// Neither the record nor its norm: the message may be read,
			// logged and pasted (docs/srdp.md#declared-collection).
			return fail("a record lies outside the unit ball (scale features into it first)")
		}
	}
	switch st := step.(type) {
	case Dedup, Quantize:
		eta, paper := 0.0, false
		if q, ok := st.(Quantize); ok {
			eta, paper = q.Eta, q.PaperBound
		} else {
			eta, paper = st.(Dedup).Eta, st.(Dedup).PaperBound
		}
		if paper {
			for _, c := range GoodClusters(X, nil, eta) {
				if len(c.Members) > b.MaxGoodCluster {
					return fail("a good cluster is larger than MaxGoodCluster %d", b.MaxGoodCluster)
				}
			}
		} else if m := maxBall(X, 4*eta); m > b.MaxBall4Eta {
			return fail("more records than MaxBall4Eta %d lie within 4η of one record", b.MaxBall4Eta)
		}
	case Impute, RegressionImpute:
		p, k := countMissingRows(X)
		if p > b.MaxMissingRecords {
			return fail("more records than MaxMissingRecords %d have missing entries", b.MaxMissingRecords)
		}
		if b.MaxMissingFeatures > 0 && k > b.MaxMissingFeatures {
			return fail("a record misses more entries than MaxMissingFeatures %d", b.MaxMissingFeatures)
		}
	case StandardScaler:
		f, _, err := st.FitTransform(X, nil)
		if err != nil {
			return err
		}
		for j, sd := range f.(*scalerFitted).Scale {
			if sd < b.SigmaMin {
				return fail("feature %d has a std below SigmaMin %.6g", j, b.SigmaMin)
			}
		}
	case MinMaxScaler:
		f, _, err := st.FitTransform(X, nil)
		if err != nil {
			return err
		}
		for j, r := range f.(*scalerFitted).Scale {
			if r < b.RangeMin {
				return fail("feature %d has a range below RangeMin %.6g", j, b.RangeMin)
			}
		}
	case PCA:
		if st.K < 1 || st.K >= d {
			return fmt.Errorf("%s: k=%d outside [1, %d)", st.Name(), st.K, d)
		}
		gk, g1, err := EigenGaps(X, nil, st.K)
		if err != nil {
			return err
		}
		if gk < b.EigenGapMin {
			return fail("eigengap λ_%d − λ_%d is below EigenGapMin %.6g", st.K, st.K+1, b.EigenGapMin)
		}
		if st.K > 1 && g1 < b.TopGapMin {
			return fail("eigengap λ_1 − λ_2 is below TopGapMin %.6g", b.TopGapMin)
		}
	}
	return nil
}

// maxBall is the largest number of rows within distance r of one row.
func maxBall(X *mat.Dense, r float64) int {
	n, _ := X.Dims()
	best := 0
	for i := 0; i < n; i++ {
		c := 0
		for j := 0; j < n; j++ {
			if dist(X.RawRowView(i), X.RawRowView(j)) <= r {
				c++
			}
		}
		best = max(best, c)
	}
	return best
}

func countMissingRows(X *mat.Dense) (rows, perRow int) {
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		k := 0
		for _, v := range X.RawRowView(i) {
			if math.IsNaN(v) {
				k++
			}
		}
		if k > 0 {
			rows++
		}
		perRow = max(perRow, k)
	}
	return rows, perRow
}

// ConcentrationStats are the paper's Table 2 measures
// (docs/dpsgdf.md#feature-concentration) of how concentrated the features are:
// the diameter max‖x_i − x_j‖, and the largest and mean distance to the mean.
// They read the private data (diagnostics only).
type ConcentrationStats struct {
	Diam, MaxDist, MeanDist float64
}

// Concentration computes ConcentrationStats exactly, in O(n²d).
func Concentration(X *mat.Dense) ConcentrationStats {
	n, d := X.Dims()
	var st ConcentrationStats
	if n == 0 {
		return st
	}
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range X.RawRowView(i) {
			mu[j] += v / float64(n)
		}
	}
	for i := 0; i < n; i++ {
		xi := X.RawRowView(i)
		dm := dist(xi, mu)
		st.MaxDist = math.Max(st.MaxDist, dm)
		st.MeanDist += dm / float64(n)
		for k := i + 1; k < n; k++ {
			st.Diam = math.Max(st.Diam, dist(xi, X.RawRowView(k)))
		}
	}
	return st
}

// FromFloat32 copies an n×d row-major float32 matrix (the datasets layout)
// into a *mat.Dense.
func FromFloat32(x []float32, n, d int) *mat.Dense {
	if len(x) != n*d {
		panic(fmt.Sprintf("preprocess: %d values for %d×%d", len(x), n, d))
	}
	data := make([]float64, len(x))
	for i, v := range x {
		data[i] = float64(v)
	}
	return mat.NewDense(n, d, data)
}

// ToFloat32 copies X into a row-major float32 slice.
func ToFloat32(X *mat.Dense) []float32 {
	n, d := X.Dims()
	out := make([]float32, 0, n*d)
	for i := 0; i < n; i++ {
		for _, v := range X.RawRowView(i) {
			out = append(out, float32(v))
		}
	}
	return out
}
