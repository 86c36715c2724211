package nn

import (
	"fmt"

	"github.com/dptrain/dptrain/rng"
)

// Dropout zeroes each value with probability P during training and scales
// the survivors by 1/(1−P) (inverted dropout); in evaluation it is the
// identity. The mask is drawn per value from Stream, so it is independent
// across samples and per-sample gradients stay per-sample; the same mask is
// used by the backward pass and by the per-sample rules of the chunk.
type Dropout[T Float] struct {
	P      float64
	Stream *rng.Stream

	size    int
	mask    []T // 0 or 1/(1−P)
	train   bool
	out, dx []T
}

// NewDropout returns a dropout layer drawing its masks from s.
func NewDropout[T Float](p float64, s *rng.Stream) *Dropout[T] { return &Dropout[T]{P: p, Stream: s} }

func (*Dropout[T]) Kind() string { return "dropout" }

func (l *Dropout[T]) Build(in Shape, maxBatch int) (Shape, error) {
	if !(l.P >= 0 && l.P < 1) {
		return Shape{}, fmt.Errorf("dropout: probability %v outside [0, 1)", l.P)
	}
	if l.Stream == nil {
		return Shape{}, fmt.Errorf("dropout: no random stream")
	}
	l.size = in.Size()
	l.mask = make([]T, maxBatch*l.size)
	l.out = make([]T, maxBatch*l.size)
	l.dx = make([]T, maxBatch*l.size)
	return in, nil
}

func (l *Dropout[T]) Forward(x []T, n int, train bool) []T {
	l.train = train && l.P > 0
	if !l.train {
		return x
	}
	keep := T(1 / (1 - l.P))
	m, out := l.mask[:n*l.size], l.out[:n*l.size]
	for j := range m {
		if l.Stream.Float64() < l.P {
			m[j] = 0
		} else {
			m[j] = keep
		}
		out[j] = x[j] * m[j]
	}
	return out
}

func (l *Dropout[T]) Backward(dy []T, n int, needDx bool) []T {
	if !needDx {
		return nil
	}
	if !l.train {
		return dy
	}
	dx := l.dx[:n*l.size]
	for j := range dx {
		dx[j] = dy[j] * l.mask[j]
	}
	return dx
}
