package accountant

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Hidden-state accounting (paper 002, Asoodeh & Diaz; docs/hidden-state.md):
// projected DP-SGD whose intermediate iterates are never released is bounded
// directly with the hockey-stick divergence, through the contraction of the
// Gaussian kernel on a set of bounded diameter. The bound converges in T.

// hsQ is the standard normal upper tail Q(x) = 1 − Φ(x).
func hsQ(x float64) float64 { return 0.5 * math.Erfc(x/math.Sqrt2) }

// Theta is θ_ε(r) = Q(ε/r − r/2) − e^ε·Q(ε/r + r/2): the E_ε contraction
// coefficient of a Gaussian kernel whose inputs lie in a set of diameter
// r·σ (docs/hidden-state.md#the-bound), equal to the exact privacy profile
// δ(ε) of the Gaussian mechanism with sensitivity/noise ratio r. Rounding errs
// upward: the result is clamped to [0,1], and an underflowing e^ε·Q term is
// dropped (an overestimate).
func Theta(eps, r float64) float64 {
	if !(r > 0) {
		return 0
	}
	if math.IsInf(r, 1) {
		return 1
	}
	a := eps/r - r/2
	b := eps/r + r/2
	qa := hsQ(a)
	var sub float64
	if qb := hsQ(b); qb > 0 {
		sub = math.Exp(eps + math.Log(qb)) // e^ε·Q(b) without overflowing e^ε
	}
	v := qa - sub
	if v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

// HiddenSegment is a run of Steps identical projected DP-SGD steps
// (docs/hidden-state.md#the-bound): batches drawn with rate P (Poisson rate,
// or b/n for fixed-size sampling without replacement), per-example L2 clipping
// to Clip, learning rate LR, isotropic Gaussian noise of standard deviation
// Sigma in PARAMETER space (not the Abadi multiplier: σ = η·z·C/b), and
// projection after the noise onto a fixed set of Euclidean diameter Diameter.
type HiddenSegment struct {
	Steps    int     `json:"steps"`
	P        float64 `json:"p"`
	Diameter float64 `json:"diameter"`
	LR       float64 `json:"lr"`
	Clip     float64 `json:"clip"`
	Sigma    float64 `json:"sigma"`
	// Poisson records that the batches were drawn by Poisson sampling
	// (rate P); false means fixed-size sampling without replacement (P =
	// b/n). It does not change δ_T(ε), only the relations the bound holds
	// for (see [HiddenAccountant.Epsilon]).
	Poisson bool `json:"poisson,omitempty"`
}

// R is r = (D + 2ηC)/σ, the diameter of the Gaussian kernel's input set in
// noise units (Lemma 2).
func (s HiddenSegment) R() float64 { return (s.Diameter + 2*s.LR*s.Clip) / s.Sigma }

// Validate checks the segment's parameters.
func (s HiddenSegment) Validate() error {
	switch {
	case s.Steps < 0:
		return invalidf("hidden state: steps must be >= 0, got %d", s.Steps)
	case !(s.P >= 0 && s.P <= 1):
		return invalidf("hidden state: sampling rate p must be in [0,1], got %v", s.P)
	case !(s.Sigma > 0) || math.IsInf(s.Sigma, 0):
		return invalidf("hidden state: noise std sigma must be positive and finite, got %v", s.Sigma)
	case !(s.Diameter >= 0) || math.IsInf(s.Diameter, 0):
		return invalidf("hidden state: diameter must be finite and >= 0, got %v", s.Diameter)
	case !(s.LR >= 0) || math.IsInf(s.LR, 0):
		return invalidf("hidden state: learning rate must be finite and >= 0, got %v", s.LR)
	case !(s.Clip >= 0) || math.IsInf(s.Clip, 0):
		return invalidf("hidden state: clip norm must be finite and >= 0, got %v", s.Clip)
	}
	return nil
}

// HiddenState is the hidden-state bound of Theorems 1/2 generalised to
// segments with changing parameters through Lemma 1: δ_t = (1−p_t)θ_t δ_{t−1}
// + p_t θ_t, δ_0 = 0. It holds for replace-one neighbours (and, for Poisson
// sampling, add/remove; docs/hidden-state.md#a9-neighbouring-relations) when
// only the final iterate is released; see [HiddenStateRun.Qualifies].
type HiddenState struct {
	Segments []HiddenSegment
	// PointMassInit uses θ_ε(2ηC/σ) at the first step, valid only when W_0
	// is a fixed point (docs/hidden-state.md#point-mass-initialisation).
	// Default off.
	PointMassInit bool
}

// Steps is the total number of steps.
func (h HiddenState) Steps() int {
	n := 0
	for _, s := range h.Segments {
		n += s.Steps
	}
	return n
}

// Delta is δ_T(ε), the smallest δ the bound proves at ε (capped at 1).
func (h HiddenState) Delta(eps float64) float64 {
	delta := 0.0
	first := true
	for _, s := range h.Segments {
		k := s.Steps
		if k == 0 {
			continue
		}
		p := s.P
		if h.PointMassInit && first {
			delta = p * Theta(eps, 2*s.LR*s.Clip/s.Sigma)
			k--
		}
		first = false
		if k == 0 {
			continue
		}
		th := Theta(eps, s.R())
		a := (1 - p) * th
		beta := p * th
		ak := 0.0
		if a > 0 {
			ak = math.Exp(float64(k) * math.Log(a))
		}
		geom := float64(k)
		if a < 1 {
			geom = 1
			if a > 0 {
				geom = -math.Expm1(float64(k)*math.Log(a)) / (1 - a)
			}
		}
		delta = ak*delta + beta*geom
	}
	return math.Min(delta, 1)
}

// Epsilon is ε_T(δ) = inf{ε ≥ 0 : δ_T(ε) ≤ δ}, found by bisection (δ_T is
// nonincreasing in ε). The returned ε is always one at which the bound was
// verified; +Inf when no ε ≤ 700 suffices.
func (h HiddenState) Epsilon(delta float64) float64 {
	return hsBisect(h.Delta, delta)
}

// hsBisect returns the smallest ε ≥ 0 (to ~1e-12 relative) with f(ε) ≤ delta
// for a nonincreasing f, returning the verified upper end of the bracket.
func hsBisect(f func(float64) float64, delta float64) float64 {
	if delta >= 1 || f(0) <= delta {
		return 0
	}
	lo, hi := 0.0, 1.0
	for f(hi) > delta {
		lo = hi
		hi *= 2
		if hi > 1024 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-13*math.Max(1, hi); i++ {
		mid := (lo + hi) / 2
		if f(mid) <= delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// HiddenStateDeltaLimit is δ_∞(ε) = pθ/(1 − (1−p)θ), the T → ∞ limit of the
// constant-parameter bound (Appendix of paper 002).
func HiddenStateDeltaLimit(eps, p, r float64) float64 {
	th := Theta(eps, r)
	return math.Min(p*th/(1-(1-p)*th), 1)
}

// HiddenStateEpsilonLimit is ε*_δ, the T-uniform bound: the smallest ε with
// θ_ε(r) ≤ δ/(p + (1−p)δ) (eq. 22); 0 when θ_0(r) already is below it.
func HiddenStateEpsilonLimit(delta, p, r float64) float64 {
	target := delta / (p + (1-p)*delta)
	return hsBisect(func(e float64) float64 { return Theta(e, r) }, target)
}

// HiddenStateEpsilonClosedForm is eq. (23), the closed-form upper bound on
// ε*_δ: r·(r/2 + Φ⁻¹(p(1−δ)/(p+(1−p)δ))), reported as 0 when negative.
func HiddenStateEpsilonClosedForm(delta, p, r float64) float64 {
	y := p * (1 - delta) / (p + (1-p)*delta)
	// Φ⁻¹(y) = −√2·erfcinv(2y)
	v := r * (r/2 - math.Sqrt2*math.Erfcinv(2*y))
	return math.Max(v, 0)
}

func (e ProjectedSGD) segment(steps int) HiddenSegment {
	return HiddenSegment{Steps: steps, P: e.P, Diameter: e.Diameter, LR: e.LR, Clip: e.Clip, Sigma: e.Sigma, Poisson: e.Poisson}
}

// HiddenStateRun describes the facts about a training run that decide
// whether the hidden-state bound is valid for it
// (docs/hidden-state.md#conditions).
type HiddenStateRun struct {
	ProjectEveryStep           bool   // full parameter vector projected after the noise, every step (A2)
	Optimizer                  string // must be "sgd" (plain SGD, no momentum/Adam state; A5)
	Momentum                   float64
	FinalModelOnly             bool   // only W_T is released: no checkpoints, no private-data metrics, no data-dependent stopping (A1)
	Sampling                   string // "poisson" or "without_replacement" (fresh every step; A6)
	ExpectedBatchNormalization bool   // update divided by the expected batch size without the outer clip breaks A3
	// WeightDecay λ of a coupled decay w ← (1−ηλ)w − η·g: Lemma 2's
	// diameter becomes |1−ηλ|·D + 2ηC, so the bound is under-charged once
	// ηλ > 2; docs/hidden-state.md#a5-plain-sgd allows no weight decay outside
	// the regularised variant.
	WeightDecay float64
}

// Qualifies reports whether the hidden-state bound may be used for the run;
// when not, reason names every violated condition.
func (r HiddenStateRun) Qualifies() (ok bool, reason string) {
	var why []string
	if !r.ProjectEveryStep {
		why = append(why, "parameters are not projected onto a fixed set after the noise at every step")
	}
	if opt := strings.ToLower(r.Optimizer); opt != "sgd" || r.Momentum != 0 {
		why = append(why, fmt.Sprintf("optimizer %q (momentum %v) is not plain SGD", r.Optimizer, r.Momentum))
	}
	if !r.FinalModelOnly {
		why = append(why, "intermediate iterates or private-data statistics are released")
	}
	switch strings.ToLower(r.Sampling) {
	case "poisson", "without_replacement", "wor":
	default:
		why = append(why, fmt.Sprintf("sampling %q is not fresh Poisson or fixed-size sampling without replacement", r.Sampling))
	}
	if r.WeightDecay != 0 {
		why = append(why, fmt.Sprintf("weight decay %g changes the projected step's contraction (hidden-state condition A5: none outside the regularised variant)", r.WeightDecay))
	}
	if r.ExpectedBatchNormalization {
		why = append(why, "dividing by the expected batch size breaks the bounded-update condition (use the outer-clip variant)")
	}
	if len(why) == 0 {
		return true, ""
	}
	return false, "hidden-state bound does not apply: " + strings.Join(why, "; ")
}

// MarkTracker records in t whether the "hidden" accountant applies to the
// run (with the reason when it does not), so the tracker never reports the
// hidden-state bound as the run's bound for a run that breaks
// docs/hidden-state.md#conditions.
func (r HiddenStateRun) MarkTracker(t *Tracker) error {
	ok, why := r.Qualifies()
	return t.SetApplicable((*HiddenAccountant)(nil).Name(), ok, why)
}

// HiddenAccountant composes ProjectedSGD events with the hidden-state bound.
// Its bounds hold for the replace-one relation, and for add/remove-one too
// when every step used Poisson sampling (see Epsilon), and only for runs
// that release the final model alone.
type HiddenAccountant struct {
	state HiddenState
}

// NewHidden returns an empty hidden-state accountant.
func NewHidden() *HiddenAccountant { return &HiddenAccountant{} }

// Name is "hidden".
func (*HiddenAccountant) Name() string { return "hidden" }

// State returns a copy of the composed segments.
func (a *HiddenAccountant) State() HiddenState {
	return HiddenState{Segments: append([]HiddenSegment(nil), a.state.Segments...), PointMassInit: a.state.PointMassInit}
}

// Supports accepts ProjectedSGD, NoOp, and SelfComposed/Composed of those.
func (a *HiddenAccountant) Supports(ev Event) error {
	_, err := a.segments(ev, 1)
	return err
}

func (a *HiddenAccountant) segments(ev Event, count int) ([]HiddenSegment, error) {
	if ev == nil {
		return nil, Unsupported(a.Name(), ev)
	}
	if err := ev.Validate(); err != nil {
		return nil, fmt.Errorf("hidden accountant: %w", err)
	}
	switch e := ev.(type) {
	case ProjectedSGD:
		return []HiddenSegment{e.segment(count)}, nil
	case NoOp:
		return nil, nil
	case SelfComposed:
		return a.segments(e.Event, count*e.Count)
	case Composed:
		var out []HiddenSegment
		for r := 0; r < count; r++ {
			for _, inner := range e.Events {
				s, err := a.segments(inner, 1)
				if err != nil {
					return nil, err
				}
				out = append(out, s...)
			}
		}
		return out, nil
	}
	return nil, Unsupported(a.Name(), ev)
}

// Compose adds count runs of ev; adjacent identical steps merge into one
// segment so queries cost O(#segments).
func (a *HiddenAccountant) Compose(ev Event, count int) error {
	if count < 0 {
		return invalidf("hidden accountant: count must be >= 0, got %d", count)
	}
	segs, err := a.segments(ev, count)
	if err != nil {
		return err
	}
	for _, s := range segs {
		a.add(s)
	}
	return nil
}

func (a *HiddenAccountant) add(s HiddenSegment) {
	if s.Steps == 0 {
		return
	}
	n := len(a.state.Segments)
	if n > 0 {
		last := &a.state.Segments[n-1]
		same := *last
		same.Steps = s.Steps
		if same == s {
			last.Steps += s.Steps
			return
		}
	}
	a.state.Segments = append(a.state.Segments, s)
}

// Relation is the neighbouring relation Epsilon reports: AddRemove when at
// least one step was composed and every step used Poisson sampling, else
// ReplaceOne.
//
// Theorems 1–2 of paper 002 are proved for replace-one neighbours. With
// Poisson sampling the same δ_T(ε) also holds for add/remove-one
// (docs/hidden-state.md#a9-neighbouring-relations), by the proof of Prop. 2
// with the coupling B' = B ∪ {x} with probability p, else B: batches without
// the extra record x give the same ψ_B on both datasets (SDPI then DPI: ≤
// θ·E_ε(μ‖ν)); batches with it give Gaussian inputs ψ_{B∪{x}}(w), ψ_B(w') that
// still lie in a set of diameter ≤ D + 2ηC (each update moves w by ≤ ηC, Lemma
// 2), so their E_ε is ≤ θ; joint convexity of E_ε over the batch mixture gives
// δ_t ≤ (1−p)θδ_{t−1} + pθ in both directions, which is Lemma 1's recursion.
// Reporting AddRemove for such runs is what lets a Tracker take
// min(hidden-state, RDP) against the Poisson RDP bound
// (docs/accountants.md#relations: a proven rule, cited here).
func (a *HiddenAccountant) Relation() Relation {
	if len(a.state.Segments) == 0 {
		return ReplaceOne
	}
	for _, s := range a.state.Segments {
		if !s.Poisson {
			return ReplaceOne
		}
	}
	return AddRemove
}

// Epsilon returns ε_T(δ), for the relation of [HiddenAccountant.Relation].
func (a *HiddenAccountant) Epsilon(delta float64) (Bound, error) {
	if !(delta > 0 && delta < 1) {
		return Bound{}, invalidf("hidden accountant: delta must be in (0,1), got %v", delta)
	}
	eps := a.state.Epsilon(delta)
	if math.IsInf(eps, 1) {
		return Bound{}, fmt.Errorf("hidden accountant: no epsilon <= 1024 reaches delta=%v", delta)
	}
	return Bound{Accountant: a.Name(), Epsilon: eps, Delta: delta, Relation: a.Relation()}, nil
}

// Delta returns δ_T(ε).
func (a *HiddenAccountant) Delta(epsilon float64) (float64, error) {
	if !(epsilon >= 0) || math.IsInf(epsilon, 0) {
		return 0, invalidf("hidden accountant: epsilon must be finite and >= 0, got %v", epsilon)
	}
	return a.state.Delta(epsilon), nil
}

type hiddenJSON struct {
	Version       int             `json:"version"`
	Segments      []HiddenSegment `json:"segments"`
	PointMassInit bool            `json:"point_mass_init,omitempty"`
}

// MarshalJSON serialises the composed segments.
func (a *HiddenAccountant) MarshalJSON() ([]byte, error) {
	return json.Marshal(hiddenJSON{Version: 1, Segments: a.state.Segments, PointMassInit: a.state.PointMassInit})
}

// UnmarshalJSON restores an account written by MarshalJSON.
func (a *HiddenAccountant) UnmarshalJSON(b []byte) error {
	var j hiddenJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("hidden accountant state: %w", err)
	}
	if j.Version != 1 {
		return fmt.Errorf("hidden accountant state: unknown version %d", j.Version)
	}
	for i, s := range j.Segments {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("hidden accountant state segment %d: %w", i, err)
		}
	}
	a.state = HiddenState{Segments: j.Segments, PointMassInit: j.PointMassInit}
	return nil
}
