package nn

import (
	"fmt"

	"github.com/dptrain/dptrain/internal/rng"
)

// Conv2d is a 2-D convolution of a Cin×H×W sample with Cout square K×K
// kernels, stride S and zero padding P, plus a bias per output channel when
// Bias. Parameters: W (Cout × Cin·K·K, row-major) then b.
//
// Computation is per sample through im2col: U_i (Cin·K·K × P_out) holds the
// receptive fields of sample i, so Z_i = W·U_i, dU_i = Wᵀ·dZ_i and the
// per-sample weight gradient is g_i = dZ_i·U_iᵀ. U_i is rebuilt from the
// retained input whenever needed instead of stored, so memory stays at one
// sample's U.
//
// Norm-only path: ‖g_i‖² from g_i computed into one reused Cout×Cin·K·K
// buffer (a direct per-sample GEMM, cost Cout·P_out·Cin·K·K, the cost of the
// forward pass). The Gram alternative ‖g_i‖² = ⟨U_iᵀU_i, dZ_iᵀdZ_i⟩ costs
// P_out²·(Cin·K·K + Cout), which is larger for every zoo layer (P_out ≥ Cout
// in the early layers, where the cost is) and equal at best in ResNet's last
// stage, so the direct product is used.
//
// The norm-only path keeps the per-sample gradients it computes (when
// MaxBatch·NumParams ≤ CacheLimit), so AccumulateScaled is an axpy per sample
// instead of a second im2col and GEMM: a DP step then costs what a non-private
// step costs, for MaxBatch·NumParams values of memory.
type Conv2d[T Float] struct {
	Cin, Cout, K, Stride, Pad int
	Bias                      bool
	Scheme                    InitScheme

	in, outShape Shape
	ckk, p       int // Cin·K·K, output positions
	w, b         []T
	x, dz        []T
	out, dx      []T
	u, du, g     []T // one sample's im2col, its gradient, a weight-gradient scratch
	cache        []T // per-sample gradients from PerSampleNormsSq, or nil
	cached       int // samples in cache for the current chunk; −1 none
}

// CacheLimit bounds the per-layer per-sample gradient cache of Conv2d
// (MaxBatch·NumParams values); larger layers recompute in AccumulateScaled.
var CacheLimit = 1 << 24

// NewConv2d returns a convolution from cin to cout channels with k×k kernels.
func NewConv2d[T Float](cin, cout, k, stride, pad int, bias bool) *Conv2d[T] {
	return &Conv2d[T]{Cin: cin, Cout: cout, K: k, Stride: stride, Pad: pad, Bias: bias}
}

func (l *Conv2d[T]) Kind() string { return "conv2d" }

func (l *Conv2d[T]) Build(in Shape, maxBatch int) (Shape, error) {
	if l.Cin <= 0 || l.Cout <= 0 || l.K <= 0 || l.Stride <= 0 || l.Pad < 0 {
		return Shape{}, fmt.Errorf("conv2d: bad configuration %d→%d k=%d s=%d p=%d", l.Cin, l.Cout, l.K, l.Stride, l.Pad)
	}
	if in.C != l.Cin {
		return Shape{}, fmt.Errorf("conv2d: input has %d channels, layer expects %d", in.C, l.Cin)
	}
	oh := (in.H+2*l.Pad-l.K)/l.Stride + 1
	ow := (in.W+2*l.Pad-l.K)/l.Stride + 1
	if in.H+2*l.Pad < l.K || in.W+2*l.Pad < l.K {
		return Shape{}, fmt.Errorf("conv2d: %d×%d kernel larger than padded input %v", l.K, l.K, in)
	}
	l.in, l.outShape = in, Shape{C: l.Cout, H: oh, W: ow}
	l.ckk, l.p = l.Cin*l.K*l.K, oh*ow
	l.out = make([]T, maxBatch*l.outShape.Size())
	l.dx = make([]T, maxBatch*in.Size())
	l.u = make([]T, l.ckk*l.p)
	l.du = make([]T, l.ckk*l.p)
	l.g = make([]T, l.Cout*l.ckk)
	l.cache, l.cached = nil, -1
	if maxBatch*l.NumParams() <= CacheLimit {
		l.cache = make([]T, maxBatch*l.NumParams())
	}
	return l.outShape, nil
}

func (l *Conv2d[T]) NumParams() int {
	if l.Bias {
		return l.Cout*l.ckk + l.Cout
	}
	return l.Cout * l.ckk
}

func (l *Conv2d[T]) Bind(p []T) {
	n := l.Cout * l.Cin * l.K * l.K
	l.w, l.b = p[:n], p[n:l.NumParams()]
}

func (l *Conv2d[T]) Init(s *rng.Stream) {
	initWeights(l.Scheme, l.w, l.b, l.ckk, l.Cout*l.K*l.K, s)
}

// im2col fills l.u from sample x (Cin×H×W): row (c,kh,kw), column (oh,ow).
func (l *Conv2d[T]) im2col(x []T) {
	H, W, OH, OW := l.in.H, l.in.W, l.outShape.H, l.outShape.W
	r := 0
	for c := range l.Cin {
		xc := x[c*H*W : (c+1)*H*W]
		for kh := range l.K {
			for kw := range l.K {
				row := l.u[r*l.p : (r+1)*l.p]
				r++
				for oh := range OH {
					ih := oh*l.Stride - l.Pad + kh
					dst := row[oh*OW : (oh+1)*OW]
					if ih < 0 || ih >= H {
						clear(dst)
						continue
					}
					xr := xc[ih*W : (ih+1)*W]
					for ow := range OW {
						iw := ow*l.Stride - l.Pad + kw
						if iw < 0 || iw >= W {
							dst[ow] = 0
						} else {
							dst[ow] = xr[iw]
						}
					}
				}
			}
		}
	}
}

// col2im sets dx (Cin×H×W) to the sum of l.du's entries over receptive fields.
func (l *Conv2d[T]) col2im(dx []T) {
	clear(dx)
	H, W, OH, OW := l.in.H, l.in.W, l.outShape.H, l.outShape.W
	r := 0
	for c := range l.Cin {
		dc := dx[c*H*W : (c+1)*H*W]
		for kh := range l.K {
			for kw := range l.K {
				row := l.du[r*l.p : (r+1)*l.p]
				r++
				for oh := range OH {
					ih := oh*l.Stride - l.Pad + kh
					if ih < 0 || ih >= H {
						continue
					}
					dr := dc[ih*W : (ih+1)*W]
					src := row[oh*OW : (oh+1)*OW]
					for ow := range OW {
						iw := ow*l.Stride - l.Pad + kw
						if iw >= 0 && iw < W {
							dr[iw] += src[ow]
						}
					}
				}
			}
		}
	}
}

func (l *Conv2d[T]) Forward(x []T, n int, _ bool) []T {
	isz, osz := l.in.Size(), l.outShape.Size()
	l.x, l.cached = x[:n*isz], -1
	out := l.out[:n*osz]
	for i := range n {
		l.im2col(l.x[i*isz : (i+1)*isz])
		oi := out[i*osz : (i+1)*osz]
		gemm(false, false, l.Cout, l.p, l.ckk, 1, l.w, l.ckk, l.u, l.p, 0, oi, l.p)
		if l.Bias {
			for c, b := range l.b {
				row := oi[c*l.p : (c+1)*l.p]
				for j := range row {
					row[j] += b
				}
			}
		}
	}
	return out
}

func (l *Conv2d[T]) Backward(dy []T, n int, needDx bool) []T {
	isz, osz := l.in.Size(), l.outShape.Size()
	l.dz, l.cached = dy[:n*osz], -1
	if !needDx {
		return nil
	}
	dx := l.dx[:n*isz]
	for i := range n {
		gemm(true, false, l.ckk, l.p, l.Cout, 1, l.w, l.ckk, l.dz[i*osz:(i+1)*osz], l.p, 0, l.du, l.p)
		l.col2im(dx[i*isz : (i+1)*isz])
	}
	return dx
}

// sampleGrad writes sample i's gradient, scaled by alpha and added to beta
// times the destination, into gw (Cout×Cin·K·K) and gb (Cout, may be nil).
func (l *Conv2d[T]) sampleGrad(i int, alpha, beta T, gw, gb []T) {
	isz, osz := l.in.Size(), l.outShape.Size()
	l.im2col(l.x[i*isz : (i+1)*isz])
	dz := l.dz[i*osz : (i+1)*osz]
	gemm(false, true, l.Cout, l.ckk, l.p, alpha, dz, l.p, l.u, l.p, beta, gw, l.ckk)
	if gb != nil {
		for c := range l.Cout {
			var s T
			for _, v := range dz[c*l.p : (c+1)*l.p] {
				s += v
			}
			gb[c] = beta*gb[c] + alpha*s
		}
	}
}

func (l *Conv2d[T]) biasOf(g []T) []T {
	if !l.Bias {
		return nil
	}
	return g[l.Cout*l.ckk : l.NumParams()]
}

func (l *Conv2d[T]) PerSampleGrads(n int, dst []T, stride int) {
	for i := range n {
		g := dst[i*stride : i*stride+l.NumParams()]
		l.sampleGrad(i, 1, 0, g[:l.Cout*l.ckk], l.biasOf(g))
	}
}

func (l *Conv2d[T]) PerSampleNormsSq(n int, dst []float64, stride int) {
	if l.cache != nil {
		np := l.NumParams()
		l.PerSampleGrads(n, l.cache, np)
		for i := range n {
			dst[i*stride] = sumSq(l.cache[i*np : (i+1)*np])
		}
		l.cached = n
		return
	}
	for i := range n {
		l.sampleGrad(i, 1, 0, l.g, nil)
		v := sumSq(l.g)
		if l.Bias {
			osz := l.outShape.Size()
			dz := l.dz[i*osz : (i+1)*osz]
			for c := range l.Cout {
				s := sum(dz[c*l.p : (c+1)*l.p])
				v += s * s
			}
		}
		dst[i*stride] = v
	}
}

func (l *Conv2d[T]) AccumulateScaled(n int, scales []T, stride int, sum []T) {
	if l.cached == n {
		np := l.NumParams()
		for i := range n {
			s := T(1)
			if scales != nil {
				s = scales[i*stride]
			}
			axpy(s, l.cache[i*np:(i+1)*np], sum[:np])
		}
		return
	}
	for i := range n {
		s := T(1)
		if scales != nil {
			s = scales[i*stride]
		}
		l.sampleGrad(i, s, 1, sum[:l.Cout*l.ckk], l.biasOf(sum))
	}
}
