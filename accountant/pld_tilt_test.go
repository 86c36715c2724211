package accountant

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// TestCyclicPowerBoundCoversRoundoff checks the error term added to every
// mass of the certified composition against the same composition done
// exactly enough: direct convolutions in 256-bit floats of the very float64
// inputs the FFT composes, on grids small enough for that (no wrap-around).
// The measured float64 error must be below the bound at every entry.
func TestCyclicPowerBoundCoversRoundoff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		q, s   float64
		h      float64
		lambda float64
		k1, k2 int // counts of the two directions composed together
	}{
		{"untilted", 0.1, 1, 0.2, 0, 12, 0},
		{"tilted", 0.1, 1, 0.2, 2, 12, 0},
		{"two terms", 0.2, 0.8, 0.25, 1, 6, 5},
		{"q=1", 1, 2, 0.05, 3, 9, 0},
	} {
		var terms []tiltTerm
		for i, k := range []int{tc.k1, tc.k2} {
			if k == 0 {
				continue
			}
			p, err := connectTheDots(gaussianDirection{q: tc.q, sigma: tc.s, remove: i == 0}, tc.h)
			if err != nil {
				t.Fatal(err)
			}
			tp, _ := tilted(p, tc.lambda)
			terms = append(terms, tiltTerm{tp, k})
		}
		n := 1
		for _, tt := range terms {
			n += tt.k * (len(tt.p.p) - 1)
		}
		size := powerFFTSize(n)
		seq, ebin, err := cyclicPowerBound(terms, size)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		exact := exactComposition(terms)
		worst := 0.0
		for i, x := range exact {
			worst = max(worst, math.Abs(seq[i]-x))
		}
		for i := len(exact); i < size; i++ {
			worst = max(worst, math.Abs(seq[i]))
		}
		t.Logf("%s: %d points, FFT size %d: measured error %.3g, bound %.3g (%.0f×)", tc.name, n, size, worst, ebin, ebin/worst)
		if !(worst <= ebin) {
			t.Errorf("%s: measured error %.3g above the bound %.3g", tc.name, worst, ebin)
		}
		if worst == 0 {
			t.Errorf("%s: no rounding measured: the comparison is vacuous", tc.name)
		}
	}
}

// exactComposition is the linear composition of the terms' masses by
// direct convolution in 256-bit floats, rounded to float64 at the end.
func exactComposition(terms []tiltTerm) []float64 {
	acc := []*big.Float{new(big.Float).SetPrec(256).SetInt64(1)}
	for _, tt := range terms {
		for range tt.k {
			next := make([]*big.Float, len(acc)+len(tt.p.p)-1)
			for i := range next {
				next[i] = new(big.Float).SetPrec(256)
			}
			prod := new(big.Float).SetPrec(256)
			for i, a := range acc {
				for j, v := range tt.p.p {
					prod.Mul(a, new(big.Float).SetPrec(256).SetFloat64(v))
					next[i+j].Add(next[i+j], prod)
				}
			}
			acc = next
		}
	}
	out := make([]float64, len(acc))
	for i, v := range acc {
		out[i], _ = v.Float64()
	}
	return out
}

// TestCertifiedCompositionNeverBelowExact composes small PLDs by the
// certified path at several tilts and checks δ(ε) read from it against the
// exact composition of the same discretised steps (256-bit direct
// convolution): never below, and close where the tilt aims.
func TestCertifiedCompositionNeverBelowExact(t *testing.T) {
	p, err := connectTheDots(gaussianDirection{q: 0.2, sigma: 0.8, remove: true}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	const k = 20
	ex := exactComposition([]tiltTerm{{p, k}})
	exact := &pmf{h: p.h, lo: k * p.lo, p: ex, inf: -math.Expm1(k * math.Log1p(-p.inf))}
	for _, target := range []float64{0, 2, 5, 9} {
		c, err := certifiedComposition([]tiltTerm{{p, k}}, target, 1e-40)
		if err != nil {
			t.Fatal(err)
		}
		for _, eps := range []float64{0, 1, 2, 4, 5, 7, 9, 12} {
			got, want := c.deltaAt(eps), exact.deltaAt(eps)
			if got < want {
				t.Errorf("target %g: δ(%g) = %.6g below the exact %.6g", target, eps, got, want)
			}
			if math.Abs(eps-target) <= 1 && want > 1e-300 && got > want*(1+1e-6) {
				t.Errorf("target %g: δ(%g) = %.10g, exact %.10g: not tight where the tilt aims", target, eps, got, want)
			}
		}
	}
}

// TestPLDUncertifiedQuery: a δ below what the PLD can certify is an error
// wrapping ErrPLDUncertified, never a number.
func TestPLDUncertifiedQuery(t *testing.T) {
	b, err := PLDPoissonEpsilon(0.5, 0.5, 10, 1e-60, WithPLDInterval(1e-2))
	if !errors.Is(err, ErrPLDUncertified) {
		t.Fatalf("δ = 1e-60: got %+v, %v; want ErrPLDUncertified", b, err)
	}
}

// TestTrackerUncertifiedPLDFallsBackToRDP: where the PLD cannot certify a
// query, the tracker's best bound is RDP's and the PLD's entry carries the
// reason; where it can, the PLD's (tighter) bound is the best.
func TestTrackerUncertifiedPLDFallsBackToRDP(t *testing.T) {
	rdp, err := NewRDP()
	if err != nil {
		t.Fatal(err)
	}
	pld, err := NewPLD(WithPLDInterval(1e-2))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTracker(rdp, pld)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := tr.Step(PoissonSampled{Q: 0.5, Event: Gaussian{Sigma: 0.5}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		delta float64
		best  string
	}{{1e-60, "rdp"}, {1e-5, "pld"}} {
		b, err := tr.TightestFor(tc.delta, AddRemove)
		if err != nil || b.Accountant != tc.best {
			t.Errorf("δ = %g: best %+v (%v), want %s's", tc.delta, b, err, tc.best)
		}
		for _, tb := range tr.Bounds(tc.delta) {
			if tb.Name == "pld" && (tc.best == "rdp") != errors.Is(tb.Err, ErrPLDUncertified) {
				t.Errorf("δ = %g: pld entry %+v", tc.delta, tb)
			}
		}
	}
}
