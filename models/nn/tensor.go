package nn

import (
	"math"

	"github.com/dptrain/dptrain/internal/vec"
)

// Float is the element type of the engine: float32 (fast path) or float64
// (exact tests).
type Float interface {
	float32 | float64
}

// Shape is the per-sample shape of an activation: C channels of H×W. A flat
// vector of d features is Shape{C: d, H: 1, W: 1}.
type Shape struct {
	C, H, W int
}

// Vec is the Shape of a flat vector of d features.
func Vec(d int) Shape { return Shape{C: d, H: 1, W: 1} }

// Size is the number of values per sample, C·H·W.
func (s Shape) Size() int { return s.C * s.H * s.W }

func (s Shape) valid() bool { return s.C > 0 && s.H > 0 && s.W > 0 }

// sumSq returns Σ x² accumulated in float64, in the order clip.SumSquares
// uses (internal/vec), so a norm from the gradient cache equals the norm of
// the materialised gradient bit for bit.
func sumSq[T Float](x []T) float64 { return vec.SumSquares(x) }

// sum returns Σ x accumulated in float64.
func sum[T Float](x []T) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// axpy sets y += a·x.
func axpy[T Float](a T, x, y []T) {
	y = y[:len(x)]
	i := 0
	if x32, ok := any(x).([]float32); ok {
		i = axpyVec(float32(a), x32, any(y).([]float32))
	}
	for ; i < len(x); i++ {
		y[i] += T(a * x[i]) // rounded as axpyVec rounds, whatever GOAMD64
	}
}

func exp[T Float](x T) T  { return T(math.Exp(float64(x))) }
func tanh[T Float](x T) T { return T(math.Tanh(float64(x))) }
