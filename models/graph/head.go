package graph

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// head is the input and loss end of a built graph: the input node, the label
// and mask inputs, the per-example losses and the scalar total
// Σ_i mask_i·ℓ_i that is differentiated. The mask zeroes the padding rows of
// a chunk smaller than the graph's fixed batch.
type head struct {
	x, out, perEx, total *G.Node
	xVal, lab, mask      *tensor.Dense
	classes              int
	loss                 Loss
	inSize               int
	batch                int
}

// build runs spec.Build on a fresh input node and attaches the loss.
func buildHead(b *Builder, spec Spec) (*head, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	shape := append(tensor.Shape{b.batch}, spec.Input...)
	h := &head{loss: spec.Loss, inSize: spec.inputSize(), batch: b.batch}
	h.xVal = tensor.New(tensor.WithShape(shape...), tensor.Of(b.dt))
	h.x = G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName("x"), G.WithValue(h.xVal))
	out := spec.Build(b, h.x)
	if b.err != nil {
		return nil, b.err
	}
	if out == nil {
		return nil, fmt.Errorf("graph: Build returned no output node")
	}
	if len(b.layers) == 0 {
		return nil, fmt.Errorf("graph: the model declares no parameters")
	}
	h.out = out
	s := out.Shape()
	if s[0] != b.batch || (len(s) != 2 && len(s) != 1) {
		return nil, fmt.Errorf("graph: output shape %v, want %d×k", s, b.batch)
	}
	width := 1
	if len(s) == 2 {
		width = s[1]
	}
	var err error
	switch spec.Loss {
	case SoftmaxCrossEntropy:
		if len(s) != 2 || width < 2 {
			return nil, fmt.Errorf("graph: softmax cross-entropy needs B×C logits with C ≥ 2, got %v", s)
		}
		h.classes = width
		err = h.softmaxCE(b)
	case Logistic, Squared:
		if width != 1 {
			return nil, fmt.Errorf("graph: %v loss needs one output per example, got shape %v", spec.Loss, s)
		}
		err = h.scalarLoss(b)
	}
	if err != nil {
		return nil, fmt.Errorf("graph: %v loss: %w", spec.Loss, err)
	}
	h.mask = tensor.New(tensor.WithShape(b.batch), tensor.Of(b.dt))
	mask := G.NewTensor(b.g, b.dt, 1, G.WithShape(b.batch), G.WithName("mask"), G.WithValue(h.mask))
	weighted, err := G.HadamardProd(h.perEx, mask)
	if err != nil {
		return nil, err
	}
	if h.total, err = G.Sum(weighted); err != nil {
		return nil, err
	}
	return h, nil
}

// softmaxCE builds ℓ_i = log Σ_j exp(z_ij − m_i) − (z_iy − m_i), m_i = max_j z_ij.
// The gradient through m_i cancels exactly (−1 + Σ softmax = 0), so the
// max only stabilises.
func (h *head) softmaxCE(b *Builder) error {
	h.lab = tensor.New(tensor.WithShape(b.batch, h.classes), tensor.Of(b.dt))
	y := G.NewTensor(b.g, b.dt, 2, G.WithShape(b.batch, h.classes), G.WithName("onehot"), G.WithValue(h.lab))
	m, err := G.Max(h.out, 1)
	if err != nil {
		return err
	}
	zs, err := G.BroadcastSub(h.out, m, nil, []byte{1})
	if err != nil {
		return err
	}
	e, err := G.Exp(zs)
	if err != nil {
		return err
	}
	se, err := G.Sum(e, 1)
	if err != nil {
		return err
	}
	lse, err := G.Log(se)
	if err != nil {
		return err
	}
	yz, err := G.HadamardProd(y, zs)
	if err != nil {
		return err
	}
	zy, err := G.Sum(yz, 1)
	if err != nil {
		return err
	}
	h.perEx, err = G.Sub(lse, zy)
	return err
}

// scalarLoss builds the logistic loss softplus(u), u = (1 − 2y)·z, as
// (u + |u|)/2 + log1p(exp(−|u|)) (stable, exact gradient ½ at u = 0), or the
// squared loss ½(z − t)². The label input holds 1 − 2y, or t.
func (h *head) scalarLoss(b *Builder) error {
	z := h.out
	var err error
	if z.Dims() == 2 {
		if z = b.reshape(z, tensor.Shape{b.batch}, "output reshape"); z == nil {
			return b.err
		}
	}
	h.lab = tensor.New(tensor.WithShape(b.batch), tensor.Of(b.dt))
	lab := G.NewTensor(b.g, b.dt, 1, G.WithShape(b.batch), G.WithName("label"), G.WithValue(h.lab))
	if h.loss == Squared {
		d, err := G.Sub(z, lab)
		if err != nil {
			return err
		}
		sq, err := G.Square(d)
		if err != nil {
			return err
		}
		h.perEx, err = G.Mul(sq, b.scalar(0.5))
		return err
	}
	u, err := G.HadamardProd(z, lab)
	if err != nil {
		return err
	}
	a, err := G.Abs(u)
	if err != nil {
		return err
	}
	pos, err := G.Add(u, a)
	if err != nil {
		return err
	}
	pos, err = G.Mul(pos, b.scalar(0.5))
	if err != nil {
		return err
	}
	na, err := G.Neg(a)
	if err != nil {
		return err
	}
	ex, err := G.Exp(na)
	if err != nil {
		return err
	}
	l1p, err := G.Log1p(ex)
	if err != nil {
		return err
	}
	h.perEx, err = G.Add(pos, l1p)
	return err
}

// feed copies n examples into the graph's inputs, zero-padding the rest of
// the fixed batch and masking it out of the loss. Labels are checked.
func feed[T Float](h *head, x []T, y []int, t []T, n int) error {
	if n < 0 || n > h.batch {
		return fmt.Errorf("graph: chunk of %d examples, the graph holds at most %d", n, h.batch)
	}
	if len(x) < n*h.inSize {
		return fmt.Errorf("graph: %d input values for %d examples of size %d", len(x), n, h.inSize)
	}
	xs := h.xVal.Data().([]T)
	copy(xs, x[:n*h.inSize])
	clear(xs[n*h.inSize:])
	mask := h.mask.Data().([]T)
	for i := range mask {
		mask[i] = 0
		if i < n {
			mask[i] = 1
		}
	}
	lab := h.lab.Data().([]T)
	clear(lab)
	switch h.loss {
	case SoftmaxCrossEntropy:
		if len(y) < n {
			return fmt.Errorf("graph: %d labels for %d examples", len(y), n)
		}
		for i := 0; i < n; i++ {
			if y[i] < 0 || y[i] >= h.classes {
				return fmt.Errorf("graph: label %d of example %d outside [0, %d)", y[i], i, h.classes)
			}
			lab[i*h.classes+y[i]] = 1
		}
	case Logistic:
		if len(y) < n {
			return fmt.Errorf("graph: %d labels for %d examples", len(y), n)
		}
		for i := 0; i < n; i++ {
			if y[i] != 0 && y[i] != 1 {
				return fmt.Errorf("graph: logistic label %d of example %d is not 0 or 1", y[i], i)
			}
			lab[i] = T(1 - 2*y[i])
		}
	case Squared:
		if len(t) < n {
			return fmt.Errorf("graph: %d targets for %d examples", len(t), n)
		}
		for i := 0; i < n; i++ {
			if math.IsNaN(float64(t[i])) || math.IsInf(float64(t[i]), 0) {
				return fmt.Errorf("graph: target %v of example %d is not finite", t[i], i)
			}
		}
		copy(lab, t[:n])
	}
	return nil
}

// correct counts the examples among the first n whose prediction (argmax
// logit; logit > 0 for logistic) matches the label. Squared loss has none.
func correct[T Float](h *head, out []T, y []int, n int) int {
	c := 0
	switch h.loss {
	case SoftmaxCrossEntropy:
		for i := 0; i < n; i++ {
			row := out[i*h.classes : (i+1)*h.classes]
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			if best == y[i] {
				c++
			}
		}
	case Logistic:
		for i := 0; i < n; i++ {
			if (out[i] > 0) == (y[i] == 1) {
				c++
			}
		}
	}
	return c
}
