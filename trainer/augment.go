package trainer

import (
	"fmt"
	"github.com/dptrain/dptrain/mechanism"
	"strconv"

	"github.com/dptrain/dptrain/rng"
)

// Augmentation multiplicity (De et al. 2022, §3.1): each sampled example is
// replaced by K augmented copies (random crop of the image reflect-padded by
// AugPad pixels, random horizontal flip) and its gradient is the mean of
// the copies' gradients, taken before clipping. The clipped mean is one
// example's contribution, bounded by C like any other, so the account is
// that of the run without augmentation. The augmentation draws come from
// the initialisation seed (Config.Seed), the step number and the example's
// index in the training set: they are data-independent, cost no privacy
// when known, a resumed run redraws them identically, and an example gets
// the same crops whichever rank of a distributed run processes it.
//
// The mean of K gradients has no norm-only shortcut in our engine (its norm
// needs the cross terms ⟨g_k, g_l⟩, which per-sample norms do not give), so
// augmult runs the materialised path with chunks of ⌊max_physical_batch/K⌋
// examples: memory stays at max_physical_batch gradients.

// AugPad is the reflect padding of the random crops.
const AugPad = 4

// augmenter draws crops and flips of C×H×W images.
type augmenter struct {
	k       int
	c, h, w int
	seed    uint64
	stepKey uint64    // the step's key, from seed and step number
	src     []float32 // the gathered originals of one chunk
	ys      []int
}

func newAugmenter(k int, shape []int, seed uint64) (*augmenter, error) {
	if len(shape) != 3 || shape[1] <= AugPad || shape[2] <= AugPad {
		return nil, fmt.Errorf("augmult needs images [C,H,W] larger than the %d-pixel padding; the data has shape %v", AugPad, shape)
	}
	return &augmenter{k: k, c: shape[0], h: shape[1], w: shape[2], seed: seed}, nil
}

// startStep fixes the augmentation key of one step.
func (a *augmenter) startStep(step int) {
	a.stepKey = rng.New(a.seed).Child("augmult").Child(strconv.Itoa(step)).Uint64()
}

// draw returns copy j of example idx's crop offsets and flip: a hash of
// (step key, idx, j), so draws depend on nothing a rank or a chunk split
// could change.
func (a *augmenter) draw(idx, j int) (dy, dx int, flip bool) {
	h := mix64(a.stepKey ^ mix64(uint64(idx)<<8|uint64(j)))
	const span = 2*AugPad + 1
	dy, dx = int(h%span), int((h/span)%span)
	return dy, dx, (h>>40)&1 == 1
}

// mix64 is SplitMix64's finaliser: a bijection of uint64 whose output bits
// each depend on every input bit.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// reflectIndex maps a coordinate of the padded image into [0, n).
func reflectIndex(u, n int) int {
	if u < 0 {
		u = -u
	}
	if u >= n {
		u = 2*(n-1) - u
	}
	return u
}

// Augment writes into dst (C×H×W) the crop of the reflect-padded src at
// offset (dy, dx) ∈ [0, 2·AugPad]², mirrored left-right when flip.
func Augment(dst, src []float32, c, h, w, dy, dx int, flip bool) {
	for ch := 0; ch < c; ch++ {
		plane, out := src[ch*h*w:(ch+1)*h*w], dst[ch*h*w:(ch+1)*h*w]
		for y := 0; y < h; y++ {
			sy := reflectIndex(y+dy-AugPad, h)
			for x := 0; x < w; x++ {
				xx := x
				if flip {
					xx = w - 1 - x
				}
				out[y*w+x] = plane[sy*w+reflectIndex(xx+dx-AugPad, w)]
			}
		}
	}
}

// expand writes K random augmentations of each of the b images in src
// (training-set indices idx) into dst (b·K images, copies of example i at
// i·K … i·K+K−1) and repeats ys.
func (a *augmenter) expand(dst, src []float32, idx []int, ys []int, b int, yd []int) {
	sz := a.c * a.h * a.w
	for i := 0; i < b; i++ {
		for j := 0; j < a.k; j++ {
			t := i*a.k + j
			dy, dx, flip := a.draw(idx[i], j)
			Augment(dst[t*sz:(t+1)*sz], src[i*sz:(i+1)*sz], a.c, a.h, a.w, dy, dx, flip)
			yd[t] = ys[i]
		}
	}
}

// MeanGroups replaces the b·k rows of g (length d) by the b means of
// consecutive groups of k rows, written to rows 0…b−1 in place.
func MeanGroups(g []float32, b, k, d int) {
	inv := 1 / float32(k)
	for i := 0; i < b; i++ {
		dst := g[i*d : (i+1)*d]
		copy(dst, g[i*k*d:(i*k+1)*d]) // row i·k ≥ i: not yet overwritten
		for j := 1; j < k; j++ {
			for t, v := range g[(i*k+j)*d : (i*k+j+1)*d] {
				dst[t] += v
			}
		}
		for t := range dst {
			dst[t] *= inv
		}
	}
}

// chunk runs one chunk of examples with augmentation multiplicity: K
// copies each, per-copy gradients, their means clipped and added to sum.
func (ag augmultGradients) chunk(chunk []int, sum []float32, st *stepStats) error {
	g, err := ag.aug.meanRows(ag.s, chunk, st)
	if err != nil {
		return err
	}
	ag.s.clipMaterialised(g, len(chunk), ag.s.model.NumParams(), sum, st)
	return nil
}

// meanRows computes the per-sample gradients of the chunk's K augmented
// copies and returns each example's mean over its copies (b×d, in the
// rows buffer), recording the examples' mean losses.
func (a *augmenter) meanRows(s *state, chunk []int, st *stepStats) ([]float32, error) {
	b, in, d := len(chunk), s.model.InputSize(), s.model.NumParams()
	if len(a.src) < b*in {
		a.src, a.ys = make([]float32, b*in), make([]int, b)
	}
	s.data.train.Gather(chunk, a.src[:b*in], a.ys[:b])
	bk := b * a.k
	a.expand(s.batches.x[:bk*in], a.src[:b*in], chunk, a.ys[:b], b, s.batches.y[:bk])
	batch := s.batches.batch(s.batches.x[:bk*in], s.batches.y[:bk])
	g := s.batches.rows[:bk*d]
	if err := s.model.PerSampleGrads(batch, g, s.batches.losses[:bk]); err != nil {
		return nil, err
	}
	MeanGroups(g, b, a.k, d)
	for i := 0; i < b; i++ {
		var l float64
		for _, v := range s.batches.losses[i*a.k : (i+1)*a.k] {
			l += float64(v)
		}
		st.lossSum += l / float64(a.k)
	}
	st.n += b
	return g[:b*d], nil
}

// validateAugmult checks the augmentation-multiplicity setting.
func (c *Config) validateAugmult(bad func(string, ...any)) {
	if c.Augmult < 0 {
		bad("augmult must be >= 0 (0 or 1 = off), got %d", c.Augmult)
	}
	if c.Augmult > 1 && c.Augmult > c.MaxPhysicalBatch {
		bad("augmult %d exceeds max_physical_batch %d (the K copies of one example share a chunk)", c.Augmult, c.MaxPhysicalBatch)
	}
	if c.Augmult > 1 && c.Clip == mechanism.Subspace {
		bad("augmult is not offered with clip subspace")
	}
}
