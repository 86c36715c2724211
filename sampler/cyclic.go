package sampler

import (
	"fmt"

	"github.com/dptrain/dptrain/rng"
)

// CyclicPoisson splits the n examples into b parts by index (example i is
// in part i mod b, fixed and public) and at step t Poisson-samples part
// t mod b at rate q. An example can therefore take part only in steps b
// apart, which is what amplified banded matrix factorization needs
// (docs/matrix-mechanism.md); b = 1 is the Poisson sampler.
type CyclicPoisson struct {
	n, b int
	q    float64
	t    int64
	s    *rng.Stream
}

// NewCyclicPoisson returns the sampler over n examples in b ≤ n parts at
// rate q ∈ (0,1], drawing from s.
func NewCyclicPoisson(n, b int, q float64, s *rng.Stream) (*CyclicPoisson, error) {
	if n < 1 || b < 1 || b > n {
		return nil, fmt.Errorf("sampler: cyclic poisson needs 1 <= parts <= n, got parts=%d n=%d", b, n)
	}
	if err := checkRate("cyclic poisson rate q", q); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("sampler: cyclic poisson: nil random stream")
	}
	return &CyclicPoisson{n: n, b: b, q: q, s: s}, nil
}

// Parts is b; Q the inclusion probability within the step's part.
func (c *CyclicPoisson) Parts() int { return c.b }
func (c *CyclicPoisson) Q() float64 { return c.q }

// Next returns the included indices of part t mod b, increasing.
func (c *CyclicPoisson) Next(dst []int) []int {
	p := int(c.t % int64(c.b))
	c.t++
	dst = bernoulliIndices(c.s, partSize(c.n, c.b, p), c.q, dst[:0])
	for i, k := range dst {
		dst[i] = p + k*c.b
	}
	return dst
}

// ExpectedBatch is q·n/b, the same public divisor at every step (parts
// differ in size by at most one example).
func (c *CyclicPoisson) ExpectedBatch() float64 { return c.q * float64(c.n) / float64(c.b) }

// MarshalBinary saves the parameters, the step and the stream position.
func (c *CyclicPoisson) MarshalBinary() ([]byte, error) {
	var e enc
	e.header("cyclic_poisson")
	e.i64(int64(c.n))
	e.i64(int64(c.b))
	e.f64(c.q)
	e.i64(c.t)
	if err := e.stream(c.s); err != nil {
		return nil, fmt.Errorf("sampler: cyclic poisson: %w", err)
	}
	return e.b.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (c *CyclicPoisson) UnmarshalBinary(b []byte) error {
	d := dec{b: b}
	if err := d.header("cyclic_poisson"); err != nil {
		return err
	}
	n, parts, q, t, s := int(d.i64()), int(d.i64()), d.f64(), d.i64(), d.stream()
	if err := d.finish("cyclic_poisson"); err != nil {
		return err
	}
	nc, err := NewCyclicPoisson(n, parts, q, s)
	if err != nil {
		return fmt.Errorf("sampler: cyclic poisson state: %w", err)
	}
	if t < 0 {
		return fmt.Errorf("sampler: cyclic poisson state: negative step %d", t)
	}
	nc.t = t
	*c = *nc
	return nil
}

// Cyclic is b-min-separation participation without amplification: the n
// examples in b parts by index, and step t takes all of part t mod b, so
// every example takes part exactly once every b steps.
type Cyclic struct {
	n, b int
	t    int64
}

// NewCyclic returns the sampler over n examples in b ≤ n parts.
func NewCyclic(n, b int) (*Cyclic, error) {
	if n < 1 || b < 1 || b > n {
		return nil, fmt.Errorf("sampler: cyclic needs 1 <= parts <= n, got parts=%d n=%d", b, n)
	}
	return &Cyclic{n: n, b: b}, nil
}

// Parts is b.
func (c *Cyclic) Parts() int { return c.b }

// Next returns part t mod b, increasing.
func (c *Cyclic) Next(dst []int) []int {
	p := int(c.t % int64(c.b))
	c.t++
	dst = dst[:0]
	for i := p; i < c.n; i += c.b {
		dst = append(dst, i)
	}
	return dst
}

// ExpectedBatch is n/b.
func (c *Cyclic) ExpectedBatch() float64 { return float64(c.n) / float64(c.b) }

// MarshalBinary saves the parameters and the step.
func (c *Cyclic) MarshalBinary() ([]byte, error) {
	var e enc
	e.header("cyclic")
	e.i64(int64(c.n))
	e.i64(int64(c.b))
	e.i64(c.t)
	return e.b.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (c *Cyclic) UnmarshalBinary(b []byte) error {
	d := dec{b: b}
	if err := d.header("cyclic"); err != nil {
		return err
	}
	n, parts, t := int(d.i64()), int(d.i64()), d.i64()
	if err := d.finish("cyclic"); err != nil {
		return err
	}
	nc, err := NewCyclic(n, parts)
	if err != nil {
		return fmt.Errorf("sampler: cyclic state: %w", err)
	}
	if t < 0 {
		return fmt.Errorf("sampler: cyclic state: negative step %d", t)
	}
	nc.t = t
	*c = *nc
	return nil
}

// partSize is the number of indices i < n with i mod b = p.
func partSize(n, b, p int) int { return (n - p + b - 1) / b }
