package bandmf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Correlator turns independent noise vectors z₁, z₂, … into the rows of
// C⁻¹·Z, one step at a time, by forward substitution:
//
//	ẑ_t = z_t − Σ_{k=1}^{b−1} c_k·ẑ_{t−k}   (c₀ = 1),
//
// keeping the last b−1 outputs: O(b·d) memory for d coordinates. Adding ẑ_t
// to step t's gradient sum makes the iterates a post-processing of the
// released C·x + Z. Its state is secret (it is noise): checkpoint it with
// the run's private state only.
type Correlator struct {
	s    Strategy
	d    int
	past [][]float64 // past[(t−k) mod (b−1)] = ẑ_{t−k}
	t    int
}

// NewCorrelator returns a Correlator for d coordinates.
func NewCorrelator(s Strategy, d int) (*Correlator, error) {
	if s.Bands() == 0 {
		return nil, fmt.Errorf("bandmf: correlator needs a strategy")
	}
	if d < 1 {
		return nil, fmt.Errorf("bandmf: correlator needs d >= 1, got %d", d)
	}
	c := &Correlator{s: s, d: d, past: make([][]float64, s.Bands()-1)}
	for i := range c.past {
		c.past[i] = make([]float64, d)
	}
	return c, nil
}

// Step is the number of vectors already correlated.
func (c *Correlator) Step() int { return c.t }

// Next replaces z (len d) by ẑ_t in place and advances one step.
func (c *Correlator) Next(z []float64) error {
	if len(z) != c.d {
		return fmt.Errorf("bandmf: correlator: %d coordinates, want %d", len(z), c.d)
	}
	m := len(c.past)
	for k := 1; k <= m && k <= c.t; k++ {
		ck := c.s.coef[k]
		if ck == 0 {
			continue
		}
		prev := c.past[(c.t-k)%m]
		for i, v := range prev {
			z[i] -= ck * v
		}
	}
	if m > 0 {
		copy(c.past[c.t%m], z)
	}
	c.t++
	return nil
}

// MarshalBinary saves the step and the last b−1 outputs.
func (c *Correlator) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	put := func(v uint64) { _ = binary.Write(&b, binary.LittleEndian, v) }
	put(uint64(len(c.s.coef)))
	for _, v := range c.s.coef {
		put(math.Float64bits(v))
	}
	put(uint64(c.d))
	put(uint64(c.t))
	for _, p := range c.past {
		for _, v := range p {
			put(math.Float64bits(v))
		}
	}
	return b.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary; the strategy
// must be the one the Correlator was made with.
func (c *Correlator) UnmarshalBinary(p []byte) error {
	get := func() (uint64, error) {
		if len(p) < 8 {
			return 0, fmt.Errorf("bandmf: correlator state truncated")
		}
		v := binary.LittleEndian.Uint64(p)
		p = p[8:]
		return v, nil
	}
	b, err := get()
	if err != nil {
		return err
	}
	if b != uint64(len(c.s.coef)) {
		return fmt.Errorf("bandmf: correlator state has %d bands, the run has %d", b, len(c.s.coef))
	}
	for k := range c.s.coef {
		v, err := get()
		if err != nil {
			return err
		}
		if math.Float64frombits(v) != c.s.coef[k] {
			return fmt.Errorf("bandmf: correlator state is for another strategy (coefficient %d differs)", k)
		}
	}
	d, err := get()
	if err != nil {
		return err
	}
	if d != uint64(c.d) {
		return fmt.Errorf("bandmf: correlator state has %d coordinates, the run has %d", d, c.d)
	}
	t, err := get()
	if err != nil {
		return err
	}
	if int64(t) < 0 {
		return fmt.Errorf("bandmf: correlator state has a negative step")
	}
	for _, row := range c.past {
		for i := range row {
			v, err := get()
			if err != nil {
				return err
			}
			row[i] = math.Float64frombits(v)
		}
	}
	if len(p) != 0 {
		return fmt.Errorf("bandmf: correlator state has %d trailing bytes", len(p))
	}
	c.t = int(t)
	return nil
}
