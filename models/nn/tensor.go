package nn

import "math"

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

// sumSq returns Σ x² accumulated in float64.
func sumSq[T Float](x []T) float64 {
	// Four partial sums: one float64 chain waits on the adder's latency
	// at every element, and this sum runs over every per-sample gradient.
	var s0, s1, s2, s3 float64
	n := len(x) &^ 3
	for i := 0; i < n; i += 4 {
		q := x[i : i+4 : i+4]
		a, b, c, d := float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for _, v := range x[n:] {
		f := float64(v)
		s0 += f * f
	}
	return (s0 + s1) + (s2 + s3)
}

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
	for i, v := range x {
		y[i] += a * v
	}
}

func exp[T Float](x T) T  { return T(math.Exp(float64(x))) }
func tanh[T Float](x T) T { return T(math.Tanh(float64(x))) }
