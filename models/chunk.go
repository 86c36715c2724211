package models

import (
	"fmt"
	"math"
)

// ScaleRule maps one sample's per-group squared gradient norms (length K)
// to the per-group scales applied before summing (length K): the clipping
// factors.
type ScaleRule func(normsSq []float64, scales []float32)

// FlatClip clips the whole gradient to L2 norm c: every group of sample i
// gets min(1, c/‖g_i‖).
func FlatClip(c float64) ScaleRule {
	return func(normsSq []float64, scales []float32) {
		var s float64
		for _, v := range normsSq {
			s += v
		}
		f := float32(1)
		switch n := math.Sqrt(s); {
		case math.IsNaN(n) || math.IsInf(n, 0):
			f = 0 // a non-finite gradient is dropped (Chunker.ClippedSum leaves it out)
		case n > c:
			f = float32(c / n)
		}
		for k := range scales {
			scales[k] = f
		}
	}
}

// PerLayerClip clips group k to L2 norm c[k]: min(1, c[k]/‖g_{i,k}‖).
func PerLayerClip(c []float64) ScaleRule {
	return func(normsSq []float64, scales []float32) {
		for k, v := range normsSq {
			scales[k] = 1
			switch n := math.Sqrt(v); {
			case math.IsNaN(n) || math.IsInf(n, 0):
				scales[k] = 0 // dropped: see FlatClip
			case n > c[k]:
				scales[k] = float32(c[k] / n)
			}
		}
	}
}

// Chunker runs a logical batch of any size through a model in chunks of at
// most MaxBatch samples (physical batching), so memory stays bounded
// whatever the batch size. Its buffers are allocated once and reused.
type Chunker struct {
	m       PerSampleModel
	normsSq []float64
	scales  []float32
	grads   []float32
	losses  []float32
	kept    Batch // the kept examples of a chunk that dropped one
}

// NewChunker returns a Chunker for m.
func NewChunker(m PerSampleModel) *Chunker {
	k := len(m.Groups())
	return &Chunker{
		m:       m,
		normsSq: make([]float64, m.MaxBatch()*k),
		scales:  make([]float32, m.MaxBatch()*k),
		losses:  make([]float32, m.MaxBatch()),
	}
}

func (c *Chunker) check(b Batch, losses []float32) error {
	if b.N < 0 || len(b.X) < b.N*c.m.InputSize() {
		return fmt.Errorf("models: batch has %d input values for %d samples of size %d", len(b.X), b.N, c.m.InputSize())
	}
	if losses != nil && len(losses) < b.N {
		return fmt.Errorf("models: losses has length %d, need %d", len(losses), b.N)
	}
	if b.Y != nil && len(b.Y) < b.N || b.T != nil && len(b.T) < b.N {
		return fmt.Errorf("models: batch has %d labels and %d targets for %d samples", len(b.Y), len(b.T), b.N)
	}
	return nil
}

// ClippedSum adds Σ_i clip(g_i) to sum (length D) over the b.N samples of b,
// where sample i's groups are scaled by rule(‖g_{i,1}‖², …, ‖g_{i,K}‖²); it
// uses the norm-only path (PerSampleNormsSq + AccumulateScaled) chunk by
// chunk. losses (length ≥ b.N, or nil) receives the per-sample losses.
func (c *Chunker) ClippedSum(b Batch, rule ScaleRule, sum []float32, losses []float32) error {
	if err := c.check(b, losses); err != nil {
		return err
	}
	if len(sum) != c.m.NumParams() {
		return fmt.Errorf("models: sum has length %d, model has %d parameters", len(sum), c.m.NumParams())
	}
	k, mb := len(c.m.Groups()), c.m.MaxBatch()
	for lo := 0; lo < b.N; lo += mb {
		hi := min(b.N, lo+mb)
		ch := chunkOf(b, c.m.InputSize(), lo, hi)
		l := c.losses[:ch.N]
		if losses != nil {
			l = losses[lo:hi]
		}
		if err := c.m.PerSampleNormsSq(ch, c.normsSq[:ch.N*k], l); err != nil {
			return fmt.Errorf("models: chunk [%d, %d): %w", lo, hi, err)
		}
		for i := range ch.N {
			rule(c.normsSq[i*k:(i+1)*k], c.scales[i*k:(i+1)*k])
		}
		// A dropped example (a scale of 0, as for a non-finite norm) must
		// add exactly nothing, and 0·NaN is NaN: the chunk is recomputed
		// without it, so only the kept examples enter the products.
		if kept, ok := c.keep(ch, k); !ok {
			if kept.N == 0 {
				continue
			}
			ch = kept
			if err := c.m.PerSampleNormsSq(ch, c.normsSq[:ch.N*k], c.losses[:ch.N]); err != nil {
				return fmt.Errorf("models: chunk [%d, %d): %w", lo, hi, err)
			}
			for i := range ch.N {
				rule(c.normsSq[i*k:(i+1)*k], c.scales[i*k:(i+1)*k])
				if Dropped(c.scales[i*k : (i+1)*k]) {
					return fmt.Errorf("models: chunk [%d, %d): per-sample norms differ between two passes over the same examples", lo, hi)
				}
			}
		}
		if err := c.m.AccumulateScaled(c.scales[:ch.N*k], sum); err != nil {
			return fmt.Errorf("models: chunk [%d, %d): %w", lo, hi, err)
		}
	}
	return nil
}

// Each materialises the per-sample gradients of b chunk by chunk and calls fn
// with each chunk, its gradients (chunk.N × D, reused between calls) and its
// losses; offset is the chunk's first sample in b. It is the path for
// clippers that need the gradients themselves (subspace clipping,
// coordinate masks).
func (c *Chunker) Each(b Batch, fn func(offset int, chunk Batch, grads, losses []float32) error) error {
	if err := c.check(b, nil); err != nil {
		return err
	}
	d, mb := c.m.NumParams(), c.m.MaxBatch()
	if c.grads == nil {
		c.grads = make([]float32, mb*d)
	}
	for lo := 0; lo < b.N; lo += mb {
		hi := min(b.N, lo+mb)
		ch := chunkOf(b, c.m.InputSize(), lo, hi)
		g, l := c.grads[:ch.N*d], c.losses[:ch.N]
		if err := c.m.PerSampleGrads(ch, g, l); err != nil {
			return fmt.Errorf("models: chunk [%d, %d): %w", lo, hi, err)
		}
		if err := fn(lo, ch, g, l); err != nil {
			return err
		}
	}
	return nil
}

// keep returns ch without its dropped examples (a clip scale of 0 or NaN in
// c.scales) and false when it dropped any; ch itself and true otherwise.
func (c *Chunker) keep(ch Batch, k int) (Batch, bool) {
	all := true
	for i := range ch.N {
		if Dropped(c.scales[i*k : (i+1)*k]) {
			all = false
			break
		}
	}
	if all {
		return ch, true
	}
	in := c.m.InputSize()
	kb := Batch{X: c.kept.X[:0], Y: c.kept.Y[:0], T: c.kept.T[:0]}
	for i := range ch.N {
		if Dropped(c.scales[i*k : (i+1)*k]) {
			continue
		}
		kb.X = append(kb.X, ch.X[i*in:(i+1)*in]...)
		if ch.Y != nil {
			kb.Y = append(kb.Y, ch.Y[i])
		}
		if ch.T != nil {
			kb.T = append(kb.T, ch.T[i])
		}
		kb.N++
	}
	if ch.Y == nil {
		kb.Y = nil
	}
	if ch.T == nil {
		kb.T = nil
	}
	c.kept = kb
	return kb, false
}

// Dropped reports whether an example with these per-group clip scales
// (one example's K scales, as [PerSampleModel.AccumulateScaled] takes them)
// is dropped: any scale of 0 (a non-finite norm, see [FlatClip]) or NaN
// drops the whole example, which must then be left out of the products,
// never multiplied by zero (docs/architecture.md#dropped-examples).
func Dropped(s []float32) bool {
	for _, v := range s {
		if v == 0 || v != v {
			return true
		}
	}
	return false
}
