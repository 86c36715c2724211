package sampler

import (
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// within4σ fails unless count is within 4 standard deviations of a
// Binomial(trials, p) mean.
func within4σ(t *testing.T, what string, count, trials int, p float64) {
	t.Helper()
	mean := float64(trials) * p
	sd := math.Sqrt(float64(trials) * p * (1 - p))
	z := (float64(count) - mean) / sd
	t.Logf("%s: %d of %d, expected %.1f ± %.1f (z = %+.2f)", what, count, trials, mean, sd, z)
	if math.Abs(z) > 4 {
		t.Errorf("%s: count %d is %.1fσ from the binomial mean %.1f", what, count, z, mean)
	}
}

// chiSquareUniform checks per-cell counts, each Binomial(trials, p)
// (cells independent), with the statistic Σ (c−μ)²/(μ(1−p)) ≈ χ²(k):
// mean k, sd √(2k); it fails beyond 4 sd.
func chiSquareUniform(t *testing.T, what string, counts []int, trials int, p float64) {
	t.Helper()
	mu := float64(trials) * p
	var x2 float64
	for _, c := range counts {
		d := float64(c) - mu
		x2 += d * d / (mu * (1 - p))
	}
	k := float64(len(counts))
	z := (x2 - k) / math.Sqrt(2*k)
	t.Logf("%s: χ² = %.1f over %d cells (z = %+.2f)", what, x2, len(counts), z)
	if math.Abs(z) > 4 {
		t.Errorf("%s: χ² = %.1f, expected %v ± %.1f", what, x2, k, math.Sqrt(2*k))
	}
}

func TestPoissonRates(t *testing.T) {
	for _, tc := range []struct {
		n     int
		q     float64
		steps int
	}{
		{1000, 0.05, 4000},
		{500, 0.5, 2000},
		{2000, 0.003, 5000},
		{40, 1, 10},
	} {
		p, err := NewPoisson(tc.n, tc.q, rng.New(1))
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, tc.n)
		pair := 0 // examples 0 and 1 both in
		total := 0
		var batch []int
		for s := 0; s < tc.steps; s++ {
			batch = p.Next(batch)
			if !slices.IsSorted(batch) || len(slices.Compact(slices.Clone(batch))) != len(batch) {
				t.Fatalf("batch not strictly increasing: %v", batch)
			}
			for _, i := range batch {
				if i < 0 || i >= tc.n {
					t.Fatalf("index %d out of [0,%d)", i, tc.n)
				}
				counts[i]++
			}
			if len(batch) >= 2 && batch[0] == 0 && batch[1] == 1 {
				pair++
			}
			total += len(batch)
		}
		if tc.q == 1 {
			if total != tc.n*tc.steps {
				t.Errorf("q=1: %d selections, want all %d", total, tc.n*tc.steps)
			}
			continue
		}
		within4σ(t, "poisson total", total, tc.n*tc.steps, tc.q)
		chiSquareUniform(t, "poisson per-example", counts, tc.steps, tc.q)
		within4σ(t, "poisson pair (0,1)", pair, tc.steps, tc.q*tc.q)
		if got, want := p.ExpectedBatch(), tc.q*float64(tc.n); got != want {
			t.Errorf("ExpectedBatch = %v, want %v", got, want)
		}
	}
}

func TestPoissonEmptyBatches(t *testing.T) {
	// n·q = 1: P(empty) = (1−q)^n ≈ 0.358.
	const n, q, steps = 20, 0.05, 5000
	p, _ := NewPoisson(n, q, rng.New(2))
	empty := 0
	var b []int
	for s := 0; s < steps; s++ {
		if b = p.Next(b); len(b) == 0 {
			empty++
		}
	}
	within4σ(t, "empty batches", empty, steps, math.Pow(1-q, n))
}

func TestTwiceRatesAndMasks(t *testing.T) {
	for _, tc := range []struct {
		dim int
		q2  float64
	}{{1000, 0.3}, {1000, 0.5}, {131, 0.25}, {70, 1}, {4096, 0.01}} {
		const n, q1, steps = 400, 0.1, 2000
		tw, err := NewTwice(n, tc.dim, q1, tc.q2, rng.New(3))
		if err != nil {
			t.Fatal(err)
		}
		m := NewMask(tc.dim)
		sel, masks, total := 0, 0, 0
		coord := make([]int, tc.dim)
		pairs := 0 // coordinates (2i, 2i+1) both in: independent events
		var b []int
		for s := 0; s < steps; s++ {
			b = tw.Next(b)
			sel += len(b)
			for range b {
				if masks >= 3000 {
					break
				}
				tw.FillMask(m)
				masks++
				c := 0
				for j := 0; j < tc.dim; j++ {
					if m.Has(j) {
						coord[j]++
						c++
					}
				}
				for j := 0; j+1 < tc.dim; j += 2 {
					if m.Has(j) && m.Has(j+1) {
						pairs++
					}
				}
				if c != m.Count() {
					t.Fatalf("Count = %d, Has counts %d", m.Count(), c)
				}
				total += c
			}
		}
		within4σ(t, "twice examples", sel, n*steps, q1)
		if tc.q2 == 1 {
			if total != masks*tc.dim {
				t.Errorf("q2=1: %d coordinates, want %d", total, masks*tc.dim)
			}
			continue
		}
		within4σ(t, "twice coordinates", total, masks*tc.dim, tc.q2)
		chiSquareUniform(t, "twice per-coordinate", coord, masks, tc.q2)
		within4σ(t, "twice coordinate pairs", pairs, masks*(tc.dim/2), tc.q2*tc.q2)
		if got, want := tw.ExpectedCoordBatch(), n*q1*tc.q2; math.Abs(got-want) > 1e-9*want {
			t.Errorf("ExpectedCoordBatch = %v, want %v", got, want)
		}
	}
}

func TestTwiceRealisedRate(t *testing.T) {
	s := rng.New(9)
	for _, tc := range []struct{ q2, want float64 }{
		{0.5, 0.5}, {1, 1}, {0.25, 0.25}, {0.01, 0.01},
		{0.3, math.Floor(0.3*(1<<32)) / (1 << 32)}, // threshold draw: ⌊q2·2³²⌋/2³²
	} {
		tw, _ := NewTwice(10, 10, 0.5, tc.q2, s)
		if got := tw.Params().Q2; got != tc.want || got > tc.q2 {
			t.Errorf("q2 = %v: realised rate %v, want %v", tc.q2, got, tc.want)
		}
	}
}

func TestMaskOps(t *testing.T) {
	tw, _ := NewTwice(10, 70, 0.5, 0.5, rng.New(4))
	m := NewMask(70)
	tw.FillMask(m)
	if m.Words()[1]>>6 != 0 {
		t.Fatalf("bits beyond Len set: %x", m.Words()[1])
	}
	v := make([]float32, 70)
	acc := make([]float32, 70)
	for i := range v {
		v[i] = float32(i + 1)
		acc[i] = 1000
	}
	m.AddMaskedTo(acc, v)
	w := slices.Clone(v)
	m.ApplyTo(w)
	for i := range v {
		want, wantW := float32(1000), float32(0)
		if m.Has(i) {
			want, wantW = 1000+v[i], v[i]
		}
		if acc[i] != want || w[i] != wantW {
			t.Fatalf("coord %d (in=%v): acc %v want %v, applied %v want %v", i, m.Has(i), acc[i], want, w[i], wantW)
		}
	}
}

func TestWithoutReplacementRates(t *testing.T) {
	const n, b, steps = 200, 20, 5000
	w, err := NewWithoutReplacement(n, b, rng.New(5))
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, n)
	pair := 0
	var batch []int
	for s := 0; s < steps; s++ {
		batch = w.Next(batch)
		if len(batch) != b {
			t.Fatalf("batch size %d, want %d", len(batch), b)
		}
		sorted := slices.Sorted(slices.Values(batch))
		if len(slices.Compact(sorted)) != b {
			t.Fatalf("repeated index in %v", batch)
		}
		if slices.Contains(batch, 0) && slices.Contains(batch, 1) {
			pair++
		}
		for _, i := range batch {
			counts[i]++
		}
	}
	// Per-example counts are Binomial(steps, b/n) (steps are independent);
	// the cells are slightly negatively correlated, which only lowers χ².
	chiSquareUniform(t, "without replacement per-example", counts, steps, float64(b)/n)
	within4σ(t, "without replacement pair (0,1)", pair, steps, float64(b*(b-1))/float64(n*(n-1)))
}

func TestShuffleEpochs(t *testing.T) {
	const n, b = 103, 10 // 10 batches per epoch, 3 examples skipped each epoch
	sh, err := NewShuffle(n, b, rng.New(6))
	if err != nil {
		t.Fatal(err)
	}
	var batch []int
	for e := 0; e < 5; e++ {
		seen := make(map[int]bool)
		for k := 0; k < sh.BatchesPerEpoch(); k++ {
			batch = sh.Next(batch)
			if len(batch) != b {
				t.Fatalf("batch size %d", len(batch))
			}
			for _, i := range batch {
				if seen[i] {
					t.Fatalf("epoch %d: example %d twice", e, i)
				}
				seen[i] = true
			}
		}
		if len(seen) != n-n%b {
			t.Fatalf("epoch %d covered %d examples, want %d", e, len(seen), n-n%b)
		}
		if sh.Epoch() != int64(e) {
			t.Fatalf("Epoch() = %d during epoch %d", sh.Epoch(), e)
		}
	}
}

func TestTwiceParams(t *testing.T) {
	tw, _ := NewTwice(100, 50, 0.1, 0.5, rng.New(7))
	if got := tw.Params(); got != (TwiceParams{Q1: 0.1, Q2: 0.5, N: 100, Dim: 50}) {
		t.Errorf("twice params %+v", got)
	}
}

func TestBadParameters(t *testing.T) {
	s := rng.New(8)
	for name, err := range map[string]error{
		"poisson q=0":    func() error { _, e := NewPoisson(10, 0, s); return e }(),
		"poisson q>1":    func() error { _, e := NewPoisson(10, 1.5, s); return e }(),
		"poisson q NaN":  func() error { _, e := NewPoisson(10, math.NaN(), s); return e }(),
		"poisson n=0":    func() error { _, e := NewPoisson(0, 0.1, s); return e }(),
		"twice q2=0":     func() error { _, e := NewTwice(10, 5, 0.1, 0, s); return e }(),
		"twice dim=0":    func() error { _, e := NewTwice(10, 0, 0.1, 0.5, s); return e }(),
		"wor b>n":        func() error { _, e := NewWithoutReplacement(10, 11, s); return e }(),
		"shuffle b=0":    func() error { _, e := NewShuffle(10, 0, s); return e }(),
		"poisson nil rs": func() error { _, e := NewPoisson(10, 0.1, nil); return e }(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// run draws k batches (and, for Twice, a mask per selected example) and
// returns them flattened, to compare runs bit for bit.
func run(s Sampler, k int) []int {
	var out, b []int
	for i := 0; i < k; i++ {
		b = s.Next(b)
		out = append(out, -1)
		out = append(out, b...)
		if tw, ok := s.(*Twice); ok {
			m := NewMask(tw.dim)
			for range b {
				tw.FillMask(m)
				for _, w := range m.Words() {
					out = append(out, int(w))
				}
			}
		}
	}
	return out
}

func TestReproducibleAndRoundTrip(t *testing.T) {
	makers := map[string]func(seed uint64) Sampler{
		"poisson": func(seed uint64) Sampler { p, _ := NewPoisson(300, 0.05, rng.New(seed)); return p },
		"twice":   func(seed uint64) Sampler { p, _ := NewTwice(300, 77, 0.05, 0.3, rng.New(seed)); return p },
		"wor":     func(seed uint64) Sampler { p, _ := NewWithoutReplacement(300, 16, rng.New(seed)); return p },
		"shuffle": func(seed uint64) Sampler { p, _ := NewShuffle(300, 16, rng.New(seed)); return p },
	}
	for name, mk := range makers {
		a, b := run(mk(42), 50), run(mk(42), 50)
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed, different draws", name)
		}
		if slices.Equal(a, run(mk(43), 50)) {
			t.Errorf("%s: different seeds, same draws", name)
		}
		// Checkpoint mid-run (mid-epoch for shuffle), restore into a sampler
		// built from another seed, and continue.
		s := mk(42)
		run(s, 23)
		st, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		want := run(s, 40)
		r := mk(99)
		if err := r.UnmarshalBinary(st); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := run(r, 40); !slices.Equal(got, want) {
			t.Errorf("%s: restored sampler diverges", name)
		}
		if err := r.UnmarshalBinary(st[:len(st)-1]); err == nil {
			t.Errorf("%s: truncated state accepted", name)
		}
	}
	// A state of one kind is refused by another.
	p, _ := NewPoisson(10, 0.5, rng.New(1))
	st, _ := p.MarshalBinary()
	var sh Shuffle
	if err := sh.UnmarshalBinary(st); err == nil {
		t.Error("shuffle accepted a poisson state")
	}
}

func FuzzUnmarshal(f *testing.F) {
	s := rng.New(1)
	p, _ := NewPoisson(10, 0.5, s)
	tw, _ := NewTwice(10, 9, 0.5, 0.2, s)
	w, _ := NewWithoutReplacement(10, 3, s)
	sh, _ := NewShuffle(10, 3, s)
	for _, m := range []Sampler{p, tw, w, sh} {
		b, _ := m.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		targets := []Sampler{&Poisson{}, &Twice{}, &WithoutReplacement{}, &Shuffle{}}
		for _, m := range targets {
			if err := m.UnmarshalBinary(b); err != nil {
				continue
			}
			// An accepted state must be usable (skip absurd sizes).
			if m.ExpectedBatch() > 1e5 {
				continue
			}
			var batch []int
			for k := 0; k < 3; k++ {
				batch = m.Next(batch)
			}
			if _, err := m.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	p, _ := NewPoisson(5000, 0.02, rng.New(1))
	tw, _ := NewTwice(5000, 1000, 0.02, 0.3, rng.New(1))
	w, _ := NewWithoutReplacement(5000, 64, rng.New(1))
	sh, _ := NewShuffle(5000, 64, rng.New(1))
	m := NewMask(1000)
	dst := make([]int, 0, 5000)
	for name, f := range map[string]func(){
		"poisson": func() { dst = p.Next(dst) },
		"twice":   func() { dst = tw.Next(dst); tw.FillMask(m) },
		"wor":     func() { dst = w.Next(dst) },
		"shuffle": func() { dst = sh.Next(dst) },
	} {
		if a := testing.AllocsPerRun(50, f); a != 0 {
			t.Errorf("%s: %v allocations per step", name, a)
		}
	}
}
