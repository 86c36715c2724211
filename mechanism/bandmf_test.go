package mechanism

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/bandmf"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

func bandSpec(bands, parts int) Spec {
	return Spec{Sampler: Cyclic, N: 40, Batch: 3, Parts: parts, Bands: bands, Clip: Flat, C: tblC}
}

// The banded mechanism's sampler, divisor, events and noise: the rate
// within a part is Batch·Parts/N, each example is charged once per
// ⌈t/parts⌉ at part 0's steps, and C times the noise the model sees is
// i.i.d. Gaussian of std σ·C·‖c‖ (the sensitivity of one participation).
func TestBandMFMechanism(t *testing.T) {
	const d, steps = 7, 9
	sp := bandSpec(4, 4)
	cl, err := sp.NewClipper(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(sp, cl)
	if err != nil {
		t.Fatal(err)
	}
	if m.Q() != 0.3 || m.Expected() != 3 {
		t.Errorf("q %v, divisor %v; want 0.3 and 3", m.Q(), m.Expected())
	}
	smp, div, err := sp.NewSampler(d, rng.New(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := smp.(*sampler.CyclicPoisson); !ok || div != 3 {
		t.Errorf("sampler %T divisor %v", smp, div)
	}
	want := accountant.PoissonSampled{Q: 0.3, Event: accountant.Gaussian{Sigma: tblSigma}}
	for step := 1; step <= steps; step++ {
		ev := m.StepEvent(tblSigma, step)
		if (step-1)%4 == 0 {
			if !reflect.DeepEqual(ev, accountant.Event(want)) {
				t.Errorf("step %d: %#v, want %#v", step, ev, want)
			}
		} else if _, ok := ev.(accountant.NoOp); !ok {
			t.Errorf("step %d: %#v, want NoOp", step, ev)
		}
	}
	if ev, k := m.Charges(tblSigma, steps); k != 3 || !reflect.DeepEqual(ev, accountant.Event(want)) {
		t.Errorf("Charges(%d steps) = %v × %d, want 3", steps, ev, k)
	}

	s, _, err := bandmf.Optimize(mustPrefix(t, steps), 4)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := m.CorrelatedNoise(tblSigma, 0, s, steps)
	if err != nil {
		t.Fatal(err)
	}
	std := tblSigma * tblC * s.MaxColumnNorm(steps)
	if got := cn.TotalVariance(); math.Abs(got-d*std*std) > 1e-12*got {
		t.Errorf("TotalVariance %v, want d·(σC‖c‖)² = %v", got, d*std*std)
	}
	iso, err := clip.NewIsotropic(d, std)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := rng.New(9), rng.New(9)
	seen := make([][]float32, steps)
	c := s.Coef()
	for step := 0; step < steps; step++ {
		seen[step] = make([]float32, d)
		cn.Add(seen[step], r1)
		z := make([]float32, d)
		iso.Add(z, r2)
		// (C·seen)_t = Σ_k c_k·seen_{t−k} must be the i.i.d. draw z_t.
		for i := 0; i < d; i++ {
			acc := 0.0
			for k := 0; k < len(c) && k <= step; k++ {
				acc += c[k] * float64(seen[step-k][i])
			}
			if math.Abs(acc-float64(z[i])) > 1e-5*std {
				t.Fatalf("step %d coordinate %d: (C·noise) = %v, the i.i.d. draw %v", step, i, acc, z[i])
			}
		}
	}
}

func mustPrefix(t *testing.T, n int) bandmf.Workload {
	t.Helper()
	w, err := bandmf.PrefixSum(n)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A wrong band is refused wherever it could enter: fewer parts than bands,
// banded noise without cyclic sampling, a strategy of another width, a
// part rate above 1, and Noise asked for a banded mechanism.
func TestBandMFRefusals(t *testing.T) {
	for name, sp := range map[string]Spec{
		"parts < bands": bandSpec(4, 3),
		"shuffle":       {Sampler: Shuffle, N: 40, Batch: 3, Bands: 2, Clip: Flat, C: 1},
		"linf":          {Sampler: Cyclic, N: 40, Batch: 3, Parts: 2, Bands: 2, Clip: LInf, C: 1},
		"poisson linf":  {Sampler: Poisson, N: 40, Batch: 3, Bands: 2, Clip: LInf, C: 1},
		"no parts":      {Sampler: Cyclic, N: 40, Batch: 3, Clip: Flat, C: 1},
		"final only":    {Sampler: Cyclic, N: 40, Batch: 3, Parts: 2, Bands: 2, Clip: Flat, C: 1, FinalOnly: true, Radius: 2},
		"poisson final": {Sampler: Poisson, N: 40, Batch: 3, Bands: 2, Clip: Flat, C: 1, FinalOnly: true, Radius: 2},
	} {
		if err := sp.Validate(); !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	// Another sampler is refused naming both analyses.
	shuffle := Spec{Sampler: Shuffle, N: 40, Batch: 3, Bands: 2, Clip: Flat, C: 1}
	if err := shuffle.Validate(); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "MMCC under ordinary Poisson") {
		t.Errorf("shuffle: Validate = %v, want both analyses named", err)
	}
	// Ordinary Poisson sampling is MMCC's: accepted, PLD only (RDP refused
	// with the reason), and a strategy with a negative coefficient refused.
	poisson := Spec{Sampler: Poisson, N: 40, Batch: 3, Bands: 2, Clip: Flat, C: 1}
	pm, err := New(poisson, nil)
	if err != nil {
		t.Fatalf("poisson: %v", err)
	}
	if _, err := pm.Accounts(Run{RDPOnly: true}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "no RDP") {
		t.Errorf("poisson with RDP: %v, want a refusal with the reason", err)
	}
	if a, err := pm.NewAccountant(); err != nil || a.Name() != "pld" {
		t.Errorf("poisson: primary accountant %v (%v), want pld", a, err)
	}
	neg, _ := bandmf.NewStrategy([]float64{1, -0.3})
	if err := pm.UseStrategy(neg, 10, 1e-5); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative coefficient: %v, want a refusal", err)
	}
	sp := bandSpec(4, 4)
	cl, _ := sp.NewClipper(5, nil)
	m, err := New(sp, cl)
	if err != nil {
		t.Fatal(err)
	}
	three, _ := bandmf.NewStrategy([]float64{1, 0.5, 0.2})
	if _, err := m.CorrelatedNoise(1, 0, three, 10); err == nil {
		t.Error("a 3-banded strategy accepted by a 4-banded mechanism")
	}
	if _, err := m.Noise(1, 0); err == nil {
		t.Error("independent noise handed to a banded mechanism")
	}
	big := bandSpec(4, 20) // rate within a part 3·20/40 > 1
	if _, err := New(big, cl); err == nil {
		t.Error("part rate above 1 accepted")
	}
}

// Every example's participations, drawn by the banded mechanism's own
// sampler, are covered by the events it charges: the example takes part
// only in steps ≡ its index (mod parts), so its steps are at least b apart
// and its columns of C orthogonal (the sensitivity is then exactly
// √Σ‖C_j‖²); each column moves C·x by at most 1/σ_event noise stds (a
// gradient of norm C against the noise σ·C·‖c‖ the mechanism adds); and it
// takes part in no more steps than events are charged. The negative
// controls show each check can fail: noise calibrated to c₀ alone (a wrong
// sensitivity) breaks the second, a strategy one band wider than the parts
// the first.
func TestBandMFParticipationCovered(t *testing.T) {
	const d, steps = 3, 23
	for _, bands := range []int{1, 2, 4} {
		sp := bandSpec(bands, bands)
		sp.Batch = 8 // rate within a part 8·b/40
		cl, err := sp.NewClipper(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(sp, cl)
		if err != nil {
			t.Fatal(err)
		}
		smp, _, err := sp.NewSampler(d, rng.New(3))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := bandmf.Optimize(mustPrefix(t, steps), bands)
		if err != nil {
			t.Fatal(err)
		}
		cn, err := m.CorrelatedNoise(tblSigma, 0, s, steps)
		if err != nil {
			t.Fatal(err)
		}
		std := math.Sqrt(cn.TotalVariance() / d)
		charged, evSigma := 0, 0.0
		part := map[int][]int{}
		for step := 0; step < steps; step++ {
			for _, i := range smp.Next(nil) {
				part[i] = append(part[i], step)
			}
			if ps, ok := m.StepEvent(tblSigma, step+1).(accountant.PoissonSampled); ok {
				charged++
				evSigma = ps.Event.(accountant.Gaussian).Sigma
			}
		}
		wider, _ := bandmf.NewStrategy(append(s.Coef(), 0.5))
		overlapped, tooLoud := false, false
		for i, js := range part {
			if !s.Separated(js) {
				t.Errorf("b=%d: example %d in steps %v, closer than b", bands, i, js)
			}
			if len(js) > charged {
				t.Errorf("b=%d: example %d in %d steps, %d charged", bands, i, len(js), charged)
			}
			ss := 0.0
			for _, j := range js {
				if j%bands != i%bands {
					t.Errorf("b=%d: example %d sampled at step %d, outside its part", bands, i, j)
				}
				cj := s.ColumnNorm(steps, j)
				ss += cj * cj
				if shift := tblC * cj / std; shift > (1+1e-12)/evSigma {
					t.Errorf("b=%d: column %d moves C·x by %v noise stds, the event allows %v", bands, j, shift, 1/evSigma)
				}
				if tblC*cj/(tblSigma*tblC) > (1+1e-12)/evSigma {
					tooLoud = true
				}
			}
			sens, err := s.Sensitivity(steps, js)
			if err != nil || math.Abs(sens-math.Sqrt(ss)) > 1e-12*sens {
				t.Errorf("b=%d: example %d's sensitivity %v (%v), orthogonal columns give %v", bands, i, sens, err, math.Sqrt(ss))
			}
			if !wider.Separated(js) {
				overlapped = true
			}
		}
		if bands > 1 && (!tooLoud || !overlapped) {
			t.Errorf("b=%d: negative controls not caught (wrong sensitivity %v, wrong band %v)", bands, tooLoud, overlapped)
		}
	}
}

// Under ordinary Poisson sampling every example's participations, drawn
// by the mechanism's own sampler (closer than b apart as often as not),
// are covered by the MMCC rows it charges: at each step, the shift the
// example's participations within the band put on row i of C·x + Z, in
// noise stds of the noise the mechanism adds, is one of the row mixture's
// sensitivities in the event's σ units (the mixture lists every subset of
// the band), the diagonal participation has the sampler's rate, and every
// earlier one a p̃ at least that rate. Negative controls: noise calibrated
// to c₀ alone (a wrong sensitivity) and rows built for half the rate (a
// wrong p̃) are caught.
func TestBandMFPoissonParticipationCovered(t *testing.T) {
	const d, steps = 3, 17
	for _, bands := range []int{2, 4} {
		sp := Spec{Sampler: Poisson, N: 40, Batch: 8, Bands: bands, Clip: Flat, C: tblC}
		cl, err := sp.NewClipper(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(sp, cl)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := bandmf.Optimize(mustPrefix(t, steps), bands)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.UseStrategy(s, steps, 1e-5); err != nil {
			t.Fatal(err)
		}
		half := *m
		if err := half.UseStrategy(s, steps, 1e-5); err != nil {
			t.Fatal(err)
		}
		hp, _ := bandmf.NewMMCC(s, steps, m.Q()/2, 1e-6)
		half.mmcc = &hp
		smp, _, err := sp.NewSampler(d, rng.New(3))
		if err != nil {
			t.Fatal(err)
		}
		cn, err := m.CorrelatedNoise(tblSigma, 0, s, steps)
		if err != nil {
			t.Fatal(err)
		}
		std := math.Sqrt(cn.TotalVariance() / d)
		c := s.Coef()
		part := make([]map[int]bool, steps)
		near, tooLoud, wrongP := false, false, false
		for i := 0; i < steps; i++ {
			part[i] = map[int]bool{}
			for _, e := range smp.Next(nil) {
				part[i][e] = true
			}
			mix, marg := rowMixture(t, m.StepEvent(tblSigma, i+1), min(i+1, bands))
			if marg[len(marg)-1] != m.Q() {
				t.Errorf("b=%d row %d: diagonal participation at %v, the sampler's rate %v", bands, i, marg[len(marg)-1], m.Q())
			}
			for _, v := range marg {
				if v < m.Q() {
					t.Errorf("b=%d row %d: p̃ %v below the rate %v", bands, i, marg, m.Q())
				}
			}
			if _, hm := rowMixture(t, half.StepEvent(tblSigma, i+1), min(i+1, bands)); hm[len(hm)-1] != m.Q() {
				wrongP = true
			}
			for e := 0; e < sp.N; e++ {
				shift, mask := 0.0, 0
				for k := max(0, i-bands+1); k <= i; k++ {
					if part[k][e] {
						shift += tblC * c[i-k]
						mask |= 1 << (k - max(0, i-bands+1))
						if k < i {
							near = true
						}
					}
				}
				if mask == 0 {
					continue
				}
				got, allowed := shift/std, mix.Sensitivities[mask]/mix.StandardDeviation
				if got > allowed*(1+1e-12) {
					t.Errorf("b=%d row %d: example %d shifts the row by %v noise stds, its mixture component allows %v", bands, i, e, got, allowed)
				}
				if shift/(tblSigma*tblC) > allowed*(1+1e-12) {
					tooLoud = true
				}
			}
		}
		if !near || !tooLoud || !wrongP {
			t.Errorf("b=%d: participations closer than b seen %v; negative controls caught: wrong sensitivity %v, wrong p̃ %v", bands, near, tooLoud, wrongP)
		}
	}
}

// rowMixture reads an MMCC row event: its mixture (components in subset
// order over the n band participations) and each participation's marginal.
func rowMixture(t *testing.T, ev accountant.Event, n int) (accountant.MixtureOfGaussians, []float64) {
	t.Helper()
	if c, ok := ev.(accountant.Composed); ok {
		ev = c.Events[0]
	}
	mix, ok := ev.(accountant.MixtureOfGaussians)
	if !ok || len(mix.Probs) != 1<<n {
		t.Fatalf("row event %#v: want a mixture over %d participations", ev, n)
	}
	marg := make([]float64, n)
	for mask, p := range mix.Probs {
		for u := range n {
			if mask&(1<<u) != 0 {
				marg[u] += p
			}
		}
	}
	// The products of p̃ and 1 − p̃ sum back to p̃ within rounding.
	for u := range marg {
		marg[u] = math.Round(marg[u]*1e12) / 1e12
	}
	return mix, marg
}
