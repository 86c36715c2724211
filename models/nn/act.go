package nn

// ReLU is max(x, 0), elementwise.
type ReLU[T Float] struct{ elementwise[T] }

// NewReLU returns a ReLU layer.
func NewReLU[T Float]() *ReLU[T] { return &ReLU[T]{} }

func (*ReLU[T]) Kind() string { return "relu" }

func (l *ReLU[T]) Forward(x []T, n int, _ bool) []T {
	out := l.out[:n*l.size]
	for i, v := range x[:len(out)] {
		out[i] = max(v, 0)
	}
	return out
}

func (l *ReLU[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	dx := l.dx[:n*l.size]
	out := l.out[:len(dx)]
	for i, d := range dy[:len(dx)] {
		if out[i] > 0 {
			dx[i] = d
		} else {
			dx[i] = 0
		}
	}
	return dx
}

// Tanh is tanh(x), elementwise.
type Tanh[T Float] struct{ elementwise[T] }

// NewTanh returns a Tanh layer.
func NewTanh[T Float]() *Tanh[T] { return &Tanh[T]{} }

func (*Tanh[T]) Kind() string { return "tanh" }

func (l *Tanh[T]) Forward(x []T, n int, _ bool) []T {
	out := l.out[:n*l.size]
	for i, v := range x[:len(out)] {
		out[i] = tanh(v)
	}
	return out
}

func (l *Tanh[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	dx := l.dx[:n*l.size]
	out := l.out[:len(dx)]
	for i, d := range dy[:len(dx)] {
		dx[i] = d * (1 - out[i]*out[i])
	}
	return dx
}

// elementwise holds the buffers of a shape-preserving layer.
type elementwise[T Float] struct {
	size    int
	out, dx []T
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
