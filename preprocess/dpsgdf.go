package preprocess

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
	"gonum.org/v1/gonum/mat"
)

// Variant selects the DPSGD-F algorithm (docs/dpsgdf.md#two-variants).
type Variant int

const (
	// Practical is Algorithm 3 (the paper's experiments, the default):
	// normalise features to C_F, Gaussian mean with budget ε_F, centre. It is
	// DP but carries no Theorem-1 utility guarantee and does not fix the
	// Theorem-3 counterexample when n < μ/ε.
	Practical Variant = iota
	// Theory is Algorithm 2: private mean, private quantile τ, features
	// (x − μ̂, τ) clipped to √2·τ, with the budget split in three (ε/3, δ/3)
	// parts. Only this variant carries Theorem 1's guarantee.
	Theory
)

func (v Variant) String() string {
	switch v {
	case Practical:
		return "practical"
	case Theory:
		return "theory"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// DPSGDF configures the private feature preprocessing of DPSGD-F
// (docs/dpsgdf.md). Neighbouring relation: add/remove-one with public n, as in
// the paper; under replace-one every sensitivity doubles
// (docs/dpsgdf.md#neighbouring-relation).
type DPSGDF struct {
	Variant Variant
	// Practical: EpsF is the mean's budget ε_F at Delta (analytic Gaussian,
	// sensitivity C_F); CF is the feature norm C_F.
	EpsF, CF float64
	// Theory: Epsilon, Delta is the TOTAL budget of the run, split into three
	// (ε/3, δ/3) parts (mean, quantile, DP-SGD); R is the public bound on ‖x‖.
	Epsilon, R float64
	Delta      float64
}

// Budget reports how the Theory variant splits (ε, δ), and the zCDP ρ its
// two private statistics run at. Mean and Quantile are each (ε/3, δ/3)-DP
// by ρ-zCDP ⇒ (ρ + 2√(ρ·log(3/δ)), δ/3)-DP; SGD is the (ε/3, δ/3) left for
// the DP-SGD phase. Composed by basic composition to (ε, δ).
type Budget struct {
	Rho                      float64
	MeanEps, QuantileEps     float64 // the zCDP pieces converted at δ/3 (≤ ε/3)
	PhaseEpsilon, PhaseDelta float64 // ε/3 and δ/3
	TotalEpsilon, TotalDelta float64
}

// FeatureResult is the output of DPSGD-F's private preprocessing.
type FeatureResult struct {
	X         *mat.Dense // transformed training features (d columns, or d+1 for Theory)
	Centering *Centering // apply to the test set; revert the learnt weights with it
	// Events are the privacy events of the private statistics, for the
	// accountant to compose with the DP-SGD steps. Practical: one Gaussian
	// (σ_F). Theory: the Gaussian noisy counts and sums of AdaptiveMean and
	// PrivQuantile (exactly ρ-zCDP in total for each).
	Events []accountant.Event
	Budget Budget // Theory only
}

// Fit runs the private preprocessing on the training features X (rows are
// records) with noise from s.
func (c DPSGDF) Fit(X *mat.Dense, s *rng.Stream) (*FeatureResult, error) {
	if err := checkFinite("dpsgdf", X, nil); err != nil {
		return nil, err
	}
	n, _ := X.Dims()
	if n < 1 {
		return nil, fmt.Errorf("dpsgdf: no records")
	}
	switch c.Variant {
	case Practical:
		gm := GaussianMean{EpsF: c.EpsF, Delta: c.Delta, CF: c.CF}
		sigma, err := gm.Sigma()
		if err != nil {
			return nil, err
		}
		norm := &Normalize{C: c.CF}
		Xn := norm.Transform(X)
		mu, err := gm.estimate(Xn, sigma, s.Child("dpsgdf/mean"))
		if err != nil {
			return nil, err
		}
		cen := &Centering{NormC: c.CF, Mu: mu}
		return &FeatureResult{X: cen.centre(Xn), Centering: cen, Events: []accountant.Event{accountant.Gaussian{Sigma: sigma}}}, nil
	case Theory:
		b, err := TheoryBudget(c.Epsilon, c.Delta)
		if err != nil {
			return nil, err
		}
		if !finitePositive(c.R) {
			return nil, fmt.Errorf("dpsgdf: feature bound R must be positive and finite, got %v", c.R)
		}
		k := 100 / c.Epsilon * math.Log(float64(n))
		if float64(n) <= k {
			// Alg. 2 aims τ at the (100/ε)·ln n-th largest distance; with fewer
			// records it would clip every feature vector
			// (docs/dpsgdf.md#theory-variant).
			return nil, fmt.Errorf("dpsgdf: theory variant needs n > (100/ε)·ln n = %.0f records, got %d", k, n)
		}
		am := AdaptiveMean{R: c.R, Rho: b.Rho}
		mu, evMean, err := am.Estimate(X, s.Child("dpsgdf/mean"))
		if err != nil {
			return nil, err
		}
		pq := PrivQuantile{R: c.R, Rho: b.Rho, K: k}
		tau, evQ, err := pq.Estimate(X, mu, s.Child("dpsgdf/quantile"))
		if err != nil {
			return nil, err
		}
		cen := &Centering{Mu: mu, Tau: tau}
		return &FeatureResult{X: cen.Transform(X), Centering: cen, Events: []accountant.Event{evMean, evQ}, Budget: b}, nil
	}
	return nil, fmt.Errorf("dpsgdf: unknown variant %d", int(c.Variant))
}

// TheoryBudget splits (ε, δ) for Algorithm 2: ρ = ε²/(49·log(3/δ)) for each
// private statistic (Lemma 3's parameters), which converts to at most ε/3 at
// δ/3 (15ε/49 < ε/3); the DP-SGD phase gets (ε/3, δ/3).
func TheoryBudget(eps, delta float64) (Budget, error) {
	if !finitePositive(eps) || !(delta > 0 && delta < 1) {
		return Budget{}, fmt.Errorf("dpsgdf: need ε > 0 and δ in (0,1), got ε=%v δ=%v", eps, delta)
	}
	if eps > math.Log(3/delta) {
		return Budget{}, fmt.Errorf("dpsgdf: theory variant needs ε ≤ log(3/δ) = %v, got %v", math.Log(3/delta), eps)
	}
	rho := eps * eps / (49 * math.Log(3/delta))
	e := ZCDPEpsilon(rho, delta/3)
	return Budget{Rho: rho, MeanEps: e, QuantileEps: e, PhaseEpsilon: eps / 3, PhaseDelta: delta / 3, TotalEpsilon: eps, TotalDelta: delta}, nil
}

// ZCDPEpsilon converts ρ-zCDP to (ε, δ)-DP: ε = ρ + 2√(ρ·log(1/δ)).
func ZCDPEpsilon(rho, delta float64) float64 { return rho + 2*math.Sqrt(rho*math.Log(1/delta)) }

// Alg1Noise returns the noise std σ = √(8·T·C²·log(1/δ))/(n·ε) and the
// smallest batch B = ⌈max(n·√(ε/(4T)), 1)⌉ of Algorithm 1 (Bassily et al.
// 2019 parameters) at (ε, δ). For the Theory variant's DP-SGD phase call it
// with Budget.PhaseEpsilon, PhaseDelta and C = √2·G·τ.
func Alg1Noise(n, T int, C, eps, delta float64) (sigma float64, batch int) {
	sigma = math.Sqrt(8*float64(T)*C*C*math.Log(1/delta)) / (float64(n) * eps)
	batch = int(math.Ceil(math.Max(float64(n)*math.Sqrt(eps/(4*float64(T))), 1)))
	return sigma, batch
}

// GaussianMean is Algorithm 3 step 1: μ̂ = (Σ_i x_i + N(0, σ_F²·C_F²·I))/n on
// features of norm ≤ C_F, with σ_F the analytic-Gaussian multiplier for
// (ε_F, δ) (sensitivity C_F of the sum under add/remove, n public;
// docs/dpsgdf.md#gaussian-mean). The sum is made and noised exactly on a
// public lattice (lattice.Sum, docs/secure-noise.md).
type GaussianMean struct {
	EpsF, Delta, CF float64
}

// Sigma returns σ_F, the noise multiplier.
func (g GaussianMean) Sigma() (float64, error) {
	if !finitePositive(g.CF) {
		return 0, fmt.Errorf("dpsgdf: feature norm C_F must be positive and finite, got %v", g.CF)
	}
	return AnalyticGaussianSigma(g.EpsF, g.Delta)
}

// Estimate returns μ̂ of X (rows clipped to C_F first, so the sensitivity
// holds whatever the input) and the Gaussian event.
func (g GaussianMean) Estimate(X *mat.Dense, s *rng.Stream) ([]float64, accountant.Event, error) {
	sigma, err := g.Sigma()
	if err != nil {
		return nil, nil, err
	}
	if err := checkFinite("dpsgdf", X, nil); err != nil {
		return nil, nil, err
	}
	Xc := (&ProjectBall{Radius: g.CF}).Transform(X)
	mu, err := g.estimate(Xc, sigma, s)
	if err != nil {
		return nil, nil, err
	}
	return mu, accountant.Gaussian{Sigma: sigma}, nil
}

// estimate releases the lattice sum of the rows (each clipped to C_F by
// the lattice) with noise std σ·C_F, divided by the public n.
func (g GaussianMean) estimate(X *mat.Dense, sigma float64, s *rng.Stream) ([]float64, error) {
	n, d := X.Dims()
	return latticeMean(n, d, g.CF, sigma, func(i int) []float64 { return X.RawRowView(i) }, s)
}

// latticeMean is the mean of n rows of d values (row(i) returns row i),
// each clipped to L2 norm bound, summed on the lattice and released with
// noise std sigma·bound, divided by the public n.
func latticeMean(n, d int, bound, sigma float64, row func(int) []float64, s *rng.Stream) ([]float64, error) {
	sum, err := lattice.NewSum(bound, sigma, d, lattice.SumExponent(n))
	if err != nil {
		return nil, fmt.Errorf("dpsgdf: private mean: %w", err)
	}
	for i := range n {
		if _, err := sum.Add(row(i)); err != nil {
			return nil, fmt.Errorf("dpsgdf: private mean: %w", err)
		}
	}
	mu, err := sum.Release(s)
	if err != nil {
		return nil, fmt.Errorf("dpsgdf: private mean: %w", err)
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	return mu, nil
}

// noisyCounts releases integer counts with exact noise of std sigma and
// keeps the first error (an int64 overflow, which needs a noise draw
// beyond 2⁶² standard deviations).
type noisyCounts struct {
	noise *lattice.CountNoise
	s     *rng.Stream
	err   error
}

func newNoisyCounts(sigma float64, s *rng.Stream) (*noisyCounts, error) {
	nz, err := lattice.NewCountNoise(sigma)
	if err != nil {
		return nil, fmt.Errorf("dpsgdf: search counts: %w", err)
	}
	return &noisyCounts{noise: nz, s: s}, nil
}

// release returns count + round(Z) as a float64 (an exact integer).
func (c *noisyCounts) release(count int) float64 {
	v, err := c.noise.Release(int64(count), c.s)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("dpsgdf: search counts: %w", err)
	}
	return float64(v)
}

// AnalyticGaussianSigma returns the smallest noise multiplier σ (sensitivity
// 1) for which the Gaussian mechanism is (ε, δ)-DP, by Balle & Wang (2018):
// δ(ε, σ) = Φ(1/(2σ) − εσ) − e^ε·Φ(−1/(2σ) − εσ) ≤ δ, solved by bisection.
func AnalyticGaussianSigma(eps, delta float64) (float64, error) {
	if !finitePositive(eps) || !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("analytic gaussian: need ε > 0 and δ in (0,1), got ε=%v δ=%v", eps, delta)
	}
	lo, hi := 1e-6, 1.0
	for gaussDelta(eps, hi) > delta {
		hi *= 2
		if hi > 1e12 {
			return 0, fmt.Errorf("analytic gaussian: no σ below 1e12 for ε=%v δ=%v", eps, delta)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if gaussDelta(eps, mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

func gaussDelta(eps, sigma float64) float64 {
	a := 1 / (2 * sigma)
	return normCDF(a-eps*sigma) - math.Exp(eps)*normCDF(-a-eps*sigma)
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// AdaptiveMean is the implementable substitute for Algorithm 2's PrivMean
// (docs/dpsgdf.md#theory-variant, after Huang, Liang, Yi 2021, without the
// optional random rotation): coordinate-wise noisy-binary-search medians give
// a coarse centre c, a noisy binary search gives a radius r around it, and the
// mean of the points clipped to the ball B(c, r) gets Gaussian noise.
// Everything is Gaussian noise, ρ-zCDP in total (half on the searches, half on
// the sum).
type AdaptiveMean struct {
	R    float64 // public bound on ‖x‖
	Rho  float64 // zCDP budget
	Zeta float64 // failure probability of the radius search; 0 = 1/n²
}

// Estimate returns μ̂ ∈ B(0, R) and its privacy event.
func (a AdaptiveMean) Estimate(X *mat.Dense, s *rng.Stream) ([]float64, accountant.Event, error) {
	n, d := X.Dims()
	if !finitePositive(a.R) || !finitePositive(a.Rho) || n < 1 {
		return nil, nil, fmt.Errorf("adaptive mean: need R > 0, ρ > 0 and n ≥ 1, got R=%v ρ=%v n=%d", a.R, a.Rho, n)
	}
	zeta := a.Zeta
	if zeta == 0 {
		zeta = 1 / float64(n*n)
	}
	alpha := a.R / float64(n*n)
	steps := searchSteps(n)
	rhoBS := a.Rho / (2 * float64((d+1)*steps))
	sigmaBS := 1 / math.Sqrt(2*rhoBS)
	counts, err := newNoisyCounts(sigmaBS, s)
	if err != nil {
		return nil, nil, err
	}

	c := make([]float64, d)
	for j := 0; j < d; j++ {
		col := make([]float64, n)
		for i := range col {
			col[i] = X.At(i, j)
		}
		c[j] = noisyBinarySearch(-a.R, a.R, steps, func(t float64) bool {
			cnt := 0
			for _, v := range col {
				if v <= t {
					cnt++
				}
			}
			return counts.release(cnt) >= float64(n)/2
		})
	}
	dists := make([]float64, n)
	for i := range dists {
		dists[i] = dist(X.RawRowView(i), c)
	}
	m := math.Ceil(sigmaBS * math.Sqrt(2*math.Log(2*float64((d+1)*steps)/zeta)))
	r := noisyBinarySearch(0, 2*a.R, steps, func(t float64) bool {
		cnt := 0
		for _, v := range dists {
			if v > t {
				cnt++
			}
		}
		return counts.release(cnt) <= m
	}) + alpha
	if counts.err != nil {
		return nil, nil, counts.err
	}

	// The sum of the points clipped to B(c, r), r released by the search:
	// on the lattice of spacing r·2⁻ᵏ, noise std r/√ρ (a Gaussian at ρ/2).
	diff := make([]float64, d)
	sigmaSum := 1 / math.Sqrt(a.Rho)
	mu, err := latticeMean(n, d, r, sigmaSum, func(i int) []float64 {
		for j, v := range X.RawRowView(i) {
			diff[j] = v - c[j]
		}
		clipTo(diff, r)
		return diff
	}, s)
	if err != nil {
		return nil, nil, err
	}
	for j := range mu {
		mu[j] += c[j]
	}
	clipTo(mu, a.R)
	ev := accountant.Composed{Events: []accountant.Event{
		accountant.SelfComposed{Event: accountant.Gaussian{Sigma: sigmaBS}, Count: (d + 1) * steps},
		accountant.Gaussian{Sigma: sigmaSum},
	}}
	return mu, ev, nil
}

// searchSteps is S = ⌈log2(2n²)⌉: resolution α = R/n² over a range of 2R.
func searchSteps(n int) int {
	return int(math.Ceil(math.Log2(2 * float64(n) * float64(n))))
}

// noisyBinarySearch halves [lo, hi] steps times, going left when left(mid)
// and returns hi.
func noisyBinarySearch(lo, hi float64, steps int, left func(t float64) bool) float64 {
	for k := 0; k < steps; k++ {
		mid := (lo + hi) / 2
		if left(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// PrivQuantile is Algorithm 2's private quantile τ of the distances
// ‖x_i − μ̂‖ (docs/dpsgdf.md#theory-variant, implemented as a noisy binary
// search over [0, 2R] rather than an exponential mechanism): the search aims
// at the threshold with K points above it, using S = ⌈log2(2n²)⌉ Gaussian
// counts at ρ/S each (ρ-zCDP in total), and returns τ = hi + R/n².
type PrivQuantile struct {
	R, Rho float64
	K      float64 // target number of points above τ, (100/ε)·ln n in Alg. 2
}

// Estimate returns τ and its privacy event.
func (q PrivQuantile) Estimate(X *mat.Dense, mu []float64, s *rng.Stream) (float64, accountant.Event, error) {
	n, d := X.Dims()
	if len(mu) != d {
		panic(fmt.Sprintf("preprocess: quantile centre has %d entries for %d features", len(mu), d))
	}
	if !finitePositive(q.R) || !finitePositive(q.Rho) || !(q.K >= 0) || n < 1 {
		return 0, nil, fmt.Errorf("private quantile: need R > 0, ρ > 0, K ≥ 0, n ≥ 1, got R=%v ρ=%v K=%v n=%d", q.R, q.Rho, q.K, n)
	}
	steps := searchSteps(n)
	sigma := 1 / math.Sqrt(2*q.Rho/float64(steps))
	counts, err := newNoisyCounts(sigma, s)
	if err != nil {
		return 0, nil, err
	}
	dists := make([]float64, n)
	for i := range dists {
		dists[i] = dist(X.RawRowView(i), mu)
	}
	hi := noisyBinarySearch(0, 2*q.R, steps, func(t float64) bool {
		cnt := 0
		for _, v := range dists {
			if v > t {
				cnt++
			}
		}
		return counts.release(cnt) <= q.K
	})
	if counts.err != nil {
		return 0, nil, counts.err
	}
	return hi + q.R/float64(n*n), accountant.SelfComposed{Event: accountant.Gaussian{Sigma: sigma}, Count: steps}, nil
}

// Centering is the fitted DPSGD-F feature map. Practical (Tau = 0):
// x ↦ Normalize_{C_F}(x) − μ̂ (NormC = 0 skips normalisation). Theory
// (Tau > 0): x ↦ Clip((x − μ̂, τ), √2·τ) ∈ ℝ^{d+1}, and the model is trained
// without a bias term (the τ column plays its role).
type Centering struct {
	NormC float64   `json:"norm_c,omitempty"`
	Mu    []float64 `json:"mu"`
	Tau   float64   `json:"tau,omitempty"`
}

// Kind implements Fitted.
func (*Centering) Kind() string { return "center" }

// InDim implements Fitted.
func (c *Centering) InDim() int { return len(c.Mu) }

// OutDim implements Fitted.
func (c *Centering) OutDim(int) int {
	if c.Tau > 0 {
		return len(c.Mu) + 1
	}
	return len(c.Mu)
}

func (c *Centering) validate() error {
	if err := checkDim(len(c.Mu)); err != nil {
		return fmt.Errorf("center: %w", err)
	}
	if err := checkFiniteVec(c.Mu); err != nil {
		return fmt.Errorf("center: mu %w", err)
	}
	if !(c.NormC >= 0) || math.IsInf(c.NormC, 0) || !(c.Tau >= 0) || math.IsInf(c.Tau, 0) {
		return fmt.Errorf("center: norm_c and tau must be finite and ≥ 0, got %v, %v", c.NormC, c.Tau)
	}
	return nil
}

// Transform implements Fitted: the feature map applied to any rows.
func (c *Centering) Transform(X *mat.Dense) *mat.Dense {
	checkDims("center", c, X)
	if c.NormC > 0 {
		X = (&Normalize{C: c.NormC}).Transform(X)
	}
	return c.centre(X)
}

func (c *Centering) centre(X *mat.Dense) *mat.Dense {
	n, d := X.Dims()
	out := mat.NewDense(n, c.OutDim(d), nil)
	for i := 0; i < n; i++ {
		x, y := X.RawRowView(i), out.RawRowView(i)
		for j := range c.Mu {
			y[j] = x[j] - c.Mu[j]
		}
		if c.Tau > 0 {
			y[d] = c.Tau
			clipTo(y, math.Sqrt2*c.Tau)
		}
	}
	return out
}

// Revert maps a linear model learnt on the centred features back to the
// original (normalised, for Practical) features: h(x) = w·x + b.
// Practical: w has d entries and bias is the learnt bias b'; b = b' − μ̂·w.
// Theory: w has d+1 entries (the last multiplies τ) and bias is 0 (no bias
// term); b = w_{d+1}·τ − μ̂·w_{1..d} (Lemma 5; the paper's printed
// "θ”[d+1]τ − μ̂" misses the ·w, docs/dpsgdf.md#reverting-the-model). For a
// multiclass model call it once per class.
func (c *Centering) Revert(w []float64, bias float64) ([]float64, float64) {
	d := len(c.Mu)
	if len(w) != c.OutDim(d) {
		panic(fmt.Sprintf("preprocess: revert: %d weights for %d centred features", len(w), c.OutDim(d)))
	}
	out := append([]float64(nil), w[:d]...)
	b := bias
	if c.Tau > 0 {
		b += w[d] * c.Tau
	}
	for j, m := range c.Mu {
		b -= m * out[j]
	}
	return out, b
}
