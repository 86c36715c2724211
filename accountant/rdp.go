package accountant

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DefaultOrders returns the default RDP order grid: 1.1..10.9 in steps of
// 0.1, the integers 11..63, and 128, 256, 512, 1024.
func DefaultOrders() []float64 {
	var o []float64
	for i := 11; i <= 109; i++ {
		o = append(o, float64(i)/10)
	}
	for i := 11; i <= 63; i++ {
		o = append(o, float64(i))
	}
	return append(o, 128, 256, 512, 1024)
}

// ErrMixedRelations is wrapped by the error for an event whose neighbouring
// relation differs from the one the RDP account already holds: RDP values for
// add/remove-one and replace-one do not add up to a bound for either.
var ErrMixedRelations = errors.New("events of different neighbouring relations in one account")

// RDP is a Rényi-DP accountant: it keeps the running RDP sum at each order of
// a fixed grid, so composing one step and asking for ε both cost O(#orders).
//
// It supports Gaussian, PoissonSampled{Gaussian} (add/remove-one),
// SampledWithoutReplacement{Gaussian} (replace-one), SelfComposed, Composed
// and NoOp. The inner event of a sampled event may be any Gaussian,
// SelfComposed or Composed nesting of Gaussians (equivalent to one Gaussian of
// noise multiplier (Σ σ_i^−2)^−1/2). A plain Gaussian's σ is taken relative to
// the sensitivity under the account's relation. The account's relation is
// set by WithRelation, or else by the first sampled event; an event needing
// the other relation is refused with ErrMixedRelations.
type RDP struct {
	name     string
	orders   []float64
	series   Series
	relation Relation // 0 until fixed
	rdp      []float64

	// Cache of the last composed event's per-order RDP: training composes
	// the same event every step.
	lastKey string
	lastRel Relation
	lastVec []float64
}

// RDPOption configures NewRDP.
type RDPOption func(*RDP) error

// WithOrders sets the order grid (each order finite and > 1, no duplicates).
func WithOrders(orders []float64) RDPOption {
	return func(a *RDP) error {
		if len(orders) == 0 {
			return invalidf("rdp: empty order grid")
		}
		o := slices.Clone(orders)
		slices.Sort(o)
		for i, x := range o {
			if !(x > 1) || math.IsInf(x, 0) {
				return invalidf("rdp order must be finite and > 1, got %v", x)
			}
			if i > 0 && o[i-1] == x {
				return invalidf("rdp order %v listed twice", x)
			}
		}
		a.orders = o
		return nil
	}
}

// WithSeries selects the fractional-order series (default AbsSeries).
func WithSeries(s Series) RDPOption {
	return func(a *RDP) error {
		if s != AbsSeries && s != SignedSeries {
			return fmt.Errorf("rdp: unknown series %d", s)
		}
		a.series = s
		return nil
	}
}

// WithRelation fixes the account's neighbouring relation up front.
func WithRelation(r Relation) RDPOption {
	return func(a *RDP) error {
		if r != AddRemove && r != ReplaceOne {
			return fmt.Errorf("rdp: unknown relation %d", r)
		}
		a.relation = r
		return nil
	}
}

// WithName sets the accountant's Name (default "rdp"), e.g. to run an
// absolute- and a signed-series account side by side in one Tracker.
func WithName(name string) RDPOption {
	return func(a *RDP) error {
		if name == "" {
			return fmt.Errorf("rdp: empty name")
		}
		a.name = name
		return nil
	}
}

// NewRDP returns an empty RDP account on the default order grid with the
// absolute-value fractional series, unless options say otherwise.
func NewRDP(opts ...RDPOption) (*RDP, error) {
	a := &RDP{name: "rdp", orders: DefaultOrders()}
	for _, o := range opts {
		if err := o(a); err != nil {
			return nil, err
		}
	}
	a.rdp = make([]float64, len(a.orders))
	return a, nil
}

// Name returns the accountant's name ("rdp" unless set by WithName).
func (a *RDP) Name() string { return a.name }

// Orders returns a copy of the order grid.
func (a *RDP) Orders() []float64 { return slices.Clone(a.orders) }

// Curve returns a copy of the accumulated RDP at each order of Orders.
func (a *RDP) Curve() []float64 { return slices.Clone(a.rdp) }

// Relation returns the relation of the account: the one fixed by
// WithRelation or by the first sampled event, else AddRemove.
func (a *RDP) Relation() Relation {
	if a.relation == 0 {
		return AddRemove
	}
	return a.relation
}

// Supports reports whether Compose would accept ev.
func (a *RDP) Supports(ev Event) error {
	_, _, err := a.eventRDP(ev)
	return err
}

// Compose adds count runs of ev to the account; on error it is unchanged.
func (a *RDP) Compose(ev Event, count int) error {
	if count < 0 {
		return invalidf("rdp: compose count must be >= 0, got %d", count)
	}
	vec, rel, err := a.eventRDP(ev)
	if err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	if rel != 0 {
		a.relation = rel
	}
	if count == 1 {
		for i, v := range vec {
			a.rdp[i] += v
		}
		return nil
	}
	c := float64(count)
	for i, v := range vec {
		a.rdp[i] += c * v
	}
	return nil
}

// Epsilon converts the account to ε at delta (EpsilonFromRDP).
func (a *RDP) Epsilon(delta float64) (Bound, error) {
	eps, order, err := EpsilonFromRDP(a.orders, a.rdp, delta)
	if err != nil {
		return Bound{}, fmt.Errorf("%s accountant: %w", a.name, err)
	}
	if eps == 0 {
		// ε = 0 is the least any accountant can report: no order set it
		// (none could do better), so none is reported, and nothing reads
		// the grid's edge into it.
		order = 0
	}
	return Bound{Accountant: a.name, Epsilon: eps, Delta: delta, Order: order, Relation: a.Relation()}, nil
}

// Delta converts the account to δ at epsilon (DeltaFromRDP).
func (a *RDP) Delta(epsilon float64) (float64, error) {
	d, _, err := DeltaFromRDP(a.orders, a.rdp, epsilon)
	if err != nil {
		return 0, fmt.Errorf("%s accountant: %w", a.name, err)
	}
	return d, nil
}

// eventRDP returns the per-order RDP of one run of ev and the relation it
// requires (0 for none). The returned slice must not be modified.
func (a *RDP) eventRDP(ev Event) ([]float64, Relation, error) {
	if ev == nil {
		return nil, 0, invalidf("%s accountant: nil event", a.name)
	}
	if err := ev.Validate(); err != nil {
		return nil, 0, fmt.Errorf("%s accountant: %w", a.name, err)
	}
	key, cacheable := eventKey(ev)
	if cacheable && a.lastVec != nil && key == a.lastKey {
		return a.lastVec, a.lastRel, a.checkRelation(a.lastRel, ev)
	}
	vec := make([]float64, len(a.orders))
	rel, err := a.addEventRDP(vec, ev, 1)
	if err != nil {
		return nil, 0, err
	}
	if err := a.checkRelation(rel, ev); err != nil {
		return nil, 0, err
	}
	if cacheable {
		a.lastKey, a.lastRel, a.lastVec = key, rel, vec
	}
	return vec, rel, nil
}

func (a *RDP) checkRelation(rel Relation, ev Event) error {
	if rel != 0 && a.relation != 0 && rel != a.relation {
		return fmt.Errorf("%s accountant: %w: %s event needs %s but the account is %s",
			a.name, ErrMixedRelations, Kind(ev), rel, a.relation)
	}
	return nil
}

// addEventRDP adds mult × the RDP of ev to dst and returns the relation ev
// requires.
func (a *RDP) addEventRDP(dst []float64, ev Event, mult float64) (Relation, error) {
	switch e := ev.(type) {
	case NoOp:
		return 0, nil
	case Gaussian:
		if mult == 0 { // 0·Inf would be NaN for a tiny σ
			return 0, nil
		}
		for i, o := range a.orders {
			dst[i] += mult * o / (2 * e.Sigma * e.Sigma)
		}
		return 0, nil
	case PoissonSampled:
		sigma, err := gaussianSigma(e.Event)
		if err != nil {
			return 0, fmt.Errorf("%s accountant: poisson_sampled: %w", a.name, err)
		}
		if math.IsInf(sigma, 1) { // the inner event releases nothing
			return AddRemove, nil
		}
		v, err := PoissonGaussianRDP(nil, a.orders, e.Q, sigma, a.series)
		if err != nil {
			return 0, fmt.Errorf("%s accountant: %w", a.name, err)
		}
		addScaled(dst, v, mult)
		return AddRemove, nil
	case SampledWithoutReplacement:
		sigma, err := gaussianSigma(e.Event)
		if err != nil {
			return 0, fmt.Errorf("%s accountant: sampled_without_replacement: %w", a.name, err)
		}
		if math.IsInf(sigma, 1) { // the inner event releases nothing
			return ReplaceOne, nil
		}
		v, err := WORGaussianRDP(nil, a.orders, e.N, e.B, sigma)
		if err != nil {
			return 0, fmt.Errorf("%s accountant: %w", a.name, err)
		}
		addScaled(dst, v, mult)
		return ReplaceOne, nil
	case SelfComposed:
		return a.addEventRDP(dst, e.Event, mult*float64(e.Count))
	case Composed:
		var rel Relation
		for _, sub := range e.Events {
			r, err := a.addEventRDP(dst, sub, mult)
			if err != nil {
				return 0, err
			}
			if r != 0 && rel != 0 && r != rel {
				return 0, fmt.Errorf("%s accountant: %w: composed event mixes %s and %s", a.name, ErrMixedRelations, rel, r)
			}
			if r != 0 {
				rel = r
			}
		}
		return rel, nil
	case MixtureOfGaussians:
		return 0, fmt.Errorf("%w (%s)", Unsupported(a.name, ev), mogRDPReason)
	}
	return 0, Unsupported(a.name, ev)
}

func addScaled(dst, v []float64, mult float64) {
	if mult == 0 {
		return
	}
	for i, x := range v {
		dst[i] += mult * x
	}
}

// gaussianSigma returns the noise multiplier of the single Gaussian that
// ev is equivalent to: Gaussians composed (Composed, SelfComposed) add their
// σ^−2 (Mironov 2017, Prop. 7 is additive in ρ = 1/(2σ²)).
func gaussianSigma(ev Event) (float64, error) {
	var inv float64 // Σ σ^−2
	var walk func(ev Event, mult float64) error
	walk = func(ev Event, mult float64) error {
		switch e := ev.(type) {
		case Gaussian:
			inv += mult / (e.Sigma * e.Sigma)
			return nil
		case SelfComposed:
			return walk(e.Event, mult*float64(e.Count))
		case Composed:
			for _, s := range e.Events {
				if err := walk(s, mult); err != nil {
					return err
				}
			}
			return nil
		}
		return fmt.Errorf("%w: inner event must be Gaussian (or composed Gaussians), got %s", ErrUnsupported, Kind(ev))
	}
	if err := walk(ev, 1); err != nil {
		return 0, err
	}
	if inv == 0 {
		return math.Inf(1), nil
	}
	return 1 / math.Sqrt(inv), nil
}

// eventKey is an exact textual key for ev (floats in round-trip form), and
// false for events this package does not know how to key.
func eventKey(ev Event) (string, bool) {
	var sb strings.Builder
	ok := writeKey(&sb, ev)
	return sb.String(), ok
}

func writeKey(sb *strings.Builder, ev Event) bool {
	f := func(x float64) { sb.WriteString(strconv.FormatFloat(x, 'g', -1, 64)) }
	switch e := ev.(type) {
	case NoOp:
		sb.WriteString("noop")
	case Gaussian:
		sb.WriteString("g(")
		f(e.Sigma)
		sb.WriteString(")")
	case PoissonSampled:
		sb.WriteString("p(")
		f(e.Q)
		sb.WriteString(",")
		if !writeKey(sb, e.Event) {
			return false
		}
		sb.WriteString(")")
	case SampledWithoutReplacement:
		fmt.Fprintf(sb, "w(%d,%d,", e.N, e.B)
		if !writeKey(sb, e.Event) {
			return false
		}
		sb.WriteString(")")
	case SelfComposed:
		fmt.Fprintf(sb, "s(%d,", e.Count)
		if !writeKey(sb, e.Event) {
			return false
		}
		sb.WriteString(")")
	case Composed:
		sb.WriteString("c(")
		for _, s := range e.Events {
			if !writeKey(sb, s) {
				return false
			}
			sb.WriteString(";")
		}
		sb.WriteString(")")
	default:
		return false
	}
	return true
}

// rdpState is the JSON form of an RDP account.
type rdpState struct {
	Name     string      `json:"name"`
	Series   string      `json:"series"`
	Relation string      `json:"relation,omitempty"`
	Orders   []float64   `json:"orders"`
	RDP      []jsonFloat `json:"rdp"`
}

// MarshalJSON writes the account: grid, series, relation and the per-order
// sums, each float in round-trip form so a resumed run continues exactly.
func (a *RDP) MarshalJSON() ([]byte, error) {
	st := rdpState{Name: a.name, Series: a.series.String(), Orders: a.orders, RDP: make([]jsonFloat, len(a.rdp))}
	if a.relation != 0 {
		st.Relation = a.relation.String()
	}
	for i, v := range a.rdp {
		st.RDP[i] = jsonFloat(v)
	}
	return json.Marshal(st)
}

// UnmarshalJSON replaces the account with the one in data.
func (a *RDP) UnmarshalJSON(data []byte) error {
	var st rdpState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("rdp state: %w", err)
	}
	b, err := NewRDP(WithOrders(st.Orders))
	if err != nil {
		return fmt.Errorf("rdp state: %w", err)
	}
	if !slices.Equal(b.orders, st.Orders) {
		return fmt.Errorf("rdp state: orders are not sorted ascending")
	}
	if len(st.RDP) != len(st.Orders) {
		return fmt.Errorf("rdp state: %d orders but %d values", len(st.Orders), len(st.RDP))
	}
	switch st.Series {
	case "abs":
		b.series = AbsSeries
	case "signed":
		b.series = SignedSeries
	default:
		return fmt.Errorf("rdp state: unknown series %q", st.Series)
	}
	switch st.Relation {
	case "":
	case AddRemove.String():
		b.relation = AddRemove
	case ReplaceOne.String():
		b.relation = ReplaceOne
	default:
		return fmt.Errorf("rdp state: unknown relation %q", st.Relation)
	}
	for i, v := range st.RDP {
		if !(v >= 0) {
			return fmt.Errorf("rdp state: value %v at order %v is not >= 0", float64(v), st.Orders[i])
		}
		b.rdp[i] = float64(v)
	}
	if st.Name != "" {
		b.name = st.Name
	}
	*a = *b
	return nil
}

// jsonFloat is a float64 whose JSON form may also be the string "+Inf"
// (an order whose series did not converge).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 1) {
		return []byte(`"+Inf"`), nil
	}
	if math.IsNaN(v) || math.IsInf(v, -1) {
		return nil, fmt.Errorf("cannot serialise %v", v)
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if string(b) == `"+Inf"` {
		*f = jsonFloat(math.Inf(1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

var _ Accountant = (*RDP)(nil)
