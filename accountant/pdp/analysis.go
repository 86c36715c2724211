package pdp

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Source draws the randomness a synthetic experiment needs (internal/rng's
// Stream satisfies it).
type Source interface {
	NormFloat64() float64
	Float64() float64
}

// SyntheticLogistic draws the synthetic logistic-regression data of the
// paper's §4.1 / App. B.1 (spec §6.1): θ* ~ N(0, I_d), x uniform in the unit
// ball, and y = +1 with probability sigmoid(xᵀθ*), else −1. The paper's
// label model "sigmoid(Xᵀθ)+E" is garbled; this Bernoulli reading is the
// spec's reconstruction (an assumption).
func SyntheticLogistic(n, d int, r Source) (*mat.Dense, []float64) {
	theta := make([]float64, d)
	for j := range theta {
		theta[j] = r.NormFloat64()
	}
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		for j := range row {
			row[j] = r.NormFloat64()
		}
		rad := math.Pow(r.Float64(), 1/float64(d)) / norm(row)
		for j := range row {
			row[j] *= rad
		}
		y[i] = -1
		if r.Float64() < sigmoid(dot(row, theta)) {
			y[i] = 1
		}
	}
	return X, y
}

// AnalysisConfig configures [Analyze]: release a GLM by objective
// perturbation at (Epsilon, Delta) and report every training record's
// per-instance privacy.
type AnalysisConfig struct {
	Loss           GLM
	Epsilon, Delta float64 // ObjPert budget ε1 (Thm 5 calibration)
	Lambda         float64 // ridge λ; 0 means Thm 5's 2β/ε1 (raised to 2τσ3 in DataDependent mode)
	Rho            float64 // report failure probability (default 0.05)
	// Mode is the data-dependent report to build besides the data-independent
	// one: DataDependent, Adaptive, or 0 for none.
	Mode             Mode
	Eps2, Eps3, Eps4 float64 // DP budgets of the report's releases (Algs 5, 6, 3); σ's by GaussianSigmaFor
	TightLogDet      bool
}

// RecordResult is one record's exact ex-post pDP (curator-only) and its
// publishable report bounds.
type RecordResult struct {
	Index            int
	Exact            ExPostTerms
	Indep, Dep       float64 // ε̄1: data-independent and (if any) data-dependent report
	Eps2, Eps3, Eps4 float64 // the data-dependent report's per-instance overhead at Delta
}

// Analysis is the result of [Analyze].
type Analysis struct {
	Config     AnalysisConfig
	Model      *Model
	Release    ApproxDP // DP of the ObjPert release
	Nominal    bool     // the loss has no finite ξ: Release is nominal (ξ = 1 assumed)
	Indep, Dep *Report
	ReportDP   ApproxDP // DP overhead of the data-dependent report (zero without one)
	Records    []RecordResult
}

// Analyze fits (X, y) by objective perturbation with noise from r and
// evaluates every training record's exact ex-post pDP and report bounds.
// The report's own noise also comes from r.
func Analyze(X *mat.Dense, y []float64, c AnalysisConfig, r Normal) (*Analysis, error) {
	_, d := X.Dims()
	if c.Rho == 0 {
		c.Rho = 0.05
	}
	a := &Analysis{Config: c}
	xi, beta := c.Loss.Xi(), c.Loss.Beta()
	if math.IsInf(xi, 0) {
		xi, a.Nominal = 1, true
	}
	lam, sigma, err := CalibrateObjPert(c.Epsilon, c.Delta, xi, beta)
	if err != nil {
		return nil, err
	}
	if c.Lambda < 0 || math.IsNaN(c.Lambda) || math.IsInf(c.Lambda, 0) {
		return nil, inputf("lambda must be >= 0 and finite, got %v", c.Lambda)
	}
	if c.Lambda > 0 {
		lam = c.Lambda
	}
	var opts ReportOptions
	if c.Mode != 0 {
		if !(c.Eps2 > 0) || !(c.Eps3 > 0) || (c.Mode == Adaptive && !(c.Eps4 > 0)) {
			return nil, inputf("the %v report needs positive budgets eps2, eps3 (and eps4), got %v, %v, %v", c.Mode, c.Eps2, c.Eps3, c.Eps4)
		}
		opts = ReportOptions{Mode: c.Mode, Rho: c.Rho, TightLogDet: c.TightLogDet,
			Sigma2: GaussianSigmaFor(c.Eps2, xi, c.Delta),
			Sigma3: GaussianSigmaFor(c.Eps3, beta/math.Sqrt2, c.Delta)}
		if c.Mode == Adaptive {
			opts.Sigma4 = GaussianSigmaFor(c.Eps4, beta, c.Delta)
		}
		if c.Mode == DataDependent {
			tau, err := GOEQuantile(d, 1-c.Rho/2, opts.GOE)
			if err != nil {
				return nil, err
			}
			lam = math.Max(lam, 2*tau*opts.Sigma3) // Alg 2's requirement: "stronger regularisation"
		}
	}
	a.Model, err = FitObjPert(X, y, c.Loss, lam, sigma, r)
	if err != nil {
		return nil, err
	}
	a.Release = ApproxDP{Epsilon: c.Epsilon, Delta: c.Delta, Relation: "add-remove", Source: "objective perturbation, Thm 5"}
	if lam < 2*beta/c.Epsilon {
		a.Release = a.Model.DP(c.Delta) // Thm 5 does not apply below 2β/ε: the derived bound
	}
	if a.Nominal {
		a.Release.Source += " (nominal: assumes |f'|·‖x‖ <= 1)"
	}
	a.Indep, err = NewReport(a.Model, nil, nil, ReportOptions{Mode: DataIndependent, Rho: c.Rho, TightLogDet: c.TightLogDet}, Draws{})
	if err != nil {
		return nil, err
	}
	if c.Mode != 0 {
		a.Dep, err = NewReport(a.Model, X, y, opts, DrawNoise(d, r))
		if err != nil {
			return nil, err
		}
		a.ReportDP = a.Dep.DP(c.Delta)
	}
	exact, err := a.Model.ExPostTraining(X, y)
	if err != nil {
		return nil, err
	}
	a.Records = make([]RecordResult, len(exact))
	for i, e := range exact {
		x := X.RawRowView(i)
		rr := RecordResult{Index: i, Exact: e, Indep: a.Indep.Epsilon(x, y[i]), Dep: math.NaN()}
		if a.Dep != nil {
			rr.Dep = a.Dep.Epsilon(x, y[i])
			o := a.Dep.Overhead(x, y[i], c.Delta)
			rr.Eps2, rr.Eps3, rr.Eps4 = o.Eps2, o.Eps3, o.Eps4
		}
		a.Records[i] = rr
	}
	return a, nil
}

// Column extracts one value per record.
func (a *Analysis) Column(f func(RecordResult) float64) []float64 {
	out := make([]float64, len(a.Records))
	for i, r := range a.Records {
		out[i] = f(r)
	}
	return out
}

// MostExposed returns the indices of the k records with the largest exact
// ex-post pDP, largest first. Curator-only.
func (a *Analysis) MostExposed(k int) []int {
	idx := make([]int, len(a.Records))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		return a.Records[idx[i]].Exact.Epsilon > a.Records[idx[j]].Exact.Epsilon
	})
	return idx[:min(k, len(idx))]
}

// Quantile returns the p-quantile (linear interpolation between order
// statistics) of v, ignoring NaNs; NaN if none remain.
func Quantile(v []float64, p float64) float64 {
	s := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	sort.Float64s(s)
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// String summarises the configuration for logs.
func (c AnalysisConfig) String() string {
	return fmt.Sprintf("%s eps=%g delta=%g lambda=%g rho=%g mode=%v", c.Loss.Name(), c.Epsilon, c.Delta, c.Lambda, c.Rho, c.Mode)
}
