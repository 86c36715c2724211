package nn

import "fmt"

// MaxPool2d takes the maximum over K×K windows moved by Stride, per channel,
// without padding. The gradient flows to the first maximum of each window.
type MaxPool2d[T Float] struct {
	K, Stride int
	in, out   Shape
	arg       []int32 // per output, index of the maximum within the sample
	y, dx     []T
	x         []T // input (forward) or output gradient (backward) of the pass
	in0       []T // the forward's input, for an argmax Backward must rebuild
	n         int
	noArg     bool // the forward did not record arg (inference)
	fwd, bwd  rangeFunc
}

// NewMaxPool2d returns a max pooling layer.
func NewMaxPool2d[T Float](k, stride int) *MaxPool2d[T] { return &MaxPool2d[T]{K: k, Stride: stride} }

func (*MaxPool2d[T]) Kind() string { return "maxpool2d" }

func poolShape(kind string, in Shape, k, s int) (Shape, error) {
	if k <= 0 || s <= 0 || k > in.H || k > in.W {
		return Shape{}, fmt.Errorf("%s: window %d stride %d does not fit input %v", kind, k, s, in)
	}
	return Shape{C: in.C, H: (in.H-k)/s + 1, W: (in.W-k)/s + 1}, nil
}

func (l *MaxPool2d[T]) Build(in Shape, maxBatch int) (Shape, error) {
	out, err := poolShape("maxpool2d", in, l.K, l.Stride)
	if err != nil {
		return Shape{}, err
	}
	l.in, l.out = in, out
	l.arg = make([]int32, maxBatch*out.Size())
	l.y = make([]T, maxBatch*out.Size())
	l.dx = make([]T, maxBatch*in.Size())
	l.fwd, l.bwd = l.forwardRange, l.backwardRange
	return out, nil
}

// Forward pools x. Outside training (train false: evaluation, prediction)
// a 2×2 stride-1 float32 pool takes maxima eight at a time without
// recording the argmax; a Backward after such a pass rebuilds it first.
func (l *MaxPool2d[T]) Forward(x []T, n int, train bool) []T {
	l.x, l.in0, l.n = x, x, n
	l.noArg = !train && l.K == 2 && l.Stride == 1 && maxPool2S1Vec != nil
	if _, ok := any(x).([]float32); !ok {
		l.noArg = false
	}
	parallelFor(n, maxWorkers, n*l.out.Size()*l.K*l.K, l.fwd)
	l.x = nil
	return l.y[:n*l.out.Size()]
}

func (l *MaxPool2d[T]) forwardRange(_, lo, hi int) {
	x := l.x
	H, W, OH, OW := l.in.H, l.in.W, l.out.H, l.out.W
	isz, osz := l.in.Size(), l.out.Size()
	for i := lo; i < hi; i++ {
		xi := x[i*isz : (i+1)*isz]
		yi, ai := l.y[i*osz:(i+1)*osz], l.arg[i*osz:(i+1)*osz]
		if l.noArg {
			maxPool2S1(any(xi).([]float32), any(yi).([]float32), l.in.C, H, W, OH, OW)
			continue
		}
		if l.K == 2 {
			l.forward2(xi, yi, ai)
			continue
		}
		for c := range l.in.C {
			for oh := range OH {
				for ow := range OW {
					best := c*H*W + oh*l.Stride*W + ow*l.Stride
					for kh := range l.K {
						base := c*H*W + (oh*l.Stride+kh)*W + ow*l.Stride
						for kw := range l.K {
							if xi[base+kw] > xi[best] {
								best = base + kw
							}
						}
					}
					o := (c*OH+oh)*OW + ow
					yi[o], ai[o] = xi[best], int32(best)
				}
			}
		}
	}
}

// forward2 is forwardRange's sample loop for 2×2 windows: four compares in
// the same (kh, kw) order with the same strict >, so the maximum and the
// argmax (first of ties) are those of the general loop.
func (l *MaxPool2d[T]) forward2(xi, yi []T, ai []int32) {
	H, W, OH, OW, s := l.in.H, l.in.W, l.out.H, l.out.W, l.Stride
	x32, is32 := any(xi).([]float32)
	y32, _ := any(yi).([]float32)
	for c := range l.in.C {
		if is32 && s == 1 && maxPool2ArgPlane(y32[c*OH*OW:(c+1)*OH*OW], ai[c*OH*OW:(c+1)*OH*OW], x32[c*H*W:(c+1)*H*W], OW, W, OH, int32(c*H*W)) {
			continue
		}
		for oh := range OH {
			r0 := c*H*W + oh*s*W
			o := (c*OH + oh) * OW
			if is32 {
				maxPool2Row32(x32[r0:r0+W+W], W, s, y32[o:o+OW], ai[o:o+OW], int32(r0))
				continue
			}
			row := xi[r0 : r0+W+W]
			yo, ao := yi[o:o+OW], ai[o:o+OW]
			for ow := range yo {
				j := ow * s
				q := row[j : j+W+2 : j+W+2]
				best, bv := j, q[0]
				if q[1] > bv {
					best, bv = j+1, q[1]
				}
				if q[W] > bv {
					best, bv = j+W, q[W]
				}
				if q[W+1] > bv {
					best, bv = j+W+1, q[W+1]
				}
				yo[ow], ao[ow] = bv, int32(r0+best)
			}
		}
	}
}

// maxPool2Row32 is one output row of forward2 in float32, written so the
// compiler selects indices with conditional moves instead of branching on
// the data (mispredicted about every other window): the larger of each
// pair of the window's rows, then of the two, each strict > keeping the
// first of ties in (kh, kw) order as the general loop does. For finite
// inputs the value is x[argmax] up to the sign of a zero (max(−0, +0) is
// +0); a NaN may be passed over where the general loop would keep it.
func maxPool2Row32(row []float32, w, s int, yo []float32, ao []int32, r0 int32) {
	top, bot := row[:len(row)-w], row[w:]
	ow := 0
	if s == 1 && maxPool2ArgVec != nil {
		ow = maxPool2ArgVec(yo, ao, top, bot, w, r0)
	}
	for ; ow < len(yo); ow++ {
		j := ow * s
		a, b, c, d := top[j], top[j+1], bot[j], bot[j+1]
		it, ib := int32(j), int32(j+w)
		if b > a {
			it++
		}
		if d > c {
			ib++
		}
		vt, vb := max(a, b), max(c, d)
		if vb > vt {
			it = ib
		}
		yo[ow], ao[ow] = max(vt, vb), r0+it
	}
}

// maxPool2S1 is 2×2 stride-1 pooling of one float32 sample without argmax,
// vector rows and a scalar tail.
func maxPool2S1(xi, yi []float32, C, H, W, OH, OW int) {
	for c := range C {
		if maxPool2S1Plane(yi[c*OH*OW:(c+1)*OH*OW], xi[c*H*W:(c+1)*H*W], OW, W, OH) {
			continue
		}
		for oh := range OH {
			r0 := xi[(c*H+oh)*W : (c*H+oh+1)*W]
			r1 := xi[(c*H+oh+1)*W : (c*H+oh+2)*W]
			yo := yi[(c*OH+oh)*OW : (c*OH+oh+1)*OW]
			for j := maxPool2S1Vec(yo, r0, r1); j < len(yo); j++ {
				yo[j] = max(r0[j], r0[j+1], r1[j], r1[j+1])
			}
		}
	}
}

func (l *MaxPool2d[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	if l.noArg {
		// The forward ran without the argmax (SetTraining(false) and
		// then a gradient): record it now from the same input.
		l.noArg, l.x = false, l.in0
		parallelFor(l.n, maxWorkers, l.n*l.out.Size()*l.K*l.K, l.fwd)
	}
	l.x = dy
	parallelFor(n, maxWorkers, n*l.in.Size(), l.bwd)
	l.x = nil
	return l.dx[:n*l.in.Size()]
}

func (l *MaxPool2d[T]) backwardRange(_, lo, hi int) {
	isz, osz := l.in.Size(), l.out.Size()
	for i := lo; i < hi; i++ {
		di, ai := l.dx[i*isz:(i+1)*isz], l.arg[i*osz:(i+1)*osz]
		clear(di)
		for o, d := range l.x[i*osz : (i+1)*osz] {
			di[ai[o]] += d
		}
	}
}

// AvgPool2d averages over K×K windows moved by Stride, per channel, without
// padding.
type AvgPool2d[T Float] struct {
	K, Stride int
	in, out   Shape
	y, dx     []T
}

// NewAvgPool2d returns an average pooling layer.
func NewAvgPool2d[T Float](k, stride int) *AvgPool2d[T] { return &AvgPool2d[T]{K: k, Stride: stride} }

func (*AvgPool2d[T]) Kind() string { return "avgpool2d" }

func (l *AvgPool2d[T]) Build(in Shape, maxBatch int) (Shape, error) {
	out, err := poolShape("avgpool2d", in, l.K, l.Stride)
	if err != nil {
		return Shape{}, err
	}
	l.in, l.out = in, out
	l.y = make([]T, maxBatch*out.Size())
	l.dx = make([]T, maxBatch*in.Size())
	return out, nil
}

func (l *AvgPool2d[T]) Forward(x []T, n int, _ bool) []T {
	H, W, OH, OW := l.in.H, l.in.W, l.out.H, l.out.W
	isz, osz := l.in.Size(), l.out.Size()
	inv := 1 / T(l.K*l.K)
	for i := range n {
		xi, yi := x[i*isz:(i+1)*isz], l.y[i*osz:(i+1)*osz]
		for c := range l.in.C {
			for oh := range OH {
				for ow := range OW {
					var s T
					for kh := range l.K {
						base := c*H*W + (oh*l.Stride+kh)*W + ow*l.Stride
						for _, v := range xi[base : base+l.K] {
							s += v
						}
					}
					yi[(c*OH+oh)*OW+ow] = s * inv
				}
			}
		}
	}
	return l.y[:n*osz]
}

func (l *AvgPool2d[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	H, W, OH, OW := l.in.H, l.in.W, l.out.H, l.out.W
	isz, osz := l.in.Size(), l.out.Size()
	inv := 1 / T(l.K*l.K)
	dx := l.dx[:n*isz]
	clear(dx)
	for i := range n {
		di, gi := dx[i*isz:(i+1)*isz], dy[i*osz:(i+1)*osz]
		for c := range l.in.C {
			for oh := range OH {
				for ow := range OW {
					d := gi[(c*OH+oh)*OW+ow] * inv
					for kh := range l.K {
						base := c*H*W + (oh*l.Stride+kh)*W + ow*l.Stride
						for kw := range l.K {
							di[base+kw] += d
						}
					}
				}
			}
		}
	}
	return dx
}

// GlobalAvgPool averages each channel over H×W: C×H×W → C×1×1.
type GlobalAvgPool[T Float] struct {
	in    Shape
	y, dx []T
}

// NewGlobalAvgPool returns a global average pooling layer.
func NewGlobalAvgPool[T Float]() *GlobalAvgPool[T] { return &GlobalAvgPool[T]{} }

func (*GlobalAvgPool[T]) Kind() string { return "globalavgpool" }

func (l *GlobalAvgPool[T]) Build(in Shape, maxBatch int) (Shape, error) {
	l.in = in
	l.y = make([]T, maxBatch*in.C)
	l.dx = make([]T, maxBatch*in.Size())
	return Vec(in.C), nil
}

func (l *GlobalAvgPool[T]) Forward(x []T, n int, _ bool) []T {
	hw := l.in.H * l.in.W
	inv := 1 / T(hw)
	for r := range n * l.in.C {
		var s T
		for _, v := range x[r*hw : (r+1)*hw] {
			s += v
		}
		l.y[r] = s * inv
	}
	return l.y[:n*l.in.C]
}

func (l *GlobalAvgPool[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	hw := l.in.H * l.in.W
	inv := 1 / T(hw)
	for r := range n * l.in.C {
		d := dy[r] * inv
		row := l.dx[r*hw : (r+1)*hw]
		for j := range row {
			row[j] = d
		}
	}
	return l.dx[:n*l.in.Size()]
}
