package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// Logistic regression without intercept (the data are centred): the loss of
// θ on (x, y), y ∈ {−1, +1}, is ℓ = log(1 + exp(−y·θᵀx)); ℓ̂_S is its mean.

func softplus(t float64) float64 {
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}

func sigmoid(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}

// evaluate returns the mean logistic loss and the accuracy (sign of the
// logit; 0 counts as wrong) of w on the rows of P.
func evaluate(P *mat.Dense, y, w []float64) (loss, acc float64) {
	n, _ := P.Dims()
	for i := range n {
		m := dot(P.RawRowView(i), w)
		loss += softplus(-y[i] * m)
		if m*y[i] > 0 {
			acc++
		}
	}
	return loss / float64(n), acc / float64(n)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// project scales w onto the ball ‖w‖ ≤ r.
func project(w []float64, r float64) {
	if nrm := norm(w); nrm > r {
		f := r / nrm
		for i := range w {
			w[i] *= f
		}
	}
}

// lrConfig is the private logistic regression (the paper: Opacus
// make_private_with_epsilon, SGD, lr 1e-2, max_grad_norm 10, 10 epochs).
type lrConfig struct {
	LR     float64 // SGD step size on the noisy mean gradient
	Batch  int     // expected batch size q·n (Poisson sampling)
	Epochs int     // steps = Epochs·n/Batch
	Clip   float64 // per-example gradient clip norm C
	RTheta float64 // projection radius: ‖θ‖ ≤ RTheta after every step (needed for μ, docs/srdp.md#training-steps)
}

func (c lrConfig) run(n int) dpsgd {
	return dpsgd{Q: float64(c.Batch) / float64(n), Steps: c.Epochs * n / c.Batch}
}

// trainDPSGD runs DP-SGD (Opacus semantics: Poisson sampling at rate q,
// per-example clipping to C, N(0, z²C²) noise on the clipped sum, divided
// by the expected batch q·n) from θ = 0 on the rows of P, projecting onto
// the RTheta ball after each step, and returns the last iterate. z = 0 is
// non-private SGD with the same sampling and clipping.
func trainDPSGD(P *mat.Dense, y []float64, cfg lrConfig, z float64, s *rng.Stream) ([]float64, error) {
	n, p := P.Dims()
	run := cfg.run(n)
	smp, err := sampler.NewPoisson(n, run.Q, s.Child("poisson"))
	if err != nil {
		return nil, err
	}
	noise := s.Child("noise")
	rowNorm := make([]float64, n)
	for i := range n {
		rowNorm[i] = norm(P.RawRowView(i))
	}
	w := make([]float64, p)
	g := make([]float64, p)
	idx := make([]int, 0, 2*cfg.Batch)
	step := cfg.LR / (run.Q * float64(n))
	std := z * cfg.Clip
	for range run.Steps {
		clear(g)
		idx = smp.Next(idx)
		for _, i := range idx {
			x := P.RawRowView(i)
			c := -y[i] * sigmoid(-y[i]*dot(x, w)) // ∇ℓ = c·x
			if gn := math.Abs(c) * rowNorm[i]; gn > cfg.Clip {
				c *= cfg.Clip / gn
			}
			for j, v := range x {
				g[j] += c * v
			}
		}
		if std > 0 {
			for j := range g {
				g[j] += std * noise.NormFloat64()
			}
		}
		for j := range w {
			w[j] -= step * g[j]
		}
		project(w, cfg.RTheta)
	}
	for _, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("dp-sgd diverged")
		}
	}
	return w, nil
}

// optimum minimises ℓ̂ over ‖a‖ ≤ r on the rows of F by accelerated
// projected gradient (FISTA with adaptive restart, step 1/L with
// L = s_1²/(4n) the smoothness of ℓ̂). It stops when the Frank–Wolfe gap
// ∇ℓ̂(a)ᵀa + r‖∇ℓ̂(a)‖, an upper bound on ℓ̂(a) − min ℓ̂, is below tol or
// after maxIter iterations, and returns a, ℓ̂(a) and the gap.
func optimum(F *mat.Dense, y []float64, s1, r, tol float64, maxIter int) (a []float64, loss, gap float64, iters int) {
	n, p := F.Dims()
	L := s1 * s1 / (4 * float64(n))
	a = make([]float64, p)
	prev := make([]float64, p)
	v := make([]float64, p) // extrapolated point
	grad := make([]float64, p)
	c := make([]float64, n)
	lossGrad := func(x []float64) float64 {
		xv := mat.NewVecDense(p, x)
		m := mat.NewVecDense(n, nil)
		m.MulVec(F, xv)
		l := 0.0
		for i := range n {
			t := -y[i] * m.AtVec(i)
			l += softplus(t)
			c[i] = -y[i] * sigmoid(t) / float64(n)
		}
		gv := mat.NewVecDense(p, grad)
		gv.MulVec(F.T(), mat.NewVecDense(n, c))
		return l / float64(n)
	}
	t := 1.0
	fPrev := math.Inf(1)
	for iters = 1; iters <= maxIter; iters++ {
		lossGrad(v)
		copy(prev, a)
		for j := range a {
			a[j] = v[j] - grad[j]/L
		}
		project(a, r)
		f := lossGrad(a)
		gap = dot(grad, a) + r*norm(grad)
		loss = f
		if gap < tol {
			break
		}
		if f > fPrev { // adaptive restart
			t = 1
			copy(v, a)
			fPrev = f
			continue
		}
		fPrev = f
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		for j := range v {
			v[j] = a[j] + (t-1)/tn*(a[j]-prev[j])
		}
		t = tn
	}
	return a, loss, gap, iters
}
