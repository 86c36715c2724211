package preprocess

import (
	"errors"
	"math"
	"sort"
	"testing"

	"github.com/dptrain/dptrain/rng"
	"gonum.org/v1/gonum/mat"
)

// ballPoint draws a point uniformly-ish in the ball of radius r.
func ballPoint(s *rng.Stream, d int, r float64) []float64 {
	v := make([]float64, d)
	for j := range v {
		v[j] = s.NormFloat64()
	}
	nr := norm(v)
	rad := r * math.Pow(s.Float64(), 1/float64(d))
	for j := range v {
		v[j] *= rad / nr
	}
	return v
}

// neighbours returns S1, S2 that share every row but row pos.
func neighbours(common [][]float64, pos int, z1, z2 []float64) (*mat.Dense, *mat.Dense) {
	n, d := len(common)+1, len(z1)
	S1, S2 := mat.NewDense(n, d, nil), mat.NewDense(n, d, nil)
	k := 0
	for i := 0; i < n; i++ {
		if i == pos {
			S1.SetRow(i, z1)
			S2.SetRow(i, z2)
			continue
		}
		S1.SetRow(i, common[k])
		S2.SetRow(i, common[k])
		k++
	}
	return S1, S2
}

// measure returns the largest L2 change and the number of changed records
// among the common records (all but pos), with the ∅ convention.
func measure(r1, r2 Result, pos int) (maxL2 float64, changed int) {
	n, _ := r1.X.Dims()
	for i := 0; i < n; i++ {
		if i == pos {
			continue
		}
		rm1 := r1.Removed != nil && r1.Removed[i]
		rm2 := r2.Removed != nil && r2.Removed[i]
		var dd float64
		switch {
		case rm1 && rm2:
			dd = 0
		case rm1 != rm2:
			dd = 1
		default:
			dd = dist(r1.X.RawRowView(i), r2.X.RawRowView(i))
		}
		if dd > 1e-12 {
			changed++
		}
		maxL2 = math.Max(maxL2, dd)
	}
	return maxL2, changed
}

type bruteCase struct {
	name   string
	step   Step
	trials int
	// gen returns the common rows and the two replaced records.
	gen func(s *rng.Stream) (common [][]float64, z1, z2 []float64)
	// declare returns bounds valid for the collection {S1, S2}.
	declare func(S1, S2 *mat.Dense) Bounds
}

// runBrute replaces one record in many random ways and checks that the
// measured L2 and L∞ changes never exceed the declared sensitivity.
func runBrute(t *testing.T, c bruteCase) (worstRatio float64) {
	t.Helper()
	s := rng.New(7).Child(c.name)
	for trial := 0; trial < c.trials; trial++ {
		common, z1, z2 := c.gen(s)
		pos := s.IntN(len(common) + 1)
		S1, S2 := neighbours(common, pos, z1, z2)
		_, r1, err := c.step.FitTransform(S1, nil)
		if err != nil {
			t.Fatalf("trial %d: fit S1: %v", trial, err)
		}
		_, r2, err := c.step.FitTransform(S2, nil)
		if err != nil {
			t.Fatalf("trial %d: fit S2: %v", trial, err)
		}
		sens, err := c.step.Sensitivity(c.declare(S1, S2))
		if err != nil {
			t.Fatalf("trial %d: sensitivity: %v", trial, err)
		}
		l2, cnt := measure(r1, r2, pos)
		if l2 > sens.L2*(1+1e-9)+1e-12 {
			t.Fatalf("trial %d: measured L2 change %.6g > declared Δ2 %.6g (%s)", trial, l2, sens.L2, sens.Formula)
		}
		if float64(cnt) > sens.LInf {
			t.Fatalf("trial %d: %d common records changed > declared Δ∞ %v (%s)", trial, cnt, sens.LInf, sens.Formula)
		}
		if sens.L2 > 0 {
			worstRatio = math.Max(worstRatio, l2/sens.L2)
		}
	}
	return worstRatio
}

// naiveMaxBall counts, for every row, the rows within r, and returns the largest count.
func naiveMaxBall(X *mat.Dense, r float64) int {
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

// naiveMaxGoodCluster is an independent b_max: for every point, count the
// points within η and check none lies in (η, 3η].
func naiveMaxGoodCluster(X *mat.Dense, eta float64) int {
	n, _ := X.Dims()
	best := 0
	for i := 0; i < n; i++ {
		in, good := 0, true
		for j := 0; j < n; j++ {
			d := dist(X.RawRowView(i), X.RawRowView(j))
			if d <= eta {
				in++
			} else if d <= 3*eta {
				good = false
			}
		}
		if good && in > best {
			best = in
		}
	}
	return best
}

// clusteredData draws rows around a few cluster centres plus isolated points,
// and two replacement records that often land in or near a cluster.
func clusteredData(eta float64) func(s *rng.Stream) ([][]float64, []float64, []float64) {
	return func(s *rng.Stream) ([][]float64, []float64, []float64) {
		const d = 2
		centres := [][]float64{ballPoint(s, d, 0.8), ballPoint(s, d, 0.8), ballPoint(s, d, 0.8)}
		var rows [][]float64
		for _, c := range centres {
			m := 1 + s.IntN(5)
			for k := 0; k < m; k++ {
				p := ballPoint(s, d, eta*s.Float64()*0.6)
				for j := range p {
					p[j] += c[j]
				}
				rows = append(rows, p)
			}
		}
		for k := 0; k < 6; k++ {
			rows = append(rows, ballPoint(s, d, 0.95))
		}
		pick := func() []float64 {
			switch s.IntN(4) {
			case 0: // exact duplicate of a row
				return append([]float64(nil), rows[s.IntN(len(rows))]...)
			case 1: // near a row, inside or in the annulus
				r := rows[s.IntN(len(rows))]
				p := ballPoint(s, d, 3*eta)
				for j := range p {
					p[j] += r[j]
				}
				projectBall(p)
				return p
			default:
				return ballPoint(s, d, 1)
			}
		}
		return rows, pick(), pick()
	}
}

func TestBruteForceClusterSteps(t *testing.T) {
	const eta = 0.08
	declare := func(S1, S2 *mat.Dense) Bounds {
		n, d := S1.Dims()
		return Bounds{N: n, D: d, MaxBall4Eta: max(naiveMaxBall(S1, 4*eta), naiveMaxBall(S2, 4*eta))}
	}
	for _, step := range []Step{Dedup{Eta: eta}, Quantize{Eta: eta}} {
		t.Run(step.Name(), func(t *testing.T) {
			r := runBrute(t, bruteCase{name: step.Name(), step: step, trials: 3000, gen: clusteredData(eta), declare: declare})
			t.Logf("%s: worst measured/declared Δ2 = %.3f", step.Name(), r)
		})
	}
}

// TestDedupPathology is the dedup pathology of
// docs/srdp.md#deduplication-and-quantisation: points pairwise more than η
// apart but all within η of x; adding x makes dedup remove all of them, so Δ_∞
// grows with n and only the declared b_max (= n+1 here) bounds it.
func TestDedupPathology(t *testing.T) {
	const eta, m = 0.1, 6
	var rows [][]float64
	for k := 0; k < m; k++ {
		a := 2 * math.Pi * float64(k) / m
		rows = append(rows, []float64{0.099 * math.Cos(a), 0.099 * math.Sin(a)})
	}
	far := []float64{0.9, 0}
	S1, S2 := neighbours(rows, m, far, []float64{0, 0})
	_, r1, _ := Dedup{Eta: eta}.FitTransform(S1, nil)
	_, r2, _ := Dedup{Eta: eta}.FitTransform(S2, nil)
	_, changed := measure(r1, r2, m)
	if changed != m {
		t.Fatalf("adding the centre changed %d records, want all %d", changed, m)
	}
	b := naiveMaxGoodCluster(S2, eta)
	sens, _ := Dedup{Eta: eta, PaperBound: true}.Sensitivity(Bounds{MaxGoodCluster: b})
	if float64(changed) > sens.LInf {
		t.Fatalf("Δ∞ %v below the %d changed records", sens.LInf, changed)
	}
}

// TestProposition3Counterexample: three good clusters of 5 records whose
// centres lie 2η from z_2 (pairwise 2√3·η > 3η apart). Replacing a far
// record z_1 by z_2 breaks all three: 12 common records change, more than
// Proposition 3's 2·b_max = 10. The default bound (2·max|B(x,4η)|) holds.
func TestProposition3Counterexample(t *testing.T) {
	const eta = 0.05
	var rows [][]float64
	for c := 0; c < 3; c++ {
		a := 2 * math.Pi * float64(c) / 3
		cx, cy := 0.1+2*eta*math.Cos(a), 2*eta*math.Sin(a)
		for k := 0; k < 5; k++ { // centre plus 4 records within η/2
			b := 2 * math.Pi * float64(k) / 4
			r := 0.0
			if k > 0 {
				r = eta / 2
			}
			rows = append(rows, []float64{cx + r*math.Cos(b), cy + r*math.Sin(b)})
		}
	}
	z1, z2 := []float64{-0.9, 0}, []float64{0.1, 0}
	S1, S2 := neighbours(rows, len(rows), z1, z2)
	for _, step := range []Step{Dedup{Eta: eta}, Quantize{Eta: eta}} {
		_, r1, _ := step.FitTransform(S1, nil)
		_, r2, _ := step.FitTransform(S2, nil)
		l2, changed := measure(r1, r2, len(rows))
		bmax := max(naiveMaxGoodCluster(S1, eta), naiveMaxGoodCluster(S2, eta))
		paper, _ := Dedup{Eta: eta, PaperBound: true}.Sensitivity(Bounds{MaxGoodCluster: bmax})
		b := Bounds{N: len(rows) + 1, MaxBall4Eta: max(naiveMaxBall(S1, 4*eta), naiveMaxBall(S2, 4*eta))}
		safe, _ := step.Sensitivity(b)
		if bmax != 5 || changed != 12 || !(float64(changed) > paper.LInf) {
			t.Errorf("%s: b_max %d, %d records changed, Prop. 3 Δ∞ %v: counterexample lost", step.Name(), bmax, changed, paper.LInf)
		}
		if float64(changed) > safe.LInf || l2 > safe.L2 {
			t.Errorf("%s: measured (%v, %d) exceeds the default bound (%v, %v)", step.Name(), l2, changed, safe.L2, safe.LInf)
		}
	}
}

// missingData draws n−1 common rows in the unit ball with some missing
// entries, and two replacement records with their own missing patterns.
func missingData(n, d, maxMissRows, maxMissFeat int) func(s *rng.Stream) ([][]float64, []float64, []float64) {
	return func(s *rng.Stream) ([][]float64, []float64, []float64) {
		withHoles := func(p []float64) []float64 {
			k := 1 + s.IntN(maxMissFeat)
			for _, j := range s.Perm(d)[:k] {
				p[j] = math.NaN()
			}
			return p
		}
		var rows [][]float64
		miss := s.IntN(maxMissRows)
		shift := ballPoint(s, d, 0.5)
		for i := 0; i < n-1; i++ {
			p := ballPoint(s, d, 0.5)
			for j := range p {
				p[j] += shift[j]
			}
			projectBall(p)
			if i < miss {
				p = withHoles(p)
			}
			rows = append(rows, p)
		}
		z := func() []float64 {
			p := ballPoint(s, d, 1)
			if s.IntN(2) == 0 {
				p = withHoles(p)
			}
			return p
		}
		return rows, z(), z()
	}
}

func countMissing(X *mat.Dense) (rows, perRow int) {
	n, d := X.Dims()
	for i := 0; i < n; i++ {
		k := 0
		for j := 0; j < d; j++ {
			if math.IsNaN(X.At(i, j)) {
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

// orderStatSpan returns, over S1 and S2 and all features, max of the value at
// sorted index hiIdx(m) minus min of the value at loIdx(m), m the observed count.
func orderStatSpan(S1, S2 *mat.Dense, loIdx, hiIdx func(m int) int) float64 {
	_, d := S1.Dims()
	span := 0.0
	for j := 0; j < d; j++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, S := range []*mat.Dense{S1, S2} {
			var v []float64
			n, _ := S.Dims()
			for i := 0; i < n; i++ {
				if x := S.At(i, j); !math.IsNaN(x) {
					v = append(v, x)
				}
			}
			sort.Float64s(v)
			lo, hi = math.Min(lo, v[loIdx(len(v))]), math.Max(hi, v[hiIdx(len(v))])
		}
		span = math.Max(span, hi-lo)
	}
	return span
}

func TestBruteForceImputation(t *testing.T) {
	const n, d, trim = 25, 4, 3
	declare := func(S1, S2 *mat.Dense) Bounds {
		p1, k1 := countMissing(S1)
		p2, k2 := countMissing(S2)
		return Bounds{N: n, D: d, MaxMissingRecords: max(p1, p2), MaxMissingFeatures: max(k1, k2),
			// +1e-12: a declared 0 is refused as a forgotten declaration.
			MedianShift:  1e-12 + orderStatSpan(S1, S2, func(m int) int { return (m - 1) / 2 }, func(m int) int { return m / 2 }),
			TrimmedRange: 1e-12 + orderStatSpan(S1, S2, func(int) int { return trim }, func(m int) int { return m - 1 - trim }),
		}
	}
	for _, step := range []Step{Impute{Method: ImputeMean}, Impute{Method: ImputeMedian}, Impute{Method: ImputeTrimmedMean, Trim: trim}} {
		t.Run(step.Name(), func(t *testing.T) {
			r := runBrute(t, bruteCase{name: step.Name(), step: step, trials: 3000, gen: missingData(n, d, 8, 2), declare: declare})
			t.Logf("%s: worst measured/declared Δ2 = %.3f", step.Name(), r)
		})
	}
}

// TestMeanImputationPaperBoundCounterexample pins docs/srdp.md#imputation:
// when the replaced records miss different features, a feature's observed
// count changes and Corollary 4's 2/(n−p) is exceeded; the default bound
// holds.
func TestMeanImputationPaperBoundCounterexample(t *testing.T) {
	const n = 10
	var rows [][]float64
	for i := 0; i < n-1; i++ {
		rows = append(rows, []float64{-0.7, -0.7})
	}
	rows[0] = []float64{math.NaN(), math.NaN()} // a common record to impute
	z1 := []float64{math.NaN(), 1}
	z2 := []float64{1, math.NaN()}
	S1, S2 := neighbours(rows, n-1, z1, z2)
	_, r1, _ := Impute{Method: ImputeMean}.FitTransform(S1, nil)
	_, r2, _ := Impute{Method: ImputeMean}.FitTransform(S2, nil)
	l2, changed := measure(r1, r2, n-1)
	b := Bounds{N: n, D: 2, MaxMissingRecords: 2, MaxMissingFeatures: 2}
	paper, _ := Impute{Method: ImputeMean, PaperBound: true}.Sensitivity(b)
	safe, _ := Impute{Method: ImputeMean}.Sensitivity(b)
	if !(l2 > paper.L2) {
		t.Errorf("measured Δ2 %.6g does not exceed Cor. 4's %.6g: counterexample lost", l2, paper.L2)
	}
	if l2 > safe.L2 || float64(changed) > safe.LInf {
		t.Errorf("measured (Δ2 %.6g, Δ∞ %d) exceeds the default bound (%.6g, %v)", l2, changed, safe.L2, safe.LInf)
	}
	t.Logf("measured Δ2 %.4f; Cor. 4 %.4f; default %.4f", l2, paper.L2, safe.L2)
}

func scaleData(n, d int) func(s *rng.Stream) ([][]float64, []float64, []float64) {
	return func(s *rng.Stream) ([][]float64, []float64, []float64) {
		var rows [][]float64
		spread := 0.1 + 0.6*s.Float64()
		for i := 0; i < n-1; i++ {
			rows = append(rows, ballPoint(s, d, spread))
		}
		return rows, ballPoint(s, d, 1), ballPoint(s, d, 1)
	}
}

func featureStats(S *mat.Dense) (minStd, minRange float64, lo, hi []float64) {
	n, d := S.Dims()
	minStd, minRange = math.Inf(1), math.Inf(1)
	for j := 0; j < d; j++ {
		var m, v float64
		l, h := math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			m += S.At(i, j)
			l, h = math.Min(l, S.At(i, j)), math.Max(h, S.At(i, j))
		}
		m /= float64(n)
		for i := 0; i < n; i++ {
			v += (S.At(i, j) - m) * (S.At(i, j) - m)
		}
		minStd = math.Min(minStd, math.Sqrt(v/float64(n)))
		minRange = math.Min(minRange, h-l)
		lo, hi = append(lo, l), append(hi, h)
	}
	return minStd, minRange, lo, hi
}

func TestBruteForceScaling(t *testing.T) {
	const n, d = 20, 3
	declare := func(S1, S2 *mat.Dense) Bounds {
		s1, r1, lo1, hi1 := featureStats(S1)
		s2, r2, lo2, hi2 := featureStats(S2)
		g := 0.0
		for j := range lo1 {
			g = math.Max(g, math.Max(math.Abs(lo1[j]-lo2[j]), math.Abs(hi1[j]-hi2[j])))
		}
		return Bounds{N: n, D: d, SigmaMin: math.Min(s1, s2), RangeMin: math.Min(r1, r2), ExtremeGap: g + 1e-12}
	}
	for _, step := range []Step{StandardScaler{}, MinMaxScaler{}} {
		t.Run(step.Name(), func(t *testing.T) {
			r := runBrute(t, bruteCase{name: step.Name(), step: step, trials: 3000, gen: scaleData(n, d), declare: declare})
			t.Logf("%s: worst measured/declared Δ2 = %.3f", step.Name(), r)
		})
	}
}

// TestStandardScalingErratum reproduces the examples of docs/srdp.md#scaling:
// the variance moves by 3.96/n (not ≤ 2/n), and the 1-D example's observed Δ2.
func TestStandardScalingErratum(t *testing.T) {
	common := make([][]float64, 99)
	for i := range common {
		common[i] = []float64{-1}
	}
	S1, S2 := neighbours(common, 99, []float64{-1}, []float64{1})
	f1, _, err1 := StandardScaler{}.FitTransform(S1, nil)
	if err1 == nil {
		t.Fatalf("constant feature accepted: %v", f1)
	}
	f2, _, err := StandardScaler{}.FitTransform(S2, nil)
	if err != nil {
		t.Fatal(err)
	}
	sd := f2.(*scalerFitted).Scale[0]
	if got := 100 * sd * sd; math.Abs(got-3.96) > 1e-12 { // var(S1) = 0
		t.Errorf("n·|Δvar| = %v, want 3.96", got)
	}

	for i := range common {
		common[i] = []float64{-1}
		if i < 50 {
			common[i] = []float64{-0.8}
		}
	}
	S1, S2 = neighbours(common, 99, []float64{-1}, []float64{1})
	_, r1, _ := StandardScaler{}.FitTransform(S1, nil)
	_, r2, _ := StandardScaler{}.FitTransform(S2, nil)
	l2, _ := measure(r1, r2, 99)
	if math.Abs(l2-0.625) > 5e-4 {
		t.Errorf("observed Δ2 = %.6f, reference 0.625", l2)
	}
	b := Bounds{N: 100, D: 1, SigmaMin: 0.1}
	paper, _ := StandardScaler{PaperBound: true}.Sensitivity(b)
	safe, _ := StandardScaler{}.Sensitivity(b)
	for _, c := range []struct {
		got, want float64
	}{{paper.L2, 20.2}, {safe.L2, 40.2}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("bound %v, want %v", c.got, c.want)
		}
	}
}

func pcaData(n int, stds []float64) func(s *rng.Stream) ([][]float64, []float64, []float64) {
	return func(s *rng.Stream) ([][]float64, []float64, []float64) {
		var rows [][]float64
		for i := 0; i < n-1; i++ {
			p := make([]float64, len(stds))
			for j := range p {
				p[j] = stds[j] * s.NormFloat64()
			}
			projectBall(p)
			rows = append(rows, p)
		}
		return rows, ballPoint(s, len(stds), 1), ballPoint(s, len(stds), 1)
	}
}

func TestBruteForcePCA(t *testing.T) {
	const n, k = 101, 1
	stds := []float64{0.5, 0.2, 0.1}
	declare := func(S1, S2 *mat.Dense) Bounds {
		g1, t1, err := EigenGaps(S1, nil, k)
		if err != nil {
			t.Fatal(err)
		}
		g2, t2, _ := EigenGaps(S2, nil, k)
		return Bounds{N: n, D: len(stds), EigenGapMin: math.Min(g1, g2), TopGapMin: math.Min(t1, t2)}
	}
	for _, step := range []Step{PCA{K: k}, PCA{K: k, Dim: true}, PCA{K: 2}} {
		t.Run(step.Name(), func(t *testing.T) {
			r := runBrute(t, bruteCase{name: step.Name(), step: step, trials: 500, gen: pcaData(n, stds), declare: func(S1, S2 *mat.Dense) Bounds {
				b := declare(S1, S2)
				if p := step.(PCA); p.K == 2 {
					g1, _, _ := EigenGaps(S1, nil, 2)
					g2, _, _ := EigenGaps(S2, nil, 2)
					b.EigenGapMin = math.Min(g1, g2)
				}
				return b
			}})
			t.Logf("%s: worst measured/declared Δ2 = %.3f (reference: ≈0.05, the bound is ≈20× loose)", step.Name(), r)
		})
	}
}

// TestSensitivityVectors checks TV1 of docs/srdp.md#test-vectors.
func TestSensitivityVectors(t *testing.T) {
	rel := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }
	cases := []struct {
		name     string
		step     Step
		b        Bounds
		l2, linf float64
		tau      float64
	}{
		{"pca rank", PCA{K: 2}, Bounds{N: 101, EigenGapMin: 0.5, TopGapMin: 0.5}, 0.24158415841584158, 101, 24.4},
		{"pca dim", PCA{K: 2, Dim: true}, Bounds{N: 101, EigenGapMin: 0.5, TopGapMin: 0.5}, 0.48316831683168315, 101, 48.8},
		{"mean impute", Impute{Method: ImputeMean, PaperBound: true}, Bounds{N: 1000, D: 5, MaxMissingRecords: 50}, 0.002105263157894737, 50, 0.10526315789473684},
		{"standard scaling (paper)", StandardScaler{PaperBound: true}, Bounds{N: 200, SigmaMin: 0.5}, 0.1, 200, 20},
		{"quantization", Quantize{Eta: 0.1, PaperBound: true}, Bounds{MaxGoodCluster: 5}, 0.1, 10, 1},
		{"dedup", Dedup{Eta: 0.1, PaperBound: true}, Bounds{MaxGoodCluster: 5}, 1, 10, 10},
		{"dedup add/remove", Dedup{Eta: 0.1, PaperBound: true}, Bounds{MaxGoodCluster: 5, AddRemove: true}, 1, 5, 5},
		{"dedup default", Dedup{Eta: 0.1}, Bounds{N: 1000, MaxBall4Eta: 7}, 1, 14, 14},
		{"quantization default capped at n", Quantize{Eta: 0.1}, Bounds{N: 10, MaxBall4Eta: 7}, 0.1, 10, 1},
		{"regression impute", RegressionImpute{Target: 0, Predictors: []int{1}}, Bounds{N: 100, D: 2, MaxMissingRecords: 1, LambdaMin: 10, LambdaMax: 100}, 2 * 1.0900990099009902, 1, 2 * 1.0900990099009902},
	}
	for _, c := range cases {
		s, err := c.step.Sensitivity(c.b)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !rel(s.L2, c.l2) || s.LInf != c.linf || !rel(s.Tau(), c.tau) {
			t.Errorf("%s: got (Δ2 %.17g, Δ∞ %v, τ %.17g), want (%.17g, %v, %.17g)", c.name, s.L2, s.LInf, s.Tau(), c.l2, c.linf, c.tau)
		}
	}
	// Standard scaling: Table 2's surrogate τ ≤ 4/σ³ with the paper's Δ2 (n=200, σ=0.5 gives 20 ≤ 32).
	s, _ := StandardScaler{PaperBound: true}.Sensitivity(Bounds{N: 200, SigmaMin: 0.5})
	if s.Tau() > 4/math.Pow(0.5, 3) {
		t.Errorf("scaling τ %v above the Table-2 surrogate 32", s.Tau())
	}
	// Missing declarations are refused, never guessed.
	for _, st := range []Step{Dedup{Eta: 1}, Quantize{Eta: 1, PaperBound: true}, PCA{K: 2}, StandardScaler{}, MinMaxScaler{},
		Impute{Method: ImputeMedian}, Impute{Method: ImputeTrimmedMean, Trim: 1}, RegressionImpute{Target: 0, Predictors: []int{1}}} {
		b := Bounds{N: 10, D: 2, MaxMissingRecords: 1, RangeMin: 0.5}
		if _, err := st.Sensitivity(b); !errors.Is(err, ErrNotAccounted) {
			t.Errorf("%s with missing bounds: err = %v, want ErrNotAccounted", st.Name(), err)
		}
	}
}

// TestBruteForceAddRemove: the steps whose sensitivity ignores
// Bounds.AddRemove (scaling, imputation, PCA) report their replace-one
// bounds, and the trainer declares AddRemove for Poisson runs. Adding one
// record z to n−1 common records must then move the common records by no
// more than the bound at N = n (the larger dataset, as the trainer declares
// the training-set size), with the collection bounds taken over {S, S ∪ {z}}.
func TestBruteForceAddRemove(t *testing.T) {
	type addCase struct {
		step    Step
		trials  int
		gen     func(s *rng.Stream) ([][]float64, []float64, []float64)
		declare func(S1, S2 *mat.Dense) Bounds
	}
	scaleDecl := func(S1, S2 *mat.Dense) Bounds {
		s1, r1, lo1, hi1 := featureStats(S1)
		s2, r2, lo2, hi2 := featureStats(S2)
		g := 0.0
		for j := range lo1 {
			g = math.Max(g, math.Max(math.Abs(lo1[j]-lo2[j]), math.Abs(hi1[j]-hi2[j])))
		}
		n, d := S2.Dims()
		return Bounds{N: n, D: d, AddRemove: true, SigmaMin: math.Min(s1, s2), RangeMin: math.Min(r1, r2), ExtremeGap: g + 1e-12}
	}
	imputeDecl := func(S1, S2 *mat.Dense) Bounds {
		p1, k1 := countMissing(S1)
		p2, k2 := countMissing(S2)
		n, d := S2.Dims()
		return Bounds{N: n, D: d, AddRemove: true, MaxMissingRecords: max(p1, p2), MaxMissingFeatures: max(k1, k2)}
	}
	pcaDecl := func(k int) func(S1, S2 *mat.Dense) Bounds {
		return func(S1, S2 *mat.Dense) Bounds {
			g1, t1, err := EigenGaps(S1, nil, k)
			if err != nil {
				t.Fatal(err)
			}
			g2, t2, _ := EigenGaps(S2, nil, k)
			n, d := S2.Dims()
			return Bounds{N: n, D: d, AddRemove: true, EigenGapMin: math.Min(g1, g2), TopGapMin: math.Min(t1, t2)}
		}
	}
	stds := []float64{0.5, 0.2, 0.1}
	for _, c := range []addCase{
		{StandardScaler{}, 2000, scaleData(20, 3), scaleDecl},
		{MinMaxScaler{}, 2000, scaleData(20, 3), scaleDecl},
		{Impute{Method: ImputeMean}, 2000, missingData(25, 4, 8, 2), imputeDecl},
		{PCA{K: 1}, 300, pcaData(101, stds), pcaDecl(1)},
		{PCA{K: 1, Dim: true}, 300, pcaData(101, stds), pcaDecl(1)},
	} {
		s := rng.New(31).Child(c.step.Name())
		worst := 0.0
		for trial := 0; trial < c.trials; trial++ {
			common, z, _ := c.gen(s)
			n, d := len(common)+1, len(z)
			S1, S2 := mat.NewDense(n-1, d, nil), mat.NewDense(n, d, nil)
			for i, r := range common {
				S1.SetRow(i, r)
				S2.SetRow(i, r)
			}
			S2.SetRow(n-1, z)
			_, r1, err := c.step.FitTransform(S1, nil)
			if err != nil {
				t.Fatalf("%s trial %d: %v", c.step.Name(), trial, err)
			}
			_, r2, err := c.step.FitTransform(S2, nil)
			if err != nil {
				t.Fatalf("%s trial %d: %v", c.step.Name(), trial, err)
			}
			_, dOut := r2.X.Dims()
			r2.X = r2.X.Slice(0, n-1, 0, dOut).(*mat.Dense)
			sens, err := c.step.Sensitivity(c.declare(S1, S2))
			if err != nil {
				t.Fatalf("%s trial %d: %v", c.step.Name(), trial, err)
			}
			l2, cnt := measure(r1, r2, -1)
			if l2 > sens.L2*(1+1e-9)+1e-12 || float64(cnt) > sens.LInf {
				t.Fatalf("%s trial %d: measured (Δ2 %.6g, Δ∞ %d) > declared (%.6g, %v, %s)", c.step.Name(), trial, l2, cnt, sens.L2, sens.LInf, sens.Formula)
			}
			worst = math.Max(worst, l2/sens.L2)
		}
		t.Logf("%s: worst measured/declared Δ2 under add-one = %.3f", c.step.Name(), worst)
	}
}
