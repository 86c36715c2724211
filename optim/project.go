package optim

import (
	"fmt"
	"math"
)

// Projector maps parameters into a fixed convex set W after every step
// (hidden-state accounting,
// docs/hidden-state.md#a2-projection-every-step). Diameter is W's Euclidean
// diameter D, which the hidden-state accountant needs.
type Projector interface {
	// Project moves w into W in place and reports whether it moved.
	Project(w []float32) bool
	Diameter() float64
}

// L2Ball is {w : ‖w − Center‖₂ ≤ Radius}; a nil Center is the origin. Its
// diameter is 2·Radius.
type L2Ball struct {
	center []float32
	radius float64
}

// NewL2Ball returns the ball of the given radius around center (nil: the
// origin). center is copied.
func NewL2Ball(center []float32, radius float64) (*L2Ball, error) {
	if !(radius > 0) || math.IsInf(radius, 0) {
		return nil, fmt.Errorf("optim: projection radius must be positive and finite, got %v", radius)
	}
	for i, v := range center {
		if v-v != 0 {
			return nil, fmt.Errorf("optim: projection centre coordinate %d is %v", i, v)
		}
	}
	return &L2Ball{center: append([]float32(nil), center...), radius: radius}, nil
}

// Radius is R; Diameter is 2R.
func (b *L2Ball) Radius() float64   { return b.radius }
func (b *L2Ball) Diameter() float64 { return 2 * b.radius }

func (b *L2Ball) c(i int) float32 {
	if b.center == nil {
		return 0
	}
	return b.center[i]
}

func (b *L2Ball) dist(w []float32) float64 {
	var ss float64
	for i, v := range w {
		d := float64(v) - float64(b.c(i))
		ss += d * d
	}
	return math.Sqrt(ss)
}

// Project scales w − Center radially onto the sphere when it lies outside
// (the Euclidean projection onto a ball). After float32 rounding the result
// is checked and shrunk until it is inside, so the guarantee is exact.
// A non-finite w is moved to the centre.
func (b *L2Ball) Project(w []float32) bool {
	if b.center != nil && len(b.center) != len(w) {
		panic(fmt.Sprintf("optim: ball centre has %d coordinates, parameters %d", len(b.center), len(w)))
	}
	n := b.dist(w)
	if n <= b.radius {
		return false
	}
	if math.IsNaN(n) || math.IsInf(n, 0) {
		for i := range w {
			w[i] = b.c(i)
		}
		return true
	}
	// Rescale about the centre; float32 rounding can leave the point a hair
	// outside, so repeat with a slightly smaller factor until it is inside.
	s := b.radius / n
	for it := 0; ; it++ {
		for i, v := range w {
			c := float64(b.c(i))
			w[i] = float32(c + s*(float64(v)-c))
		}
		n = b.dist(w)
		if n <= b.radius || it == 60 {
			return true
		}
		s = b.radius / n * (1 - 0x1p-22)
	}
}
