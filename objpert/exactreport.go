package objpert

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// The exact releases of a data-dependent report
// (docs/per-instance.md#exact-releases): the gradient ĝ and the Hessian Ĥ
// are lattice sums (package lattice), each record's contribution put on a
// public lattice and summed in integers, with exactly sampled integer
// noise; λ̂ is λ_min of the exact lattice Hessian, rounded to a public
// power-of-two step, with exact integer noise. Each release is an integer
// times a public step, so the float attack finds every candidate dataset
// consistent with it. What the lattice changes is bounded by public values
// and carried in [Slack]: the distance of each release from the ideal
// continuous one (added to the report's tails) and the sensitivities the
// releases are charged at (added to the accounting).

// rowPad bounds how far a row may exceed the unit ball: rows scaled onto
// the sphere in float (cmd/dptrain's clipRows) have ‖x‖ ≤ 1 + 2⁻⁵⁰.
const rowPad = 0x1p-32

// domainPad widens the loss's bounds into the lattice sums' bounds, so that
// no row with ‖x‖ ≤ 1 + rowPad is clipped by them despite the float error
// of its contribution (at most ~20 ulps, and the sums' margin 2η(d) below
// 2⁻³² for d ≤ 2¹⁹).
const domainPad = 0x1p-30

// Slack is what the exact releases change in a data-dependent report, all
// functions of public values (n, d, θ̂, λ, the σ's and the releases):
//
//   - Grad, Hess, MinEig bound the distance of ĝ (L2), Ĥ (Frobenius, so
//     also spectral) and λ̂ from the ideal releases ∇J + σ2·E,
//     H + (σ3/√2)(Z + Zᵀ), λ_min(H) + σ4·L with the same Gaussian draws;
//     the report adds them to its tails.
//   - RecordGrad and RecordHess bound, for one record, the distance of its
//     lattice point from its exact contribution ∇ℓ and ∇²ℓ (Frobenius); the
//     per-instance overheads add them to the record's sensitivity.
//   - GradSens, HessSens (Frobenius) and MinEigSens are the sensitivities
//     the releases are charged at ([Report.Events]).
//
// The paper's continuous report has zero errors and sensitivities ξ, β, β.
type Slack struct {
	Grad, Hess, MinEig             float64
	RecordGrad, RecordHess         float64
	GradSens, HessSens, MinEigSens float64
}

// idealSlack is the continuous mechanism's: no error, the loss's bounds.
func idealSlack(loss GLM) Slack {
	return Slack{GradSens: loss.Xi(), HessSens: loss.Beta(), MinEigSens: loss.Beta()}
}

// lossBounds are the loss's bounds on the unit ball (‖x‖ ≤ 1, |y| ≤ 1 for
// the squared loss) that the float-error bounds need: |f'| ≤ c1 with
// Lipschitz constant l1 (|f”| ≤ l1), and f” ≤ c2 with |f”'| ≤ l2. The
// squared loss's |f'| = |xᵀθ − y| ≤ ‖θ‖(1 + rowPad) + 1 is bounded given
// the released θ̂.
func lossBounds(loss GLM, thetaNorm float64) (c1, l1, c2, l2 float64, err error) {
	switch loss.(type) {
	case Logistic:
		return 1, 0.25, 0.25, 0.1, nil // |f”'| ≤ 1/(6√3) ≈ 0.0962
	case Squared:
		return thetaNorm*(1+rowPad) + 1, 1, 1, 0, nil
	}
	return 0, 0, 0, 0, fmt.Errorf("report: no float-error bounds for the %s loss", loss.Name())
}

// reportGrid holds the lattice sums of the gradient and of the Hessian's
// upper triangle (diagonal divided by √2, so that its L2 norm is the
// Frobenius norm over √2) and the per-record error bounds.
type reportGrid struct {
	n, d, m    int
	gs, hs     float64 // the sums' L2 bounds
	gsum, hsum *lattice.Sum
	recG, recW float64 // per-record ‖lattice point − exact contribution‖ (w in its own space)
}

// newReportGrid builds the sums for n records of d features, the released
// model's ‖θ̂‖ and the noise std's σ2, σ3 (in the records' units).
func newReportGrid(loss GLM, n, d int, thetaNorm, sigma2, sigma3 float64) (*reportGrid, error) {
	c1, l1, c2, l2, err := lossBounds(loss, thetaNorm)
	if err != nil {
		return nil, err
	}
	g := &reportGrid{n: n, d: d, m: d * (d + 1) / 2, gs: c1 * (1 + domainPad), hs: c2 / math.Sqrt2 * (1 + domainPad)}
	k := lattice.SumExponent(n)
	if g.gsum, err = lattice.NewSum(g.gs, sigma2/g.gs, d, k); err != nil {
		return nil, fmt.Errorf("report: gradient release: %w", err)
	}
	if g.hsum, err = lattice.NewSum(g.hs, sigma3/g.hs, g.m, k); err != nil {
		return nil, fmt.Errorf("report: Hessian release: %w", err)
	}
	// The score xᵀθ̂ is computed to (d+1)u·Σ|x_k θ_k| ≤ (d+1)u‖x‖‖θ̂‖; f'
	// and f” to 16 ulps plus their Lipschitz constant times that; each
	// product c·x_j to an ulp (two, and two more for the /√2, in w); the
	// lattice scaling to 2 ulps; truncation to one step per coordinate.
	ds := float64(d+1) * unitRound * (1 + rowPad) * thetaNorm
	g.recG = 1.01*((1+rowPad)*(16*unitRound*c1+l1*ds)+3*unitRound*g.gs) + math.Sqrt(float64(d))*g.gsum.Gamma()
	g.recW = 1.01*((1+rowPad)*(1+rowPad)/math.Sqrt2*(16*unitRound*c2+l2*ds)+6*unitRound*g.hs) + math.Sqrt(float64(g.m))*g.hsum.Gamma()
	return g, nil
}

// hessSlack is the a-priori part of Slack.Hess: n records' errors and the
// noise's rounding (half a step per coordinate), in Frobenius norm.
func (g *reportGrid) hessSlack() float64 {
	return math.Sqrt2 * (float64(g.n)*g.recW + math.Sqrt(float64(g.m))*g.hsum.Gamma()/2)
}

// minEigSlack returns e, a bound on the float error of λ_min of the lattice
// Hessian (forming it and the symmetric eigensolver, which is backward
// stable with error p(d)·u·‖H‖₂; we take p(d) = 64d² + 8, far above the
// bounds known for the Householder tridiagonalisation and implicit QL that
// gonum runs), and γ4, the public power-of-two step λ̂ is rounded to. hb =
// λ√d + nβ(1 + domainPad) bounds ‖H‖_F.
func minEigSlack(beta, lambda float64, n, d int) (e, gamma4 float64) {
	hb := lambda*math.Sqrt(float64(d)) + float64(n)*beta*(1+domainPad)
	e = (64*float64(d)*float64(d) + 8) * unitRound * hb
	_, ex := math.Frexp(beta) // β ∈ [2^(ex−1), 2^ex)
	gamma4 = math.Ldexp(1, ex-31)
	for hb/gamma4 >= 0x1p60 {
		gamma4 *= 2
	}
	return e, gamma4
}

// minEigSens is the sensitivity λ̂ is charged at: β(1 + domainPad) for the
// exact λ_min of the lattice Hessian (Weyl; one record moves it by at most
// its lattice point's Frobenius norm), plus twice the eigensolver's error
// and one step γ4 for rounding to the grid.
func minEigSens(beta, lambda float64, n, d int) float64 {
	e, g4 := minEigSlack(beta, lambda, n, d)
	return beta*(1+domainPad) + 2*e + g4
}

// checkDomain refuses rows outside the unit ball (and, for the squared
// loss, labels outside [−1, 1]): the lattice bounds are the loss's bounds
// on that domain. Messages name no value or row.
func checkDomain(X *mat.Dense, y []float64, loss GLM) error {
	n, _ := X.Dims()
	lim := (1 + rowPad) * (1 + rowPad)
	for i := 0; i < n; i++ {
		x := X.RawRowView(i)
		if dot(x, x) > lim {
			return inputf("report: the data-dependent report needs every row in the unit ball (scale rows to norm <= 1, as dptrain pdp does); a row is outside")
		}
		if _, ok := loss.(Squared); ok && math.Abs(y[i]) > 1 {
			return inputf("report: the squared loss's data-dependent report needs labels in [-1, 1]; a label is outside")
		}
	}
	return nil
}

// releaseExact makes the report's releases (ĝ, Ĥ, and λ̂ for the adaptive
// mode) from the data with exact noise from s, and their Slack.
func (r *Report) releaseExact(X *mat.Dense, y []float64, s *rng.Stream) error {
	n, d := X.Dims()
	if len(y) != n || d != len(r.Theta) {
		return inputf("report: %d labels and %d features for %d rows and a model of dimension %d", len(y), d, n, len(r.Theta))
	}
	if err := checkData(X, y, r.Loss); err != nil {
		return err
	}
	if err := checkDomain(X, y, r.Loss); err != nil {
		return err
	}
	tn := norm(r.Theta)
	g, err := newReportGrid(r.Loss, n, d, tn, r.Sigma2, r.Sigma3)
	if err != nil {
		return err
	}
	if ts := r.Tau * r.Sigma3; r.Mode == DataDependent && r.Lambda < 2*(ts+g.hessSlack()) {
		return inputf("report: data-dependent mode needs lambda >= 2*(tau*sigma3 + lattice slack) = %.6g, got lambda = %v (use the adaptive mode or a smaller sigma3)", 2*(ts+g.hessSlack()), r.Lambda)
	}
	gi, wi := make([]float64, d), make([]float64, g.m)
	for i := 0; i < n; i++ {
		x := X.RawRowView(i)
		sc := dot(x, r.Theta)
		c1, c2 := r.Loss.D1(sc, y[i]), r.Loss.D2(sc, y[i])
		for j, v := range x {
			gi[j] = c1 * v
		}
		w := 0
		for a := 0; a < d; a++ {
			wi[w] = c2 * x[a] * x[a] / math.Sqrt2
			w++
			for b := a + 1; b < d; b++ {
				wi[w] = c2 * x[a] * x[b]
				w++
			}
		}
		for _, add := range []struct {
			sum *lattice.Sum
			v   []float64
		}{{g.gsum, gi}, {g.hsum, wi}} {
			out, err := add.sum.Add(add.v)
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if out != lattice.Kept { // excluded by checkDomain and domainPad
				return fmt.Errorf("report: internal error: a record in the unit ball exceeded its lattice bound")
			}
		}
	}
	sl := Slack{GradSens: g.gs, HessSens: math.Sqrt2 * g.hs, RecordGrad: g.recG, RecordHess: math.Sqrt2 * g.recW}
	sq := math.Sqrt(float64(d))
	if r.Mode == Adaptive {
		// λ_min of the exact lattice Hessian λI + γ·S, before its noise.
		h := hessianFrom(g.hsum.Exact(), d, r.Lambda)
		var es mat.EigenSym
		if !es.Factorize(h, false) {
			return fmt.Errorf("report: eigendecomposition of the Hessian failed")
		}
		e, g4 := minEigSlack(r.Loss.Beta(), r.Lambda, n, d)
		t := es.Values(nil)[0] / g4 // exact: g4 is a power of two
		if !(math.Abs(t) < 0x1p61) {
			return fmt.Errorf("report: lambda_min outside the int64 range of its grid")
		}
		cn, err := lattice.NewCountNoise(r.Sigma4 / g4)
		if err != nil {
			return fmt.Errorf("report: lambda_min release: %w", err)
		}
		k, err := cn.Release(int64(math.Round(t)), s.Child("report-min-eig"))
		if err != nil {
			return fmt.Errorf("report: lambda_min release: %w", err)
		}
		r.LambdaHat = g4 * float64(k)
		// ‖H_lat − H‖₂ ≤ √2·n·recW, the solver's e, half a step rounding
		// and half a step of noise rounding, one ulp converting k.
		sl.MinEig = math.Sqrt2*float64(n)*g.recW + e + g4 + unitRound*math.Abs(r.LambdaHat)
		sl.MinEigSens = minEigSens(r.Loss.Beta(), r.Lambda, n, d)
	}
	gv, err := g.gsum.Release(s.Child("report-gradient"))
	if err != nil {
		return fmt.Errorf("report: gradient release: %w", err)
	}
	r.GHat = make([]float64, d)
	for j := range gv {
		r.GHat[j] = r.Lambda*r.Theta[j] + gv[j]
	}
	// n records' errors, half a step of noise rounding per coordinate, and
	// the float of γ·k and of adding λθ̂ (3 ulps of the result and of λθ̂).
	sl.Grad = float64(n)*g.recG + sq*g.gsum.Gamma()/2 + 3*unitRound*(norm(r.GHat)+r.Lambda*tn)
	hv, err := g.hsum.Release(s.Child("report-hessian"))
	if err != nil {
		return fmt.Errorf("report: Hessian release: %w", err)
	}
	r.HHat = hessianFrom(hv, d, r.Lambda)
	// a-priori part, plus 5 ulps per entry for γ·k, the √2 and adding λ.
	sl.Hess = g.hessSlack() + 5*unitRound*(frobenius(r.HHat)+r.Lambda*sq)
	r.Slack = sl
	return nil
}

// hessianFrom turns the upper-triangle vector w (diagonal divided by √2)
// back into the symmetric matrix and adds λI.
func hessianFrom(w []float64, d int, lambda float64) *mat.SymDense {
	h := mat.NewSymDense(d, nil)
	k := 0
	for a := 0; a < d; a++ {
		h.SetSym(a, a, math.Sqrt2*w[k]+lambda)
		k++
		for b := a + 1; b < d; b++ {
			h.SetSym(a, b, w[k])
			k++
		}
	}
	return h
}

func frobenius(h *mat.SymDense) float64 {
	d := h.SymmetricDim()
	s := 0.0
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			s += h.At(a, b) * h.At(a, b)
		}
	}
	return math.Sqrt(s)
}
