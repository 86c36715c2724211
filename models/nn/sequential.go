package nn

import "fmt"

// Sequential applies its layers in order. It is itself a Layer, so it nests
// (the body of a Residual block is a Sequential).
type Sequential[T Float] struct {
	layers []Layer[T]
}

// NewSequential returns the composition of layers, first to last.
func NewSequential[T Float](layers ...Layer[T]) *Sequential[T] {
	return &Sequential[T]{layers: layers}
}

func (s *Sequential[T]) Kind() string         { return "seq" }
func (s *Sequential[T]) Children() []Layer[T] { return s.layers }

func (s *Sequential[T]) Build(in Shape, maxBatch int) (Shape, error) {
	if len(s.layers) == 0 {
		return Shape{}, fmt.Errorf("sequential: no layers")
	}
	for i, l := range s.layers {
		out, err := l.Build(in, maxBatch)
		if err != nil {
			return Shape{}, fmt.Errorf("layer %d (%s): %w", i, l.Kind(), err)
		}
		in = out
	}
	return in, nil
}

func (s *Sequential[T]) Forward(x []T, n int, train bool) []T {
	for _, l := range s.layers {
		x = l.Forward(x, n, train)
	}
	return x
}

func (s *Sequential[T]) Backward(dy []T, n int, needDx bool) []T {
	for i := len(s.layers) - 1; i >= 0; i-- {
		dy = s.layers[i].Backward(dy, n, i > 0 || needDx)
	}
	return dy
}

// Residual is body(x) + shortcut(x), with the identity as shortcut when
// Shortcut is nil. The two branches must produce the same shape. Any
// activation after the sum is a separate layer.
type Residual[T Float] struct {
	Body, Shortcut Layer[T]
	size           int
	out, dx        []T
	a, b, dst      []T // operands of the current sum, split over the workers
	addFn          rangeFunc
}

// NewResidual returns the block body(x) + shortcut(x); shortcut nil is the
// identity.
func NewResidual[T Float](body, shortcut Layer[T]) *Residual[T] {
	return &Residual[T]{Body: body, Shortcut: shortcut}
}

func (r *Residual[T]) Kind() string { return "residual" }

func (r *Residual[T]) Children() []Layer[T] {
	if r.Shortcut == nil {
		return []Layer[T]{r.Body}
	}
	return []Layer[T]{r.Body, r.Shortcut}
}

func (r *Residual[T]) Build(in Shape, maxBatch int) (Shape, error) {
	out, err := r.Body.Build(in, maxBatch)
	if err != nil {
		return Shape{}, fmt.Errorf("residual body: %w", err)
	}
	sc := in
	if r.Shortcut != nil {
		if sc, err = r.Shortcut.Build(in, maxBatch); err != nil {
			return Shape{}, fmt.Errorf("residual shortcut: %w", err)
		}
	}
	if sc != out {
		return Shape{}, fmt.Errorf("residual: body gives %v, shortcut gives %v", out, sc)
	}
	r.size = out.Size()
	r.out = make([]T, maxBatch*r.size)
	r.dx = make([]T, maxBatch*in.Size())
	r.addFn = r.addRange
	return out, nil
}

func (r *Residual[T]) Forward(x []T, n int, train bool) []T {
	yb := r.Body.Forward(x, n, train)
	ys := x
	if r.Shortcut != nil {
		ys = r.Shortcut.Forward(x, n, train)
	}
	return r.add(r.out[:n*r.size], yb, ys)
}

// add sets dst = a + b elementwise, split over the workers.
func (r *Residual[T]) add(dst, a, b []T) []T {
	r.dst, r.a, r.b = dst, a, b
	parallelFor(len(dst), maxWorkers, len(dst), r.addFn)
	r.dst, r.a, r.b = nil, nil, nil
	return dst
}

func (r *Residual[T]) addRange(_, lo, hi int) {
	dst, a, b := r.dst[lo:hi], r.a[lo:hi], r.b[lo:hi]
	i := 0
	if d32, ok := any(dst).([]float32); ok {
		i = addVec(d32, any(a).([]float32), any(b).([]float32))
	}
	for ; i < len(dst); i++ {
		dst[i] = a[i] + b[i]
	}
}

func (r *Residual[T]) Backward(dy []T, n int, needDx bool) []T {
	dxb := r.Body.Backward(dy, n, needDx)
	dxs := dy
	if r.Shortcut != nil {
		dxs = r.Shortcut.Backward(dy, n, needDx)
	}
	if !needDx {
		return nil
	}
	return r.add(r.dx[:len(dxb)], dxb, dxs)
}
