package lattice

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/dptrain/dptrain/rng"
)

// This file is the exact-noise place for every noisy value released outside
// the gradient (docs/secure-noise.md, "Releases outside the gradient"):
// counts get exactly sampled rounded-Gaussian integer noise, and real sums
// are put on a lattice fixed by public parameters, summed in integers and
// noised there. Either release is an integer (times a public spacing), so
// its low bits carry nothing about the data.

// CountNoise releases integer counts of sensitivity 1 with Gaussian noise of
// standard deviation σ, as c + round(Z), Z ~ N(0, σ²), sampled exactly.
// Because c is an integer, c + round(Z) = round(c + Z): a post-processing of
// the Gaussian mechanism with noise multiplier σ, which is what the
// accountant charges.
type CountNoise struct {
	sigma float64
	sc    scale
	exact *exactNormal
}

// NewCountNoise returns count noise of standard deviation sigma, which must
// lie in [2⁻¹⁰, 2⁵²] (the sampler's range).
func NewCountNoise(sigma float64) (*CountNoise, error) {
	if !(sigma >= 0x1p-10 && sigma <= 0x1p52) {
		return nil, fmt.Errorf("lattice: count noise std %v is outside [2^-10, 2^52]", sigma)
	}
	return &CountNoise{sigma: sigma, sc: newScale(sigma), exact: newExactNormal()}, nil
}

// Sigma is the noise's standard deviation.
func (c *CountNoise) Sigma() float64 { return c.sigma }

// Release returns count + round(Z) with Z ~ N(0, σ²) drawn exactly from r.
// The draw does not depend on count.
func (c *CountNoise) Release(count int64, r *rng.Stream) (int64, error) {
	m := c.exact.sampleKarney(c.sc, streamWords(r)) // the reference sampler: one value per release (docs/secure-noise.md)
	out := count + m
	if (count >= 0) == (m >= 0) && (out >= 0) != (m >= 0) {
		return saturate(m), ErrOverflow
	}
	return out, nil
}

// SumExponent is the lattice exponent k for a sum over n records: the
// default 40, lowered so that n records of at most 2ᵏ steps per coordinate
// stay below 2⁶¹ and leave room for the noise. n is public.
func SumExponent(n int) int {
	if n < 1 {
		n = 1
	}
	return max(1, min(DefaultK, 61-bits.Len(uint(n))))
}

// Sum is a real-valued vector sum released on the lattice γℤᵈ, γ = Δ·2⁻ᵏ,
// with Δ the public L2 bound of one record's contribution. Add clips each
// record to Δ in L2 (with a margin for its float error, then checked in
// exact integers) and truncates it onto the lattice, so that one record
// moves the integer sum by at most 2ᵏ in L2 in exact arithmetic. Release
// adds round(Z), Z ~ N(0, (σ·2ᵏ)²) per coordinate: the released lattice
// point is a post-processing of the Gaussian mechanism with sensitivity Δ
// and noise std σ·Δ, the event Gaussian{σ} the accountant charges.
type Sum struct {
	nz       *Noise
	acc      []int64
	n, limit int64
	q        []int64
	eta      float64 // the clip margin: 2η(d)
	adjusted int     // records the exact check had to pull inside the bound
}

// NewSum returns an empty sum of d coordinates for records of L2 norm at
// most bound, noise multiplier sigma (std σ·bound) and lattice exponent k
// (SumExponent of the public record count), lowered while the noise std
// in lattice steps, σ·2ᵏ, exceeds the sampler's 2⁵².
func NewSum(bound, sigma float64, d, k int) (*Sum, error) {
	for k > 1 && math.Ldexp(sigma, k) > 0x1p52 {
		k--
	}
	nz, err := New(bound, sigma, d, k)
	if err != nil {
		return nil, err
	}
	nz.reference = true // few draws per run: the reference sampler (docs/secure-noise.md)
	return &Sum{nz: nz, acc: make([]int64, d), limit: 1 << (61 - k), q: make([]int64, d), eta: 2 * Margin(d)}, nil
}

// Gamma is the lattice step γ = Δ·2⁻ᵏ.
func (s *Sum) Gamma() float64 { return s.nz.gamma }

// Records is the number of records added (dropped ones included).
func (s *Sum) Records() int64 { return s.n }

// Add clips x to the bound in L2, truncates it onto the lattice and adds
// it to the sum. A record with a non-finite coordinate adds nothing
// (NonFinite). The error reports more records than the lattice holds.
func (s *Sum) Add(x []float64) (Outcome, error) {
	if len(x) != len(s.acc) {
		panic(fmt.Sprintf("lattice: record has %d coordinates, sum %d", len(x), len(s.acc)))
	}
	if s.n >= s.limit {
		return NonFinite, fmt.Errorf("lattice: sum of more than %d records at k = %d: %w", s.limit, s.nz.k, ErrOverflow)
	}
	s.n++
	out, ok := s.quantize(x, s.q)
	if !ok {
		return NonFinite, nil
	}
	for j, v := range s.q {
		s.acc[j] += v
	}
	return out, nil
}

// quantize writes to q the lattice point of x clipped to Δ(1−η): q_j =
// trunc(x_j·t), t = min(2ᵏ/Δ, 2ᵏ(1−η)/‖x‖). η covers the float error of
// the norm (docs/secure-noise.md); ‖q‖₂ ≤ 2ᵏ is then checked in exact
// integers, and a record that still exceeds it (none should) has its
// largest coordinate moved toward zero until it holds, a function of the
// record alone.
func (s *Sum) quantize(x []float64, q []int64) (Outcome, bool) {
	m, norm, ok := norm2(x)
	if !ok {
		return NonFinite, false
	}
	k := s.nz.k
	inv := math.Ldexp(1, k) / s.nz.c
	lim := math.Ldexp(1-s.eta, k) / m / norm
	t, out := inv, Kept
	if lim < inv {
		t, out = lim, Clipped
	}
	for j, v := range x {
		q[j] = int64(v * t) // truncates toward zero; |v·t| ≤ 2ᵏ(1+ε)
	}
	bound := new(big.Int).Lsh(big.NewInt(1), uint(2*k))
	if bigSumSquares(q).Cmp(bound) > 0 {
		s.adjusted++
		for bigSumSquares(q).Cmp(bound) > 0 {
			i := 0
			for j := range q {
				if absInt(q[j]) > absInt(q[i]) {
					i = j
				}
			}
			if q[i] > 0 {
				q[i]--
			} else {
				q[i]++
			}
		}
	}
	return out, true
}

// norm2 returns the float64 L2 norm of x as m·r: m = 1 and r the norm
// unless the plain sum of squares overflows, then m the largest magnitude
// and r the norm of x/m; false for a non-finite coordinate.
func norm2(x []float64) (m, r float64, ok bool) {
	var ss float64
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, false
		}
		ss += v * v
		m = max(m, math.Abs(v))
	}
	if !math.IsInf(ss, 0) {
		return 1, math.Sqrt(ss), true
	}
	ss = 0
	for _, v := range x {
		ss += (v / m) * (v / m)
	}
	return m, math.Sqrt(ss), true
}

func absInt(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Exact returns γ·S, the lattice sum before noise. It is not a release:
// a caller uses it only for a statistic that is a function of the exact
// sum and is released through its own exact noise, with the float error of
// that function bounded (objective perturbation's λ_min of its Hessian,
// docs/per-instance.md#exact-releases). Call it before Release.
func (s *Sum) Exact() []float64 {
	out := make([]float64, len(s.acc))
	for i, v := range s.acc {
		out[i] = s.nz.gamma * float64(v)
	}
	return out
}

// Release adds round(Z) to the lattice sum (AddNoise) and returns the
// released vector γ·(S + round(Z)) in the records' units. The sum is left
// noised: Release is called once.
func (s *Sum) Release(r *rng.Stream) ([]float64, error) {
	if err := s.nz.AddNoise(s.acc, r); err != nil {
		return nil, err
	}
	out := make([]float64, len(s.acc))
	for i, v := range s.acc {
		out[i] = s.nz.gamma * float64(v)
	}
	return out, nil
}
