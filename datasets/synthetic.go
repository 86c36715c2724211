package datasets

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/rng"
)

// Synthetic generators. Each draws from rng seeded streams, so a
// seed reproduces the data exactly across runs and machines. Binary
// datasets use class 1 for the papers' +1 label and class 0 for −1
// (see Dataset.Signs).

// GaussianMixture describes k Gaussian classes in d dimensions.
type GaussianMixture struct {
	N, K, D int
	// Sep is the distance between any two class centres. The centres are
	// (Sep/√2)·e_k, k = 0..K-1, so K ≤ D is required; each point is its
	// centre plus N(0, I_d) noise. For K = 2 the Bayes accuracy is Φ(Sep/2).
	Sep  float64
	Seed uint64
}

// Centre returns the centre of class k.
func (g GaussianMixture) Centre(k int) []float64 {
	c := make([]float64, g.D)
	c[k] = g.Sep / math.Sqrt2
	return c
}

// Generate draws the dataset. Labels are balanced (example i has class
// i mod K before a seeded shuffle).
func (g GaussianMixture) Generate() (*Dataset, error) {
	if g.N <= 0 || g.K < 2 || g.D < g.K || !(g.Sep >= 0) || math.IsInf(g.Sep, 0) {
		return nil, fmt.Errorf("gaussian mixture: need N > 0, 2 ≤ K ≤ D and finite Sep ≥ 0, got N=%d K=%d D=%d Sep=%v", g.N, g.K, g.D, g.Sep)
	}
	s := rng.New(g.Seed).Child("datasets.GaussianMixture")
	d := &Dataset{Name: "gaussian-mixture", X: make([]float32, g.N*g.D), Y: make([]int, g.N), Shape: []int{g.D}, NumClasses: g.K}
	perm := s.Perm(g.N)
	a := g.Sep / math.Sqrt2
	for i := range g.N {
		y := perm[i] % g.K
		d.Y[i] = y
		row := d.X[i*g.D : (i+1)*g.D]
		for j := range row {
			row[j] = float32(s.NormFloat64())
		}
		row[y] += float32(a)
	}
	return d, nil
}

// DPSGDFCounterexample returns the 2-D hinge-loss dataset of
// paper 001, Theorem 3 (docs/dpsgdf.md#limits): n/2 copies of (μ, 1) with
// label +1 and n/2 copies of (μ, −1) with label −1 (the paper's D′). With
// flipped, the same points with the labels exchanged (the paper's D′′). n must
// be even and positive. Examples alternate between the two points. No
// randomness is involved.
func DPSGDFCounterexample(n int, mu float64, flipped bool) (*Dataset, error) {
	if n <= 0 || n%2 != 0 {
		return nil, fmt.Errorf("dpsgdf counterexample: n=%d must be even and positive", n)
	}
	if math.IsNaN(mu) || math.IsInf(mu, 0) {
		return nil, fmt.Errorf("dpsgdf counterexample: μ=%v must be finite", mu)
	}
	d := &Dataset{Name: "dpsgdf-counterexample", X: make([]float32, 2*n), Y: make([]int, n), Shape: []int{2}, NumClasses: 2}
	for i := range n {
		second, y := float32(1), 1 // (μ, 1) → +1
		if i%2 == 1 {
			second, y = -1, 0 // (μ, −1) → −1
		}
		if flipped {
			y = 1 - y
		}
		d.X[2*i], d.X[2*i+1], d.Y[i] = float32(mu), second, y
	}
	return d, nil
}

// LogisticSynthetic is the synthetic logistic-regression data of
// paper 004, Figs 2–5 (docs/per-instance.md#paper-experiments): θ ~ N(0, I_D),
// x uniform in the unit ball of R^D. The paper's label model "Pr[Y=1] =
// sigmoid(xᵀθ)+E" is garbled; two reconstructions are offered:
//   - Bernoulli false: y = 1 iff sigmoid(xᵀθ) + E > 1/2, E ~ N(0, NoiseStd²)
//     (NoiseStd = 0 gives y = 1 iff xᵀθ > 0);
//   - Bernoulli true: y ~ Bernoulli(sigmoid(xᵀθ)).
type LogisticSynthetic struct {
	N, D      int
	NoiseStd  float64
	Bernoulli bool
	Seed      uint64
}

// Generate draws the data and returns it with the true θ.
func (l LogisticSynthetic) Generate() (*Dataset, []float64, error) {
	if l.N <= 0 || l.D <= 0 || !(l.NoiseStd >= 0) || math.IsInf(l.NoiseStd, 0) {
		return nil, nil, fmt.Errorf("logistic synthetic: need N, D > 0 and finite NoiseStd ≥ 0, got N=%d D=%d NoiseStd=%v", l.N, l.D, l.NoiseStd)
	}
	root := rng.New(l.Seed).Child("datasets.LogisticSynthetic")
	ts, xs, ys := root.Child("theta"), root.Child("x"), root.Child("y")
	theta := make([]float64, l.D)
	for j := range theta {
		theta[j] = ts.NormFloat64()
	}
	d := &Dataset{Name: "logistic-synthetic", X: make([]float32, l.N*l.D), Y: make([]int, l.N), Shape: []int{l.D}, NumClasses: 2}
	x := make([]float64, l.D)
	for i := range l.N {
		uniformBall(xs, x)
		dot := 0.0
		for j, v := range x {
			d.X[i*l.D+j] = float32(v)
			dot += float64(float32(v)) * theta[j]
		}
		p := 1 / (1 + math.Exp(-dot))
		if l.Bernoulli {
			if ys.Float64() < p {
				d.Y[i] = 1
			}
		} else if p+l.NoiseStd*ys.NormFloat64() > 0.5 {
			d.Y[i] = 1
		}
	}
	return d, theta, nil
}

// uniformBall sets x to a uniform draw from the unit ball: a uniform
// direction (normalised Gaussian) times radius U^{1/d}.
func uniformBall(s *rng.Stream, x []float64) {
	for {
		norm := 0.0
		for j := range x {
			x[j] = s.NormFloat64()
			norm += x[j] * x[j]
		}
		if norm == 0 {
			continue
		}
		r := math.Pow(s.Float64(), 1/float64(len(x))) / math.Sqrt(norm)
		for j := range x {
			x[j] *= r
		}
		return
	}
}

// SeparableBall is the data of paper 004, Fig 1
// (docs/per-instance.md#paper-experiments): N points
// uniform in the unit ball of R^D, keeping only those with |x_0| ≥ Margin/2,
// labelled 1 iff x_0 > 0, so the classes are linearly separable with a gap
// of Margin (the reproduction of Fig 1 uses N=1000, D=2, Margin=0.4).
type SeparableBall struct {
	N, D   int
	Margin float64
	Seed   uint64
}

// Generate draws the data by rejection.
func (b SeparableBall) Generate() (*Dataset, error) {
	if b.N <= 0 || b.D <= 0 || !(b.Margin >= 0 && b.Margin < 2) {
		return nil, fmt.Errorf("separable ball: need N, D > 0 and 0 ≤ Margin < 2, got N=%d D=%d Margin=%v", b.N, b.D, b.Margin)
	}
	s := rng.New(b.Seed).Child("datasets.SeparableBall")
	d := &Dataset{Name: "separable-ball", X: make([]float32, b.N*b.D), Y: make([]int, b.N), Shape: []int{b.D}, NumClasses: 2}
	x := make([]float64, b.D)
	for i := 0; i < b.N; {
		uniformBall(s, x)
		if math.Abs(float64(float32(x[0]))) < b.Margin/2 {
			continue
		}
		for j, v := range x {
			d.X[i*b.D+j] = float32(v)
		}
		if x[0] > 0 {
			d.Y[i] = 1
		}
		i++
	}
	return d, nil
}

// LowRankClassification reconstructs the synthetic data of
// paper 000, Figure 3 (docs/srdp.md#paper-figures; after sklearn's
// make_classification): two classes whose Rank informative features are
// N(0, I) around a class vertex of the hypercube {±ClassSep}^Rank (the two
// vertices are distinct random vertices), mixed into D dimensions by a
// random Rank×D Gaussian matrix, plus isotropic N(0, Noise²) noise so the
// tail eigenvalues are small but positive, then all rows divided by the
// largest row norm so that ‖x‖ ≤ 1 (a global scale keeps the low-rank
// structure). The reproduction's defaults: N=1000, D=6000, Rank=50,
// ClassSep=1, Noise=0.01.
type LowRankClassification struct {
	N, D, Rank      int
	ClassSep, Noise float64
	Seed            uint64
}

// Generate draws the data.
func (c LowRankClassification) Generate() (*Dataset, error) {
	if c.N <= 0 || c.Rank <= 0 || c.D < c.Rank || !(c.ClassSep >= 0) || !(c.Noise >= 0) ||
		math.IsInf(c.ClassSep, 0) || math.IsInf(c.Noise, 0) {
		return nil, fmt.Errorf("low-rank classification: need N > 0, 0 < Rank ≤ D, finite ClassSep, Noise ≥ 0; got N=%d D=%d Rank=%d ClassSep=%v Noise=%v",
			c.N, c.D, c.Rank, c.ClassSep, c.Noise)
	}
	root := rng.New(c.Seed).Child("datasets.LowRankClassification")
	vs, ms, zs := root.Child("vertices"), root.Child("mix"), root.Child("points")
	// Two distinct hypercube vertices.
	vert := [2][]float64{make([]float64, c.Rank), make([]float64, c.Rank)}
	for {
		same := true
		for k := range 2 {
			for j := range c.Rank {
				vert[k][j] = c.ClassSep * float64(2*vs.IntN(2)-1)
			}
		}
		for j := range c.Rank {
			same = same && vert[0][j] == vert[1][j]
		}
		if !same || c.ClassSep == 0 {
			break
		}
	}
	mix := make([]float64, c.Rank*c.D)
	for i := range mix {
		mix[i] = ms.NormFloat64() / math.Sqrt(float64(c.Rank))
	}
	x := make([]float64, c.N*c.D)
	z := make([]float64, c.Rank)
	d := &Dataset{Name: "low-rank-classification", X: make([]float32, c.N*c.D), Y: make([]int, c.N), Shape: []int{c.D}, NumClasses: 2}
	maxNorm := 0.0
	for i := range c.N {
		y := i % 2
		d.Y[i] = y
		for j := range z {
			z[j] = vert[y][j] + zs.NormFloat64()
		}
		row := x[i*c.D : (i+1)*c.D]
		for j := range row {
			row[j] = c.Noise * zs.NormFloat64()
		}
		for r, zr := range z {
			m := mix[r*c.D : (r+1)*c.D]
			for j := range row {
				row[j] += zr * m[j]
			}
		}
		n2 := 0.0
		for _, v := range row {
			n2 += v * v
		}
		maxNorm = math.Max(maxNorm, math.Sqrt(n2))
	}
	if maxNorm == 0 {
		maxNorm = 1
	}
	// Scale slightly below 1 so float32 rounding cannot push a norm over 1.
	scale := (1 - 1e-6) / maxNorm
	for i, v := range x {
		d.X[i] = float32(v * scale)
	}
	return d, nil
}

// MissingTabular is tabular data with missing values for the imputation
// experiments of paper 000 (docs/srdp.md#imputation): N records
// of D correlated features in the unit ball, of which exactly
// MissingRecords records (the p of docs/srdp.md#imputation, chosen uniformly)
// miss at least one entry. In such a record each entry is missing with
// probability MissingRate, and one uniformly chosen entry is always missing.
// Features are x = A z + 0.1·ε with z ~ N(0, I_r), r = max(1, D/2), A a fixed
// random D×r matrix, then all rows divided by the largest row norm (‖x‖ ≤ 1).
// The label is 1 iff wᵀx > 0 for a random w, computed on the complete record.
type MissingTabular struct {
	N, D           int
	MissingRecords int
	MissingRate    float64
	Seed           uint64
}

// Generate returns the data with NaN for missing entries and the complete
// data it was masked from (the ground truth for imputation error).
func (m MissingTabular) Generate() (masked, complete *Dataset, err error) {
	if m.N <= 0 || m.D <= 0 || m.MissingRecords < 0 || m.MissingRecords > m.N || !(m.MissingRate >= 0 && m.MissingRate <= 1) {
		return nil, nil, fmt.Errorf("missing tabular: need N, D > 0, 0 ≤ MissingRecords ≤ N, MissingRate in [0,1]; got N=%d D=%d p=%d rate=%v",
			m.N, m.D, m.MissingRecords, m.MissingRate)
	}
	root := rng.New(m.Seed).Child("datasets.MissingTabular")
	as, xs, ws, ms := root.Child("A"), root.Child("x"), root.Child("w"), root.Child("mask")
	r := max(1, m.D/2)
	a := make([]float64, m.D*r)
	for i := range a {
		a[i] = as.NormFloat64()
	}
	w := make([]float64, m.D)
	for j := range w {
		w[j] = ws.NormFloat64()
	}
	x := make([]float64, m.N*m.D)
	z := make([]float64, r)
	maxNorm := 0.0
	for i := range m.N {
		for k := range z {
			z[k] = xs.NormFloat64()
		}
		row := x[i*m.D : (i+1)*m.D]
		n2 := 0.0
		for j := range row {
			v := 0.1 * xs.NormFloat64()
			for k, zk := range z {
				v += a[j*r+k] * zk
			}
			row[j] = v
			n2 += v * v
		}
		maxNorm = math.Max(maxNorm, math.Sqrt(n2))
	}
	scale := (1 - 1e-6) / maxNorm
	complete = &Dataset{Name: "missing-tabular", X: make([]float32, m.N*m.D), Y: make([]int, m.N), Shape: []int{m.D}, NumClasses: 2}
	for i := range m.N {
		dot := 0.0
		for j := range m.D {
			v := float32(x[i*m.D+j] * scale)
			complete.X[i*m.D+j] = v
			dot += w[j] * float64(v)
		}
		if dot > 0 {
			complete.Y[i] = 1
		}
	}
	masked = complete.Subset(identity(m.N))
	nan := float32(math.NaN())
	for _, i := range ms.Perm(m.N)[:m.MissingRecords] {
		row := masked.X[i*m.D : (i+1)*m.D]
		row[ms.IntN(m.D)] = nan
		for j := range row {
			if ms.Float64() < m.MissingRate {
				row[j] = nan
			}
		}
	}
	return masked, complete, nil
}

func identity(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
