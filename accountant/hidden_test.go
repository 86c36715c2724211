package accountant

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func papersClose(got, want, rel float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// fig1 is paper 002 Fig. 1/3: D=3, C=2, η=0.01, σ=1, p=0.001 (r = 3.04).
func fig1(T int) HiddenState {
	return HiddenState{Segments: []HiddenSegment{{Steps: T, P: 0.001, Diameter: 3, LR: 0.01, Clip: 2, Sigma: 1}}}
}

// TV1 of docs/hidden-state.md#test-vectors.
func TestThetaTV1(t *testing.T) {
	tests := []struct{ eps, r, want float64 }{
		{0, 1, 0.38292492254802624},
		{0, 3.04, 0.8714890243621283},
		{1, 1, 0.1269367375066439},
		{1, 1.1, 0.16331319370536698},
		{1, 1.2, 0.20148452891879978},
		{1, 1.5, 0.32039191421038515},
		{1, 2, 0.5098616600546702},
		{3, 3.04, 0.5807017594422201},
		{5, 1, 5.793721691919479e-07},
		{6, 2, 0.009973041067026992},
		{0.5, 0.2, 0.0005125360831583397},
		{3, 0.04, 0},
	}
	for _, tc := range tests {
		if got := Theta(tc.eps, tc.r); !papersClose(got, tc.want, 1e-9) {
			t.Errorf("Theta(%v,%v) = %.17g, want %.17g", tc.eps, tc.r, got, tc.want)
		}
	}
	// Limits and the ε = 0 Dobrushin identity θ_0(r) = 2Φ(r/2) − 1.
	if Theta(1, 0) != 0 || Theta(1, math.Inf(1)) != 1 {
		t.Errorf("Theta limits wrong")
	}
	for _, r := range []float64{0.3, 2.5, 7} {
		want := math.Erf(r / 2 / math.Sqrt2)
		if got := Theta(0, r); !papersClose(got, want, 1e-12) {
			t.Errorf("Theta(0,%v)=%v want %v", r, got, want)
		}
	}
	// Large ε must not overflow to NaN.
	if v := Theta(800, 5); math.IsNaN(v) || v < 0 || v > 1 {
		t.Errorf("Theta(800,5) = %v", v)
	}
}

// TV2: δ_T(3) at Fig. 1-left parameters.
func TestHiddenDeltaTV2(t *testing.T) {
	tests := []struct {
		T    int
		want float64
	}{
		{1, 5.807017594422201e-04},
		{2, 9.175790783280909e-04},
		{3, 1.1130087048695006e-03},
		{5, 1.2921515193327709e-03},
		{10, 1.3770513048573527e-03},
		{20, 1.3829960935493027e-03},
		{100, 1.383021868725903e-03},
		{1000, 1.383021868725903e-03},
		{10000, 1.383021868725903e-03},
		{100000, 1.383021868725903e-03},
	}
	for _, tc := range tests {
		h := fig1(tc.T)
		if got := h.Delta(3); !papersClose(got, tc.want, 1e-9) {
			t.Errorf("T=%d: delta = %.17g, want %.17g", tc.T, got, tc.want)
		}
		// Step-by-step recursion (Lemma 1) as an independent check.
		th := Theta(3, 3.04)
		d := 0.0
		for i := 0; i < min(tc.T, 2000); i++ {
			d = 0.999*th*d + 0.001*th
		}
		if !papersClose(d, tc.want, 1e-9) {
			t.Errorf("T=%d: recursion %v", tc.T, d)
		}
	}
	if got := HiddenStateDeltaLimit(3, 0.001, 3.04); !papersClose(got, 1.383021868725903e-03, 1e-9) {
		t.Errorf("delta limit = %v", got)
	}
}

// TV3: ε_T(1e-3), ε* (eq. 22) = 3.6474545145563932 and eq. 23 = 4.618894009391167.
func TestHiddenEpsilonTV3(t *testing.T) {
	tests := []struct {
		T    int
		want float64
	}{
		{1, 0},
		{2, 2.6896403974154297},
		{3, 3.2981880169741995},
		{5, 3.5784572588043857},
		{10, 3.6455039075481355},
		{20, 3.647452629324947},
		{50, 3.6474545145563932},
		{100000, 3.6474545145563932},
	}
	for _, tc := range tests {
		h := fig1(tc.T)
		got := h.Epsilon(1e-3)
		if math.Abs(got-tc.want) > 1e-7 {
			t.Errorf("T=%d: eps = %.16g, want %.16g", tc.T, got, tc.want)
		}
		if h.Delta(got) > 1e-3 {
			t.Errorf("T=%d: returned eps not verified", tc.T)
		}
	}
	if got := HiddenStateEpsilonLimit(1e-3, 0.001, 3.04); math.Abs(got-3.6474545) > 1e-7 ||
		math.Abs(got-3.6474545145563932) > 1e-7 {
		t.Errorf("eps* = %.16g, want 3.6474545145563932", got)
	}
	// ε* solves θ_ε(r) = δ/(p+(1−p)δ) = 0.5002501250625313 (eq. 22).
	target := 1e-3 / (0.001 + 0.999*1e-3)
	if !papersClose(target, 0.5002501250625313, 1e-12) {
		t.Errorf("target θ = %.17g", target)
	}
	if th := Theta(3.6474545145563932, 3.04); !papersClose(th, target, 1e-9) {
		t.Errorf("θ(ε*) = %.17g, want %.17g", th, target)
	}
	if got := HiddenStateEpsilonClosedForm(1e-3, 0.001, 3.04); math.Abs(got-4.6188940) > 1e-7 ||
		!papersClose(got, 4.618894009391167, 1e-9) {
		t.Errorf("eq. 23 = %.16g, want 4.618894009391167", got)
	}
}

// TV4: Theorem 1 (Poisson), r = 1.1, p = 0.01.
func TestHiddenTV4(t *testing.T) {
	seg := func(T int) HiddenState {
		return HiddenState{Segments: []HiddenSegment{{Steps: T, P: 0.01, Diameter: 2, LR: 0.1, Clip: 1, Sigma: 2}}}
	}
	for _, tc := range []struct {
		T    int
		want float64
	}{{1, 1.6331319370536698e-03}, {10, 1.9481010085062678e-03}, {100, 1.9481010322843124e-03}} {
		if got := seg(tc.T).Delta(1); !papersClose(got, tc.want, 1e-9) {
			t.Errorf("delta_%d(1) = %.17g want %.17g", tc.T, got, tc.want)
		}
	}
	for _, tc := range []struct {
		delta float64
		T     int
		want  float64
	}{
		{1e-5, 1, 3.53275220850036}, {1e-5, 10, 3.5330947514402045},
		{1e-3, 1, 1.3739905905383392}, {1e-3, 10, 1.4394382793341067},
	} {
		if got := seg(tc.T).Epsilon(tc.delta); math.Abs(got-tc.want) > 1e-7 {
			t.Errorf("eps_%d(%v) = %.16g want %.16g", tc.T, tc.delta, got, tc.want)
		}
	}
	if got := HiddenStateDeltaLimit(1, 0.01, 1.1); !papersClose(got, 1.9481010322843124e-03, 1e-9) {
		t.Errorf("delta_inf(1) = %.17g", got)
	}
	if got := HiddenStateEpsilonLimit(1e-5, 0.01, 1.1); math.Abs(got-3.5330947514402045) > 1e-7 {
		t.Errorf("eps_inf(1e-5) = %v", got)
	}
	if got := HiddenStateEpsilonLimit(1e-3, 0.01, 1.1); math.Abs(got-1.4394382793560008) > 1e-7 {
		t.Errorf("eps_inf(1e-3) = %v", got)
	}
	for _, tc := range []struct{ delta, want float64 }{{1e-5, 4.004578788316153}, {1e-3, 2.0731395363364835}} {
		if got := HiddenStateEpsilonClosedForm(tc.delta, 0.01, 1.1); !papersClose(got, tc.want, 1e-9) {
			t.Errorf("eq.23(%v) = %.16g want %.16g", tc.delta, got, tc.want)
		}
	}
}

// TV5: segments via Lemma 1, and the accountant merging steps one by one.
func TestHiddenSegmentsTV5(t *testing.T) {
	h := HiddenState{Segments: []HiddenSegment{
		{Steps: 100, P: 0.01, Diameter: 2, Sigma: 1},
		{Steps: 50, P: 0.02, Diameter: 1.5, Sigma: 1},
	}}
	if got := h.Delta(1); !papersClose(got, 0.009340655310383366, 1e-9) {
		t.Errorf("segments delta = %.17g", got)
	}
	acc := NewHidden()
	for i := 0; i < 100; i++ {
		if err := acc.Compose(ProjectedSGD{P: 0.01, Sigma: 1, Diameter: 2}, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := acc.Compose(SelfComposed{Event: ProjectedSGD{P: 0.02, Sigma: 1, Diameter: 1.5}, Count: 50}, 1); err != nil {
		t.Fatal(err)
	}
	if n := len(acc.State().Segments); n != 2 {
		t.Errorf("steps not merged: %d segments", n)
	}
	got, err := acc.Delta(1)
	if err != nil || !papersClose(got, 0.009340655310383368, 1e-9) {
		t.Errorf("accountant delta = %.17g, %v", got, err)
	}
}

// Point-mass init refinement (docs/hidden-state.md#point-mass-initialisation).
func TestHiddenPointMassInit(t *testing.T) {
	for _, tc := range []struct {
		T    int
		want float64
	}{{2, 5.807017594422201e-04}, {100, 1.3830218687259027e-03}} {
		h := fig1(tc.T)
		h.PointMassInit = true
		if got := h.Delta(3); !papersClose(got, tc.want, 1e-9) {
			t.Errorf("T=%d point-mass delta = %.17g want %.17g", tc.T, got, tc.want)
		}
	}
	h := fig1(1)
	h.PointMassInit = true
	if got := h.Delta(3); got > 1e-300 {
		t.Errorf("T=1 point-mass delta = %v, want ~0", got)
	}
}

// TV7 (hidden-state side): D=1, η=0.5, C=1, σ=1 (r=2), p=0.001, δ=1e-5.
func TestHiddenTV7(t *testing.T) {
	for _, tc := range []struct {
		T    int
		want float64
	}{{1, 5.997892529818919}, {2, 6.005573572156391}, {10, 6.005649128414802}, {10000000, 6.005649128414802}} {
		h := HiddenState{Segments: []HiddenSegment{{Steps: tc.T, P: 0.001, Diameter: 1, LR: 0.5, Clip: 1, Sigma: 1}}}
		if got := h.Epsilon(1e-5); math.Abs(got-tc.want) > 1e-7 {
			t.Errorf("T=%d eps_HS = %.16g want %.16g", tc.T, got, tc.want)
		}
	}
}

// TV6: Theorem 3 at fixed κ, the corrected reading, and the χ² tails.
func TestRegularizedTV6(t *testing.T) {
	tails := []struct {
		d    int
		x    float64
		want float64
	}{
		{1, 36, 1.9731752900754024e-09}, {10, 49, 4.0732433051704893e-07},
		{10, 25, 0.005345505487134064}, {2, 9, 0.011108996538242306}, {100, 144, 0.0026292509174513008},
	}
	for _, tc := range tails {
		if got := ChiSquareTail(tc.d, tc.x); !papersClose(got, tc.want, 1e-9) {
			t.Errorf("P(chi2_%d > %v) = %.17g want %.17g", tc.d, tc.x, got, tc.want)
		}
	}
	tests := []struct {
		d     int
		kappa float64
		T     int
		cor   float64
	}{
		{1, 6, 1, 2.948183535533076e-07},
		{1, 6, 10, 8.230823060486706e-03},
		{1, 6, 100, 5.8690445630355914e-02},
		{1, 6, 1000, 8.663737287277533e-02},
		{10, 7, 1, 6.085961500189433e-05},
		{10, 7, 10, 9.385737789472662e-03},
		{10, 7, 100, 9.38577511156091e-02},
	}
	for _, tc := range tests {
		r := RegularizedHiddenState{P: 0.001, LR: 0.1, Clip: 1, Sigma: 5, Lambda: 0.65, Dim: tc.d, Steps: tc.T}
		if got := r.DeltaKappa(5, tc.kappa); !papersClose(got, tc.cor, 1e-9) {
			t.Errorf("corrected d=%d T=%d: %.17g want %.17g", tc.d, tc.T, got, tc.cor)
		}
	}
}

// TV6 κ-optimised cells (printed to 6 significant digits) with the argmin κ.
func TestRegularizedKappaOptimised(t *testing.T) {
	tests := []struct {
		lambda float64
		d      int
		T      int
		want   float64
		kappa  float64
	}{
		// λ = 0.65, d = 1.
		{0.65, 1, 10, 7.18512e-3, 5.1},
		{0.65, 1, 100, 2.44705e-2, 5.1},
		{0.65, 1, 1000, 4.16715e-2, 5.4},
		{0.65, 1, 10000, 7.00172e-2, 5.75},
		{0.65, 1, 100000, 1.15572e-1, 6.05},
		// λ = 0.65, d = 10.
		{0.65, 10, 10, 8.89378e-3, 7.55},
		{0.65, 10, 100, 9.17407e-2, 7.25},
		{0.65, 10, 1000, 4.33088e-1, 7.0},
		{0.65, 10, 10000, 6.66775e-1, 7.3},
		{0.65, 10, 100000, 8.38681e-1, 7.75},
		// λ = 0.01, d = 1 (the reference prints no argmin κ).
		{0.01, 1, 10, 8.96408e-3, 0},
		{0.01, 1, 100, 9.43022e-2, 0},
		{0.01, 1, 1000, 6.31937e-1, 0},
	}
	// The reference cells are min over κ BEFORE the never-sampled cap
	// 1 − (1−p)^T; Delta returns the capped value.
	uncapped := func(r RegularizedHiddenState) (float64, float64) {
		best, arg := math.Inf(1), 0.0
		for _, k := range r.kappas() {
			if d := r.DeltaKappa(5, k); d < best {
				best, arg = d, k
			}
		}
		return best, arg
	}
	for _, tc := range tests {
		r := RegularizedHiddenState{P: 0.001, LR: 0.1, Clip: 1, Sigma: 5, Lambda: tc.lambda, Dim: tc.d, Steps: tc.T}
		u, uk := uncapped(r)
		if !papersClose(u, tc.want, 1e-5) {
			t.Errorf("λ=%v d=%d T=%d: min over κ %.6g want %.6g", tc.lambda, tc.d, tc.T, u, tc.want)
		}
		if tc.T <= 1000 { // Delta repeats the κ scan: check it on the cheap cells
			cap := -math.Expm1(float64(tc.T) * math.Log1p(-0.001))
			got, k := r.Delta(5)
			if want := math.Min(u, cap); got != want {
				t.Errorf("λ=%v d=%d T=%d: Delta %.9g, want min(%.9g, cap %.9g)", tc.lambda, tc.d, tc.T, got, u, cap)
			}
			if u < cap && k != uk {
				t.Errorf("λ=%v d=%d T=%d: Delta's κ %v, argmin %v", tc.lambda, tc.d, tc.T, k, uk)
			}
		}
		if tc.kappa != 0 && math.Abs(uk-tc.kappa) > 1e-9 {
			t.Errorf("λ=%v d=%d T=%d: argmin κ = %v want %v", tc.lambda, tc.d, tc.T, uk, tc.kappa)
		}
	}
	// λ = 0.01 at T = 1e4, 1e5: the reference prints "~1"; Delta falls back to
	// the cap.
	trivial := []int{10000}
	if !testing.Short() {
		trivial = append(trivial, 100000)
	}
	for _, T := range trivial {
		r := RegularizedHiddenState{P: 0.001, LR: 0.1, Clip: 1, Sigma: 5, Lambda: 0.01, Dim: 1, Steps: T}
		u, _ := uncapped(r)
		ok := math.Abs(u-1) < 1e-4
		cap := -math.Expm1(float64(T) * math.Log1p(-0.001))
		if got, _ := r.Delta(5); !ok || got != math.Min(u, cap) || got > cap {
			t.Errorf("λ=0.01 T=%d: min over κ %v (want trivial), Delta %v (cap %v)", T, u, got, cap)
		}
	}
}

// TV6 details at κ = 6, d = 1: the radii R_s = r_s − σκ, θ_1..θ_5, and the decomposition of δ_1000 into the χ² term and S_T.
func TestRegularizedTV6Details(t *testing.T) {
	const eta, C, sigma, lam, kappa, p = 0.1, 1.0, 5.0, 0.65, 6.0, 0.001
	// Closed form r_s = (ηC + κσ)(1 − (1−λ)^s)/λ (eq. 20), R_s = r_s − σκ.
	R := func(s int) float64 { return (eta*C+kappa*sigma)*(1-math.Pow(1-lam, float64(s)))/lam - sigma*kappa }
	for i, want := range []float64{0.1, 10.635, 14.32225, 15.6127875} {
		if got := R(i + 1); !papersClose(got, want, 1e-9) {
			t.Errorf("R_%d = %.10g want %v", i+1, got, want)
		}
	}
	if rInf := eta*C/lam + sigma*kappa*(1-lam)/lam; !papersClose(rInf, 16.307692307692307, 1e-12) {
		t.Errorf("R_inf = %v", rInf)
	}
	// θ_s = θ_ε(2R_s/σ); scripts/internal/hiddenstate pins the paper-literal
	// θ_ε(R_s/σ) too.
	{
		th := []float64{0, 0.7582146964126919, 0.9629895805358301, 0.9833970314915798, 0.9876673451903327}
		const c = 2.0
		for i, want := range th {
			if got := Theta(5, c*R(i+1)/sigma); !papersClose(got, want, 1e-9) && !(want == 0 && got < 1e-300) {
				t.Errorf("θ_%d = %.17g want %.17g", i+1, got, want)
			}
		}
		// DeltaKappa's recursion is S_t = θ_t((1−p)S_{t−1} + p) on these θ.
		r := RegularizedHiddenState{P: p, LR: eta, Clip: C, Sigma: sigma, Lambda: lam, Dim: 1}
		S := 0.0
		for T := 1; T <= 5; T++ {
			S = th[T-1] * ((1-p)*S + p)
			r.Steps = T
			tail := ChiSquareTail(1, kappa*kappa)
			chi := (1 + math.Exp(5)) * -math.Expm1(float64(T)*math.Log1p(-tail))
			want := S
			if got := r.DeltaKappa(5, kappa) - chi; !papersClose(got, want, 1e-9) && math.Abs(got-want) > 1e-18 {
				t.Errorf("T=%d: S_T = %.17g want %.17g", T, got, want)
			}
		}
	}
	// Decomposition at T = 1000.
	tail := ChiSquareTail(1, kappa*kappa)
	chi := (1 + math.Exp(5)) * -math.Expm1(1000*math.Log1p(-tail))
	if !papersClose(chi, 2.948180629802173e-04, 1e-9) {
		t.Errorf("(1+e^5)·tv = %.17g", chi)
	}
	r := RegularizedHiddenState{P: p, LR: eta, Clip: C, Sigma: sigma, Lambda: lam, Dim: 1, Steps: 1000}
	if got, want := r.DeltaKappa(5, kappa)-chi, 8.634255480979511e-02; !papersClose(got, want, 1e-8) {
		t.Errorf("S_1000 = %.17g want %.17g", got, want)
	}
}

func TestRegularizedEpsilonVerified(t *testing.T) {
	r := RegularizedHiddenState{P: 0.001, LR: 0.1, Clip: 1, Sigma: 5, Lambda: 0.65, Dim: 1, Steps: 100}
	eps := r.Epsilon(0.05)
	if math.IsInf(eps, 1) {
		t.Fatal("no eps found")
	}
	if d, _ := r.Delta(eps); d > 0.05 {
		t.Errorf("eps %v not verified: delta %v", eps, d)
	}
	if eps >= 0.01 {
		if d, _ := r.Delta(eps - 0.01); d <= 0.05 {
			t.Errorf("eps %v is not the smallest grid point", eps)
		}
	}
}

func TestHiddenAccountantContract(t *testing.T) {
	var _ Accountant = NewHidden()
	acc := NewHidden()
	ev := ProjectedSGD{P: 0.001, Sigma: 1, Clip: 2, LR: 0.01, Diameter: 3}
	if err := acc.Compose(ev, 1000); err != nil {
		t.Fatal(err)
	}
	b, err := acc.Epsilon(1e-3)
	if err != nil || math.Abs(b.Epsilon-3.6474545) > 1e-7 || b.Relation != ReplaceOne || b.Accountant != "hidden" {
		t.Errorf("bound %+v, %v", b, err)
	}
	raw, err := json.Marshal(acc)
	if err != nil {
		t.Fatal(err)
	}
	back := NewHidden()
	if err := json.Unmarshal(raw, back); err != nil {
		t.Fatal(err)
	}
	if err := back.Compose(ev, 1); err != nil {
		t.Fatal(err)
	}
	if err := acc.Compose(ev, 1); err != nil {
		t.Fatal(err)
	}
	d1, _ := acc.Delta(3)
	d2, _ := back.Delta(3)
	if d1 != d2 {
		t.Errorf("round trip changed the account: %v vs %v", d1, d2)
	}
	if err := back.UnmarshalJSON([]byte(`{"version":1,"segments":[{"steps":1,"p":2,"sigma":1}]}`)); err == nil {
		t.Error("invalid state accepted")
	}
	// Unsupported and invalid events leave the account unchanged.
	if err := acc.Compose(Gaussian{Sigma: 1}, 1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("gaussian: %v", err)
	}
	if err := acc.Compose(ProjectedSGD{P: 0.1, Sigma: 0}, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("sigma 0: %v", err)
	}
	if err := acc.Compose(Composed{Events: []Event{ev, Gaussian{Sigma: 1}}}, 1); err == nil {
		t.Error("composed with unsupported accepted")
	}
	if d3, _ := acc.Delta(3); d3 != d1 {
		t.Error("failed compose changed the account")
	}
	if _, err := acc.Epsilon(0); err == nil {
		t.Error("delta 0 accepted")
	}
	// The sampling scheme survives the round trip: a Poisson account stays
	// add/remove-one, and old states (no "poisson" field) load as replace-one.
	pa := NewHidden()
	pev := ev
	pev.Poisson = true
	_ = pa.Compose(pev, 10)
	raw, _ = json.Marshal(pa)
	pb := NewHidden()
	if err := json.Unmarshal(raw, pb); err != nil || pb.Relation() != AddRemove || !strings.Contains(string(raw), `"poisson":true`) {
		t.Errorf("poisson account %s restored with relation %v (%v)", raw, pb.Relation(), err)
	}
	if b1, _ := pa.Epsilon(1e-3); b1.Relation != AddRemove || b1.Epsilon != fig1(10).Epsilon(1e-3) {
		t.Errorf("poisson bound %+v", b1)
	}
	old := NewHidden()
	if err := old.UnmarshalJSON([]byte(`{"version":1,"segments":[{"steps":10,"p":0.001,"diameter":3,"lr":0.01,"clip":2,"sigma":1}]}`)); err != nil || old.Relation() != ReplaceOne {
		t.Errorf("old state: relation %v (%v)", old.Relation(), err)
	}
	// δ_T(ε) does not depend on the sampling scheme.
	if d1, _ := pa.Delta(3); d1 != fig1(10).Delta(3) {
		t.Errorf("poisson delta %v, wor %v", d1, fig1(10).Delta(3))
	}
}

func TestHiddenStateRunQualifies(t *testing.T) {
	good := HiddenStateRun{ProjectEveryStep: true, Optimizer: "sgd", FinalModelOnly: true, Sampling: "poisson"}
	if ok, why := good.Qualifies(); !ok || why != "" {
		t.Errorf("good run refused: %s", why)
	}
	tests := []struct {
		mut  func(*HiddenStateRun)
		want string
	}{
		{func(r *HiddenStateRun) { r.ProjectEveryStep = false }, "projected"},
		{func(r *HiddenStateRun) { r.Optimizer = "adam" }, "adam"},
		{func(r *HiddenStateRun) { r.Momentum = 0.9 }, "momentum"},
		{func(r *HiddenStateRun) { r.FinalModelOnly = false }, "intermediate"},
		{func(r *HiddenStateRun) { r.Sampling = "shuffle" }, "shuffle"},
		{func(r *HiddenStateRun) { r.ExpectedBatchNormalization = true }, "outer-clip"},
	}
	for _, tc := range tests {
		r := good
		tc.mut(&r)
		ok, why := r.Qualifies()
		if ok || !strings.Contains(why, tc.want) {
			t.Errorf("run %+v: ok=%v reason %q (want mention of %q)", r, ok, why, tc.want)
		}
	}
}

func TestHiddenStateRunMarkTracker(t *testing.T) {
	tr, err := NewTracker(NewHidden())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Step(ProjectedSGD{P: 0.001, Sigma: 1, Clip: 2, LR: 0.01, Diameter: 3}); err != nil {
		t.Fatal(err)
	}
	run := HiddenStateRun{ProjectEveryStep: true, Optimizer: "sgd", FinalModelOnly: false, Sampling: "poisson"}
	if err := run.MarkTracker(tr); err != nil {
		t.Fatal(err)
	}
	b := tr.Bounds(1e-3)[0]
	if b.Applicable || !strings.Contains(b.Reason, "intermediate") {
		t.Errorf("tracked bound %+v", b)
	}
	if _, err := tr.TightestFor(1e-3, ReplaceOne); err == nil {
		t.Error("non-applicable hidden bound used as the run's bound")
	}
	run.FinalModelOnly = true
	if err := run.MarkTracker(tr); err != nil {
		t.Fatal(err)
	}
	// One step: ε_1(1e-3) = 0 (TV3 of docs/hidden-state.md#test-vectors).
	if got, err := tr.TightestFor(1e-3, ReplaceOne); err != nil || got.Epsilon != 0 || got.Accountant != "hidden" {
		t.Errorf("applicable: %+v %v", got, err)
	}
}

// TV7 of docs/hidden-state.md#test-vectors: min-combination with the
// Poisson-subsampled Gaussian RDP bound (q = 0.001, z = 2, integer orders
// 2..256, ε = min_α T·RDP + log(1/δ)/(α−1)).
func TestHiddenTV7MinWithRDP(t *testing.T) {
	ev := PoissonSampled{Q: 0.001, Event: Gaussian{Sigma: 2}}
	per := NewTwiceWith(256, TwiceMironov)
	if err := per.Compose(ev, 1); err != nil {
		t.Fatal(err)
	}
	_, curve := per.Curve()
	for _, tc := range []struct {
		alpha int
		want  float64
	}{{2, 2.8402537624681173e-07}, {10, 1.4236670882845066e-06}, {32, 4.587314898548215e-06}} {
		if !papersClose(curve[tc.alpha-2], tc.want, 1e-9) {
			t.Errorf("per-step RDP(%d) = %.17g want %.17g", tc.alpha, curve[tc.alpha-2], tc.want)
		}
	}
	tests := []struct {
		T        int
		rdp, min float64
		order    float64
	}{
		{100, 0.214337, 0.214337, 55}, {10000, 0.295228, 0.295228, 54}, {1000000, 2.702881, 2.702881, 10},
		{3000000, 4.861994, 4.861994, 6}, {5000000, 6.431860, 6.005649, 5}, {10000000, 9.521680, 6.005649, 4},
	}
	for _, tc := range tests {
		acc := NewTwiceWith(256, TwiceMironov)
		if err := acc.Compose(ev, tc.T); err != nil {
			t.Fatal(err)
		}
		b, err := acc.Epsilon(1e-5)
		if err != nil || math.Abs(b.Epsilon-tc.rdp) > 1e-6 || b.Order != tc.order {
			t.Errorf("T=%d: eps_RDP %.6f (α %v) want %.6f (α %v)", tc.T, b.Epsilon, b.Order, tc.rdp, tc.order)
		}
		h := HiddenState{Segments: []HiddenSegment{{Steps: tc.T, P: 0.001, Diameter: 1, LR: 0.5, Clip: 1, Sigma: 1}}}
		if m := math.Min(b.Epsilon, h.Epsilon(1e-5)); math.Abs(m-tc.min) > 1e-6 {
			t.Errorf("T=%d: min %.6f want %.6f", tc.T, m, tc.min)
		}
	}
}
