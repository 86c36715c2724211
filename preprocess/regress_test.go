package preprocess

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
	"gonum.org/v1/gonum/mat"
)

// gramEigen returns the extreme eigenvalues of X_rᵀX_r over the rows of X
// whose target is observed (the rows the regression is fitted on).
func gramEigen(X *mat.Dense, skip int, target int, preds []int) (lmin, lmax float64) {
	n, _ := X.Dims()
	G := mat.NewSymDense(len(preds), nil)
	for i := 0; i < n; i++ {
		if i == skip || math.IsNaN(X.At(i, target)) {
			continue
		}
		v := make([]float64, len(preds))
		for c, j := range preds {
			v[c] = X.At(i, j)
		}
		G.SymRankOne(G, 1, mat.NewVecDense(len(v), v))
	}
	var es mat.EigenSym
	es.Factorize(G, false)
	vals := es.Values(nil)
	return vals[0], vals[len(vals)-1]
}

func TestBruteForceRegressionImputation(t *testing.T) {
	const n = 40
	preds := []int{1, 2}
	step := RegressionImpute{Target: 0, Predictors: preds}
	gen := func(s *rng.Stream) ([][]float64, []float64, []float64) {
		w := []float64{s.NormFloat64(), s.NormFloat64()}
		row := func(missing bool) []float64 {
			p := ballPoint(s, 3, 1)
			p[0] = 0.3*(w[0]*p[1]+w[1]*p[2]) + 0.05*s.NormFloat64()
			projectBall(p)
			if missing {
				p[0] = math.NaN()
			}
			return p
		}
		var rows [][]float64
		for i := 0; i < n-1; i++ {
			rows = append(rows, row(i < 5))
		}
		return rows, row(s.IntN(2) == 0), row(s.IntN(2) == 0)
	}
	var pos int
	declare := func(S1, S2 *mat.Dense) Bounds {
		lmin, lmax := math.Inf(1), 0.0
		for _, c := range []struct {
			S    *mat.Dense
			skip int
		}{{S1, -1}, {S2, -1}, {S1, pos}} {
			a, b := gramEigen(c.S, c.skip, 0, preds)
			lmin, lmax = math.Min(lmin, a), math.Max(lmax, b)
		}
		p1, _ := countMissing(S1)
		p2, _ := countMissing(S2)
		return Bounds{N: n, D: 3, MaxMissingRecords: max(p1, p2), LambdaMin: lmin, LambdaMax: lmax}
	}
	// runBrute picks pos itself; recover it from the differing row.
	r := runBrute(t, bruteCase{name: "regression", step: step, trials: 2000, gen: gen, declare: func(S1, S2 *mat.Dense) Bounds {
		for i := 0; i < n; i++ {
			if !sameRow(S1.RawRowView(i), S2.RawRowView(i)) {
				pos = i
				break
			}
		}
		return declare(S1, S2)
	}})
	t.Logf("regression imputation: worst measured/declared Δ2 = %.3f", r)
}

// sameRow compares rows treating NaN as equal to NaN.
func sameRow(a, b []float64) bool {
	for j := range a {
		if a[j] != b[j] && !(math.IsNaN(a[j]) && math.IsNaN(b[j])) {
			return false
		}
	}
	return true
}
