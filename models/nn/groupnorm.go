package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/dptrain/dptrain/rng"
)

// GroupNorm normalises each sample separately: its C channels are split into
// G groups of C/G channels, and each group (C/G × H × W values) is shifted to
// mean 0 and scaled to variance 1 (biased variance, plus Eps), then, when
// Affine, multiplied by γ_c and shifted by β_c per channel. Parameters: γ
// then β. G = 1 is LayerNorm over all of a sample's features (with
// per-channel affine, which for a vector input is PyTorch's elementwise
// LayerNorm affine).
//
// Per-sample rule: dγ_{i,c} = Σ_{h,w} dy·x̂, dβ_{i,c} = Σ_{h,w} dy. Unlike
// BatchNorm, no statistic crosses samples, so these are exact per-sample
// gradients.
type GroupNorm[T Float] struct {
	Groups, Channels int
	Affine           bool
	Eps              float64

	in      Shape
	gamma   []T
	beta    []T
	xhat    []T // normalised input, kept for backward and the rules
	rstd    []T // 1/σ per (sample, group)
	dy      []T
	out, dx []T
	x       []T
	gs      []T // per-sample (dγ, dβ), maxBatch × 2C
	gsN     int // samples in gs for the current chunk; −1 none

	n, stride            int
	dst                  []T
	norms                []float64
	fwdFn, bwdFn, gradFn rangeFunc
}

// NewGroupNorm returns a GroupNorm of channels split into groups, eps 1e-5.
func NewGroupNorm[T Float](groups, channels int, affine bool) *GroupNorm[T] {
	return &GroupNorm[T]{Groups: groups, Channels: channels, Affine: affine, Eps: 1e-5}
}

// NewLayerNorm returns GroupNorm with one group.
func NewLayerNorm[T Float](channels int, affine bool) *GroupNorm[T] {
	return NewGroupNorm[T](1, channels, affine)
}

func (l *GroupNorm[T]) Kind() string { return "groupnorm" }

func (l *GroupNorm[T]) Build(in Shape, maxBatch int) (Shape, error) {
	if l.Groups <= 0 || l.Channels%l.Groups != 0 {
		return Shape{}, fmt.Errorf("groupnorm: %d channels do not split into %d groups", l.Channels, l.Groups)
	}
	if in.C != l.Channels {
		return Shape{}, fmt.Errorf("groupnorm: input has %d channels, layer expects %d", in.C, l.Channels)
	}
	if in.Size()/l.Groups < 2 {
		return Shape{}, fmt.Errorf("groupnorm: groups of one value normalise to 0")
	}
	l.in = in
	l.xhat = make([]T, maxBatch*in.Size())
	l.rstd = make([]T, maxBatch*l.Groups)
	l.out = make([]T, maxBatch*in.Size())
	l.dx = make([]T, maxBatch*in.Size())
	l.gs = make([]T, maxBatch*2*l.Channels)
	l.gsN = -1
	l.fwdFn, l.bwdFn, l.gradFn = l.forwardRange, l.backwardRange, l.gradRange
	return in, nil
}

func (l *GroupNorm[T]) NumParams() int {
	if l.Affine {
		return 2 * l.Channels
	}
	return 0
}

func (l *GroupNorm[T]) Bind(p []T) {
	l.gamma, l.beta = p[:l.Channels], p[l.Channels:2*l.Channels]
}

// Init sets γ = 1 and β = 0.
func (l *GroupNorm[T]) Init(*rng.Stream) {
	for c := range l.gamma {
		l.gamma[c], l.beta[c] = 1, 0
	}
}

// Samples are independent in every pass, so the passes are split over the
// workers by samples; the per-sample gradients are computed in parallel into
// gs and summed in sample order.
func (l *GroupNorm[T]) Forward(x []T, n int, _ bool) []T {
	l.x, l.gsN = x, -1
	parallelFor(n, maxWorkers, n*l.in.Size()*4, l.fwdFn)
	l.x = nil
	return l.out[:n*l.in.Size()]
}

func (l *GroupNorm[T]) forwardRange(_, lo, hi int) {
	x := l.x
	sz, hw := l.in.Size(), l.in.H*l.in.W
	gsz, cpg := sz/l.Groups, l.Channels/l.Groups
	for i := lo; i < hi; i++ {
		for g := range l.Groups {
			off := i*sz + g*gsz
			xs := x[off : off+gsz]
			// One pass for Σx and Σx² in float64, exact enough for the
			// variance of float32 data (cancellation costs ~μ²/σ²·2⁻⁵³).
			var s1, s2 float64
			for _, a := range xs {
				f := float64(a)
				s1 += f
				s2 += f * f
			}
			mean := s1 / float64(gsz)
			v := max(s2/float64(gsz)-mean*mean, 0)
			r := 1 / math.Sqrt(v+l.Eps)
			l.rstd[i*l.Groups+g] = T(r)
			// x̂ and the affine output in one pass, channel by channel.
			for c := g * cpg; c < (g+1)*cpg; c++ {
				o := i*sz + c*hw
				xs, xh, out := x[o:o+hw], l.xhat[o:o+hw], l.out[o:o+hw]
				xh, out = xh[:len(xs)], out[:len(xs)]
				gm, bt := T(1), T(0)
				if l.Affine {
					gm, bt = l.gamma[c], l.beta[c]
				}
				j := 0
				if x32, ok := any(xs).([]float32); ok {
					j = gnNormVec(any(xh).([]float32), any(out).([]float32), x32, mean, r, float32(gm), float32(bt))
				}
				// T(·) rounds each product, as the vector pass does, so a
				// build that fuses multiply-adds (GOAMD64=v3) agrees with it.
				for ; j < len(xs); j++ {
					h := T((float64(xs[j]) - mean) * r)
					xh[j] = h
					out[j] = T(gm*h) + bt
				}
			}
		}
	}
}

func (l *GroupNorm[T]) Backward(dy []T, n int, needDx bool) []T {
	l.dy, l.gsN = dy[:n*l.in.Size()], -1
	if !needDx {
		return nil
	}
	parallelFor(n, maxWorkers, n*l.in.Size()*4, l.bwdFn)
	l.gsN = n
	return l.dx[:n*l.in.Size()]
}

// backwardRange computes dx for samples [lo, hi). With dx̂ = γ·dy,
// dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)); both means are sums over the
// group's channels of γ_c·dβ_c and γ_c·dγ_c, so the per-sample gradient
// (dγ, dβ) is computed on the way, by sampleGrad's loop, and kept in gs.
func (l *GroupNorm[T]) backwardRange(_, lo, hi int) {
	sz, hw := l.in.Size(), l.in.H*l.in.W
	gsz, cpg := sz/l.Groups, l.Channels/l.Groups
	for i := lo; i < hi; i++ {
		gi := l.gs[i*2*l.Channels : (i+1)*2*l.Channels]
		l.sampleGrad(i, gi)
		for g := range l.Groups {
			var m1, m2 float64
			for c := g * cpg; c < (g+1)*cpg; c++ {
				gm := 1.0
				if l.Affine {
					gm = float64(l.gamma[c])
				}
				m2 += gm * float64(gi[c])
				m1 += gm * float64(gi[l.Channels+c])
			}
			m1 /= float64(gsz)
			m2 /= float64(gsz)
			r := float64(l.rstd[i*l.Groups+g])
			rT, a, b := T(r), T(r*m1), T(r*m2)
			for c := g * cpg; c < (g+1)*cpg; c++ {
				off := i*sz + c*hw
				xh, d, o := l.xhat[off:off+hw], l.dy[off:off+hw], l.dx[off:off+hw]
				d, o = d[:len(xh)], o[:len(xh)]
				gm := rT
				if l.Affine {
					gm *= l.gamma[c]
				}
				j := 0
				if xh32, ok := any(xh).([]float32); ok {
					j = gnBackVec(any(o).([]float32), any(d).([]float32), xh32, float32(gm), float32(a), float32(b))
				}
				for ; j < len(xh); j++ {
					o[j] = T(gm*d[j]) - a - T(xh[j]*b) // rounded as gnBackVec rounds
				}
			}
		}
	}
}

// sampleGrad writes sample i's (dγ, dβ) into g (length 2C).
func (l *GroupNorm[T]) sampleGrad(i int, g []T) {
	sz, hw := l.in.Size(), l.in.H*l.in.W
	xh, d := l.xhat[i*sz:(i+1)*sz], l.dy[i*sz:(i+1)*sz]
	for c := range l.Channels {
		var sg, sb T
		dc := d[c*hw : (c+1)*hw]
		for j, v := range xh[c*hw : (c+1)*hw] {
			sg += dc[j] * v
			sb += dc[j]
		}
		g[c], g[l.Channels+c] = sg, sb
	}
}

func (l *GroupNorm[T]) PerSampleGrads(n int, dst []T, stride int) {
	if l.gsN == n { // the backward pass kept them: the same values, bit for bit
		c2 := 2 * l.Channels
		for i := range n {
			copy(dst[i*stride:i*stride+c2], l.gs[i*c2:(i+1)*c2])
		}
		return
	}
	l.dst, l.stride = dst, stride
	parallelFor(n, maxWorkers, n*l.in.Size()*2, l.gradFn)
	l.dst = nil
}

// gradRange writes the per-sample gradients of samples [lo, hi) to dst, or
// to gs when dst is nil (then also their squared norms to norms).
func (l *GroupNorm[T]) gradRange(_, lo, hi int) {
	c2 := 2 * l.Channels
	for i := lo; i < hi; i++ {
		if l.dst != nil {
			l.sampleGrad(i, l.dst[i*l.stride:i*l.stride+c2])
			continue
		}
		g := l.gs[i*c2 : (i+1)*c2]
		l.sampleGrad(i, g)
		if l.norms != nil {
			l.norms[i*l.stride] = sumSq(g)
		}
	}
}

// fillGS computes the chunk's per-sample gradients into gs once.
func (l *GroupNorm[T]) fillGS(n int, norms []float64, stride int) {
	l.dst, l.norms, l.stride = nil, norms, stride
	parallelFor(n, maxWorkers, n*l.in.Size()*2, l.gradFn)
	l.norms, l.gsN = nil, n
}

func (l *GroupNorm[T]) PerSampleNormsSq(n int, dst []float64, stride int) {
	if l.gsN == n {
		c2 := 2 * l.Channels
		for i := range n {
			dst[i*stride] = sumSq(l.gs[i*c2 : (i+1)*c2])
		}
		return
	}
	l.fillGS(n, dst, stride)
}

func (l *GroupNorm[T]) AccumulateScaled(n int, scales []T, stride int, sum []T) {
	if l.gsN != n {
		l.fillGS(n, nil, 0)
	}
	c2 := 2 * l.Channels
	for i := range n {
		s := T(1)
		if scales != nil {
			s = scales[i*stride]
		}
		if s == 0 {
			continue // dropped: skipped, never 0·Inf = NaN
		}
		axpy(s, l.gs[i*c2:(i+1)*c2], sum[:c2])
	}
}

// ErrBatchNorm is the error every BatchNorm request gets.
var ErrBatchNorm = errors.New("BatchNorm is not supported: it mixes the samples of a batch, so per-sample gradients " +
	"and the privacy analysis break; use GroupNorm (nn.NewGroupNorm, or nn.NewLayerNorm for one group) instead")

// NewBatchNorm refuses BatchNorm with ErrBatchNorm, which names GroupNorm as
// the replacement. It exists so that code porting a PyTorch model gets a
// clear answer instead of a missing symbol.
func NewBatchNorm[T Float](channels int) (Layer[T], error) {
	return nil, fmt.Errorf("nn: BatchNorm(%d): %w", channels, ErrBatchNorm)
}

// NewNorm returns the normalisation layer named kind for channels:
// "groupnorm" (groups groups), "layernorm" (one group) or "none" (nil, nil).
// "batchnorm" is refused with ErrBatchNorm.
func NewNorm[T Float](kind string, groups, channels int) (Layer[T], error) {
	switch kind {
	case "groupnorm", "gn":
		return NewGroupNorm[T](groups, channels, true), nil
	case "layernorm", "ln":
		return NewLayerNorm[T](channels, true), nil
	case "none", "":
		return nil, nil
	case "batchnorm", "bn", "batchnorm2d":
		return NewBatchNorm[T](channels)
	}
	return nil, fmt.Errorf("nn: unknown normalisation %q (want groupnorm, layernorm or none)", kind)
}
