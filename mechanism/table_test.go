package mechanism

import (
	"fmt"
	"math"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// Every combination the mechanism accepts (sampler × clip × clipped count ×
// clip quantile × release mode) is probed on models of D = 12 and of D = 3 <
// d0 parameters: the largest change one example makes to the clipped sum,
// in the norm the charged event assumes, must be within the event's
// sensitivity relative to the noise actually added, and over three steps
// the noise std per coordinate and the sampling rate used must be the
// charged event's.

const (
	tblN, tblBatch = 6, 3 // shuffling: 2 batches per epoch, so 3 steps span 2 epochs
	tblC, tblD0    = 1.5, 100
	tblSigma       = 1.3
)

// adversarial are per-example gradients of length d built to reach each
// clipper's bounds: uniform, one-hot, all mass on one coordinate, mixed
// signs, tiny, zero.
func adversarial(d int) map[string][]float32 {
	out := map[string][]float32{}
	add := func(name string, f func(i int) float32) {
		g := make([]float32, d)
		for i := range g {
			g[i] = f(i)
		}
		out[name] = g
	}
	add("uniform", func(int) float32 { return 10 })
	add("uniform-negative", func(int) float32 { return -10 })
	add("one-hot", func(i int) float32 { return map[bool]float32{true: 1}[i == 0] })
	add("spike", func(i int) float32 { return map[bool]float32{true: 1e4}[i == d-1] })
	add("alternating", func(i int) float32 { return float32(1-2*(i%2)) * 7 })
	add("tiny", func(int) float32 { return 1e-3 })
	add("zero", func(int) float32 { return 0 })
	r := rng.New(3)
	g := make([]float32, d)
	r.FillNormal(g, 5)
	out["normal"] = g
	return out
}

// groups splits d parameters into two layers for per-layer clipping.
func groups(d int) []models.Group {
	return []models.Group{{Name: "a", Offset: 0, Len: d / 2}, {Name: "b", Offset: d / 2, Len: d - d/2}}
}

// subspaceClipper is subspace clipping with a basis of rank 1 estimated from
// public gradients.
func subspaceClipper(t *testing.T, sp Spec, d int) clip.Clipper {
	t.Helper()
	const rows = 8
	pub := make([]float32, rows*d)
	rng.New(5).FillNormal(pub, 1)
	sizes, err := clip.NestedBlockSizes(sp.SubspaceRanks)
	if err != nil {
		t.Fatal(err)
	}
	b, err := clip.PrincipalBasis(pub, rows, d, sizes, 3, rng.New(6))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := clip.AllocateBudgets(pub, rows, b, sp.C)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clip.NewSubspace(b, c2, sp.SubspaceD0())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// acceptedSpecs lists every combination Spec.Unsupported accepts.
func acceptedSpecs() []Spec {
	var out []Spec
	for _, s := range Samplers {
		for _, c := range Clips {
			for _, cc := range []float64{0, 2} {
				for _, cq := range []float64{0, 0.5} {
					for _, final := range []bool{false, true} {
						sp := Spec{Sampler: s, N: tblN, Batch: tblBatch, Q2: 0.5, Parts: 2, Clip: c, C: tblC, D0: tblD0,
							SubspaceRanks: []int{1}, ClippedCountSigma: cc, ClipQuantile: cq, QuantileCountSigma: 2, FinalOnly: final}
						if sp.Unsupported() == nil {
							out = append(out, sp)
						}
					}
				}
			}
		}
	}
	return out
}

func TestAcceptedCombinations(t *testing.T) {
	got := acceptedSpecs()
	// Poisson: 5 clips × final 2 + count (flat, linf) × 2 + quantile
	// (flat, per-layer, every-step only) = 10 + 4 + 2; twice: 5 × 2;
	// shuffle and without replacement: 4 clips × 2 each; cyclic: 4 clips,
	// every-step release only, no counts.
	if want := 16 + 10 + 8 + 8 + 4; len(got) != want {
		t.Fatalf("%d accepted combinations, want %d", len(got), want)
	}
}

// noiseStd is the per-coordinate std a Noise adds, recorded exactly: the
// draw on zeros divided by the same stream's standard normals.
func noiseStd(t *testing.T, n Noise, dim int, seed uint64) []float64 {
	t.Helper()
	got := make([]float32, dim)
	n.Add(got, rng.New(seed))
	ref := rng.New(seed)
	out := make([]float64, dim)
	for i := range got {
		out[i] = float64(got[i]) / ref.NormFloat64()
	}
	return out
}

// released is the clipped, released form of one gradient.
func released(c clip.Clipper, g []float32) []float64 {
	out := make([]float32, c.OutDim())
	c.Clip(out, g)
	v := make([]float64, len(out))
	for i, x := range out {
		v[i] = float64(x)
	}
	return v
}

func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func normInf(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// worstRatio is the largest ‖change‖/std over one example's changes under
// the relation (add/remove: x − 0; replace-one: x − y), per coordinate
// range [lo, hi) and norm.
func worstRatio(changes [][]float64, std []float64, lo, hi int, norm func([]float64) float64) float64 {
	var worst float64
	for _, ch := range changes {
		v := make([]float64, hi-lo)
		for i := lo; i < hi; i++ {
			v[i-lo] = ch[i] / std[i]
		}
		worst = math.Max(worst, norm(v))
	}
	return worst
}

const slack = 1 + 1e-5 // float32 rounding of the clipped vectors and of the noise draw

func TestEveryMechanismChargesWhatItAdds(t *testing.T) {
	for _, sp := range acceptedSpecs() {
		for _, d := range []int{12, 3} {
			name := fmt.Sprintf("%s/%s/count=%g/quantile=%g/final=%v/D=%d", sp.Sampler, sp.Clip, sp.ClippedCountSigma, sp.ClipQuantile, sp.FinalOnly, d)
			t.Run(name, func(t *testing.T) { checkMechanism(t, sp, d) })
		}
	}
}

func checkMechanism(t *testing.T, sp Spec, d int) {
	var c clip.Clipper
	var err error
	if sp.Clip == Subspace {
		c = subspaceClipper(t, sp, d)
	} else if c, err = sp.NewClipper(d, groups(d)); err != nil {
		t.Fatal(err)
	}
	m, err := New(sp, c)
	if err != nil {
		t.Fatal(err)
	}
	noise, err := m.Noise(tblSigma, 0)
	if err != nil {
		t.Fatal(err)
	}
	std := noiseStd(t, noise, c.OutDim(), 9)

	// One example's changes to the clipped sum under the relation.
	var rows [][]float64
	for _, g := range adversarial(d) {
		rows = append(rows, released(c, g))
	}
	var changes [][]float64
	if m.Relation() == accountant.ReplaceOne {
		for _, x := range rows {
			for _, y := range rows {
				ch := make([]float64, len(x))
				for i := range x {
					ch[i] = x[i] - y[i]
				}
				changes = append(changes, ch)
			}
		}
	} else {
		changes = rows
	}

	// The released counts: their noise and one example's change.
	var countStd, countDelta float64
	switch {
	case sp.ClippedCountSigma > 0:
		countStd, countDelta = sp.ClippedCountSigma, 1
	case sp.ClipQuantile > 0:
		countStd, countDelta = m.QuantileCountSigma(), 0.5
	}

	// The sampler actually used, recorded over three steps.
	smp, _, err := sp.NewSampler(c.OutDim(), rng.New(11))
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, sp.N)
	charged := 0
	for step := 1; step <= 3; step++ {
		for _, i := range smp.Next(nil) {
			seen[i]++
		}
		ev := m.StepEvent(tblSigma, step)
		if _, ok := ev.(accountant.NoOp); ok {
			continue
		}
		charged++
		checkEvent(t, m, smp, ev, changes, std, countStd, countDelta)
	}
	// Each charge covers what one record can be in: per step where every
	// record may be sampled each step, per epoch under shuffling (each
	// record is in exactly one batch per epoch begun).
	wantCharged := 3
	if sp.Sampler == Shuffle || sp.Sampler == Cyclic {
		wantCharged = 0
		for _, k := range seen {
			wantCharged = max(wantCharged, k)
		}
	}
	if charged != wantCharged {
		t.Errorf("%d of 3 steps charged, want %d (a record is in at most %d of the batches)", charged, wantCharged, wantCharged)
	}
}

// checkEvent compares one charged event with the noise added (std per
// coordinate), the changes one example makes, and the sampler used.
func checkEvent(t *testing.T, m *Mechanism, smp sampler.Sampler, ev accountant.Event, changes [][]float64, std []float64, countStd, countDelta float64) {
	t.Helper()
	sp, dim := m.Spec(), len(std)
	gaussian := func(s float64) {
		// The joint mechanism (sum, count) has sensitivity ≤ 1/s in units
		// of its noise.
		sum := worstRatio(changes, std, 0, dim, norm2)
		joint := sum
		if countStd > 0 {
			joint = math.Hypot(sum, countDelta/countStd)
		}
		if joint > slack/s {
			t.Errorf("one example moves the release by %.6g noise stds; the event (multiplier %.6g) allows %.6g", joint, s, 1/s)
		}
	}
	switch e := ev.(type) {
	case accountant.PoissonSampled:
		g, ok := e.Event.(accountant.Gaussian)
		if !ok {
			t.Fatalf("event %#v", e)
		}
		if c, ok := smp.(*sampler.CyclicPoisson); ok {
			if c.Q() != e.Q || c.Parts() != sp.Parts {
				t.Errorf("cyclic sampler at rate %v over %d parts, event charges PoissonSampled at q = %v", c.Q(), c.Parts(), e.Q)
			}
		} else if p, ok := smp.(*sampler.Poisson); !ok || p.ExpectedBatch()/float64(sp.N) != e.Q {
			t.Errorf("sampler %T at rate %v, event charges PoissonSampled at q = %v", smp, smp.ExpectedBatch()/float64(sp.N), e.Q)
		}
		gaussian(g.Sigma)
	case accountant.Gaussian:
		if _, ok := smp.(*sampler.Shuffle); !ok {
			t.Errorf("sampler %T charged a bare Gaussian", smp)
		}
		gaussian(e.Sigma)
	case accountant.SampledWithoutReplacement:
		g, _ := e.Event.(accountant.Gaussian)
		if _, ok := smp.(*sampler.WithoutReplacement); !ok || e.N != sp.N || float64(e.B) != smp.ExpectedBatch() {
			t.Errorf("sampler %T (batch %v of %d), event %#v", smp, smp.ExpectedBatch(), sp.N, e)
		}
		gaussian(g.Sigma)
	case accountant.TwiceSampled:
		q2 := 1.0
		if tw, ok := smp.(*sampler.Twice); ok {
			p := tw.Params()
			if p.Q1 != e.Q1 {
				t.Errorf("twice sampler at q1 = %v, event charges %v", p.Q1, e.Q1)
			}
			q2 = p.Q2
		} else if p, ok := smp.(*sampler.Poisson); !ok || p.ExpectedBatch()/float64(sp.N) != e.Q1 {
			t.Errorf("sampler %T, event charges q1 = %v", smp, e.Q1)
		}
		if q2 != e.Q2 {
			t.Errorf("coordinates sampled at q2 = %v, event charges %v", q2, e.Q2)
		}
		if countStd > 0 {
			t.Errorf("a released count is not part of the twice-sampling event")
		}
		lo := 0
		for j, b := range e.Blocks {
			dim := b.Dim
			if len(e.Blocks) == 1 {
				dim = len(std)
			}
			hi := lo + dim
			if l2 := worstRatio(changes, std, lo, hi, norm2); l2 > slack*b.C2/b.Sigma {
				t.Errorf("block %d: one example's L2 change is %.6g noise stds; the event allows %.6g", j, l2, b.C2/b.Sigma)
			}
			if linf := worstRatio(changes, std, lo, hi, normInf); linf > slack*b.C2/(math.Sqrt(b.D0)*b.Sigma) {
				t.Errorf("block %d: one example's L∞ change is %.6g noise stds; the event (d0 = %v) allows %.6g", j, linf, b.D0, b.C2/(math.Sqrt(b.D0)*b.Sigma))
			}
			lo = hi
		}
		if lo != len(std) {
			t.Errorf("event blocks cover %d of %d released coordinates", lo, len(std))
		}
	default:
		t.Fatalf("unexpected event %#v", ev)
	}
}

// The ledger a run keeps is the one its mechanism charges; a ledger of
// another σ, another rate or a per-step shuffle charge is refused.
func TestLedger(t *testing.T) {
	build := func(s Sampler, batch int) *Mechanism {
		sp := Spec{Sampler: s, N: tblN, Batch: batch, Clip: Flat, C: 1,
			Prefix: []accountant.Event{accountant.Gaussian{Sigma: 4}}}
		c, err := sp.NewClipper(4, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(sp, c)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	sh := build(Shuffle, tblBatch)
	var kept Ledger
	for _, ev := range sh.Prefix() {
		kept.Charge(0, ev)
	}
	for k := 1; k <= 5; k++ {
		kept.Charge(k, sh.StepEvent(2, k))
	}
	// Prefix at replace-one (σ/2), then epochs: charge, NoOp, charge, NoOp, charge.
	if len(kept.Entries) != 6 || kept.Steps() != 5 || kept.Entries[0].Event != "accountant.Gaussian{Sigma:2}" || kept.Entries[2].Kind != "no_op" {
		t.Fatalf("ledger %+v", kept.Entries)
	}
	if err := kept.Check(sh.LedgerFor(2, 5)); err != nil {
		t.Fatal(err)
	}
	perStep := &Ledger{}
	perStep.Charge(0, accountant.Gaussian{Sigma: 2})
	for k := 1; k <= 5; k++ {
		perStep.Charge(k, sh.Event(2))
	}
	p := build(Poisson, tblBatch)
	for name, other := range map[string]*Ledger{
		"other sigma":      sh.LedgerFor(2.5, 5),
		"fewer steps":      sh.LedgerFor(2, 4),
		"per-step shuffle": perStep,
		"poisson":          p.LedgerFor(2, 5),
		"poisson at q=2/6": build(Poisson, 2).LedgerFor(2, 5),
	} {
		if err := other.Check(sh.LedgerFor(2, 5)); err == nil {
			t.Errorf("%s: ledger accepted", name)
		}
	}
	if err := p.LedgerFor(2, 5).Check(build(Poisson, 2).LedgerFor(2, 5)); err == nil {
		t.Error("poisson ledgers of different rates agree")
	}
	if n := len(p.LedgerFor(2, 1000).Entries); n != 2 {
		t.Errorf("1000 identical Poisson steps take %d entries, want 2 (prefix, steps)", n)
	}
}
