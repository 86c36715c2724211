package nn

import (
	"fmt"

	"github.com/dptrain/dptrain/rng"
)

// Linear is a fully connected layer z = W·a + b, W of shape Out×In stored
// row-major, followed by b when Bias. Any input shape of size In is read as a
// flat vector. Parameters: W then b.
//
// Per-sample rule: g_i = dz_i ⊗ a_i (and dz_i for b), so
// ‖g_i‖² = ‖a_i‖²‖dz_i‖² (+‖dz_i‖²), exact because a_i and dz_i are vectors;
// Σ_i s_i g_i = (diag(s)·dZ)ᵀ·A, one GEMM.
type Linear[T Float] struct {
	In, Out int
	Bias    bool
	Scheme  InitScheme

	w, b    []T
	x, dz   []T // last input and output gradient (references)
	out, dx []T
	scaled  []T // diag(s)·dZ scratch
	kept    []T // inputs of the kept examples when some are dropped
}

// NewLinear returns a Linear layer from in to out features.
func NewLinear[T Float](in, out int, bias bool) *Linear[T] {
	return &Linear[T]{In: in, Out: out, Bias: bias}
}

func (l *Linear[T]) Kind() string { return "linear" }

func (l *Linear[T]) Build(in Shape, maxBatch int) (Shape, error) {
	if l.In <= 0 || l.Out <= 0 {
		return Shape{}, fmt.Errorf("linear: sizes must be positive, got %d→%d", l.In, l.Out)
	}
	if in.Size() != l.In {
		return Shape{}, fmt.Errorf("linear: input has %d features (%v), layer expects %d", in.Size(), in, l.In)
	}
	l.out = make([]T, maxBatch*l.Out)
	l.dx = make([]T, maxBatch*l.In)
	l.scaled = make([]T, maxBatch*l.Out)
	return Vec(l.Out), nil
}

func (l *Linear[T]) NumParams() int {
	if l.Bias {
		return l.Out*l.In + l.Out
	}
	return l.Out * l.In
}

func (l *Linear[T]) Bind(p []T) {
	l.w = p[:l.Out*l.In]
	l.b = p[l.Out*l.In : l.NumParams()]
}

func (l *Linear[T]) Init(s *rng.Stream) { initWeights(l.Scheme, l.w, l.b, l.In, l.Out, s) }

func (l *Linear[T]) Forward(x []T, n int, _ bool) []T {
	l.x = x[:n*l.In]
	out := l.out[:n*l.Out]
	gemm(false, true, n, l.Out, l.In, 1, l.x, l.In, l.w, l.In, 0, out, l.Out)
	if l.Bias {
		for i := range n {
			axpy(1, l.b, out[i*l.Out:(i+1)*l.Out])
		}
	}
	return out
}

func (l *Linear[T]) Backward(dy []T, n int, needDx bool) []T {
	l.dz = dy[:n*l.Out]
	if !needDx {
		return nil
	}
	dx := l.dx[:n*l.In]
	gemm(false, false, n, l.In, l.Out, 1, l.dz, l.Out, l.w, l.In, 0, dx, l.In)
	return dx
}

func (l *Linear[T]) PerSampleGrads(n int, dst []T, stride int) {
	for i := range n {
		a := l.x[i*l.In : (i+1)*l.In]
		dz := l.dz[i*l.Out : (i+1)*l.Out]
		g := dst[i*stride:]
		for o, d := range dz {
			row := g[o*l.In : (o+1)*l.In]
			for j, v := range a {
				row[j] = d * v
			}
		}
		if l.Bias {
			copy(g[l.Out*l.In:], dz)
		}
	}
}

func (l *Linear[T]) PerSampleNormsSq(n int, dst []float64, stride int) {
	for i := range n {
		a2 := sumSq(l.x[i*l.In : (i+1)*l.In])
		d2 := sumSq(l.dz[i*l.Out : (i+1)*l.Out])
		v := a2 * d2
		if l.Bias {
			v += d2
		}
		dst[i*stride] = v
	}
}

func (l *Linear[T]) AccumulateScaled(n int, scales []T, stride int, sum []T) {
	dz := l.dz[:n*l.Out]
	x := l.x
	if scales != nil {
		// A dropped example (scale 0) may hold ±Inf or NaN, and 0·Inf is
		// NaN, so it is left out of the products rather than multiplied by
		// zero: its rows are skipped and the kept ones packed together.
		dropped := false
		for i := range n {
			if scales[i*stride] == 0 {
				dropped = true
				break
			}
		}
		sc := l.scaled[:n*l.Out]
		if dropped {
			if len(l.kept) < len(l.scaled)/l.Out*l.In {
				l.kept = make([]T, len(l.scaled)/l.Out*l.In)
			}
			m := 0
			for i := range n {
				s := scales[i*stride]
				if s == 0 {
					continue
				}
				src, dst := dz[i*l.Out:(i+1)*l.Out], sc[m*l.Out:(m+1)*l.Out]
				for o, v := range src {
					dst[o] = s * v
				}
				copy(l.kept[m*l.In:(m+1)*l.In], l.x[i*l.In:(i+1)*l.In])
				m++
			}
			n, x = m, l.kept
			if n == 0 {
				return
			}
		} else {
			for i := range n {
				s := scales[i*stride]
				src, dst := dz[i*l.Out:(i+1)*l.Out], sc[i*l.Out:(i+1)*l.Out]
				for o, v := range src {
					dst[o] = s * v
				}
			}
		}
		dz = sc[:n*l.Out]
	}
	gemm(true, false, l.Out, l.In, n, 1, dz, l.Out, x, l.In, 1, sum[:l.Out*l.In], l.In)
	if l.Bias {
		sb := sum[l.Out*l.In : l.NumParams()]
		for i := range n {
			axpy(1, dz[i*l.Out:(i+1)*l.Out], sb)
		}
	}
}
