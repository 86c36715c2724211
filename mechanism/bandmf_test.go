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
		"poisson":       {Sampler: Poisson, N: 40, Batch: 3, Bands: 2, Clip: Flat, C: 1},
		"linf":          {Sampler: Cyclic, N: 40, Batch: 3, Parts: 2, Bands: 2, Clip: LInf, C: 1},
		"no parts":      {Sampler: Cyclic, N: 40, Batch: 3, Clip: Flat, C: 1},
		"final only":    {Sampler: Cyclic, N: 40, Batch: 3, Parts: 2, Bands: 2, Clip: Flat, C: 1, FinalOnly: true, Radius: 2},
	} {
		if err := sp.Validate(); !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	// Ordinary Poisson sampling is refused with the analysis it would need.
	poisson := Spec{Sampler: Poisson, N: 40, Batch: 3, Bands: 2, Clip: Flat, C: 1}
	if err := poisson.Validate(); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "mixture-of-Gaussians (MMCC) analysis") {
		t.Errorf("poisson: Validate = %v, want the missing analysis named", err)
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
