package objpert

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/internal/zigattack"
	"github.com/dptrain/dptrain/rng"
)

// draws are fixed standard normal draws of the paper's continuous releases:
// the gradient noise σ2·E (Alg 5), the Hessian noise (σ3/√2)(Z + Zᵀ) (Alg
// 6) and the λ_min noise σ4·L (Alg 3).
type draws struct {
	E []float64
	Z *mat.Dense
	L float64
}

// reportWithDraws builds the paper's continuous report from fixed draws,
// for the spec's test vectors: its releases are the ideal ∇J + σ2E,
// H + (σ3/√2)(Z+Zᵀ) and λ_min(H) + σ4L with zero slack. NewReport's exact
// releases lie within Slack of these for the same (exactly drawn) normals.
func reportWithDraws(m *Model, X *mat.Dense, y []float64, o ReportOptions, dr draws) (*Report, error) {
	r, err := newReport(m, o)
	if err != nil || r.Mode == DataIndependent {
		return r, err
	}
	d := len(m.Theta)
	r.GHat = Gradient(X, y, m.Loss, m.Lambda, m.Theta)
	for j := range r.GHat {
		r.GHat[j] += o.Sigma2 * dr.E[j]
	}
	H := Hessian(X, y, m.Loss, m.Lambda, m.Theta)
	r.HHat = mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			r.HHat.SetSym(i, j, H.At(i, j)+o.Sigma3/math.Sqrt2*(dr.Z.At(i, j)+dr.Z.At(j, i)))
		}
	}
	if o.Mode == Adaptive {
		var es mat.EigenSym
		if !es.Factorize(H, false) {
			return nil, errEig
		}
		r.LambdaHat = es.Values(nil)[0] + o.Sigma4*dr.L
	}
	return r, r.finish()
}

var errEig = inputf("eigendecomposition failed")

// unitRows is n rows in the unit ball (the last ones on its sphere, the
// report's worst case) with ±1 labels.
func unitRows(r *rng.Stream, n, d int) (*mat.Dense, []float64) {
	X := randomBall(r, n, d)
	for i := n - n/4; i < n; i++ {
		row := X.RawRowView(i)
		s := norm(row)
		for j := range row {
			row[j] /= s
		}
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(2*r.IntN(2) - 1)
	}
	return X, y
}

// latticeSums returns the noise-free lattice sums of the gradient (without
// λθ) and of the Hessian (with λI), as NewReport forms them.
func latticeSums(t *testing.T, loss GLM, X *mat.Dense, y, theta []float64, lambda, s2, s3 float64) (*reportGrid, []float64, *mat.SymDense) {
	t.Helper()
	n, d := X.Dims()
	g, err := newReportGrid(loss, n, d, norm(theta), s2, s3)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		x := X.RawRowView(i)
		s := dot(x, theta)
		gi, wi := make([]float64, d), make([]float64, 0, g.m)
		for j, v := range x {
			gi[j] = loss.D1(s, y[i]) * v
		}
		for a := 0; a < d; a++ {
			wi = append(wi, loss.D2(s, y[i])*x[a]*x[a]/math.Sqrt2)
			for b := a + 1; b < d; b++ {
				wi = append(wi, loss.D2(s, y[i])*x[a]*x[b])
			}
		}
		if _, err := g.gsum.Add(gi); err != nil {
			t.Fatal(err)
		}
		if _, err := g.hsum.Add(wi); err != nil {
			t.Fatal(err)
		}
	}
	return g, g.gsum.Exact(), hessianFrom(g.hsum.Exact(), d, lambda)
}

// The noise-free lattice sums lie within the public per-record bounds of
// the float gradient and Hessian (Gradient and Hessian, whose own error is
// about 1e-15 here, far below the bounds' room), and the bounds are tight
// enough to matter nothing next to the noise.
func TestExactReportSumsWithinSlack(t *testing.T) {
	r := rng.New(61)
	for _, tc := range []struct {
		name string
		loss GLM
		n, d int
	}{
		{"logistic", Logistic{}, 200, 4},
		{"logistic d=1", Logistic{}, 50, 1},
		{"squared", Squared{}, 120, 3},
	} {
		X, y := unitRows(r, tc.n, tc.d)
		theta := make([]float64, tc.d)
		for j := range theta {
			theta[j] = 2 * r.NormFloat64()
		}
		if _, ok := tc.loss.(Squared); ok {
			for i := range y {
				y[i] *= r.Float64()
			}
		}
		const lambda = 0.7
		g, gs, hs := latticeSums(t, tc.loss, X, y, theta, lambda, 0.5, 0.3)
		want := Gradient(X, y, tc.loss, 0, theta)
		diff := make([]float64, tc.d)
		for j := range diff {
			diff[j] = gs[j] - want[j]
		}
		boundG := float64(tc.n) * g.recG
		if e := norm(diff); !(e <= boundG) || boundG > 1e-8 {
			t.Errorf("%s: ‖lattice gradient − gradient‖ = %.3g, bound %.3g (want below it, and below 1e-8)", tc.name, e, boundG)
		}
		H := Hessian(X, y, tc.loss, lambda, theta)
		var dh mat.Dense
		dh.Sub(hs, H)
		boundH := math.Sqrt2 * float64(tc.n) * g.recW
		if e := mat.Norm(&dh, 2); !(e <= boundH) || boundH > 1e-8 {
			t.Errorf("%s: ‖lattice Hessian − Hessian‖_F = %.3g, bound %.3g (want below it, and below 1e-8)", tc.name, e, boundH)
		}
		// The per-record bound holds record by record too (the sum's
		// bound is n times it): one record against its exact gradient.
		one, one1 := X.Slice(0, 1, 0, tc.d).(*mat.Dense), y[:1]
		g1, gs1, _ := latticeSums(t, tc.loss, one, one1, theta, lambda, 0.5, 0.3)
		w1 := Gradient(one, one1, tc.loss, 0, theta)
		for j := range diff {
			diff[j] = gs1[j] - w1[j]
		}
		if e := norm(diff); !(e <= g1.recG) {
			t.Errorf("%s: one record's lattice point is %.3g from its gradient, bound %.3g", tc.name, e, g1.recG)
		}
	}
}

// The exact releases have the law of the ideal ones: ĝ − ∇J has std σ2,
// Ĥ − H has std σ3 off the diagonal and √2σ3 on it (the law of
// (σ3/√2)(Z + Zᵀ)), λ̂ − λ_min(H) has std σ4, all with mean zero (up to
// the slack, far below the tolerances).
func TestExactReportNoiseLaw(t *testing.T) {
	const runs, s2, s3, s4 = 600, 0.5, 0.2, 0.3
	m := fitSpec(t, Logistic{}, logY, 0.5)
	g := Gradient(specX, logY, m.Loss, m.Lambda, m.Theta)
	H := Hessian(specX, logY, m.Loss, m.Lambda, m.Theta)
	var es mat.EigenSym
	es.Factorize(H, false)
	lmin := es.Values(nil)[0]
	r := rng.New(62)
	type moments struct {
		name    string
		sd      float64
		sum, sq float64
	}
	ms := []*moments{{name: "g0", sd: s2}, {name: "g1", sd: s2}, {name: "H00", sd: math.Sqrt2 * s3}, {name: "H01", sd: s3}, {name: "H11", sd: math.Sqrt2 * s3}, {name: "lambda", sd: s4}}
	for i := 0; i < runs; i++ {
		rep, err := NewReport(m, specX, logY, ReportOptions{Mode: Adaptive, Sigma2: s2, Sigma3: s3, Sigma4: s4}, r.Child(fmt.Sprintf("run-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range []float64{rep.GHat[0] - g[0], rep.GHat[1] - g[1], rep.HHat.At(0, 0) - H.At(0, 0), rep.HHat.At(0, 1) - H.At(0, 1), rep.HHat.At(1, 1) - H.At(1, 1), rep.LambdaHat - lmin} {
			ms[k].sum += v
			ms[k].sq += v * v
		}
	}
	for _, mo := range ms {
		mean := mo.sum / runs
		v := mo.sq/runs - mean*mean
		if math.Abs(mean) > 4*mo.sd/math.Sqrt(runs) {
			t.Errorf("%s: mean noise %.4g, want 0 ± %.3g", mo.name, mean, 4*mo.sd/math.Sqrt(runs))
		}
		if se := mo.sd * mo.sd * math.Sqrt(2.0/runs); math.Abs(v-mo.sd*mo.sd) > 5*se {
			t.Errorf("%s: noise variance %.4g, want %.4g ± %.3g", mo.name, v, mo.sd*mo.sd, 5*se)
		}
	}
}

// The exact report is charged at most what the budgets ask (Analyze
// calibrates at the widened sensitivities), and the widening is tiny.
func TestExactReportChargedWithinBudget(t *testing.T) {
	X, y := SyntheticLogistic(400, 3, rng.New(63))
	for _, mode := range []Mode{DataDependent, Adaptive} {
		c := AnalysisConfig{Loss: Logistic{}, Epsilon: 1, Delta: 1e-5, Mode: mode, Eps2: 0.5, Eps3: 0.4, Eps4: 0.3}
		a, err := Analyze(X, y, c, rng.New(64))
		if err != nil {
			t.Fatal(err)
		}
		want := c.Eps2 + c.Eps3
		if mode == Adaptive {
			want += c.Eps4
		}
		if got := a.ReportDP.Epsilon; !(got <= want*(1+1e-12)) || got < want*(1-1e-6) {
			t.Errorf("%v: report charged ε = %.12g for budgets summing to %g", mode, got, want)
		}
		sl := a.Dep.Slack
		eig := sl.MinEigSens
		if mode == DataDependent {
			eig = 0.25 // no λ_min release
		}
		if sl.GradSens-1 > 1e-8 || sl.HessSens-0.25 > 1e-8 || eig-0.25 > 1e-8 || sl.GradSens < 1 || sl.HessSens < 0.25 || eig < 0.25 {
			t.Errorf("%v: sensitivities %+v, want just above ξ = 1, β = 1/4", mode, sl)
		}
	}
}

// The float attack of issue 37 (HIGH 2) on the report's releases. The
// attacker knows every record but the last one's label and the released
// θ̂. Against the old releases (ĝ = ∇J + σ2·NormFloat64, and λ̂ likewise)
// it singles out the true label by testing which candidate makes the
// implied draw a ziggurat output; against the exact releases it finds none
// that way, and every candidate reachable by the exact sampler's outputs
// (integers on each release's grid) at every released value.
func TestReportReleasesResistFloatAttack(t *testing.T) {
	const n, d, lambda, s2, s3, s4, rounds = 30, 2, 0.5, 0.5, 0.2, 0.3, 40
	r := rng.New(65)
	src := rand.New(rand.NewPCG(5, 6))
	oldHits := 0
	for round := 0; round < rounds; round++ {
		X, y := unitRows(r, n, d)
		m, err := FitObjPert(X, y, Logistic{}, lambda, 1, 1e-6, r)
		if err != nil {
			t.Fatal(err)
		}
		m.Theta = m.Released
		cands := []float64{-1, 1}
		grad := map[float64][]float64{}
		sums := map[float64][2][]float64{}
		lmin := map[float64]float64{}
		for _, c := range cands {
			yc := append([]float64(nil), y...)
			yc[n-1] = c
			grad[c] = Gradient(X, yc, Logistic{}, lambda, m.Theta)
			g, gs, hs := latticeSums(t, Logistic{}, X, yc, m.Theta, lambda, s2, s3)
			var es mat.EigenSym
			es.Factorize(hs, false)
			lmin[c] = es.Values(nil)[0]
			sums[c] = [2][]float64{steps(gs, g.gsum.Gamma()), steps(g.hsum.Exact(), g.hsum.Gamma())}
		}
		truth := y[n-1]
		zig := func(y float64, implied func(c float64) float64, sigma float64) []float64 {
			return zigattack.Candidates(y, cands, func(c, x float64) float64 { return implied(c) + sigma*x },
				func(c float64) float64 { return (y - implied(c)) / sigma })
		}

		// The old release of the gradient's first coordinate.
		old := grad[truth][0] + s2*src.NormFloat64()
		if got := zig(old, func(c float64) float64 { return grad[c][0] }, s2); len(got) == 1 && got[0] == truth {
			oldHits++
		}

		rep, err := NewReport(m, X, y, ReportOptions{Mode: Adaptive, Sigma2: s2, Sigma3: s3, Sigma4: s4}, r.Child("report"))
		if err != nil {
			t.Fatal(err)
		}
		g, _, _ := latticeSums(t, Logistic{}, X, y, m.Theta, lambda, s2, s3)
		_, g4 := minEigSlack(0.25, lambda, n, d)
		for j := 0; j < d; j++ {
			if got := zig(rep.GHat[j], func(c float64) float64 { return grad[c][j] }, s2); len(got) == 1 {
				t.Fatalf("round %d: the float attack singles out label %v from ĝ[%d]", round, got[0], j)
			}
			// Reachable from candidate c: some integer noise m gives
			// λθ_j + γ·(S_c,j + m) == ĝ_j in float.
			for _, c := range cands {
				gam, sc := g.gsum.Gamma(), sums[c][0][j]
				m0 := math.Round((rep.GHat[j]-lambda*m.Theta[j])/gam) - sc
				ok := false
				for dm := -3.0; dm <= 3 && !ok; dm++ {
					ok = lambda*m.Theta[j]+gam*(sc+m0+dm) == rep.GHat[j]
				}
				if !ok {
					t.Fatalf("round %d: ĝ[%d] is not reachable from label %v", round, j, c)
				}
			}
		}
		// Ĥ's off-diagonal entry is γ times an integer: reachable from
		// every candidate's integer sum; so is λ̂ from every λ_min.
		if !onGrid(rep.HHat.At(0, 1), g.hsum.Gamma()) {
			t.Fatalf("round %d: Ĥ01 = %v is off its lattice", round, rep.HHat.At(0, 1))
		}
		if !onGrid(rep.LambdaHat, g4) {
			t.Fatalf("round %d: λ̂ = %v is off its grid", round, rep.LambdaHat)
		}
		if got := zig(rep.HHat.At(0, 1), func(c float64) float64 { return sums[c][1][1] * g.hsum.Gamma() }, s3); len(got) == 1 {
			t.Fatalf("round %d: the float attack singles out label %v from Ĥ01", round, got[0])
		}
		if got := zig(rep.LambdaHat, func(c float64) float64 { return lmin[c] }, s4); len(got) == 1 {
			t.Fatalf("round %d: the float attack singles out label %v from λ̂", round, got[0])
		}
	}
	t.Logf("float attack singles out the true label from the old gradient release in %d of %d rounds; from the exact releases in none", oldHits, rounds)
	if oldHits < rounds/2 {
		t.Errorf("the attack recovered only %d of %d labels from the old release: it no longer tests anything", oldHits, rounds)
	}
}

// steps returns v/γ rounded: the integer lattice coordinates of γ·S
// (exact below 2⁵², where the rounding of γ·S cannot move them).
func steps(v []float64, gamma float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(x / gamma)
	}
	return out
}

// onGrid reports whether v = fl(γ·k) for an integer k: a release on the
// grid, reachable from any integer sum by integer noise.
func onGrid(v, gamma float64) bool {
	k := math.Round(v / gamma)
	for dk := -1.0; dk <= 1; dk++ {
		if gamma*(k+dk) == v {
			return true
		}
	}
	return false
}
