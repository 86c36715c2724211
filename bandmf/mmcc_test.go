package bandmf

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

// The posterior bound, by brute force on a tiny 1-D instance: T = 4 steps,
// b = 2. Each trial draws participations x*, signed unit gradients and
// the noise, releases θ = C·(x*∘g) + z, and for every row i and j = i − 1
// computes the exact posterior Pr[x_j = 1 | θ_<i, x_−j = w] for every w
// by enumeration. The share of trials where some w exceeds p̃_ij must stay
// within the tail Φ̄(t) the account charges for the pair; the same
// bound without its tail term (t = 0) must be exceeded far more often, so
// a p̃ missing it fails.
func TestMMCCPosteriorBruteForce(t *testing.T) {
	s, err := NewStrategy([]float64{1, 0.6})
	if err != nil {
		t.Fatal(err)
	}
	const (
		n     = 4
		p     = 0.3
		sigma = 0.8
		beta  = 0.05
	)
	m, err := NewMMCC(s, n, p, beta*3) // three pairs: β each
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(normUpper(m.Threshold())-beta) > 1e-12 {
		t.Fatalf("Φ̄(t) = %v, want %v", normUpper(m.Threshold()), beta)
	}
	loose := m
	loose.t = 0
	C := s.Dense(n)
	sd := sigma * s.MaxColumnNorm(n)
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 20000
	var fail, failLoose [n]int
	for range trials {
		var x, g, theta [n]float64
		for k := range n {
			if rng.Float64() < p {
				x[k] = 1
			}
			g[k] = 1
			if rng.IntN(2) == 0 {
				g[k] = -1
			}
		}
		for r := range n {
			theta[r] = rng.NormFloat64() * sd
			for k := 0; k <= r; k++ {
				theta[r] += C[r*n+k] * x[k] * g[k]
			}
		}
		for i := 1; i < n; i++ {
			j := i - 1
			worst := 0.0
			for w := 0; w < 1<<i; w++ { // the other earlier participations
				if w&(1<<j) != 0 {
					continue
				}
				ll := 0.0 // log P(θ_<i | x_j = 1, w) − log P(θ_<i | x_j = 0, w)
				for r := 0; r < i; r++ {
					mu := 0.0
					for k := 0; k <= r; k++ {
						if w&(1<<k) != 0 {
							mu += C[r*n+k] * g[k]
						}
					}
					d0, d1 := theta[r]-mu, theta[r]-mu-C[r*n+j]*g[j]
					ll += (d0*d0 - d1*d1) / (2 * sd * sd)
				}
				worst = math.Max(worst, 1/(1+(1-p)/p*math.Exp(-ll)))
			}
			if pt := m.PTilde(sigma, i); worst > pt[0] {
				fail[i]++
			}
			if pt := loose.PTilde(sigma, i); worst > pt[0] {
				failLoose[i]++
			}
		}
	}
	slack := 4 * math.Sqrt(beta*(1-beta)/trials)
	for i := 1; i < n; i++ {
		rate, loose := float64(fail[i])/trials, float64(failLoose[i])/trials
		if rate > beta+slack {
			t.Errorf("row %d: posterior above p̃ in %.4f of trials, the tail allows %v", i, rate, beta)
		}
		if loose < 2*beta {
			t.Errorf("row %d: the bound without its tail term fails in only %.4f of trials: the test cannot tell", i, loose)
		}
		t.Logf("row %d: p̃ exceeded in %.4f (allowed %v); without the tail term %.4f", i, rate, beta, loose)
	}
}

// With one band MMCC is DP-SGD: every row is the mixture {0: 1−p, 1: p},
// the Poisson-subsampled Gaussian, and no pair can fail; its ε matches the
// subsampled Gaussian's own PLD within the PLD's band.
func TestMMCCOneBandIsDPSGD(t *testing.T) {
	for _, tc := range []struct {
		p, sigma float64
		steps    int
	}{{0.01, 1, 200}, {0.1, 2, 50}} {
		m, err := NewMMCC(Identity(), tc.steps, tc.p, 1e-7)
		if err != nil {
			t.Fatal(err)
		}
		if m.Tail() != 0 {
			t.Errorf("one band spends %v on failures", m.Tail())
		}
		a, _ := accountant.NewPLD()
		if err := a.Compose(m.Event(tc.sigma, tc.steps), 1); err != nil {
			t.Fatal(err)
		}
		got, err := a.Epsilon(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		want, err := accountant.PLDPoissonEpsilon(tc.p, tc.sigma, tc.steps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Epsilon-want.Epsilon) > 1e-3*want.Epsilon {
			t.Errorf("p %v σ %v: MMCC ε %v, DP-SGD %v", tc.p, tc.sigma, got.Epsilon, want.Epsilon)
		}
	}
}

// The rows: p̃ at the diagonal is p, every p̃ lies in [p, 1], rows from
// 2(b−1) on are identical (Toeplitz), and the failure probabilities over
// a run sum to the budget.
func TestMMCCRows(t *testing.T) {
	s, _ := NewStrategy([]float64{1, 0.5, 0.3})
	m, err := NewMMCC(s, 10, 0.05, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Tail(); math.Abs(got-1e-6) > 1e-18 {
		t.Errorf("tail %v, want the budget 1e-6", got)
	}
	for i := range 10 {
		pt := m.PTilde(2, i)
		if len(pt) != min(i+1, 3) || pt[len(pt)-1] != 0.05 {
			t.Errorf("row %d: p̃ %v", i, pt)
		}
		for _, v := range pt {
			if !(v >= 0.05 && v <= 1) {
				t.Errorf("row %d: p̃ %v outside [p, 1]", i, pt)
			}
		}
	}
	a, b := m.PTilde(2, 4), m.PTilde(2, 9)
	for k := range a {
		if a[k] != b[k] {
			t.Errorf("rows 4 and 9 differ: %v vs %v", a, b)
		}
	}
	// Rows before the steady one see fewer earlier columns: smaller p̃.
	if r1 := m.PTilde(2, 1); !(r1[0] < a[1]) {
		t.Errorf("row 1 p̃ %v not below the steady row's %v", r1, a)
	}
}

func TestMMCCRefusals(t *testing.T) {
	neg, _ := NewStrategy([]float64{1, -0.2})
	wc := make([]float64, MMCCMaxBands+1)
	wc[0] = 1
	wide, _ := NewStrategy(wc)
	for _, tc := range []struct {
		s     Strategy
		p     float64
		tail  float64
		words string
	}{
		{neg, 0.1, 1e-6, "negative"},
		{wide, 0.1, 1e-6, "bands"},
		{Identity(), 0, 1e-6, "rate"},
		{Identity(), 0.1, 0, "failure budget"},
	} {
		if _, err := NewMMCC(tc.s, 10, tc.p, tc.tail); err == nil || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%v p %v tail %v: %v, want a refusal naming %q", tc.s.coef, tc.p, tc.tail, err, tc.words)
		}
	}
}
