package trainer

import (
	"context"
	"math"
	"path/filepath"
	"sync"
	"testing"
)

// localGroup is an in-process Reducer group: n ranks in goroutines meet at
// each collective, and the last to arrive combines every rank's buffer
// (sums in rank order) and writes the result into all of them.
type localGroup struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	bufs    []any
	arrived int
	gen     int
}

func newLocalGroup(n int) []Reducer {
	g := &localGroup{n: n, bufs: make([]any, n)}
	g.cond = sync.NewCond(&g.mu)
	out := make([]Reducer, n)
	for r := range out {
		out[r] = localRank{g, r}
	}
	return out
}

func (g *localGroup) meet(rank int, buf any, combine func(bufs []any)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gen := g.gen
	g.bufs[rank] = buf
	if g.arrived++; g.arrived == g.n {
		combine(g.bufs)
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
		return
	}
	for gen == g.gen {
		g.cond.Wait()
	}
}

type localRank struct {
	g    *localGroup
	rank int
}

func (l localRank) Rank() int { return l.rank }
func (l localRank) Size() int { return l.g.n }

func sumInto[T float32 | float64 | int64](bufs []any) {
	total := make([]T, len(bufs[0].([]T)))
	for _, b := range bufs {
		for i, v := range b.([]T) {
			total[i] += v
		}
	}
	for _, b := range bufs {
		copy(b.([]T), total)
	}
}

func (l localRank) SumFloat32(buf []float32) error {
	l.g.meet(l.rank, buf, sumInto[float32])
	return nil
}
func (l localRank) SumFloat64(buf []float64) error {
	l.g.meet(l.rank, buf, sumInto[float64])
	return nil
}
func (l localRank) SumInt64(buf []int64) error { l.g.meet(l.rank, buf, sumInto[int64]); return nil }

func (l localRank) MaxFloat64(buf []float64) error {
	l.g.meet(l.rank, buf, func(bufs []any) {
		m := append([]float64(nil), bufs[0].([]float64)...)
		for _, b := range bufs[1:] {
			for i, v := range b.([]float64) {
				m[i] = math.Max(m[i], v)
			}
		}
		for _, b := range bufs {
			copy(b.([]float64), m)
		}
	})
	return nil
}

func (l localRank) Broadcast(buf []byte, root int) error {
	l.g.meet(l.rank, buf, func(bufs []any) {
		for _, b := range bufs {
			copy(b.([]byte), bufs[root].([]byte))
		}
	})
	return nil
}

// Two ranks in one process, through the Reducer interface, give one
// process's run: the same batches and ε at every step, parameters within
// float32 rounding of the summation order (bit for bit with lattice noise,
// whose int64 sums add exactly), and the same per-instance report. This
// covers the ranks' paths without an MPI build (distributed_mpi_test.go
// runs them over MPI).
func TestReducerEquivalence(t *testing.T) {
	base := func(t *testing.T) Config {
		c := small(t)
		c.Steps, c.BatchSize, c.CheckpointEvery, c.EvalEvery = 6, 200, 6, 3
		return c
	}
	for _, tc := range []struct {
		name string
		set  func(c *Config)
	}{
		{"mlp", func(*Config) {}},
		{"twice-hybrid", func(c *Config) { c.Sampler, c.Q2, c.Clip, c.D0 = "twice", 0.5, "hybrid", 64 }},
		{"clip-quantile", func(c *Config) { c.ClipQuantile = 0.5 }},
		{"per-instance", func(c *Config) { c.PerInstance, c.ClipNorm = 30, 5 }},
		{"lattice", func(c *Config) { c.Noise = NoiseLattice }},
		{"bandmf", func(c *Config) { c.Noise, c.Bands, c.Sampler = NoiseBandMF, 3, "cyclic" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one := base(t)
			tc.set(&one)
			ref := run1(t, one)
			dist := one
			dist.OutDir, dist.Distributed = t.TempDir(), "mpi"
			ranks := newLocalGroup(2)
			sums := make([]*Summary, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for r := range ranks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := dist
					if r > 0 {
						c.OutDir = t.TempDir() // only rank 0 writes
					}
					sums[r], errs[r] = Run(context.Background(), c, Options{Reducer: ranks[r]})
				}()
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			da, db := mustMetrics(t, one.OutDir), mustMetrics(t, dist.OutDir)
			if len(da) != len(db) || len(da) != one.Steps {
				t.Fatalf("%d vs %d steps", len(da), len(db))
			}
			for i := range da {
				if da[i].BatchSize != db[i].BatchSize || da[i].EpsilonBest != db[i].EpsilonBest {
					t.Fatalf("step %d: batch %d vs %d, ε %v vs %v", i+1, da[i].BatchSize, db[i].BatchSize, da[i].EpsilonBest, db[i].EpsilonBest)
				}
			}
			maxDiff, maxAbs := checkpointParamsDiff(t, dist.OutDir, one.OutDir)
			if one.Noise == NoiseLattice && maxDiff != 0 {
				t.Errorf("lattice noise: parameters differ by up to %v; the exact sums make them identical", maxDiff)
			}
			if maxDiff > 1e-4*maxAbs {
				t.Errorf("parameters differ by up to %v (largest %v): more than float32 rounding", maxDiff, maxAbs)
			}
			if one.PerInstance > 0 {
				a := readFile(t, filepath.Join(one.OutDir, "private", "per_instance.csv"))
				b := readFile(t, filepath.Join(dist.OutDir, "private", "per_instance.csv"))
				if string(a) != string(b) {
					t.Error("per_instance.csv: one process and two ranks differ")
				}
			}
			if ref.Best.Epsilon != sums[0].Best.Epsilon || sums[1].Best.Epsilon != sums[0].Best.Epsilon {
				t.Errorf("ε: one process %v, ranks %v and %v", ref.Best.Epsilon, sums[0].Best.Epsilon, sums[1].Best.Epsilon)
			}
		})
	}
}
