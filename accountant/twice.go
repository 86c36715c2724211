package accountant

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Twice Poisson sampling with hybrid (L2 + L∞, per-subspace) clipping
// (paper 003, Xiao, Wan & Devadas; docs/twice-sampling.md): closed-form
// integer-order RDP of (q1, q2)-twice sampling (eqs. 7–8, Theorem 5.6, Remark
// 5.1).

func (b Block) d0() float64 { return math.Max(b.D0, 1) }

// CInf is the block's L∞ clip c∞ = C2/√D0 (C2 when D0 ≤ 1).
func (b Block) CInf() float64 { return b.C2 / math.Sqrt(b.d0()) }

// Worst returns the dominating sensitivity of the block under L2 ∩ L∞
// clipping (Theorem 5.2 with Remark 5.1): k coordinates at c∞ and one at ρ,
// the rest zero; k ≤ Dim when Dim is known.
func (b Block) Worst() (k int, rho float64) {
	d0 := b.d0()
	k = int(math.Floor(d0))
	if b.Dim > 0 && k >= b.Dim {
		return b.Dim, 0
	}
	rho2 := b.C2 * b.C2 * (1 - float64(k)/d0)
	return k, math.Sqrt(math.Max(rho2, 0))
}

// logMoment is Λ_block(v) = (v−1)·ε0(v) of the block under q2-coordinate-wise
// sampling: k·log A(v; q2, (c∞/σ)²) + log A(v; q2, (ρ/σ)²).
func (b Block) logMoment(v int, q2 float64) float64 {
	k, rho := b.Worst()
	cinf2 := b.C2 * b.C2 / b.d0()
	s2 := b.Sigma * b.Sigma
	l := float64(k) * twLogA(v, q2, cinf2/s2)
	if rho > 0 {
		l += twLogA(v, q2, rho*rho/s2)
	}
	return l
}

// twLogFact caches log n! for the binomials of the order sums.
var twLogFact = sync.OnceValue(func() []float64 {
	f := make([]float64, 8193)
	for i := 1; i < len(f); i++ {
		f[i] = f[i-1] + math.Log(float64(i))
	}
	return f
})

func twLogBinom(n, k int) float64 {
	if n < 8193 {
		f := twLogFact()
		return f[n] - f[k] - f[n-k]
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// twLogExpm1 is log(e^x − 1) for x > 0.
func twLogExpm1(x float64) float64 {
	if x > 50 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// twLog1pExp is log(1 + e^s).
func twLog1pExp(s float64) float64 {
	if s > 0 {
		return s + math.Log1p(math.Exp(-s))
	}
	return math.Log1p(math.Exp(s))
}

// twLogSum returns log(1 + Σ_{v=2}^{a} C(a,v)(1−q)^{a−v} q^v expm1(L(v))) for
// 0 < q < 1, stably in log space.
func twLogSum(a int, q float64, L func(v int) float64) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	terms := make([]float64, 0, a)
	m := math.Inf(-1)
	for v := 2; v <= a; v++ {
		x := L(v)
		if !(x > 0) {
			continue
		}
		t := twLogBinom(a, v) + float64(a-v)*l1q + float64(v)*lq + twLogExpm1(x)
		terms = append(terms, t)
		m = math.Max(m, t)
	}
	if len(terms) == 0 {
		return 0
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - m)
	}
	return twLog1pExp(m + math.Log(s))
}

// twLogA is log A(a; q, x), A = Σ_v C(a,v)(1−q)^{a−v} q^v exp(v(v−1)x/2), the
// a-th moment of the 1-D sampled Gaussian with x = (c/σ)² (eq. 26).
func twLogA(a int, q, x float64) float64 {
	if a <= 1 || x <= 0 || q <= 0 {
		return 0
	}
	if q >= 1 {
		return float64(a) * float64(a-1) * x / 2
	}
	return twLogSum(a, q, func(v int) float64 { return float64(v) * float64(v-1) * x / 2 })
}

// NewTwiceSampled is the single-block event of the CLI: C2 = 1, so sigma is
// the noise multiplier, and d0 = (c2/c∞)² with an unknown dimension.
func NewTwiceSampled(q1, q2, sigma, d0 float64) TwiceSampled {
	return TwiceSampled{Q1: q1, Q2: q2, Blocks: []Block{{C2: 1, D0: d0, Sigma: sigma}}}
}

// logMoment is Λ(v) = Σ_j Λ_j(v) (Theorem 5.6).
func (e TwiceSampled) logMoment(v int) float64 {
	l := 0.0
	for _, b := range e.Blocks {
		l += b.logMoment(v, e.Q2)
	}
	return l
}

// RDP is the per-step RDP ε(α) at integer order α ≥ 2 (eq. 8 with eq. 7 per
// block; Remark 5.1 for non-integer d0).
func (e TwiceSampled) RDP(alpha int) float64 {
	return e.RDPCurve([]int{alpha})[0]
}

// RDPCurve evaluates the per-step RDP at each integer order (≥ 2), sharing
// Λ(v) between orders.
func (e TwiceSampled) RDPCurve(orders []int) []float64 {
	amax := 2
	for _, a := range orders {
		amax = max(amax, a)
	}
	lam := make([]float64, amax+1)
	for v := 2; v <= amax; v++ {
		lam[v] = e.logMoment(v)
	}
	out := make([]float64, len(orders))
	for i, a := range orders {
		if a < 2 {
			panic(fmt.Sprintf("accountant: twice-sampling RDP needs integer orders >= 2, got %d", a))
		}
		if e.Q1 >= 1 {
			out[i] = lam[a] / float64(a-1)
			continue
		}
		out[i] = twLogSum(a, e.Q1, func(v int) float64 { return lam[v] }) / float64(a-1)
	}
	return out
}

// TwiceConversion selects the RDP → (ε, δ) conversion of the twice accountant.
type TwiceConversion int

const (
	// TwiceBalle is the default: Balle et al. 2020 via [EpsilonFromRDP].
	TwiceBalle TwiceConversion = iota
	// TwiceMironov is Mironov's (2017) conversion ε = min_α RDP +
	// log(1/δ)/(α−1) (paper 003's Lemma 2.3): looser; used to regenerate the
	// paper's Table 1.
	TwiceMironov
)

// twConvert converts a cumulative curve at integer orders.
func twConvert(orders []int, rdp []float64, delta float64, conv TwiceConversion) (eps, order float64, err error) {
	if !(delta > 0 && delta < 1) {
		return 0, 0, invalidf("delta must be in (0,1), got %v", delta)
	}
	if conv == TwiceMironov {
		eps = math.Inf(1)
		for i, a := range orders {
			if e := rdp[i] + math.Log(1/delta)/float64(a-1); e < eps {
				eps, order = e, float64(a)
			}
		}
		return eps, order, nil
	}
	fo := make([]float64, len(orders))
	for i, a := range orders {
		fo[i] = float64(a)
	}
	return EpsilonFromRDP(fo, rdp, delta)
}

func twDeltaConvert(orders []int, rdp []float64, eps float64, conv TwiceConversion) (float64, error) {
	if conv == TwiceMironov {
		best := 1.0
		for i, a := range orders {
			// δ = exp(−(α−1)(ε − RDP)) from Lemma 2.3.
			if d := math.Exp(-float64(a-1) * (eps - rdp[i])); d < best {
				best = d
			}
		}
		return best, nil
	}
	fo := make([]float64, len(orders))
	for i, a := range orders {
		fo[i] = float64(a)
	}
	d, _, err := DeltaFromRDP(fo, rdp, eps)
	return d, err
}

// twOrders is 2..amax.
func twOrders(amax int) []int {
	o := make([]int, 0, amax-1)
	for a := 2; a <= amax; a++ {
		o = append(o, a)
	}
	return o
}

// TwiceEpsilon is ε after steps identical TwiceSampled steps at delta, over
// integer orders 2..alphaMax, and the attaining order.
func TwiceEpsilon(ev TwiceSampled, steps int, delta float64, alphaMax int, conv TwiceConversion) (eps, order float64, err error) {
	if err := ev.Validate(); err != nil {
		return 0, 0, err
	}
	if alphaMax < 2 {
		return 0, 0, invalidf("twice sampling: alphaMax must be >= 2, got %d", alphaMax)
	}
	orders := twOrders(alphaMax)
	curve := ev.RDPCurve(orders)
	for i := range curve {
		curve[i] *= float64(steps)
	}
	return twConvert(orders, curve, delta, conv)
}

// TwiceCalibration is the ε of steps runs of build(s) by the twice-sampling
// accountant (integer orders 2..alphaMax, conversion conv): the function
// Calibrate inverts for the smallest scale s meeting a target, with
// WithTolerance(ExactTolerance) to float64 precision.
func TwiceCalibration(build func(s float64) TwiceSampled, steps int, delta float64, alphaMax int, conv TwiceConversion) func(s float64) (float64, error) {
	newAcc := func() (Accountant, error) { return NewTwiceWith(alphaMax, conv), nil }
	return Account(newAcc, func(s float64) (Event, int) { return build(s), steps }, delta)
}

// TwiceAccountant composes twice-sampling steps (and ordinary sampled
// Gaussians, as the special case q2 = 1) at integer RDP orders 2..AlphaMax.
// Relation: add/remove-one.
type TwiceAccountant struct {
	alphaMax   int
	conversion TwiceConversion
	rdp        []float64 // cumulative, orders 2..alphaMax

	// The last TwiceSampled event seen and its per-run curve: training
	// composes the same event every step, and a curve costs O(αmax²·blocks).
	lastEv    *TwiceSampled
	lastCurve []float64
}

// NewTwice returns an empty twice-sampling accountant with orders 2..256 and
// the Balle et al. conversion.
func NewTwice() *TwiceAccountant { return NewTwiceWith(256, TwiceBalle) }

// NewTwiceWith sets the largest order and the conversion.
func NewTwiceWith(alphaMax int, conv TwiceConversion) *TwiceAccountant {
	alphaMax = max(alphaMax, 2)
	return &TwiceAccountant{alphaMax: alphaMax, conversion: conv, rdp: make([]float64, alphaMax-1)}
}

// Name is "twice".
func (*TwiceAccountant) Name() string { return "twice" }

// Supports accepts TwiceSampled, PoissonSampled{Gaussian}, Gaussian, NoOp and
// SelfComposed/Composed of those.
func (a *TwiceAccountant) Supports(ev Event) error {
	_, err := a.curve(ev)
	return err
}

// curve returns the per-run RDP curve of ev at orders 2..alphaMax.
func (a *TwiceAccountant) curve(ev Event) ([]float64, error) {
	if ev == nil {
		return nil, Unsupported(a.Name(), ev)
	}
	if err := ev.Validate(); err != nil {
		return nil, fmt.Errorf("twice accountant: %w", err)
	}
	orders := twOrders(a.alphaMax)
	switch e := ev.(type) {
	case TwiceSampled:
		if a.lastEv != nil && len(a.lastCurve) == len(orders) && sameTwice(*a.lastEv, e) {
			return slices.Clone(a.lastCurve), nil
		}
		c := e.RDPCurve(orders)
		a.lastEv = &TwiceSampled{Q1: e.Q1, Q2: e.Q2, Blocks: slices.Clone(e.Blocks)}
		a.lastCurve = slices.Clone(c)
		return c, nil
	case Gaussian:
		return NewTwiceSampled(1, 1, e.Sigma, 1).RDPCurve(orders), nil
	case PoissonSampled:
		g, ok := e.Event.(Gaussian)
		if !ok {
			return nil, Unsupported(a.Name(), ev)
		}
		if e.Q == 0 {
			return make([]float64, len(orders)), nil
		}
		return NewTwiceSampled(e.Q, 1, g.Sigma, 1).RDPCurve(orders), nil
	case NoOp:
		return make([]float64, len(orders)), nil
	case SelfComposed:
		c, err := a.curve(e.Event)
		if err != nil {
			return nil, err
		}
		for i := range c {
			c[i] *= float64(e.Count)
		}
		return c, nil
	case Composed:
		sum := make([]float64, len(orders))
		for _, in := range e.Events {
			c, err := a.curve(in)
			if err != nil {
				return nil, err
			}
			for i := range sum {
				sum[i] += c[i]
			}
		}
		return sum, nil
	}
	return nil, Unsupported(a.Name(), ev)
}

// Compose adds count runs of ev.
func (a *TwiceAccountant) Compose(ev Event, count int) error {
	if count < 0 {
		return invalidf("twice accountant: count must be >= 0, got %d", count)
	}
	c, err := a.curve(ev)
	if err != nil {
		return err
	}
	for i := range a.rdp {
		a.rdp[i] += float64(count) * c[i]
	}
	return nil
}

// Curve returns the orders and the cumulative RDP values.
func (a *TwiceAccountant) Curve() (orders []int, rdp []float64) {
	return twOrders(a.alphaMax), append([]float64(nil), a.rdp...)
}

// Epsilon converts the cumulative curve at delta.
func (a *TwiceAccountant) Epsilon(delta float64) (Bound, error) {
	eps, order, err := twConvert(twOrders(a.alphaMax), a.rdp, delta, a.conversion)
	if err != nil {
		return Bound{}, fmt.Errorf("twice accountant: %w", err)
	}
	return Bound{Accountant: a.Name(), Epsilon: eps, Delta: delta, Order: order, Relation: AddRemove}, nil
}

// Delta converts the cumulative curve at epsilon.
func (a *TwiceAccountant) Delta(epsilon float64) (float64, error) {
	if !(epsilon >= 0) || math.IsInf(epsilon, 0) {
		return 0, invalidf("twice accountant: epsilon must be finite and >= 0, got %v", epsilon)
	}
	return twDeltaConvert(twOrders(a.alphaMax), a.rdp, epsilon, a.conversion)
}

type twiceJSON struct {
	Version    int       `json:"version"`
	AlphaMax   int       `json:"alpha_max"`
	Conversion int       `json:"conversion"`
	RDP        []float64 `json:"rdp"`
}

// MarshalJSON serialises the cumulative curve.
func (a *TwiceAccountant) MarshalJSON() ([]byte, error) {
	return json.Marshal(twiceJSON{Version: 1, AlphaMax: a.alphaMax, Conversion: int(a.conversion), RDP: a.rdp})
}

// UnmarshalJSON restores an account written by MarshalJSON.
func (a *TwiceAccountant) UnmarshalJSON(b []byte) error {
	var j twiceJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("twice accountant state: %w", err)
	}
	if j.Version != 1 || j.AlphaMax < 2 || len(j.RDP) != j.AlphaMax-1 ||
		(j.Conversion != int(TwiceBalle) && j.Conversion != int(TwiceMironov)) {
		return fmt.Errorf("twice accountant state: malformed (version %d, alpha_max %d, %d values)", j.Version, j.AlphaMax, len(j.RDP))
	}
	for _, r := range j.RDP {
		if !(r >= 0) {
			return fmt.Errorf("twice accountant state: invalid rdp value %v", r)
		}
	}
	a.alphaMax, a.conversion, a.rdp = j.AlphaMax, TwiceConversion(j.Conversion), j.RDP
	a.lastEv, a.lastCurve = nil, nil
	return nil
}

// sameTwice reports whether x and y describe the same mechanism exactly.
func sameTwice(x, y TwiceSampled) bool {
	return x.Q1 == y.Q1 && x.Q2 == y.Q2 && slices.Equal(x.Blocks, y.Blocks)
}
