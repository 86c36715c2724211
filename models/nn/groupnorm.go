package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/dptrain/dptrain/internal/rng"
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
	gs      []T // 2C scratch: one sample's (dγ, dβ)
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
	l.gs = make([]T, 2*l.Channels)
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

func (l *GroupNorm[T]) Forward(x []T, n int, _ bool) []T {
	sz, hw := l.in.Size(), l.in.H*l.in.W
	gsz := sz / l.Groups
	for i := range n {
		for g := range l.Groups {
			off := i*sz + g*gsz
			xs := x[off : off+gsz]
			mean := sum(xs) / float64(gsz)
			var v float64
			for _, a := range xs {
				d := float64(a) - mean
				v += d * d
			}
			r := 1 / math.Sqrt(v/float64(gsz)+l.Eps)
			l.rstd[i*l.Groups+g] = T(r)
			xh := l.xhat[off : off+gsz]
			for j, a := range xs {
				xh[j] = T((float64(a) - mean) * r)
			}
		}
		xh, out := l.xhat[i*sz:(i+1)*sz], l.out[i*sz:(i+1)*sz]
		if !l.Affine {
			copy(out, xh)
			continue
		}
		for c := range l.Channels {
			gm, bt := l.gamma[c], l.beta[c]
			for j := c * hw; j < (c+1)*hw; j++ {
				out[j] = gm*xh[j] + bt
			}
		}
	}
	return l.out[:n*sz]
}

func (l *GroupNorm[T]) Backward(dy []T, n int, needDx bool) []T {
	l.dy = dy[:n*l.in.Size()]
	if !needDx {
		return nil
	}
	sz, hw := l.in.Size(), l.in.H*l.in.W
	gsz, cpg := sz/l.Groups, l.Channels/l.Groups
	dx := l.dx[:n*sz]
	for i := range n {
		for g := range l.Groups {
			off := i*sz + g*gsz
			xh, d, o := l.xhat[off:off+gsz], l.dy[off:off+gsz], dx[off:off+gsz]
			// dx̂ = γ·dy; dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)).
			for j := range d {
				o[j] = d[j]
				if l.Affine {
					o[j] *= l.gamma[g*cpg+j/hw]
				}
			}
			var m1, m2 float64
			for j, v := range o {
				m1 += float64(v)
				m2 += float64(v) * float64(xh[j])
			}
			m1 /= float64(gsz)
			m2 /= float64(gsz)
			r := float64(l.rstd[i*l.Groups+g])
			for j, v := range o {
				o[j] = T(r * (float64(v) - m1 - float64(xh[j])*m2))
			}
		}
	}
	return dx
}

// sampleGrad writes sample i's (dγ, dβ) into g (length 2C).
func (l *GroupNorm[T]) sampleGrad(i int, g []T) {
	sz, hw := l.in.Size(), l.in.H*l.in.W
	xh, d := l.xhat[i*sz:(i+1)*sz], l.dy[i*sz:(i+1)*sz]
	for c := range l.Channels {
		var sg, sb T
		for j := c * hw; j < (c+1)*hw; j++ {
			sg += d[j] * xh[j]
			sb += d[j]
		}
		g[c], g[l.Channels+c] = sg, sb
	}
}

func (l *GroupNorm[T]) PerSampleGrads(n int, dst []T, stride int) {
	for i := range n {
		l.sampleGrad(i, dst[i*stride:i*stride+2*l.Channels])
	}
}

func (l *GroupNorm[T]) PerSampleNormsSq(n int, dst []float64, stride int) {
	for i := range n {
		l.sampleGrad(i, l.gs)
		dst[i*stride] = sumSq(l.gs)
	}
}

func (l *GroupNorm[T]) AccumulateScaled(n int, scales []T, stride int, sum []T) {
	for i := range n {
		l.sampleGrad(i, l.gs)
		s := T(1)
		if scales != nil {
			s = scales[i*stride]
		}
		axpy(s, l.gs, sum[:2*l.Channels])
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
