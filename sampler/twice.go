package sampler

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/rng"
)

// Twice is (q1, q2)-twice Poisson sampling (paper 003, Algorithm 2): each
// step, Poisson(q1) over the n examples, then for every selected example an
// independent Bernoulli(q2) mask over the dim released coordinates. Masks
// are fresh per example and per coordinate; they are applied to the
// example's CLIPPED vector (clip first, then mask:
// docs/twice-sampling.md#twice-poisson-sampling).
//
// Twice sampling is not Poisson sampling at rate q1·q2 and must not be
// accounted as such; Params returns what the twice-sampling accountant
// needs.
type Twice struct {
	n, dim int
	q1, q2 float64
	idx    *rng.Stream // example selection
	mask   *rng.Stream // coordinate masks
}

// TwiceParams is the sampling part of a twice-sampling privacy event
// (accountant twice-sampling RDP, paper 003 Theorem 5.4/5.6). Q2 is the
// exact realised coordinate rate (see FillMask). The step's event is built by package mechanism
// from these fields together with the clipper's per-block sensitivities.
type TwiceParams struct {
	Q1, Q2 float64
	N, Dim int
}

// NewTwice returns a twice sampler over n examples and dim released
// coordinates, with rates q1, q2 ∈ (0,1]. Example selection and masks draw
// from two independent children of s.
func NewTwice(n, dim int, q1, q2 float64, s *rng.Stream) (*Twice, error) {
	if n < 1 || dim < 1 {
		return nil, fmt.Errorf("sampler: twice needs n >= 1 and dim >= 1, got n=%d dim=%d", n, dim)
	}
	if err := checkRate("twice rate q1", q1); err != nil {
		return nil, err
	}
	if err := checkRate("twice rate q2", q2); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("sampler: twice: nil random stream")
	}
	if q2 < 1 && q2 != 0.5 && q2 >= geomBelow {
		q2 = math.Floor(q2*(1<<32)) / (1 << 32) // the exact rate of the threshold draw
	}
	return &Twice{n: n, dim: dim, q1: q1, q2: q2,
		idx: s.Child("twice/examples"), mask: s.Child("twice/coords")}, nil
}

// Params returns the sampling parameters for the accountant.
func (t *Twice) Params() TwiceParams {
	return TwiceParams{Q1: t.q1, Q2: t.q2, N: t.n, Dim: t.dim}
}

// Next returns the examples selected this step (Poisson(q1)), in increasing
// order, in dst's storage.
func (t *Twice) Next(dst []int) []int {
	return bernoulliIndices(t.idx, t.n, t.q1, dst[:0])
}

// ExpectedBatch is n·q1, the expected number of selected examples.
func (t *Twice) ExpectedBatch() float64 { return t.q1 * float64(t.n) }

// ExpectedCoordBatch is n·q1·q2, the expected number of examples that
// contribute to any one coordinate: the divisor that makes the released
// sum an unbiased mean-gradient estimate
// (docs/twice-sampling.md#twice-poisson-sampling). Use it, not ExpectedBatch,
// as the optimizer's expected batch size.
func (t *Twice) ExpectedCoordBatch() float64 { return t.q1 * t.q2 * float64(t.n) }

// geomBelow is the rate under which masks are drawn by geometric skips
// (O(q2·dim) logarithms); at or above it, by 32-bit threshold comparisons
// (dim/2 random words), which is cheaper there.
const geomBelow = 1.0 / 16

// FillMask draws one example's fresh Bernoulli(q2) coordinate mask into m
// (which must have Len() == dim). q2 = 1/2 uses raw random bits; q2 < 1/16
// geometric skips, O(1 + q2·dim) draws; otherwise one 32-bit uniform per
// coordinate compared with ⌊q2·2³²⌋, so the realised rate is q2 rounded
// down to a multiple of 2⁻³² — Params reports that exact rate.
func (t *Twice) FillMask(m *Mask) {
	if m.Len() != t.dim {
		panic(fmt.Sprintf("sampler: mask over %d coordinates, sampler has dim %d", m.Len(), t.dim))
	}
	switch {
	case t.q2 >= 1:
		m.Fill()
	case t.q2 == 0.5:
		words := m.Words()
		for i := range words {
			words[i] = t.mask.Uint64()
		}
		m.Trim()
	case t.q2 >= geomBelow:
		// Two 32-bit uniforms per random word, compared with ⌊q2·2³²⌋:
		// the realised rate is exactly t.q2 (quantised in NewTwice).
		thr := uint64(t.q2 * (1 << 32))
		words := m.Words()
		for wi := range words {
			var w uint64
			for b := 0; b < 64; b += 2 {
				r := t.mask.Uint64()
				if r&0xffffffff < thr {
					w |= 1 << uint(b)
				}
				if r>>32 < thr {
					w |= 2 << uint(b)
				}
			}
			words[wi] = w
		}
		m.Trim()
	default:
		m.Clear()
		logq1 := math.Log1p(-t.q2)
		i, n := -1, m.Len()
		for {
			i += 1 + geomSkip(t.mask, logq1, n)
			if i >= n {
				return
			}
			m.Set(i)
		}
	}
}

// MarshalBinary saves the parameters and both stream positions.
func (t *Twice) MarshalBinary() ([]byte, error) {
	var e enc
	e.header("twice")
	e.i64(int64(t.n))
	e.i64(int64(t.dim))
	e.f64(t.q1)
	e.f64(t.q2)
	if err := e.stream(t.idx); err != nil {
		return nil, fmt.Errorf("sampler: twice: %w", err)
	}
	if err := e.stream(t.mask); err != nil {
		return nil, fmt.Errorf("sampler: twice: %w", err)
	}
	return e.b.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (t *Twice) UnmarshalBinary(b []byte) error {
	d := dec{b: b}
	if err := d.header("twice"); err != nil {
		return err
	}
	n, dim, q1, q2 := int(d.i64()), int(d.i64()), d.f64(), d.f64()
	idx, mask := d.stream(), d.stream()
	if err := d.finish("twice"); err != nil {
		return err
	}
	nt, err := NewTwice(n, dim, q1, q2, rng.New(0))
	if err != nil {
		return fmt.Errorf("sampler: twice state: %w", err)
	}
	nt.idx, nt.mask = idx, mask
	*t = *nt
	return nil
}
