package nn

import "math"

// ReLU is max(x, 0), elementwise.
type ReLU[T Float] struct{ elementwise[T] }

// NewReLU returns a ReLU layer.
func NewReLU[T Float]() *ReLU[T] { return &ReLU[T]{} }

func (*ReLU[T]) Kind() string { return "relu" }

func (l *ReLU[T]) Build(in Shape, maxBatch int) (Shape, error) {
	l.fwdFn, l.bwdFn = l.fwdRange, l.bwdRange
	return l.elementwise.Build(in, maxBatch)
}

func (l *ReLU[T]) Forward(x []T, n int, _ bool) []T { return l.run(x, n, 1, l.fwdFn) }

func (l *ReLU[T]) fwdRange(_, lo, hi int) {
	out, in := l.out[lo:hi], l.arg[lo:hi]
	j := 0
	if y32, ok := any(out).([]float32); ok {
		j = reluFwdVec(y32, any(in).([]float32))
	}
	for i, v := range in[j:] {
		out[j+i] = max(v, 0)
	}
}

func (l *ReLU[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	return l.runBack(dy, n, 1, l.bwdFn)
}

func (l *ReLU[T]) bwdRange(_, lo, hi int) {
	dx, out := l.dx[lo:hi], l.out[lo:hi]
	if d32, ok := any(l.arg[lo:hi]).([]float32); ok {
		reluBack32(any(dx).([]float32), any(out).([]float32), d32)
		return
	}
	for i, d := range l.arg[lo:hi] {
		if out[i] > 0 {
			dx[i] = d
		} else {
			dx[i] = 0
		}
	}
}

// reluBack32 sets dx = dy where out > 0, else 0, without branches: out is
// max(x, 0), never −0, so out > 0 exactly when its bits are non-zero, and
// the mask selects dy's bits (a data-dependent branch here mispredicts about
// half the time).
func reluBack32(dx, out, dy []float32) {
	out, dy = out[:len(dx)], dy[:len(dx)]
	for i := reluBackVec(dx, out, dy); i < len(dx); i++ {
		var m uint32
		if math.Float32bits(out[i]) != 0 {
			m = ^uint32(0)
		}
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & m)
	}
}

// Tanh is tanh(x), elementwise.
type Tanh[T Float] struct{ elementwise[T] }

// NewTanh returns a Tanh layer.
func NewTanh[T Float]() *Tanh[T] { return &Tanh[T]{} }

func (*Tanh[T]) Kind() string { return "tanh" }

func (l *Tanh[T]) Build(in Shape, maxBatch int) (Shape, error) {
	l.fwdFn, l.bwdFn = l.fwdRange, l.bwdRange
	return l.elementwise.Build(in, maxBatch)
}

func (l *Tanh[T]) Forward(x []T, n int, _ bool) []T { return l.run(x, n, 8, l.fwdFn) }

func (l *Tanh[T]) fwdRange(_, lo, hi int) {
	out := l.out[lo:hi]
	if x32, ok := any(l.arg[lo:hi]).([]float32); ok {
		tanhSlice32(any(out).([]float32), x32)
		return
	}
	for i, v := range l.arg[lo:hi] {
		out[i] = tanh(v)
	}
}

func (l *Tanh[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	return l.runBack(dy, n, 1, l.bwdFn)
}

func (l *Tanh[T]) bwdRange(_, lo, hi int) {
	dx, out, dy := l.dx[lo:hi], l.out[lo:hi], l.arg[lo:hi]
	i := 0
	if d32, ok := any(dx).([]float32); ok {
		i = tanhBackVec(d32, any(out).([]float32), any(dy).([]float32))
	}
	for ; i < len(dx); i++ {
		dx[i] = dy[i] * (1 - T(out[i]*out[i])) // rounded as tanhBackVec rounds
	}
}

// elementwise holds the buffers of a shape-preserving layer. Its passes are
// split over the workers by element ranges (no sums, so any split gives the
// same values); each pass's range function is made once and kept, so the
// steady state allocates nothing (the layers bind them in Build).
type elementwise[T Float] struct {
	size         int
	out, dx      []T
	arg          []T // input of the current pass
	fwdFn, bwdFn rangeFunc
}

// run applies the forward range function fn to x.
func (e *elementwise[T]) run(x []T, n, cost int, fn rangeFunc) []T {
	m := n * e.size
	e.arg = x[:m]
	parallelFor(m, maxWorkers, m*cost, fn)
	e.arg = nil
	return e.out[:m]
}

// runBack applies the backward range function to dy.
func (e *elementwise[T]) runBack(dy []T, n, cost int, fn rangeFunc) []T {
	m := n * e.size
	e.arg = dy[:m]
	parallelFor(m, maxWorkers, m*cost, fn)
	e.arg = nil
	return e.dx[:m]
}

func (e *elementwise[T]) Build(in Shape, maxBatch int) (Shape, error) {
	e.size = in.Size()
	e.out = make([]T, maxBatch*e.size)
	e.dx = make([]T, maxBatch*e.size)
	return in, nil
}

// Flatten reads a C×H×W sample as a vector of C·H·W features. It moves no
// data (the layout is already sample-major).
type Flatten[T Float] struct{}

// NewFlatten returns a Flatten layer.
func NewFlatten[T Float]() *Flatten[T] { return &Flatten[T]{} }

func (*Flatten[T]) Kind() string                         { return "flatten" }
func (*Flatten[T]) Build(in Shape, _ int) (Shape, error) { return Vec(in.Size()), nil }
func (*Flatten[T]) Forward(x []T, _ int, _ bool) []T     { return x }
func (*Flatten[T]) Backward(dy []T, _ int, needDx bool) []T {
	if !needDx {
		return nil
	}
	return dy
}
