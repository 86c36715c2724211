package accountant

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

func TestMixtureOfGaussiansValidate(t *testing.T) {
	ok := MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0, 1, 2}, Probs: []float64{0.81, 0.18, 0.01}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid mixture: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*MixtureOfGaussians)
		want string
	}{
		{"sigma 0", func(e *MixtureOfGaussians) { e.StandardDeviation = 0 }, "standard deviation"},
		{"sigma inf", func(e *MixtureOfGaussians) { e.StandardDeviation = math.Inf(1) }, "standard deviation"},
		{"lengths", func(e *MixtureOfGaussians) { e.Probs = e.Probs[:2] }, "one probability per sensitivity"},
		{"empty", func(e *MixtureOfGaussians) { e.Sensitivities, e.Probs = nil, nil }, "one probability per sensitivity"},
		{"negative sensitivity", func(e *MixtureOfGaussians) { e.Sensitivities = []float64{0, -1, 2} }, "sensitivity 1"},
		{"nan sensitivity", func(e *MixtureOfGaussians) { e.Sensitivities = []float64{0, math.NaN(), 2} }, "sensitivity 1"},
		{"probability above 1", func(e *MixtureOfGaussians) { e.Probs = []float64{-0.5, 1.5, 0} }, "probability 0"},
		{"sum", func(e *MixtureOfGaussians) { e.Probs = []float64{0.8, 0.18, 0.01} }, "sum to 1"},
	} {
		e := ok
		e.Sensitivities = append([]float64(nil), ok.Sensitivities...)
		e.Probs = append([]float64(nil), ok.Probs...)
		tc.edit(&e)
		err := e.Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate = %v, want ErrInvalid naming %q", tc.name, err, tc.want)
		}
		if _, err := NewPLD(); err == nil {
			a, _ := NewPLD()
			if a.Compose(e, 1) == nil {
				t.Errorf("%s: the PLD accountant composed an invalid mixture", tc.name)
			}
		}
	}
}

// The canonical form: zero and equal sensitivities merged, a sum short of 1
// charged to the largest sensitivity, and the key read back as it was.
func TestMogMixCanonical(t *testing.T) {
	m := newMogMix(MixtureOfGaussians{StandardDeviation: 2,
		Sensitivities: []float64{2, 0, 1, 2, 0}, Probs: []float64{0.1, 0.3, 0.2, 0.1, 0.3 - 1e-10}})
	if m.p0 != 0.6-1e-10 || len(m.c) != 2 || m.c[0] != 1 || m.c[1] != 2 || m.p[0] != 0.2 {
		t.Fatalf("canonical form %+v", m)
	}
	if s := m.p0 + m.p[0] + m.p[1]; math.Abs(s-1) > 1e-15 || m.p[1] < 0.2 {
		t.Errorf("probabilities %v sum to %v; the shortfall belongs to the largest sensitivity", m.p, s)
	}
	back, err := parseMogMix(2, m.key())
	if err != nil || back.key() != m.key() || back.p0 != m.p0 {
		t.Errorf("key %q read back as %+v, %v", m.key(), back, err)
	}
	for _, bad := range []string{"", "1", "1:x", "-1:1", "0:1"} {
		if _, err := parseMogMix(1, bad); err == nil {
			t.Errorf("parseMogMix(%q) accepted", bad)
		}
	}
}

// lossInverse inverts the loss in both directions, to a few ulps of the
// loss, across its whole range.
func TestMogLossInverse(t *testing.T) {
	for _, ev := range []MixtureOfGaussians{
		{StandardDeviation: 1, Sensitivities: []float64{0, 1, 2}, Probs: []float64{0.81, 0.18, 0.01}},
		{StandardDeviation: 0.3, Sensitivities: []float64{0.5, 1.5}, Probs: []float64{0.5, 0.5}},
		{StandardDeviation: 5, Sensitivities: []float64{0, 1}, Probs: []float64{0.999, 0.001}},
	} {
		for _, remove := range []bool{true, false} {
			d := newMogMix(ev).direction(remove)
			lo, hi := d.lossRange()
			for i := 1; i < 200; i++ {
				l := lo + (hi-lo)*float64(i)/200
				x := d.lossInverse(l)
				if got := d.loss(x); math.Abs(got-l) > 1e-12*max(1, math.Abs(l)) {
					t.Errorf("%+v remove=%v: L(L⁻¹(%v)) = %v", ev, remove, l, got)
				}
			}
		}
	}
}

// With sensitivities {0, 1} the mixture is the Poisson-subsampled Gaussian,
// whose PLD comes from a separate closed form (gaussianDirection): the two
// accounts agree.
func TestMixtureIsSubsampledGaussian(t *testing.T) {
	for _, tc := range []struct {
		q, sigma, scale float64
		steps           int
		delta           float64
	}{
		{0.01, 1, 1, 1000, 1e-5},
		{0.1, 2, 3, 50, 1e-6},
		{1, 1.5, 0.5, 10, 1e-5},
		{0.5, 0.8, 1, 1, 1e-3},
	} {
		ref, err := PLDPoissonEpsilon(tc.q, tc.sigma, tc.steps, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := NewPLD()
		ev := MixtureOfGaussians{StandardDeviation: tc.sigma * tc.scale,
			Sensitivities: []float64{0, tc.scale}, Probs: []float64{1 - tc.q, tc.q}}
		if err := a.Compose(SelfComposed{Event: ev, Count: tc.steps}, 1); err != nil {
			t.Fatal(err)
		}
		got, err := a.Epsilon(tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		if rel := got.Epsilon/ref.Epsilon - 1; math.Abs(rel) > 1e-4 {
			t.Errorf("q=%v σ=%v ×%v T=%d: mixture ε %v, subsampled Gaussian ε %v (%+.2g)", tc.q, tc.sigma, tc.scale, tc.steps, got.Epsilon, ref.Epsilon, rel)
		}
	}
}

// mogHockeyStick is δ(ε) of one mixture step in one direction, exactly and
// independently of the PLD code: the density ratio is monotone, so
// (p − e^ε q)₊ is positive on a half-line x < x*, found by bisection on the
// densities themselves, and δ = P(x < x*) − e^ε Q(x < x*) from Gaussian CDFs.
func mogHockeyStick(ev MixtureOfGaussians, remove bool, eps float64) float64 {
	s := ev.StandardDeviation
	cdf := func(x, mu float64) float64 { return 0.5 * math.Erfc(-(x-mu)/(s*math.Sqrt2)) }
	logPhi := func(x, mu float64) float64 { z := (x - mu) / s; return -0.5 * z * z }
	logMix := func(x, sign float64) float64 {
		top, sum := math.Inf(-1), 0.0
		for i, c := range ev.Sensitivities {
			if ev.Probs[i] > 0 {
				top = max(top, math.Log(ev.Probs[i])+logPhi(x, sign*c))
			}
		}
		for i, c := range ev.Sensitivities {
			if ev.Probs[i] > 0 {
				sum += math.Exp(math.Log(ev.Probs[i]) + logPhi(x, sign*c) - top)
			}
		}
		return top + math.Log(sum)
	}
	// logRatio is log p/q, decreasing in x in both directions.
	logRatio := func(x float64) float64 {
		if remove {
			return logMix(x, -1) - logPhi(x, 0)
		}
		return logPhi(x, 0) - logMix(x, 1)
	}
	lo, hi := -1e3*s-100, 1e3*s+100
	if logRatio(lo) <= eps {
		return 0
	}
	for range 200 {
		mid := (lo + hi) / 2
		if logRatio(mid) > eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := hi
	mixCDF := func(sign float64) float64 {
		v := 0.0
		for i, c := range ev.Sensitivities {
			v += ev.Probs[i] * cdf(x, sign*c)
		}
		return v
	}
	if remove {
		return mixCDF(-1) - math.Exp(eps)*cdf(x, 0)
	}
	return cdf(x, 0) - math.Exp(eps)*mixCDF(1)
}

// One step's δ(ε) is at least the exact hockey-stick divergence (the
// discretisation is pessimistic) and close to it.
func TestMixtureDeltaAgainstQuadrature(t *testing.T) {
	for _, ev := range []MixtureOfGaussians{
		{StandardDeviation: 1, Sensitivities: []float64{0, 1, 2}, Probs: []float64{0.81, 0.18, 0.01}},
		{StandardDeviation: 1.5, Sensitivities: []float64{0.5, 1, 1.5}, Probs: []float64{0.2, 0.5, 0.3}},
		{StandardDeviation: 0.7, Sensitivities: []float64{0, 1, 2, 3}, Probs: []float64{0.7, 0.2, 0.07, 0.03}},
	} {
		a, _ := NewPLD()
		if err := a.Compose(ev, 1); err != nil {
			t.Fatal(err)
		}
		for _, eps := range []float64{0, 0.5, 2, 4} {
			want := max(mogHockeyStick(ev, true, eps), mogHockeyStick(ev, false, eps))
			got, err := a.Delta(eps)
			if err != nil {
				t.Fatal(err)
			}
			if got < want*(1-1e-9)-1e-15 || got > want*1.002+1e-14 {
				t.Errorf("%+v: δ(%v) = %.10g, quadrature %.10g", ev, eps, got, want)
			}
		}
	}
}

func TestMixtureJSONRoundTrip(t *testing.T) {
	a, _ := NewPLD()
	ev := MixtureOfGaussians{StandardDeviation: 1.3, Sensitivities: []float64{0, 1, 2.5}, Probs: []float64{0.9, 0.07, 0.03}}
	if err := a.Compose(Composed{Events: []Event{SelfComposed{Event: ev, Count: 20}, PoissonSampled{Q: 0.1, Event: Gaussian{Sigma: 2}}}}, 3); err != nil {
		t.Fatal(err)
	}
	want, err := a.Epsilon(1e-6)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back PLDAccountant
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if got, err := back.Epsilon(1e-6); err != nil || got.Epsilon != want.Epsilon {
		t.Errorf("resumed ε %v (%v), want %v", got.Epsilon, err, want.Epsilon)
	}
	bad := strings.Replace(string(b), `"mix":"0:0.9`, `"mix":"0:x`, 1)
	if bad == string(b) {
		t.Fatalf("saved account %s has no mixture", b)
	}
	if err := json.Unmarshal([]byte(bad), &back); err == nil {
		t.Errorf("a corrupt mixture was read back")
	}
}

// Zero sensitivities only: nothing released, nothing charged.
func TestMixtureAllZeroIsNoOp(t *testing.T) {
	a, _ := NewPLD()
	if err := a.Compose(MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{0}, Probs: []float64{1}}, 5); err != nil {
		t.Fatal(err)
	}
	if b, err := a.Epsilon(1e-5); err != nil || b.Epsilon != 0 {
		t.Errorf("ε %v, %v", b.Epsilon, err)
	}
}

func TestRDPRefusesMixture(t *testing.T) {
	a, _ := NewRDP()
	err := a.Compose(MixtureOfGaussians{StandardDeviation: 1, Sensitivities: []float64{1}, Probs: []float64{1}}, 1)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "remove direction") {
		t.Errorf("RDP Compose(mixture) = %v, want ErrUnsupported with the reason", err)
	}
}

// Raising a sensitivity, or moving probability to a larger one, never
// lowers ε (the stochastic-dominance lemma of docs/accountants.md).
func TestMixtureMonotone(t *testing.T) {
	eps := func(c, p []float64) float64 {
		a, _ := NewPLD()
		if err := a.Compose(MixtureOfGaussians{StandardDeviation: 1, Sensitivities: c, Probs: p}, 10); err != nil {
			t.Fatal(err)
		}
		b, err := a.Epsilon(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		return b.Epsilon
	}
	base := eps([]float64{0, 1, 2}, []float64{0.8, 0.15, 0.05})
	for _, tc := range []struct {
		name string
		c, p []float64
	}{
		{"larger sensitivity", []float64{0, 1.2, 2}, []float64{0.8, 0.15, 0.05}},
		{"mass moved up", []float64{0, 1, 2}, []float64{0.8, 0.1, 0.1}},
		{"zero part raised", []float64{0.3, 1, 2}, []float64{0.8, 0.15, 0.05}},
	} {
		if got := eps(tc.c, tc.p); got < base {
			t.Errorf("%s: ε %v below the dominated mixture's %v", tc.name, got, base)
		}
	}
}

// dpAccountingMog is a line of testdata/dp_accounting_mog.json.
type dpAccountingMog struct {
	Parts []struct {
		SD            float64   `json:"sd"`
		Sensitivities []float64 `json:"sensitivities"`
		Probs         []float64 `json:"probs"`
		Count         int       `json:"count"`
	} `json:"parts"`
	Delta float64 `json:"delta"`
	PLD   float64 `json:"pld"`
}

// TestMixtureOfGaussiansMatchesDPAccounting composes the points of
// testdata/dp_accounting_mog.py, whose output (dp_accounting 0.6.0, its own
// MixtureOfGaussiansDpEvent) is committed beside it: our certified ε is at
// least dp_accounting's pessimistic one less 0.1% (both discretise on grids
// of 1e-4; ours also bounds the FFT's rounding) and at most 0.5% above it.
func TestMixtureOfGaussiansMatchesDPAccounting(t *testing.T) {
	f, err := os.Open("testdata/dp_accounting_mog.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var p dpAccountingMog
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		var evs []Event
		for _, pt := range p.Parts {
			evs = append(evs, SelfComposed{Event: MixtureOfGaussians{StandardDeviation: pt.SD,
				Sensitivities: pt.Sensitivities, Probs: pt.Probs}, Count: pt.Count})
		}
		a, _ := NewPLD()
		if err := a.Compose(Composed{Events: evs}, 1); err != nil {
			t.Fatalf("point %d: %v", n, err)
		}
		b, err := a.Epsilon(p.Delta)
		if err != nil {
			t.Fatalf("point %d: %v", n, err)
		}
		rel := b.Epsilon/p.PLD - 1
		t.Logf("point %d %+v δ=%g: ε = %.8g, dp_accounting %.8g (%+.2e relative)", n, p.Parts, p.Delta, b.Epsilon, p.PLD, rel)
		if rel < -1e-3 || rel > 5e-3 {
			t.Errorf("point %d: ε = %.6g, %+.3f%% from dp_accounting's %.6g", n, b.Epsilon, 100*rel, p.PLD)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("%d points, want at least 10", n)
	}
}

// FuzzParseMogMix: a saved account's mixture text never panics the reader;
// what it accepts is a valid mixture with a positive sensitivity, whose
// canonical text reads back to itself.
func FuzzParseMogMix(f *testing.F) {
	for _, s := range []string{"0:0.9,1:0.1", "1:1", "0:0.81,1:0.18,2:0.01", "1:0.5,1:0.5", "0:1", "1:x", "", ",", "1e308:1", "NaN:1", "1:-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMogMix(1, s)
		if err != nil {
			return
		}
		if len(m.c) == 0 || m.c[0] <= 0 {
			t.Fatalf("%q: accepted without a positive sensitivity: %+v", s, m)
		}
		back, err := parseMogMix(1, m.key())
		if err != nil || back.key() != m.key() {
			t.Fatalf("%q: canonical %q read back as %q (%v)", s, m.key(), back.key(), err)
		}
	})
}
