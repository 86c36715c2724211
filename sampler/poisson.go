package sampler

import (
	"fmt"

	"github.com/dptrain/dptrain/rng"
)

// Poisson includes every one of n examples independently with probability
// q at every step. Batches vary in size and may be empty; an empty step
// still adds noise and still counts as a step.
type Poisson struct {
	n int
	q float64
	s *rng.Stream
}

// NewPoisson returns a Poisson sampler over n examples at rate q ∈ (0,1],
// drawing from s.
func NewPoisson(n int, q float64, s *rng.Stream) (*Poisson, error) {
	if n < 1 {
		return nil, fmt.Errorf("sampler: poisson needs n >= 1 examples, got %d", n)
	}
	if err := checkRate("poisson rate q", q); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("sampler: poisson: nil random stream")
	}
	return &Poisson{n: n, q: q, s: s}, nil
}

// N is the number of examples; Q the inclusion probability.
func (p *Poisson) N() int     { return p.n }
func (p *Poisson) Q() float64 { return p.q }

// Next returns the indices included this step, in increasing order, in
// dst's storage. It costs O(1 + batch) draws (geometric skips), not O(n).
func (p *Poisson) Next(dst []int) []int {
	return bernoulliIndices(p.s, p.n, p.q, dst[:0])
}

// ExpectedBatch is q·n, the divisor for the noisy gradient sum.
func (p *Poisson) ExpectedBatch() float64 { return p.q * float64(p.n) }

// MarshalBinary saves the parameters and the stream position.
func (p *Poisson) MarshalBinary() ([]byte, error) {
	var e enc
	e.header("poisson")
	e.i64(int64(p.n))
	e.f64(p.q)
	if err := e.stream(p.s); err != nil {
		return nil, fmt.Errorf("sampler: poisson: %w", err)
	}
	return e.b.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (p *Poisson) UnmarshalBinary(b []byte) error {
	d := dec{b: b}
	if err := d.header("poisson"); err != nil {
		return err
	}
	n, q, s := int(d.i64()), d.f64(), d.stream()
	if err := d.finish("poisson"); err != nil {
		return err
	}
	np, err := NewPoisson(n, q, s)
	if err != nil {
		return fmt.Errorf("sampler: poisson state: %w", err)
	}
	*p = *np
	return nil
}
