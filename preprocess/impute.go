package preprocess

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// ImputeMethod selects the per-feature statistic that fills missing entries.
type ImputeMethod int

// Imputation statistics (docs/srdp.md#imputation).
const (
	ImputeMean ImputeMethod = iota
	ImputeMedian
	ImputeTrimmedMean
)

func (m ImputeMethod) String() string {
	switch m {
	case ImputeMean:
		return "mean"
	case ImputeMedian:
		return "median"
	case ImputeTrimmedMean:
		return "trimmed_mean"
	}
	return fmt.Sprintf("ImputeMethod(%d)", int(m))
}

// Impute fills missing entries (NaN) of feature j with a statistic of the
// observed values of feature j, then projects the imputed records back onto
// the unit ball (nonexpansive, so Δ_2 is unchanged; docs/srdp.md#imputation).
// Complete records are never changed, so Δ_∞ = p, the declared largest number
// of records with a missing entry (Proposition 16).
//
// Δ_2 (docs/srdp.md#imputation):
//   - mean: √(4 + 2·b)/(n − p) with b = min(2k, d), k the declared missing
//     entries per record [DERIVED]. Corollary 4's 2/(n − p) (PaperBound) assumes
//     the replaced records miss the same features; when they do not, a
//     feature's observed count changes and 2/(n − p) can be exceeded (a test
//     pins a counterexample). With k = 0 both agree.
//   - median: √k · MedianShift, MedianShift the declared per-feature bound
//     x^max_((n+1)/2) − x^min_(n/2); only the record's ≤ k missing entries move.
//   - m-trimmed mean: √k · TrimmedRange/(n − 2m − p), the reconstruction of the
//     garbled Table-3 entry, TrimmedRange = x^max_(n−m) − x^min_(m).
type Impute struct {
	Method     ImputeMethod
	Trim       int  // m, dropped at each end (trimmed mean)
	PaperBound bool // mean only: Corollary 4's 2/(n − p) (not safe, see above)
}

// Name implements Step.
func (s Impute) Name() string { return "impute_" + s.Method.String() }

// FitTransform implements Step.
func (s Impute) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	name := s.Name()
	if err := checkRemoved(name, X, removed); err != nil {
		return nil, Result{}, err
	}
	if s.Method < ImputeMean || s.Method > ImputeTrimmedMean {
		return nil, Result{}, fmt.Errorf("impute: unknown method %d", int(s.Method))
	}
	n, d := X.Dims()
	kept := keptRows(n, removed)
	fill := make([]float64, d)
	vals := make([]float64, 0, len(kept))
	for j := 0; j < d; j++ {
		vals = vals[:0]
		for _, i := range kept {
			v := X.At(i, j)
			if math.IsInf(v, 0) {
				return nil, Result{}, fmt.Errorf("%s: feature %d has an infinite value", name, j)
			}
			if !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return nil, Result{}, fmt.Errorf("%s: feature %d has no observed value", name, j)
		}
		switch s.Method {
		case ImputeMean:
			fill[j] = mean(vals)
		case ImputeMedian:
			sort.Float64s(vals)
			fill[j] = sortedMedian(vals)
		case ImputeTrimmedMean:
			if s.Trim < 0 || 2*s.Trim >= len(vals) {
				return nil, Result{}, fmt.Errorf("%s: trimming %d at each end of %d observed values of feature %d", name, s.Trim, len(vals), j)
			}
			sort.Float64s(vals)
			fill[j] = mean(vals[s.Trim : len(vals)-s.Trim])
		}
	}
	f := &imputeFitted{Fill: fill}
	out := mat.DenseCopyOf(X)
	for _, i := range kept {
		f.fillRow(out.RawRowView(i))
	}
	return f, Result{X: out, Removed: copyRemoved(removed)}, nil
}

// Sensitivity implements Step.
func (s Impute) Sensitivity(b Bounds) (Sensitivity, error) {
	name := s.Name()
	p := b.MaxMissingRecords
	if b.N < 1 || b.D < 1 || p < 0 {
		return Sensitivity{}, notAccounted(name, "declare N ≥ 1, D ≥ 1 and MaxMissingRecords ≥ 0")
	}
	k := b.MaxMissingFeatures
	if k <= 0 || k > b.D {
		k = b.D
	}
	sens := Sensitivity{LInf: float64(p)}
	switch s.Method {
	case ImputeMean:
		if b.N-p < 1 {
			return Sensitivity{}, notAccounted(name, "n − p = %d < 1", b.N-p)
		}
		if s.PaperBound {
			sens.L2, sens.Formula = 2/float64(b.N-p), "Cor 4: 2/(n−p)"
		} else {
			bb := math.Min(float64(2*k), float64(b.D))
			sens.L2, sens.Formula = math.Sqrt(4+2*bb)/float64(b.N-p), "√(4+2·min(2k,d))/(n−p)"
		}
	case ImputeMedian:
		if p > 0 && !finitePositive(b.MedianShift) { // 0 is what a forgotten declaration looks like
			return Sensitivity{}, notAccounted(name, "declare MedianShift > 0")
		}
		sens.L2, sens.Formula = math.Sqrt(float64(k))*b.MedianShift, "√k·(x^max_((n+1)/2) − x^min_(n/2))"
	case ImputeTrimmedMean:
		den := b.N - 2*s.Trim - p
		if den < 1 || (p > 0 && !finitePositive(b.TrimmedRange)) {
			return Sensitivity{}, notAccounted(name, "declare TrimmedRange > 0 with n − 2m − p ≥ 1 (got %d)", den)
		}
		sens.L2, sens.Formula = math.Sqrt(float64(k))*b.TrimmedRange/float64(den), "√k·(x^max_(n−m) − x^min_(m))/(n−2m−p)"
	default:
		return Sensitivity{}, fmt.Errorf("impute: unknown method %d", int(s.Method))
	}
	return sens, nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sortedMedian(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

type imputeFitted struct {
	Fill []float64 `json:"fill"`
}

func (*imputeFitted) Kind() string     { return "impute" }
func (f *imputeFitted) InDim() int     { return len(f.Fill) }
func (f *imputeFitted) OutDim(int) int { return len(f.Fill) }
func (f *imputeFitted) validate() error {
	if err := checkDim(len(f.Fill)); err != nil {
		return fmt.Errorf("impute: %w", err)
	}
	if err := checkFiniteVec(f.Fill); err != nil {
		return fmt.Errorf("impute: fill %w", err)
	}
	return nil
}

func (f *imputeFitted) fillRow(row []float64) {
	missing := false
	for j, v := range row {
		if math.IsNaN(v) {
			row[j] = f.Fill[j]
			missing = true
		}
	}
	if missing {
		projectBall(row)
	}
}

func (f *imputeFitted) Transform(X *mat.Dense) *mat.Dense {
	checkDims("impute", f, X)
	out := mat.DenseCopyOf(X)
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		f.fillRow(out.RawRowView(i))
	}
	return out
}
