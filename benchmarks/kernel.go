package benchmarks

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// Clips are the clip variants the harness and the kernel benchmarks know:
// the trainer's five, hybrid subspace clipping ("subspace") included.
var Clips = []string{"flat", "per-layer", "linf", "hybrid", "subspace"}

// DefaultClips are the clip variants DefaultGrid runs: all but "subspace",
// whose cells add a basis estimate from public_n per-sample gradients of the
// whole model and two rank-K projections of every gradient (on DefaultGrid's
// MLP, over 1 GiB of peak heap and tens of samples/s over 5 steps), and
// which the trainer refuses with shuffling. Name it in Grid.Clips (dptrain
// bench --clips) to add its rows.
var DefaultClips = []string{"flat", "per-layer", "linf", "hybrid"}

// Samplers are the sampling schemes the harness knows.
var Samplers = []string{"poisson", "twice", "shuffle"}

// Noises are the noise kinds the bench takes as its third axis: independent
// Gaussian noise (DP-SGD), the exact lattice noise, and banded
// matrix-factorization noise (Grid.Base.Bands bands).
var Noises = []string{"continuous", "lattice", "bandmf"}

// Subspace kernel settings (BenchmarkClipSum, not the harness, whose cells
// use the trainer's config): two nested principal blocks of rank 16 each,
// estimated from 64 public gradients with 2 power iterations. The L2
// budget C is split evenly over the three blocks (Σ c2_j² = C²).
var (
	subspaceRanks  = []int{16, 16}
	subspacePublic = 64
	subspaceIters  = 2
)

// KernelConfig describes one clipping kernel to time.
type KernelConfig struct {
	Clip     string         // one of Clips
	D        int            // per-sample gradient length
	Groups   []models.Group // parameter groups (per-layer clipping); nil: one group
	Chunk    int            // rows clipped per ClipSum call (physical batch); 0: 64
	ClipNorm float64        // C, the L2 sensitivity; 0: 1
	D0       float64        // hybrid: c∞ = C/√d0; 0: 100
	Seed     uint64
}

// ClipKernel is the clip stage of one DP-SGD step without the model:
// a clipper and a chunk of random per-sample gradients (norms about 2C, so
// clipping is active) that it clips and sums.
type ClipKernel struct {
	Clipper clip.Clipper
	d       int
	chunk   int
	src     []float32 // chunk × d gradients
	work    []float32 // refilled from src before every ClipSum: the flat variants clip in place
	sum     []float32
}

// NewClipKernel builds the clipper kc describes and its random gradients.
func NewClipKernel(kc KernelConfig) (*ClipKernel, error) {
	if kc.D < 1 {
		return nil, fmt.Errorf("kernel dimension must be >= 1, got %d", kc.D)
	}
	if kc.Chunk == 0 {
		kc.Chunk = 64
	}
	if kc.ClipNorm == 0 {
		kc.ClipNorm = 1
	}
	if kc.D0 == 0 {
		kc.D0 = 100
	}
	groups := kc.Groups
	if groups == nil {
		groups = []models.Group{{Name: "all", Offset: 0, Len: kc.D}}
	}
	s := rng.New(kc.Seed)
	var (
		c   clip.Clipper
		err error
	)
	switch kc.Clip {
	case "flat":
		c, err = clip.NewL2(kc.ClipNorm, kc.D, groups)
	case "per-layer":
		c, err = clip.NewPerLayer(kc.ClipNorm, kc.D, groups, clip.GroupSizeWeights(groups))
	case "linf":
		// As the trainer does: C/√D per coordinate keeps the L2 bound C.
		c, err = clip.NewLInf(kc.ClipNorm/math.Sqrt(float64(kc.D)), kc.D)
	case "hybrid":
		c, err = clip.NewL2LInf(kc.ClipNorm, kc.D0, kc.D)
	case "subspace":
		c, err = newSubspace(kc.D, kc.ClipNorm, s.Child("public"))
	default:
		err = fmt.Errorf("unknown clip %q (want one of %v)", kc.Clip, Clips)
	}
	if err != nil {
		return nil, fmt.Errorf("clip %s at D=%d: %w", kc.Clip, kc.D, err)
	}
	k := &ClipKernel{Clipper: c, d: kc.D, chunk: kc.Chunk,
		src: make([]float32, kc.Chunk*kc.D), work: make([]float32, kc.Chunk*kc.D), sum: make([]float32, c.OutDim())}
	s.Child("grads").FillNormal(k.src, 2*kc.ClipNorm/math.Sqrt(float64(kc.D)))
	return k, nil
}

// newSubspace builds the hybrid subspace clipper from the principal
// blocks of a random "public" gradient matrix.
func newSubspace(d int, c float64, s *rng.Stream) (*clip.Subspace, error) {
	k := 0
	for _, r := range subspaceRanks {
		k += r
	}
	if d <= k {
		return nil, fmt.Errorf("subspace clipping needs D > %d (principal ranks %v)", k, subspaceRanks)
	}
	public := make([]float32, subspacePublic*d)
	s.Child("gradients").FillNormal(public, 1/math.Sqrt(float64(d)))
	basis, err := clip.PrincipalBasis(public, subspacePublic, d, subspaceRanks, subspaceIters, s.Child("basis"))
	if err != nil {
		return nil, err
	}
	m := len(subspaceRanks) + 1
	c2 := make([]float64, m)
	for j := range c2 {
		c2[j] = c / math.Sqrt(float64(m))
	}
	return clip.NewSubspace(basis, c2, clip.DefaultD0(len(subspaceRanks)))
}

// OutDim is the length of the released (summed, noised) vector.
func (k *ClipKernel) OutDim() int { return k.Clipper.OutDim() }

// Sum is the running clipped sum (length OutDim).
func (k *ClipKernel) Sum() []float32 { return k.sum }

// Reset zeroes the running sum, as a new step does.
func (k *ClipKernel) Reset() { clear(k.sum) }

// ClipSum clips b per-sample gradients and adds them to Sum, in calls of at
// most Chunk rows; the gradients cycle through the kernel's random rows.
// masks, when non-nil, holds one coordinate mask (length OutDim) per row.
// It allocates nothing.
func (k *ClipKernel) ClipSum(b int, masks []*sampler.Mask) clip.Stats {
	if masks != nil && len(masks) < b {
		panic(fmt.Sprintf("benchmarks: %d masks for %d rows", len(masks), b))
	}
	var st clip.Stats
	for off := 0; off < b; off += k.chunk {
		n := min(k.chunk, b-off)
		copy(k.work[:n*k.d], k.src[:n*k.d])
		var ms []*sampler.Mask
		if masks != nil {
			ms = masks[off : off+n]
		}
		s := k.Clipper.ClipSum(k.work[:n*k.d], n, ms, k.sum)
		st.Clipped += s.Clipped
		st.NonFinite += s.NonFinite
	}
	return st
}
