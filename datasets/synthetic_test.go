package datasets

import (
	"math"
	"slices"
	"testing"
)

func TestGaussianMixture(t *testing.T) {
	g := GaussianMixture{N: 20000, K: 2, D: 3, Sep: 2, Seed: 1}
	d, err := g.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	// Class means ≈ centres (MC error 1/√10000 = 0.01 per coordinate).
	sum := [2][3]float64{}
	cnt := [2]int{}
	for i := range d.N() {
		y := d.Y[i]
		cnt[y]++
		for j, v := range d.Row(i) {
			sum[y][j] += float64(v)
		}
	}
	if cnt[0] != 10000 || cnt[1] != 10000 {
		t.Errorf("class counts %v, want balanced", cnt)
	}
	for k := range 2 {
		c := g.Centre(k)
		for j := range 3 {
			if m := sum[k][j] / float64(cnt[k]); math.Abs(m-c[j]) > 0.05 {
				t.Errorf("class %d mean[%d] = %v, want %v", k, j, m, c[j])
			}
		}
	}
	c0, c1 := g.Centre(0), g.Centre(1)
	if dist := math.Hypot(c0[0]-c1[0], c0[1]-c1[1]); math.Abs(dist-2) > 1e-12 {
		t.Errorf("centre distance %v, want Sep = 2", dist)
	}
	// The nearest-centre rule is Bayes-optimal here; its accuracy is
	// Φ(Sep/2) = Φ(1) = 0.841345 (±4 MC standard errors, 0.0104).
	correct := 0
	for i := range d.N() {
		x := d.Row(i)
		d0 := sq(float64(x[0])-c0[0]) + sq(float64(x[1])-c0[1])
		d1 := sq(float64(x[0])-c1[0]) + sq(float64(x[1])-c1[1])
		if (d1 < d0) == (d.Y[i] == 1) {
			correct++
		}
	}
	if acc := float64(correct) / float64(d.N()); math.Abs(acc-0.841345) > 0.0104 {
		t.Errorf("nearest-centre accuracy %v, want Φ(1) = 0.8413", acc)
	}
	d2, _ := g.Generate()
	g.Seed = 2
	d3, _ := g.Generate()
	if !slices.Equal(d.X, d2.X) || slices.Equal(d.X, d3.X) {
		t.Error("not reproducible by seed, or ignores the seed")
	}
	for _, bad := range []GaussianMixture{{N: 10, K: 3, D: 2, Sep: 1}, {N: 0, K: 2, D: 2}, {N: 5, K: 2, D: 2, Sep: math.NaN()}} {
		if _, err := bad.Generate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func sq(x float64) float64 { return x * x }

func TestDPSGDFCounterexample(t *testing.T) {
	d, err := DPSGDFCounterexample(4, 1e4, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.X, []float32{1e4, 1, 1e4, -1, 1e4, 1, 1e4, -1}) || !slices.Equal(d.Signs(), []float64{1, -1, 1, -1}) {
		t.Errorf("D': X %v signs %v", d.X, d.Signs())
	}
	f, _ := DPSGDFCounterexample(4, 1e4, true)
	if !slices.Equal(f.X, d.X) || !slices.Equal(f.Signs(), []float64{-1, 1, -1, 1}) {
		t.Errorf("D'': signs %v", f.Signs())
	}
	// w* = (0, 1) has zero hinge loss on D': every margin y·(w·x) = 1.
	for i, s := range d.Signs() {
		if m := s * float64(d.Row(i)[1]); m != 1 {
			t.Errorf("example %d: margin %v of w* = (0,1), want 1", i, m)
		}
	}
	// The diameter is 2 while the max norm is √(μ²+1): the gap DPSGD-F exploits.
	st := d.FeatureStats()
	if st.Max[1]-st.Min[1] != 2 || st.Max[0] != st.Min[0] {
		t.Errorf("stats %+v", st)
	}
	for _, n := range []int{0, 3, -2} {
		if _, err := DPSGDFCounterexample(n, 1, false); err == nil {
			t.Errorf("n=%d accepted", n)
		}
	}
}

func TestLogisticSynthetic(t *testing.T) {
	l := LogisticSynthetic{N: 20000, D: 5, Seed: 3}
	d, theta, err := l.Generate()
	if err != nil {
		t.Fatal(err)
	}
	// Uniform in the unit ball of R^5: ‖x‖ ≤ 1 and P(‖x‖ ≤ 0.8) = 0.8^5 = 0.32768.
	inner := 0
	for i := range d.N() {
		n := norm(d.Row(i))
		if n > 1+1e-6 {
			t.Fatalf("‖x_%d‖ = %v > 1", i, n)
		}
		if n <= 0.8 {
			inner++
		}
		// NoiseStd = 0: y = 1 iff xᵀθ > 0.
		dot := 0.0
		for j, v := range d.Row(i) {
			dot += float64(v) * theta[j]
		}
		if (dot > 0) != (d.Y[i] == 1) {
			t.Fatalf("example %d: xᵀθ = %v but label %d", i, dot, d.Y[i])
		}
	}
	if p := float64(inner) / float64(d.N()); math.Abs(p-0.32768) > 4*math.Sqrt(0.32768*0.67232/20000) {
		t.Errorf("P(‖x‖ ≤ 0.8) = %v, want 0.32768", p)
	}
	// Bernoulli labels: by symmetry of x, P(y=1) = E[sigmoid(xᵀθ)] = 1/2.
	l.Bernoulli = true
	db, theta2, _ := l.Generate()
	if !slices.Equal(theta, theta2) || !slices.Equal(db.X, d.X) {
		t.Error("θ and x should not depend on the label model")
	}
	ones := 0
	for _, y := range db.Y {
		ones += y
	}
	if p := float64(ones) / float64(db.N()); math.Abs(p-0.5) > 4*math.Sqrt(0.25/20000) {
		t.Errorf("P(y=1) = %v, want 0.5", p)
	}
}

func norm(x []float32) float64 {
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

func TestSeparableBall(t *testing.T) {
	d, err := SeparableBall{N: 1000, D: 2, Margin: 0.4, Seed: 4}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := math.Inf(1), math.Inf(-1) // smallest x0 of class 1, largest of class 0
	for i := range d.N() {
		x0 := float64(d.Row(i)[0])
		if norm(d.Row(i)) > 1+1e-6 {
			t.Fatalf("point %d outside the unit ball", i)
		}
		if d.Y[i] == 1 {
			lo = math.Min(lo, x0)
		} else {
			hi = math.Max(hi, x0)
		}
	}
	if lo < 0.2 || hi > -0.2 {
		t.Errorf("gap [%v, %v] narrower than the margin 0.4", hi, lo)
	}
}

func TestLowRankClassification(t *testing.T) {
	c := LowRankClassification{N: 200, D: 300, Rank: 5, ClassSep: 1, Noise: 0.01, Seed: 5}
	d, err := c.Generate()
	if err != nil {
		t.Fatal(err)
	}
	maxN := 0.0
	for i := range d.N() {
		maxN = math.Max(maxN, norm(d.Row(i)))
	}
	if maxN > 1 || maxN < 0.999 {
		t.Errorf("max row norm %v, want just below 1", maxN)
	}
	// Rank: residual of each row after projecting on the span of the first
	// Rank+5 rows (Gram–Schmidt) is noise-sized, far below the row norms.
	basis := [][]float64{}
	for i := 0; len(basis) < c.Rank && i < d.N(); i++ {
		v := toF64(d.Row(i))
		for _, b := range basis {
			sub(v, b, dot(v, b))
		}
		if n := math.Sqrt(dot(v, v)); n > 0.05 {
			scale(v, 1/n)
			basis = append(basis, v)
		}
	}
	worst := 0.0
	for i := range d.N() {
		v := toF64(d.Row(i))
		for _, b := range basis {
			sub(v, b, dot(v, b))
		}
		worst = math.Max(worst, math.Sqrt(dot(v, v))/norm(d.Row(i)))
	}
	if worst > 0.1 {
		t.Errorf("relative residual off a %d-dim subspace %v, want noise-sized (< 0.1)", c.Rank, worst)
	}
}

func toF64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}
func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
func sub(v, b []float64, c float64) {
	for i := range v {
		v[i] -= c * b[i]
	}
}
func scale(v []float64, c float64) {
	for i := range v {
		v[i] *= c
	}
}

func TestMissingTabular(t *testing.T) {
	m := MissingTabular{N: 1000, D: 6, MissingRecords: 50, MissingRate: 0.3, Seed: 6}
	masked, complete, err := m.Generate()
	if err != nil {
		t.Fatal(err)
	}
	_, recs := masked.CountMissing()
	if recs != 50 {
		t.Errorf("%d records with missing values, want exactly p = 50", recs)
	}
	if v, r := complete.CountMissing(); v != 0 || r != 0 {
		t.Errorf("complete data has %d missing values", v)
	}
	for i, v := range masked.X {
		if !math.IsNaN(float64(v)) && v != complete.X[i] {
			t.Fatalf("observed value %d changed by masking", i)
		}
	}
	for i := range complete.N() {
		if norm(complete.Row(i)) > 1 {
			t.Fatalf("record %d outside the unit ball", i)
		}
	}
	if !slices.Equal(masked.Y, complete.Y) {
		t.Error("labels differ between masked and complete")
	}
	// Each missing record misses its forced entry plus Bin(D, rate): mean
	// count ≈ 1 + (D−1)·rate = 2.5 (the forced entry may coincide).
	vals, _ := masked.CountMissing()
	if mean := float64(vals) / 50; mean < 2 || mean > 3 {
		t.Errorf("mean missing entries per record %v, want ≈ 2.5", mean)
	}
	if _, _, err := (MissingTabular{N: 5, D: 2, MissingRecords: 6}).Generate(); err == nil {
		t.Error("p > n accepted")
	}
}
