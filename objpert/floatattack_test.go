package objpert

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/internal/zigattack"
	"github.com/dptrain/dptrain/rng"
)

// snapZiggurat returns the ziggurat fast-path value j·wn[i] nearest to
// approx (internal/zigattack scans them; the callback keeps the nearest).
func snapZiggurat(approx float64) float64 {
	best := math.Inf(1)
	zigattack.Reachable(1, func(x float64) float64 {
		if math.Abs(x-approx) < math.Abs(best-approx) {
			best = x
		}
		return 0
	}, approx)
	return best
}

// attackObjPert is the floating-point attack on objective perturbation: for
// each candidate label of the last record, it computes the noise the
// released point implies, b_c = −∇J_c(θ), snaps b_c/σ to the nearest
// ziggurat output and re-runs the release with that noise. It returns the
// candidates that reproduce the released values bit for bit.
func attackObjPert(X *mat.Dense, y []float64, sigma, lambda float64, released []float64, rerun func(y, b []float64) []float64) []float64 {
	var out []float64
	for _, c := range []float64{-1, 1} {
		yc := append([]float64(nil), y...)
		yc[len(yc)-1] = c
		b := Gradient(X, yc, Logistic{}, lambda, released)
		for j := range b {
			b[j] = sigma * snapZiggurat(-b[j]/sigma)
		}
		if slices.Equal(rerun(yc, b), released) {
			out = append(out, c)
		}
	}
	return out
}

// The old release (θ̂ of a float b = σ·NormFloat64) gives the last record's
// label away to an attacker who knows the rest; the grid release gives the
// attack nothing to single out.
func TestFloatAttackObjPert(t *testing.T) {
	const n, d, lambda, sigma, rounds = 40, 3, 0.5, 1.0, 60
	r := rng.New(25)
	src := rand.New(rand.NewPCG(1, 2))
	oldHits, newHits := 0, 0
	for round := 0; round < rounds; round++ {
		X := randomBall(r, n, d)
		y := make([]float64, n)
		for i := range y {
			y[i] = float64(2*r.IntN(2) - 1)
		}
		truth := y[n-1]
		fit := func(y, b []float64) []float64 {
			m, err := Fit(X, y, Logistic{}, lambda, sigma, b)
			if err != nil {
				return nil
			}
			return m.Theta
		}

		b := make([]float64, d)
		for j := range b {
			b[j] = sigma * src.NormFloat64()
		}
		old := fit(y, b)
		if got := attackObjPert(X, y, sigma, lambda, old, fit); len(got) == 1 && got[0] == truth {
			oldHits++
		}

		m, err := FitObjPert(X, y, Logistic{}, lambda, sigma, 1e-6, r)
		if err != nil {
			t.Fatal(err)
		}
		grid := func(y, b []float64) []float64 {
			th := fit(y, b)
			if th == nil {
				return nil
			}
			out, err := roundToGrid(th, m.Shift, m.Grid, 0, 1)
			if err != nil {
				return nil
			}
			return out
		}
		got := attackObjPert(X, y, sigma, lambda, m.Released, grid)
		if len(got) == 1 {
			newHits++
		}
	}
	t.Logf("float attack singles out the true label in %d of %d old releases, a single label in %d of %d grid releases", oldHits, rounds, newHits, rounds)
	if oldHits < rounds/4 {
		t.Errorf("the attack recovered only %d of %d labels from the old release: it no longer tests anything", oldHits, rounds)
	}
	if newHits != 0 {
		t.Errorf("the float attack singled out a label in %d of %d grid releases", newHits, rounds)
	}
}
