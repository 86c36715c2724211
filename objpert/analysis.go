package objpert

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/rng"
)

// Source draws the randomness a synthetic experiment needs (rng's
// Stream satisfies it).
type Source interface {
	NormFloat64() float64
	Float64() float64
}

// SyntheticLogistic draws the synthetic logistic-regression data of the
// paper's §4.1 / App. B.1 (docs/per-instance.md#paper-experiments): θ* ~ N(0,
// I_d), x uniform in the unit ball, and y = +1 with probability sigmoid(xᵀθ*),
// else −1. The paper's label model "sigmoid(Xᵀθ)+E" is garbled; this Bernoulli
// reading is our reconstruction (an assumption).
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
	ReportDP   ApproxDP // DP overhead of the data-dependent report (zero without one), per-release bounds summed
	// ReportRDP is the same overhead with the releases composed by RDP
	// ([Report.ComposedDP]); +Inf when the loss has no finite ξ.
	ReportRDP ApproxDP
	// Total is the whole account of the run: the release plus the report's
	// overhead (the tighter of ReportDP and ReportRDP by ε, with its δ) by
	// basic composition, add/remove-one.
	Total   ApproxDP
	Records []RecordResult
	// ImpliedNoise is ‖∇J(θ̂; D)‖/(σ√d) = ‖b‖/(σ√d) for the perturbation b
	// the first-order condition implies: about 1 when θ̂ was released by
	// objective perturbation on exactly this D (b ~ N(0, σ²I)), far from 1
	// when the data is not the model's training set. Curator-only.
	ImpliedNoise float64
}

// RoundingShare is the rounding budget τ of the grid release as a share of
// the configured δ: the release's δ grows to δ(1 + (1+e^ε)/64) at most.
const RoundingShare = 1.0 / 64

// Analyze fits (X, y) by objective perturbation with noise from r and
// evaluates every training record's exact ex-post pDP and report bounds.
// The report's own noise also comes from r.
func Analyze(X *mat.Dense, y []float64, c AnalysisConfig, r *rng.Stream) (*Analysis, error) {
	n, d := X.Dims()
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
	opts, err := c.reportOptions(xi, beta, lam, n, d)
	if err != nil {
		return nil, err
	}
	if c.Mode == DataDependent {
		tau, err := GOEQuantile(d, 1-c.Rho/2, opts.GOE)
		if err != nil {
			return nil, err
		}
		// Alg 2's requirement, "stronger regularisation": λ ≥ 2τσ3, plus
		// twice the lattice's slack (docs/per-instance.md#exact-releases);
		// the doubling covers its float part, which grows with ‖θ̂‖.
		g, err := newReportGrid(c.Loss, n, d, 0, opts.Sigma2, opts.Sigma3)
		if err != nil {
			return nil, err
		}
		lam = math.Max(lam, 2*(tau*opts.Sigma3+2*g.hessSlack()))
	}
	a.Model, err = FitObjPert(X, y, c.Loss, lam, sigma, c.Delta*RoundingShare, r)
	if err != nil {
		return nil, err
	}
	// The analysis is of the published point, as AnalyzeModel computes it
	// from the released JSON; the raw solve θ̂ is not kept.
	a.Model.Theta = append([]float64(nil), a.Model.Released...)
	a.Release = ApproxDP{Epsilon: c.Epsilon, Delta: GridDelta(c.Epsilon, c.Delta, a.Model.Tau), Relation: "add-remove",
		Source: "objective perturbation, Thm 5, released on a shifted grid (docs/secure-noise.md)"}
	if lam < 2*beta/c.Epsilon {
		a.Release = a.Model.DP(c.Delta) // Thm 5 does not apply below 2β/ε: the derived bound
	}
	if a.Nominal {
		a.Release.Source += " (nominal: assumes |f'|·‖x‖ <= 1)"
	}
	return a, a.report(X, y, opts, r)
}

// AnalyzeModel is [Analyze] for a model already released by objective
// perturbation (its public θ̂, λ, σ and loss, e.g. read back with
// [Model.UnmarshalJSON]) and its training data (X, y): no fit, the exact
// ex-post pDP and the reports of every record. The perturbation b is implied
// by the first-order condition b = −∇J(θ̂; D), so the analysis is that of
// this θ̂ on this D; with data other than the training set it is meaningless
// (see [Analysis.ImpliedNoise] for a plausibility check). c.Loss, c.Lambda
// and c.Epsilon are ignored; the release's guarantee is the derived Thm 6
// bound at the model's λ and σ ([Model.DP]), and c.Mode / c.Eps2..4 choose
// the report as in Analyze (a data-dependent report needs the model's
// λ ≥ 2τσ3).
func AnalyzeModel(m *Model, X *mat.Dense, y []float64, c AnalysisConfig, r *rng.Stream) (*Analysis, error) {
	n, d := X.Dims()
	if len(m.Theta) != d {
		return nil, inputf("the model has dimension %d, the data %d features", len(m.Theta), d)
	}
	if len(y) != n {
		return nil, inputf("%d labels for %d rows", len(y), n)
	}
	if !(m.Lambda > 0) || math.IsInf(m.Lambda, 0) || !(m.Sigma > 0) || math.IsInf(m.Sigma, 0) {
		return nil, inputf("the model needs positive finite lambda and sigma, got %v, %v", m.Lambda, m.Sigma)
	}
	if !(c.Delta > 0 && c.Delta < 1) {
		return nil, inputf("delta must be in (0,1), got %v", c.Delta)
	}
	if err := checkData(X, y, m.Loss); err != nil {
		return nil, err
	}
	if c.Rho == 0 {
		c.Rho = 0.05
	}
	c.Loss, c.Lambda, c.Epsilon = m.Loss, m.Lambda, 0
	a := &Analysis{Config: c, Model: m}
	xi, beta := m.Loss.Xi(), m.Loss.Beta()
	if math.IsInf(xi, 0) {
		xi, a.Nominal = 1, true
	}
	opts, err := c.reportOptions(xi, beta, m.Lambda, n, d)
	if err != nil {
		return nil, err
	}
	eps := ObjPertEpsilon(m.Lambda, m.Sigma, xi, beta, c.Delta, true)
	a.Release = ApproxDP{Epsilon: eps, Delta: GridDelta(eps, c.Delta, m.Tau),
		Relation: "add-remove", Source: "objective perturbation at the model's lambda and sigma, docs/per-instance.md#objective-perturbation (Thm 6 tail bound), grid release's tau added to delta (docs/secure-noise.md)"}
	if a.Nominal {
		a.Release.Source += " (nominal: assumes |f'|·‖x‖ <= 1)"
	}
	a.Config.Epsilon = a.Release.Epsilon
	return a, a.report(X, y, opts, r)
}

// reportOptions turns the report budgets into the releases' noise scales,
// at the sensitivities the exact releases are charged at (Slack, for n
// records of d features and ridge lambda).
func (c AnalysisConfig) reportOptions(xi, beta, lambda float64, n, d int) (ReportOptions, error) {
	if c.Mode == 0 {
		return ReportOptions{}, nil
	}
	if !(c.Eps2 > 0) || !(c.Eps3 > 0) || (c.Mode == Adaptive && !(c.Eps4 > 0)) {
		return ReportOptions{}, inputf("the %v report needs positive budgets eps2, eps3 (and eps4), got %v, %v, %v", c.Mode, c.Eps2, c.Eps3, c.Eps4)
	}
	opts := ReportOptions{Mode: c.Mode, Rho: c.Rho, TightLogDet: c.TightLogDet,
		Sigma2: GaussianSigmaFor(c.Eps2, xi*(1+domainPad), c.Delta),
		Sigma3: GaussianSigmaFor(c.Eps3, beta/math.Sqrt2*(1+domainPad), c.Delta)}
	if c.Mode == Adaptive {
		opts.Sigma4 = GaussianSigmaFor(c.Eps4, minEigSens(beta, lambda, n, d), c.Delta)
	}
	return opts, nil
}

// report builds the reports for a.Model and evaluates every record.
func (a *Analysis) report(X *mat.Dense, y []float64, opts ReportOptions, r *rng.Stream) error {
	c := a.Config
	_, d := X.Dims()
	var err error
	a.Indep, err = NewReport(a.Model, nil, nil, ReportOptions{Mode: DataIndependent, Rho: c.Rho, TightLogDet: c.TightLogDet}, nil)
	if err != nil {
		return err
	}
	if c.Mode != 0 {
		a.Dep, err = NewReport(a.Model, X, y, opts, r.Child("report"))
		if err != nil {
			return err
		}
		a.ReportDP = a.Dep.DP(c.Delta)
		if a.ReportRDP, err = a.Dep.ComposedDP(c.Delta); err != nil {
			a.ReportRDP.Epsilon, a.ReportRDP.Delta = math.Inf(1), c.Delta
		}
	}
	over := a.ReportDP
	if a.ReportRDP.Epsilon < over.Epsilon {
		over = a.ReportRDP
	}
	a.Total = ApproxDP{Epsilon: a.Release.Epsilon + over.Epsilon, Delta: a.Release.Delta + over.Delta,
		Relation: "add-remove", Source: "release + report overhead, basic composition"}
	exact, err := a.Model.ExPostTraining(X, y)
	if err != nil {
		return err
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
	a.ImpliedNoise = norm(Gradient(X, y, a.Model.Loss, a.Model.Lambda, a.Model.Theta)) / (a.Model.Sigma * math.Sqrt(float64(d)))
	return nil
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
