package lattice

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"runtime"
	"sync"

	"github.com/dptrain/dptrain/internal/vec"
	"github.com/dptrain/dptrain/rng"
)

// DefaultK is the default lattice exponent: γ = C·2⁻⁴⁰. The lattice is 2¹⁶
// times finer than float32's resolution at the clip norm, one example spans
// at most 2⁴⁰ lattice steps per coordinate, and a sum of up to 2²² examples
// stays below 2⁶² in int64, leaving 2⁶² for the noise (docs/secure-noise.md).
const DefaultK = 40

// unit is the float64 unit roundoff u = 2⁻⁵³.
const unit = 0x1p-53

// ErrOverflow reports a noised lattice coordinate outside int64: it needs a
// sum of more than MaxExamples examples or a noise draw beyond 2⁶² lattice
// steps (probability below exp(−2¹⁹) for the scales New accepts).
var ErrOverflow = errors.New("lattice: noised coordinate overflows int64")

// Noise is the lattice mechanism for one released vector: the lattice
// γℤᵈ with γ = C·2⁻ᵏ and Gaussian noise of standard deviation σ_j·C on the
// coordinates of block j, released as γ·(S + round(Z)).
type Noise struct {
	c         float64
	k         int
	gamma     float64
	sizes     []int
	scale     []scale   // σ_j·2ᵏ·h, the noise std in lattice units times the bin width, split for the binned sampler
	refScale  []scale   // σ_j·2ᵏ for the reference sampler
	reference bool      // draw with the reference sampler, sequentially (Sum: its seeded releases predate the binned one)
	lstd      []float64 // the same as float64
	n         int
	exact     *exactNormal
	pool      []*exactNormal // the parallel AddNoise's per-worker scratch
	scratch   []int64        // Add's lattice point
}

// New returns isotropic lattice noise over d coordinates for clip norm c,
// noise multiplier sigma (std σ·C) and lattice exponent k (γ = C·2⁻ᵏ).
func New(c, sigma float64, d, k int) (*Noise, error) {
	return NewBlocks(c, k, []int{d}, []float64{sigma})
}

// NewBlocks returns per-block lattice noise: block j covers sizes[j]
// consecutive coordinates with std sigmas[j]·C (the per-block multipliers of
// anisotropic subspace noise; one block is isotropic noise). The std in
// lattice units, σ_j·2ᵏ, is exact, so the mechanism's std is exactly σ_j·C.
func NewBlocks(c float64, k int, sizes []int, sigmas []float64) (*Noise, error) {
	if !(c > 0) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("lattice: clip norm must be positive and finite, got %v", c)
	}
	if k < 1 || k > 52 {
		return nil, fmt.Errorf("lattice: exponent k must be in [1, 52], got %d", k)
	}
	if len(sizes) == 0 || len(sizes) != len(sigmas) {
		return nil, fmt.Errorf("lattice: noise needs one multiplier per block, got %d blocks and %d multipliers", len(sizes), len(sigmas))
	}
	g := math.Ldexp(c, -k)
	if g == 0 || math.Ldexp(g, k) != c || math.IsInf(math.Ldexp(1, k)/c, 0) {
		return nil, fmt.Errorf("lattice: γ = %v·2^-%d is not exact in float64", c, k)
	}
	nz := &Noise{c: c, k: k, gamma: g, sizes: append([]int(nil), sizes...), exact: newExactNormal()}
	for j, sg := range sigmas {
		if sizes[j] < 1 {
			return nil, fmt.Errorf("lattice: noise block %d has size %d", j, sizes[j])
		}
		s := math.Ldexp(sg, k)
		if !(s >= 0x1p-10 && s <= 0x1p52) {
			return nil, fmt.Errorf("lattice: block %d: noise std %v·2^%d lattice steps is outside [2^-10, 2^52]", j, sg, k)
		}
		nz.scale = append(nz.scale, binScaleOf(s))
		nz.refScale = append(nz.refScale, newScale(s))
		nz.lstd = append(nz.lstd, s)
		nz.n += sizes[j]
	}
	return nz, nil
}

// Len is the number of coordinates the noise covers.
func (n *Noise) Len() int { return n.n }

// Gamma is the lattice step γ = C·2⁻ᵏ.
func (n *Noise) Gamma() float64 { return n.gamma }

// LatticeStd returns the per-block noise std in lattice steps, σ_j·2ᵏ.
func (n *Noise) LatticeStd() []float64 { return append([]float64(nil), n.lstd...) }

// ClipSteps is the clip norm in lattice steps, 2ᵏ: the lattice image of a
// vector C·e_j (an audit's gradient canary) is exactly ClipSteps·e_j.
func (n *Noise) ClipSteps() int64 { return 1 << n.k }

// MaxExamples is the largest number of quantised examples whose sum is
// guaranteed to stay below 2⁶² in absolute value per coordinate: each is at
// most 2ᵏ lattice steps.
func (n *Noise) MaxExamples() int64 { return 1 << (62 - n.k) }

// Margin is η(d) = (2d+16)·2⁻⁵³: clipping to C(1−η) bounds the true L2 norm
// of the quantised example by C although the norm is computed in float64
// from float32 inputs (derivation in docs/secure-noise.md).
func Margin(d int) float64 { return float64(2*d+16) * unit }

// Outcome says what Quantize did with an example.
type Outcome int

const (
	Kept      Outcome = iota // norm within the clip bound: truncated only
	Clipped                  // scaled down to the clip bound, then truncated
	NonFinite                // a non-finite norm: the example contributes nothing
)

// Quantize clips example to C(1−η) in L2, truncates it toward zero onto
// the lattice and adds the lattice coordinates (in units of γ) to acc. The
// added integer vector q satisfies ‖q‖₂ ≤ 2ᵏ exactly, that is ‖γq‖₂ ≤ C,
// whatever the rounding of the norm: every |q_j| is at most the computed
// |x_j·t|, and η covers the error of t (docs/secure-noise.md). An example
// with a non-finite coordinate adds nothing, as clip's clippers drop it.
func (n *Noise) Quantize(example []float32, acc []int64) Outcome {
	if len(example) != len(acc) {
		panic(fmt.Sprintf("lattice: example has %d coordinates, accumulator %d", len(example), len(acc)))
	}
	t, out := n.ClipFactor(vec.SumSquares(example), len(example))
	if out != NonFinite {
		AddScaled(example, t, acc)
	}
	return out
}

// ClipFactor returns the factor t that Quantize applies to an example of d
// coordinates whose sum of squares, computed in float64, is sumSq: t =
// min(fl(2ᵏ/C), fl(2ᵏ(1−η(d))/√sumSq)), with the outcome (NonFinite, and
// t = 0, for a non-finite sumSq). sumSq must be a float64 sum of the exact
// squares of the example's float32 coordinates, added in any order and
// grouping (per layer, per lane, over threads): the margin's argument
// bounds the error of every such sum (docs/secure-noise.md). Then
// AddScaled(x, t, acc), over the whole example in one call or over its
// pieces in several, adds a lattice point of L2 norm at most 2ᵏ.
func (n *Noise) ClipFactor(sumSq float64, d int) (float64, Outcome) {
	norm := math.Sqrt(sumSq)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return 0, NonFinite
	}
	inv := math.Ldexp(1, n.k) / n.c            // 1/γ, rounded
	lim := math.Ldexp(1-Margin(d), n.k) / norm // 2ᵏ(1−η)/‖x‖, rounded
	if lim < inv {
		return lim, Clipped
	}
	return inv, Kept
}

// ClipFactorTo is ClipFactor for a block of d coordinates clipped to its
// own bound c ≤ C (per-layer clipping): t = min(fl(2ᵏ/C),
// fl(fl(2ᵏ·fl(c/C))·fl(1−η(d))/√sumSq)), so that the block's lattice point
// has L2 norm at most 2ᵏ·c/C in exact arithmetic (two more roundings than
// ClipFactor, inside η's slack: docs/secure-noise.md). Blocks whose bounds
// satisfy Σc_b² ≤ C² exactly then give a point of norm at most 2ᵏ.
func (n *Noise) ClipFactorTo(sumSq float64, d int, c float64) (float64, Outcome) {
	norm := math.Sqrt(sumSq)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return 0, NonFinite
	}
	inv := math.Ldexp(1, n.k) / n.c
	lim := math.Ldexp(c/n.c, n.k) * (1 - Margin(d)) / norm
	if lim < inv {
		return lim, Clipped
	}
	return inv, Kept
}

// FloorSteps returns the largest integer Q with Q·γ ≤ c exactly (the
// L∞ bound c in lattice steps), or 2ᵏ when c ≥ C: a coordinate clipped in
// L2 to at most C spans at most 2ᵏ steps anyway.
func (n *Noise) FloorSteps(c float64) int64 {
	if !(c >= 0) {
		return 0
	}
	if c >= n.c {
		return 1 << n.k
	}
	q := math.Floor(c / n.gamma) // below 2ᵏ ≤ 2⁵²: q and q+1 are exact
	// FMA rounds qγ − c once, so its sign is exact.
	for q > 0 && math.FMA(q, n.gamma, -c) > 0 {
		q--
	}
	for math.FMA(q+1, n.gamma, -c) <= 0 {
		q++
	}
	return int64(q)
}

// AddScaledClamped adds to acc[j] the truncation trunc(fl(x_j·t)) clamped
// to [−qmax, qmax] (0 < qmax ≤ 2⁵²), for the coordinates j whose bit
// off+j is set in words (every coordinate when words is nil: twice
// sampling's coordinate mask, whose layout this is). Clamping and masking
// only move coordinates toward zero, so every L2 bound of the truncation
// holds, and |q_j| ≤ qmax.
func AddScaledClamped(x []float32, t float64, qmax int64, words []uint64, off int, acc []int64) {
	acc = acc[:len(x)]
	qf := float64(qmax)
	if words == nil {
		for j, v := range x {
			acc[j] += int64(min(max(float64(v)*t, -qf), qf)) // truncates toward zero
		}
		return
	}
	for j, v := range x {
		q := int64(min(max(float64(v)*t, -qf), qf))
		k := off + j
		acc[j] += q & -int64(words[k>>6]>>(uint(k)&63)&1) // 0 where the mask is clear
	}
}

// AddScaled adds trunc(fl(x_j·t)) to acc[j] for every j: the truncation
// step of Quantize for a factor from ClipFactor.
func AddScaled(x []float32, t float64, acc []int64) {
	acc = acc[:len(x)]
	done := 0
	if addScaledVec != nil {
		done = addScaledVec(x, t, acc)
	}
	addScaledGo(x[done:], t, acc[done:])
}

// addScaledGo is AddScaled's scalar loop, which the vector kernels match
// bit for bit.
func addScaledGo(x []float32, t float64, acc []int64) {
	for j, v := range x {
		acc[j] += int64(float64(v) * t) // conversion truncates toward zero
	}
}

// addScaledKernel is one of AddScaled's vector loops: fn adds a prefix of x
// and returns its length.
type addScaledKernel struct {
	name string
	ok   bool
	fn   func(x []float32, t float64, acc []int64) int
}

// Truncate adds to acc the lattice point q of an already clipped vector x
// (in units of γ): q_j = trunc(x_j/γ), the exact truncation toward zero of
// the exact quotient, so |q_j|·γ ≤ |x_j| and every L2 or L∞ bound of x in
// natural coordinates holds for γq. It is the step for clippers that bound
// blocks themselves (per-layer, hybrid L∞, subspace residual): each L2
// clip needs only its own float margin, and a clip in a rotated basis uses
// RotatedBound. It returns false, adding nothing, if some |x_j| reaches
// about 2⁵³·γ (a clipped vector has |x_j| ≤ C = 2ᵏγ) or is not finite.
func (n *Noise) Truncate(x []float32, acc []int64) bool {
	if len(x) != len(acc) {
		panic(fmt.Sprintf("lattice: vector has %d coordinates, accumulator %d", len(x), len(acc)))
	}
	var m float32
	for _, v := range x {
		m = max(m, abs32(v))
	}
	inv := math.Ldexp(1, n.k) / n.c
	if !(float64(m)*inv < 0x1p53-2) { // q ± 1 stays exact; also catches NaN and Inf
		return false
	}
	g := n.gamma
	for j, v := range x {
		a := math.Abs(float64(v))
		q := math.Trunc(a * inv) // within one of trunc(a/γ): a·inv has relative error ≤ 2u
		// Exact corrections: FMA rounds q·γ − a once, so its sign is exact.
		if math.FMA(q, g, -a) > 0 {
			q--
		} else if math.FMA(q+1, g, -a) <= 0 {
			q++
		}
		if v < 0 {
			q = -q
		}
		acc[j] += int64(q)
	}
	return true
}

func abs32(v float32) float32 {
	if v < 0 || v != v {
		if v != v {
			return float32(math.Inf(1))
		}
		return -v
	}
	return v
}

// RotatedBound returns the clip norm a clipper must use when it bounds norms
// in a rotated basis (subspace clipping) of a block of d coordinates whose
// bound is c and whose vector is then truncated onto the lattice in natural
// coordinates: truncation moves the vector by less than γ√d in L2, and the
// rotation preserves that, so clipping to c − γ√d (less the float margin
// η(d) of c) keeps the block within c after rounding.
func (n *Noise) RotatedBound(c float64, d int) (float64, error) {
	r := c*(1-Margin(d)) - n.gamma*math.Sqrt(float64(d))*(1+Margin(1))
	if !(r > 0) {
		return 0, fmt.Errorf("lattice: rounding margin γ√d = %v leaves nothing of the bound %v; use a larger k", n.gamma*math.Sqrt(float64(d)), c)
	}
	return r, nil
}

// AddNoise adds round(Z) to the lattice sum acc in place, Z ~ N(0, s_j²)
// per coordinate with s_j = σ_j·2ᵏ the block's std in lattice steps, drawn
// exactly from r. acc then holds the released lattice point S + round(Z).
// The draws do not depend on acc; distributed runs reduce acc exactly first
// and call AddNoise with the same stream on every rank.
//
// The noise is drawn in chunks of noiseChunk coordinates, chunk c from its
// own block stream r.Blocks(nonce, c) (AES-CTR keyed from r's seed) with
// one nonce word drawn from r per call, on
// up to GOMAXPROCS workers: the values depend on r's state alone, never on
// the number of workers or their timing, and every chunk's stream is keyed
// by r's secret seed. A chunk's stream is read in blocks (words), which only
// its chunk uses. (Before the blocks, vectors below 2·noiseChunk drew from
// r itself; their seeded values changed with them.) The reference sampler
// draws from r, word for word, sequentially.
func (n *Noise) AddNoise(acc []int64, r *rng.Stream) error {
	if len(acc) != n.n {
		panic(fmt.Sprintf("lattice: noise over %d coordinates, sum has %d", n.n, len(acc)))
	}
	if n.reference {
		return n.addNoiseRange(acc, 0, n.n, n.exact, streamWords(r))
	}
	nonce := r.Uint64()
	chunks := (n.n + noiseChunk - 1) / noiseChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	for len(n.pool) < workers {
		n.pool = append(n.pool, newExactNormal())
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := w; c < chunks; c += workers {
				cr := newWords(r.Blocks(fmt.Sprintf("lattice-noise/%016x/%d", nonce, c)))
				lo := c * noiseChunk
				if err := n.addNoiseRange(acc, lo, min(n.n, lo+noiseChunk), n.pool[w], cr); err != nil {
					errs[w] = err
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// noiseChunk is the coordinates per noise stream of a parallel AddNoise.
const noiseChunk = 1 << 14

// addNoiseRange adds the noise of coordinates [lo, hi) to acc[lo:hi],
// drawn from r with the sampler scratch e.
func (n *Noise) addNoiseRange(acc []int64, lo, hi int, e *exactNormal, r *words) error {
	var err error
	off := 0
	for j, size := range n.sizes {
		sc, ref := n.scale[j], n.refScale[j]
		for i := max(off, lo); i < min(off+size, hi); i++ {
			var m int64
			if n.reference {
				m = e.sampleKarney(ref, r)
			} else {
				m = e.sample(sc, r)
			}
			v := acc[i] + m
			if (acc[i] >= 0) == (m >= 0) && (v >= 0) != (m >= 0) {
				err, v = ErrOverflow, saturate(m)
			}
			acc[i] = v
		}
		off += size
	}
	return err
}

func saturate(m int64) int64 {
	if m < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

// Release adds the noise to acc (see AddNoise) and writes the released
// parameters-space vector out[i] = float32(γ·acc[i]): a post-processing of
// the lattice point alone.
func (n *Noise) Release(acc []int64, out []float32, r *rng.Stream) error {
	if len(out) != len(acc) {
		panic(fmt.Sprintf("lattice: output has %d coordinates, sum %d", len(out), len(acc)))
	}
	if err := n.AddNoise(acc, r); err != nil {
		return err
	}
	n.ToFloat(acc, out)
	return nil
}

// ToFloat writes out[i] = float32(γ·acc[i]).
func (n *Noise) ToFloat(acc []int64, out []float32) {
	for i, v := range acc {
		out[i] = float32(n.gamma * float64(v))
	}
}

// Add has the signature of clip.Gaussian.Add, so that either noise can
// stand where a float32 sum is noised: it rounds each coordinate of sum to
// the nearest lattice point (clamped to ±2⁶² steps; NaN to 0), adds
// round(Z) and writes γ times the result back. Only a sum that is already
// a lattice point (Quantize, then ToFloat) carries the privacy argument of
// docs/secure-noise.md; Release is the path that keeps the sum exact.
func (n *Noise) Add(sum []float32, r *rng.Stream) {
	if len(sum) != n.n {
		panic(fmt.Sprintf("lattice: noise over %d coordinates, sum has %d", n.n, len(sum)))
	}
	if len(n.scratch) != n.n {
		n.scratch = make([]int64, n.n)
	}
	q := n.scratch
	inv := math.Ldexp(1, n.k) / n.c
	for i, v := range sum {
		f := math.Round(float64(v) * inv)
		switch {
		case f != f:
			f = 0
		case f > 0x1p62:
			f = 0x1p62
		case f < -0x1p62:
			f = -0x1p62
		}
		q[i] = int64(f)
	}
	_ = n.AddNoise(q, r) // |q_i| ≤ 2⁶²: only a noise draw beyond 2⁶² steps overflows, and saturates
	n.ToFloat(q, sum)
}

// bigSumSquares is Σ q_j² exactly, for tests and callers that check a bound:
// 128-bit partial sums (each q_j² < 2¹²⁶) carried into a big.Int.
func bigSumSquares(q []int64) *big.Int {
	s, t := new(big.Int), new(big.Int)
	var hi, lo uint64
	for _, v := range q {
		a := uint64(v)
		if v < 0 {
			a = uint64(-v)
		}
		h, l := bits.Mul64(a, a)
		var c uint64
		lo, c = bits.Add64(lo, l, 0)
		hi, c = bits.Add64(hi, h, c)
		if c != 0 {
			s.Add(s, t.Lsh(big.NewInt(1), 128))
		}
	}
	t.SetUint64(hi)
	t.Lsh(t, 64)
	return s.Add(s, t.Or(t, new(big.Int).SetUint64(lo)))
}
