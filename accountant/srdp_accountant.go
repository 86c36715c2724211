package accountant

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
)

// shift is the largest L2 move of the clipped sum, in units of C, when the
// preprocessing moves DeltaInf other records by at most Delta2 each.
func (e Preprocessed) shift() float64 {
	per := 2.0
	if e.Mu > 0 {
		per = math.Min(2, e.Mu*e.Delta2)
	}
	return e.DeltaInf * per
}

// srdpGroup is Count runs of a sampled Gaussian (Q = 1: full batch) with
// noise multiplier Sigma.
type srdpGroup struct {
	Q     float64 `json:"q"`
	Sigma float64 `json:"sigma"`
	Count float64 `json:"count"`
}

// srdpRun is the composed mechanism as an SRDPMechanism; its SRDP curve is
// only meaningful at the declared τ (the only τ the accountant asks for).
type srdpRun struct {
	groups []srdpGroup
	shift  float64
	memo   map[[2]float64]float64
}

const srdpMaxExactOrder = 512

func (r *srdpRun) sgm(q, sigma, alpha float64) float64 {
	gauss := alpha / (2 * sigma * sigma)
	if q >= 1 || alpha > srdpMaxExactOrder || math.IsInf(alpha, 1) {
		return gauss
	}
	a := max(int(math.Ceil(alpha)), 2) // RDP is nondecreasing in α: ⌈α⌉ is an upper bound
	v := twLogA(a, q, 1/(sigma*sigma)) / float64(a-1)
	return math.Min(v, gauss)
}

func (r *srdpRun) RDP(alpha float64) float64 {
	if math.IsInf(alpha, 1) {
		return math.Inf(1)
	}
	t := 0.0
	for gi, g := range r.groups {
		a := max(int(math.Ceil(alpha)), 2)
		var v float64
		if g.Q < 1 && alpha <= srdpMaxExactOrder {
			k := [2]float64{float64(gi), float64(a)}
			if m, ok := r.memo[k]; ok {
				v = m
			} else {
				v = r.sgm(g.Q, g.Sigma, float64(a))
				r.memo[k] = v
			}
			v = math.Min(v, alpha/(2*g.Sigma*g.Sigma))
		} else {
			v = alpha / (2 * g.Sigma * g.Sigma)
		}
		t += g.Count * v
	}
	return t
}

func (r *srdpRun) SRDP(alpha, _ float64) float64 {
	if math.IsInf(alpha, 1) {
		return math.Inf(1)
	}
	t := 0.0
	for _, g := range r.groups {
		t += g.Count * alpha * r.shift * r.shift / (2 * g.Sigma * g.Sigma)
	}
	return t
}

// srdpOrders is the order grid the accountant converts on.
var srdpOrders = func() []float64 {
	var o []float64
	for a := 1.1; a < 2; a += 0.1 {
		o = append(o, a)
	}
	for a := 2.0; a <= 12; a += 0.5 {
		o = append(o, a)
	}
	for _, a := range []float64{14, 16, 20, 24, 32, 48, 64, 128, 256} {
		o = append(o, a)
	}
	return o
}()

// SRDPAccountant accounts a training run on non-privately preprocessed data:
// per-step RDP from the (Poisson-subsampled) Gaussian events, per-step SRDP
// α·(Δ∞·min(2, μΔ2))²/(2σ²) (no amplification claimed, joint quasi-convexity;
// docs/srdp.md#training-steps), composed separately and combined ONCE at query
// time by Theorem 2 with optimal c (docs/srdp.md#the-combination-rule), then
// converted with [EpsilonFromRDP]. The RDP leg is add/remove-one for Poisson
// sampling, which Theorem 2 carries over to
// (docs/srdp.md#the-combination-rule), so bounds are reported for AddRemove.
// All events must share one Preprocessed declaration. Without any Preprocessed
// event the account is plain RDP.
type SRDPAccountant struct {
	pre    *Preprocessed // sensitivities only (Event nil)
	groups []srdpGroup

	// Curve's result for the current account, nil after any change: one
	// curve costs tens of milliseconds (Theorem 2's c at every order) and a
	// tracker asks for it several times per step.
	cacheOrders, cacheRDP []float64
}

// NewSRDP returns an empty SRDP accountant.
func NewSRDP() *SRDPAccountant { return &SRDPAccountant{} }

// Name is "srdp".
func (*SRDPAccountant) Name() string { return "srdp" }

// Supports accepts Preprocessed wrapping Gaussian, PoissonSampled{Gaussian},
// NoOp, SelfComposed and Composed of those, all with the same sensitivities.
func (a *SRDPAccountant) Supports(ev Event) error {
	_, _, err := a.walk(ev, 1, nil, a.pre)
	return err
}

func (a *SRDPAccountant) walk(ev Event, count float64, cur, declared *Preprocessed) ([]srdpGroup, *Preprocessed, error) {
	if ev == nil {
		return nil, declared, Unsupported(a.Name(), ev)
	}
	if err := ev.Validate(); err != nil {
		return nil, declared, fmt.Errorf("srdp accountant: %w", err)
	}
	switch e := ev.(type) {
	case Preprocessed:
		if cur != nil {
			return nil, declared, fmt.Errorf("srdp accountant: %w: nested preprocessing (declare a chain as one step with its own sensitivities)", ErrUnsupported)
		}
		p := Preprocessed{Delta2: e.Delta2, DeltaInf: e.DeltaInf, Mu: e.Mu}
		if declared != nil && *declared != p {
			return nil, declared, fmt.Errorf("srdp accountant: %w: preprocessing sensitivities changed from (%v, %v) to (%v, %v)",
				ErrUnsupported, declared.Delta2, declared.DeltaInf, p.Delta2, p.DeltaInf)
		}
		return a.walk(e.Event, count, &p, &p)
	case NoOp:
		return nil, declared, nil
	case SelfComposed:
		return a.walk(e.Event, count*float64(e.Count), cur, declared)
	case Composed:
		var out []srdpGroup
		for _, in := range e.Events {
			g, d, err := a.walk(in, count, cur, declared)
			if err != nil {
				return nil, declared, err
			}
			declared = d
			out = append(out, g...)
		}
		return out, declared, nil
	}
	if cur == nil {
		return nil, declared, fmt.Errorf("srdp accountant: %w: %s is not wrapped in a Preprocessed event", ErrUnsupported, Kind(ev))
	}
	switch e := ev.(type) {
	case Gaussian:
		return []srdpGroup{{Q: 1, Sigma: e.Sigma, Count: count}}, declared, nil
	case PoissonSampled:
		if g, ok := e.Event.(Gaussian); ok {
			if e.Q == 0 {
				return nil, declared, nil
			}
			return []srdpGroup{{Q: e.Q, Sigma: g.Sigma, Count: count}}, declared, nil
		}
	}
	return nil, declared, Unsupported(a.Name(), ev)
}

// Compose adds count runs of ev.
func (a *SRDPAccountant) Compose(ev Event, count int) error {
	if count < 0 {
		return invalidf("srdp accountant: count must be >= 0, got %d", count)
	}
	groups, declared, err := a.walk(ev, float64(count), nil, a.pre)
	if err != nil {
		return err
	}
	a.pre = declared
	for _, g := range groups {
		a.addGroup(g)
	}
	a.cacheOrders, a.cacheRDP = nil, nil
	return nil
}

func (a *SRDPAccountant) addGroup(g srdpGroup) {
	if g.Count == 0 {
		return
	}
	for i := range a.groups {
		if a.groups[i].Q == g.Q && a.groups[i].Sigma == g.Sigma {
			a.groups[i].Count += g.Count
			return
		}
	}
	a.groups = append(a.groups, g)
	sort.Slice(a.groups, func(i, j int) bool {
		if a.groups[i].Q != a.groups[j].Q {
			return a.groups[i].Q < a.groups[j].Q
		}
		return a.groups[i].Sigma < a.groups[j].Sigma
	})
}

// Curve returns the end-to-end RDP curve of A∘π (Theorem 2, optimal c) on
// the accountant's order grid.
func (a *SRDPAccountant) Curve() (orders, rdp []float64) {
	if a.cacheRDP == nil {
		a.cacheOrders, a.cacheRDP = a.curve()
	}
	return slices.Clone(a.cacheOrders), slices.Clone(a.cacheRDP)
}

func (a *SRDPAccountant) curve() (orders, rdp []float64) {
	run := &srdpRun{groups: a.groups, memo: map[[2]float64]float64{}}
	orders = append([]float64(nil), srdpOrders...)
	rdp = make([]float64, len(orders))
	if a.pre == nil {
		for i, o := range orders {
			rdp[i] = run.RDP(o)
		}
		return orders, rdp
	}
	run.shift = a.pre.shift()
	tau := a.pre.Tau()
	for i, o := range orders {
		e, _, _ := SRDPBound(o, run, tau)
		rdp[i] = e
	}
	return orders, rdp
}

// Epsilon converts the end-to-end curve at delta.
func (a *SRDPAccountant) Epsilon(delta float64) (Bound, error) {
	orders, rdp := a.Curve()
	eps, order, err := EpsilonFromRDP(orders, rdp, delta)
	if err != nil {
		return Bound{}, fmt.Errorf("srdp accountant: %w", err)
	}
	return Bound{Accountant: a.Name(), Epsilon: eps, Delta: delta, Order: order, Relation: AddRemove}, nil
}

// Delta converts the end-to-end curve at epsilon.
func (a *SRDPAccountant) Delta(epsilon float64) (float64, error) {
	orders, rdp := a.Curve()
	d, _, err := DeltaFromRDP(orders, rdp, epsilon)
	if err != nil {
		return 0, fmt.Errorf("srdp accountant: %w", err)
	}
	return d, nil
}

type srdpJSON struct {
	Version  int         `json:"version"`
	Delta2   *float64    `json:"delta2,omitempty"`
	DeltaInf *float64    `json:"deltainf,omitempty"`
	Mu       *float64    `json:"mu,omitempty"`
	Groups   []srdpGroup `json:"groups"`
}

// MarshalJSON serialises the declared sensitivities and the composed groups.
func (a *SRDPAccountant) MarshalJSON() ([]byte, error) {
	j := srdpJSON{Version: 1, Groups: a.groups}
	if a.pre != nil {
		j.Delta2, j.DeltaInf, j.Mu = &a.pre.Delta2, &a.pre.DeltaInf, &a.pre.Mu
	}
	return json.Marshal(j)
}

// UnmarshalJSON restores an account written by MarshalJSON.
func (a *SRDPAccountant) UnmarshalJSON(b []byte) error {
	var j srdpJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("srdp accountant state: %w", err)
	}
	if j.Version != 1 {
		return fmt.Errorf("srdp accountant state: unknown version %d", j.Version)
	}
	var pre *Preprocessed
	if j.Delta2 != nil || j.DeltaInf != nil {
		if j.Delta2 == nil || j.DeltaInf == nil || j.Mu == nil {
			return fmt.Errorf("srdp accountant state: incomplete preprocessing declaration")
		}
		p := Preprocessed{Delta2: *j.Delta2, DeltaInf: *j.DeltaInf, Mu: *j.Mu, Event: NoOp{}}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("srdp accountant state: %w", err)
		}
		p.Event = nil
		pre = &p
	}
	for _, g := range j.Groups {
		if !(g.Q > 0 && g.Q <= 1) || !(g.Sigma > 0) || math.IsInf(g.Sigma, 0) || !(g.Count >= 0) {
			return fmt.Errorf("srdp accountant state: invalid group %+v", g)
		}
	}
	a.pre, a.groups = pre, j.Groups
	a.cacheOrders, a.cacheRDP = nil, nil
	return nil
}
