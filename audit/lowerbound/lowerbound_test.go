package lowerbound

import (
	"math"
	"testing"
)

// bruteBinom is P[lo ≤ Bin(r, q) < hi] by direct float64 summation of
// binomial coefficients (fine for r ≤ 60).
func bruteBinom(r, lo, hi int, q float64) float64 {
	s := 0.0
	for k := max(lo, 0); k < min(hi, r+1); k++ {
		c := 1.0
		for i := 0; i < k; i++ {
			c = c * float64(r-i) / float64(i+1)
		}
		s += c * math.Pow(q, float64(k)) * math.Pow(1-q, float64(r-k))
	}
	return s
}

// The p-value against a direct evaluation of the paper's formula.
func TestOneRunPValueBruteForce(t *testing.T) {
	for _, tc := range []struct {
		eps, delta float64
		m, r, v    int
	}{{0, 0, 100, 40, 30}, {1, 1e-5, 200, 50, 40}, {2, 1e-3, 60, 60, 58}, {0.5, 0.01, 30, 20, 15}, {3, 1e-5, 1000, 40, 40}} {
		q := math.Exp(tc.eps) / (1 + math.Exp(tc.eps))
		beta := bruteBinom(tc.r, tc.v, tc.r+1, q)
		alpha := 0.0
		for i := 1; i <= tc.v; i++ {
			alpha = math.Max(alpha, bruteBinom(tc.r, tc.v-i, tc.v, q)/float64(i))
		}
		want := math.Min(1, beta+2*float64(tc.m)*tc.delta*alpha)
		if got := OneRunPValue(tc.eps, tc.delta, tc.m, tc.r, tc.v); math.Abs(got-want) > 1e-9*math.Max(want, 1e-300) {
			t.Errorf("%+v: p = %.12g, brute force %.12g", tc, got, want)
		}
	}
}

// With every guess correct and δ = 0 the bound has a closed form:
// q_ε^r = p, so ε = log(q/(1−q)) with q = p^(1/r). With δ > 0 the bound is
// smaller; with more wrong guesses too.
func TestOneRunEpsilonClosedForm(t *testing.T) {
	for _, r := range []int{10, 100, 1000} {
		q := math.Pow(0.05, 1/float64(r))
		want := math.Log(q / (1 - q))
		got, err := OneRunEpsilon(1000, r, r, 0, 0.95)
		if err != nil || math.Abs(got-want) > 1e-6 {
			t.Errorf("r = %d all correct: ε = %.9f (%v), closed form %.9f", r, got, err, want)
		}
		withDelta, _ := OneRunEpsilon(1000, r, r, 1e-5, 0.95)
		if !(withDelta < got) {
			t.Errorf("r = %d: δ = 1e-5 gives %v, not below δ = 0's %v", r, withDelta, got)
		}
	}
	// Chance-level guessing proves nothing.
	if e, _ := OneRunEpsilon(1000, 200, 100, 1e-5, 0.95); e != 0 {
		t.Errorf("half correct: ε = %v, want 0", e)
	}
	if _, err := OneRunEpsilon(10, 20, 5, 0, 0.95); err == nil {
		t.Error("more guesses than canaries accepted")
	}
}

// Scores: perfect separation at guess count k reproduces
// OneRunEpsilon(m, 2k, 2k); trying several k costs confidence.
func TestAuditScores(t *testing.T) {
	m := 400
	scores := make([]float64, m)
	in := make([]bool, m)
	for i := range scores {
		in[i] = i%2 == 0
		scores[i] = float64(i % 2) // "out" canaries score 1, "in" ones above 2: perfect separation
		if in[i] {
			scores[i] = 2 + float64(i)/1e3
		}
	}
	res, err := Scores(scores, in, []int{50}, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := OneRunEpsilon(m, 100, 100, 1e-5, 0.95)
	if res.Correct != 100 || res.Guesses != 100 || res.EpsilonLower != want {
		t.Fatalf("%+v, want 100/100 correct and ε %v", res, want)
	}
	multi, _ := Scores(scores, in, []int{10, 50, 100}, 1e-5, 0.95)
	bonf, _ := OneRunEpsilon(m, 200, 200, 1e-5, 1-0.05/3)
	if multi.Thresholds != 3 || math.Abs(multi.EpsilonLower-bonf) > 1e-12 {
		t.Errorf("three thresholds: %+v, want ε %v at confidence 1−0.05/3", multi, bonf)
	}
	// Scores that carry no information about the bits prove nothing.
	for i := range scores {
		scores[i] = float64((i * 7919) % m)
	}
	if res, _ := Scores(scores, in, []int{50}, 1e-5, 0.95); res.EpsilonLower > 0.5 {
		t.Errorf("uninformative scores gave ε_lower %v", res.EpsilonLower)
	}
}

// Clopper–Pearson against closed forms: k = 0 gives hi = 1 − (α/2)^(1/n),
// k = n gives lo = (α/2)^(1/n); the many-run bound follows.
func TestClopperPearsonAndManyRun(t *testing.T) {
	lo, hi, err := ClopperPearson(0, 50, 0.05)
	if err != nil || lo != 0 || math.Abs(hi-(1-math.Pow(0.025, 1.0/50))) > 1e-9 {
		t.Errorf("k = 0: [%v, %v] (%v)", lo, hi, err)
	}
	lo, hi, _ = ClopperPearson(50, 50, 0.05)
	if hi != 1 || math.Abs(lo-math.Pow(0.025, 1.0/50)) > 1e-9 {
		t.Errorf("k = n: [%v, %v]", lo, hi)
	}
	// No false positives or negatives in 100 + 100 runs.
	eps, err := ManyRunEpsilon(0, 100, 0, 100, 0, 0.95)
	ub := 1 - math.Pow(0.025, 1.0/100)
	if want := math.Log((1 - ub) / ub); err != nil || math.Abs(eps-want) > 1e-9 {
		t.Errorf("perfect many-run audit: ε %v (%v), want %v", eps, err, want)
	}
	if eps, _ := ManyRunEpsilon(50, 100, 50, 100, 0, 0.95); eps != 0 {
		t.Errorf("coin-flip attack: ε %v, want 0", eps)
	}
}
