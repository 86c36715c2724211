package bandmf

import (
	"math"
	"os"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

// The comparison table of docs/matrix-mechanism.md#mmcc: at equal noise
// multiplier σ, the ε of b-banded BandMF under ordinary Poisson sampling
// (MMCC), under cyclic Poisson sampling over b parts (the banded theorem),
// and DP-SGD (b = 1), for the Fashion-MNIST CNN recipe (p = 256/60000,
// T = 2000, δ = 1e-5). Heavy (minutes): run with MMCC_TABLE=1. It checks
// what holds by construction: DP-SGD's ε is below the banded theorem's
// (the same mechanism at b-fold rate and 1/b of the compositions).
func TestMMCCTable(t *testing.T) {
	if os.Getenv("MMCC_TABLE") == "" {
		t.Skip("minutes of PLD compositions: set MMCC_TABLE=1")
	}
	const (
		steps = 2000
		p     = 256.0 / 60000
		delta = 1e-5
	)
	for _, bands := range []int{2, 4} {
		w, err := PrefixSum(steps)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Optimize(w, bands)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMMCC(s, steps, p, delta*MMCCTailFraction)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("b = %d: c = %.4f, ‖c‖ = %.4f, t = %.3f", bands, s.Coef(), s.MaxColumnNorm(steps), m.Threshold())
		for _, sigma := range []float64{1, 2, 3, 5, 10} {
			a, _ := accountant.NewPLD()
			if err := a.Compose(m.Event(sigma, steps), 1); err != nil {
				t.Fatal(err)
			}
			mm, err := a.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := AmplifiedEvent(s, steps, bands, float64(bands)*p, sigma)
			if err != nil {
				t.Fatal(err)
			}
			ab, _ := accountant.NewPLD()
			if err := ab.Compose(ev, 1); err != nil {
				t.Fatal(err)
			}
			banded, err := ab.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			dp, err := accountant.PLDPoissonEpsilon(p, sigma, steps, delta)
			if err != nil {
				t.Fatal(err)
			}
			if !(dp.Epsilon <= banded.Epsilon) || math.IsInf(mm.Epsilon, 0) {
				t.Errorf("σ %v: DP-SGD %v, banded %v, MMCC %v", sigma, dp.Epsilon, banded.Epsilon, mm.Epsilon)
			}
			t.Logf("| %d | %g | %.4g | %.4g | %.4g | p̃ steady %.4f |", bands, sigma, mm.Epsilon, banded.Epsilon, dp.Epsilon, m.PTilde(sigma, 2*bands)[:bands-1])
		}
	}
}
