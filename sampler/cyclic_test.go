package sampler

import (
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

func TestCyclicPoissonParticipation(t *testing.T) {
	const n, b, q, steps = 103, 4, 0.3, 4000
	c, err := NewCyclicPoisson(n, b, q, rng.New(11))
	if err != nil {
		t.Fatal(err)
	}
	last := make([]int, n)
	for i := range last {
		last[i] = -1
	}
	count := make([]int, n)
	var buf []int
	for step := 0; step < steps; step++ {
		buf = c.Next(buf)
		if !slices.IsSorted(buf) {
			t.Fatalf("step %d: batch not increasing", step)
		}
		for _, i := range buf {
			if i < 0 || i >= n || i%b != step%b {
				t.Fatalf("step %d: example %d is not in part %d", step, i, step%b)
			}
			if last[i] >= 0 && step-last[i] < b {
				t.Fatalf("example %d at steps %d and %d, fewer than %d apart", i, last[i], step, b)
			}
			last[i] = step
			count[i]++
		}
	}
	// Each example is offered steps/b times and taken with probability q.
	offers := float64(steps / b)
	sd := math.Sqrt(offers * q * (1 - q))
	for i, k := range count {
		if math.Abs(float64(k)-offers*q) > 5*sd {
			t.Errorf("example %d taken %d times, expected %.0f ± %.1f", i, k, offers*q, sd)
		}
	}
	if got, want := c.ExpectedBatch(), q*n/b; got != want {
		t.Errorf("ExpectedBatch %v, want %v", got, want)
	}
}

// With one part, cyclic Poisson is the Poisson sampler, draw for draw.
func TestCyclicPoissonOnePartIsPoisson(t *testing.T) {
	c, _ := NewCyclicPoisson(500, 1, 0.07, rng.New(12))
	p, _ := NewPoisson(500, 0.07, rng.New(12))
	var a, b []int
	for step := 0; step < 50; step++ {
		a, b = c.Next(a), p.Next(b)
		if !slices.Equal(a, b) {
			t.Fatalf("step %d: %v vs Poisson's %v", step, a, b)
		}
	}
	if c.ExpectedBatch() != p.ExpectedBatch() {
		t.Errorf("divisors differ: %v vs %v", c.ExpectedBatch(), p.ExpectedBatch())
	}
}

func TestCyclicParticipation(t *testing.T) {
	const n, b = 10, 3
	c, err := NewCyclic(n, b)
	if err != nil {
		t.Fatal(err)
	}
	var buf []int
	for round := 0; round < 4; round++ {
		seen := make([]int, n)
		for p := 0; p < b; p++ {
			buf = c.Next(buf)
			for _, i := range buf {
				seen[i]++
			}
		}
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("round %d: example %d taken %d times in %d steps", round, i, k, b)
			}
		}
	}
	if got := c.ExpectedBatch(); got != float64(n)/b {
		t.Errorf("ExpectedBatch %v", got)
	}
}

func TestCyclicRoundTripAndRefusals(t *testing.T) {
	for name, mk := range map[string]func() Sampler{
		"cyclic_poisson": func() Sampler { c, _ := NewCyclicPoisson(50, 5, 0.4, rng.New(13)); return c },
		"cyclic":         func() Sampler { c, _ := NewCyclic(50, 5); return c },
	} {
		a, b := mk(), mk()
		var x, y []int
		for i := 0; i < 7; i++ {
			x = a.Next(x)
		}
		st, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.UnmarshalBinary(st); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := 0; i < 9; i++ {
			x, y = a.Next(x), b.Next(y)
			if !slices.Equal(x, y) {
				t.Fatalf("%s: restored sampler differs at step %d", name, i)
			}
		}
		if err := b.UnmarshalBinary(st[:len(st)-1]); err == nil {
			t.Errorf("%s: truncated state accepted", name)
		}
	}
	if _, err := NewCyclicPoisson(5, 6, 0.1, rng.New(1)); err == nil {
		t.Error("more parts than examples accepted")
	}
	if _, err := NewCyclicPoisson(5, 2, 0, rng.New(1)); err == nil {
		t.Error("rate 0 accepted")
	}
	if _, err := NewCyclic(5, 0); err == nil {
		t.Error("0 parts accepted")
	}
}
