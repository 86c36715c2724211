package nn

import (
	"fmt"
	"math"
)

// Target holds the labels of a chunk: class indices Y for classifiers,
// real targets T for regression.
type Target[T Float] struct {
	Y []int
	T []T
}

// Loss maps a network's outputs to per-sample losses ℓ_i (never averaged:
// sample i's gradient is the gradient of ℓ_i alone) and their gradients.
type Loss[T Float] interface {
	// Check reports whether the network's per-sample output shape fits.
	Check(out Shape) error
	// Eval writes ℓ_i into losses[i] and, when dz is non-nil, dℓ_i/dz_i into
	// dz, for the n samples of z. Bad labels are an error.
	Eval(z []T, n int, tg Target[T], losses []T, dz []T) error
	// Correct counts correct predictions (0 for regression losses).
	Correct(z []T, n int, tg Target[T]) int
}

// SoftmaxCrossEntropy is ℓ = log Σ_k exp(z_k) − z_y, computed with the
// maximum subtracted so that no exponent overflows. Labels are 0..K−1.
type SoftmaxCrossEntropy[T Float] struct{ k int }

func (l *SoftmaxCrossEntropy[T]) Check(out Shape) error {
	if out.Size() < 2 {
		return fmt.Errorf("softmax cross-entropy: needs at least 2 outputs, got %d", out.Size())
	}
	l.k = out.Size()
	return nil
}

func (l *SoftmaxCrossEntropy[T]) Eval(z []T, n int, tg Target[T], losses []T, dz []T) error {
	k := l.k
	if len(tg.Y) < n {
		return fmt.Errorf("softmax cross-entropy: %d labels for %d samples", len(tg.Y), n)
	}
	for i := range n {
		y := tg.Y[i]
		if y < 0 || y >= k {
			return fmt.Errorf("softmax cross-entropy: label %d of sample %d outside [0, %d)", y, i, k)
		}
		zi := z[i*k : (i+1)*k]
		m := zi[0]
		for _, v := range zi[1:] {
			m = max(m, v)
		}
		var s float64
		for _, v := range zi {
			s += math.Exp(float64(v - m))
		}
		lse := float64(m) + math.Log(s)
		losses[i] = T(lse - float64(zi[y]))
		if dz != nil {
			di := dz[i*k : (i+1)*k]
			for j, v := range zi {
				di[j] = T(math.Exp(float64(v) - lse))
			}
			di[y]--
		}
	}
	return nil
}

func (l *SoftmaxCrossEntropy[T]) Correct(z []T, n int, tg Target[T]) int {
	c := 0
	for i := range n {
		zi := z[i*l.k : (i+1)*l.k]
		best := 0
		for j, v := range zi {
			if v > zi[best] {
				best = j
			}
		}
		if best == tg.Y[i] {
			c++
		}
	}
	return c
}

// LogisticLoss is the binary logistic loss of one logit z with a label
// y ∈ {0, 1}: ℓ = log(1 + e^z) − y·z, computed as max(z,0) − y·z +
// log1p(e^−|z|) so that it never overflows. dℓ/dz = σ(z) − y.
type LogisticLoss[T Float] struct{}

func (LogisticLoss[T]) Check(out Shape) error {
	if out.Size() != 1 {
		return fmt.Errorf("logistic loss: needs 1 output, got %d", out.Size())
	}
	return nil
}

func (LogisticLoss[T]) Eval(z []T, n int, tg Target[T], losses []T, dz []T) error {
	if len(tg.Y) < n {
		return fmt.Errorf("logistic loss: %d labels for %d samples", len(tg.Y), n)
	}
	for i := range n {
		y := tg.Y[i]
		if y != 0 && y != 1 {
			return fmt.Errorf("logistic loss: label %d of sample %d is not 0 or 1", y, i)
		}
		v := float64(z[i])
		losses[i] = T(max(v, 0) - float64(y)*v + math.Log1p(math.Exp(-math.Abs(v))))
		if dz != nil {
			var p float64
			if v >= 0 {
				p = 1 / (1 + math.Exp(-v))
			} else {
				e := math.Exp(v)
				p = e / (1 + e)
			}
			dz[i] = T(p - float64(y))
		}
	}
	return nil
}

func (LogisticLoss[T]) Correct(z []T, n int, tg Target[T]) int {
	c := 0
	for i := range n {
		if (z[i] > 0) == (tg.Y[i] == 1) {
			c++
		}
	}
	return c
}

// SquaredLoss is ℓ = ½(z − t)² for one output and a real target t.
type SquaredLoss[T Float] struct{}

func (SquaredLoss[T]) Check(out Shape) error {
	if out.Size() != 1 {
		return fmt.Errorf("squared loss: needs 1 output, got %d", out.Size())
	}
	return nil
}

func (SquaredLoss[T]) Eval(z []T, n int, tg Target[T], losses []T, dz []T) error {
	if len(tg.T) < n {
		return fmt.Errorf("squared loss: %d targets for %d samples", len(tg.T), n)
	}
	for i := range n {
		r := z[i] - tg.T[i]
		if math.IsNaN(float64(tg.T[i])) {
			return fmt.Errorf("squared loss: target of sample %d is NaN", i)
		}
		losses[i] = r * r / 2
		if dz != nil {
			dz[i] = r
		}
	}
	return nil
}

func (SquaredLoss[T]) Correct([]T, int, Target[T]) int { return 0 }
