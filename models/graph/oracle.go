package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/dptrain/dptrain/models"
)

// Oracle computes float64 per-sample gradients the plainest way: the Spec is
// built for a batch of one, without probes, and each example is run on its
// own to take the ordinary autodiff gradient of every parameter tensor. It
// shares only the layer helpers' forward wiring with Net, not the per-sample
// rules, so it is an independent check of both Net and models/nn.
type Oracle struct {
	b     *Builder
	h     *head
	vm    G.VM
	grads []G.Value
	lossV G.Value
}

// NewOracle builds spec for one example at a time in float64.
func NewOracle(spec Spec) (*Oracle, error) {
	b := newBuilder(tensor.Float64, 1, false)
	h, err := buildHead(b, spec)
	if err != nil {
		return nil, err
	}
	wrt := make(G.Nodes, len(b.params))
	for i, p := range b.params {
		wrt[i] = p.node
	}
	gn, err := G.Grad(h.total, wrt...)
	if err != nil {
		return nil, fmt.Errorf("graph: oracle gradient: %w", err)
	}
	o := &Oracle{b: b, h: h, grads: make([]G.Value, len(gn))}
	for i, g := range gn {
		o.grads[i] = tensor.New(tensor.WithShape(b.params[i].val.Shape()...), tensor.Of(tensor.Float64))
		G.Read(g, &o.grads[i])
	}
	o.lossV = tensor.New(tensor.WithShape(1), tensor.Of(tensor.Float64))
	G.Read(h.perEx, &o.lossV)
	o.vm = G.NewTapeMachine(b.g)
	return o, nil
}

// NumParams is the length of the flat parameter vector.
func (o *Oracle) NumParams() int { return o.b.nparam }

// Groups lists one group per parametric layer (the same layout as Net's).
func (o *Oracle) Groups() []models.Group { return o.b.groups }

// Close releases the Gorgonia machine.
func (o *Oracle) Close() error { return o.vm.Close() }

// PerSampleGrads writes the gradient of example i's loss at params into
// grads[i*D:(i+1)*D] and the loss into losses[i], for cnt examples.
func (o *Oracle) PerSampleGrads(params, x []float64, y []int, t []float64, cnt int, grads, losses []float64) error {
	d, in := o.b.nparam, o.h.inSize
	if len(params) != d || len(grads) < cnt*d || len(losses) < cnt || len(x) < cnt*in {
		return fmt.Errorf("graph: oracle: params %d (need %d), grads %d, losses %d, x %d for %d examples",
			len(params), d, len(grads), len(losses), len(x), cnt)
	}
	for i := 0; i < cnt; i++ {
		var yi []int
		var ti []float64
		if y != nil {
			yi = y[i : i+1]
		}
		if t != nil {
			ti = t[i : i+1]
		}
		if err := feed(o.h, x[i*in:(i+1)*in], yi, ti, 1); err != nil {
			return fmt.Errorf("example %d: %w", i, err)
		}
		copyIn(o.b.params, params)
		if err := o.vm.RunAll(); err != nil {
			o.vm.Reset()
			return fmt.Errorf("graph: oracle run: %w", err)
		}
		o.vm.Reset()
		g := grads[i*d : (i+1)*d]
		for j, p := range o.b.params {
			src := data[float64](o.grads[j])
			dst := g[p.offset : p.offset+p.size]
			if p.rows == 0 {
				copy(dst, src)
				continue
			}
			for r := 0; r < p.rows; r++ {
				for c := 0; c < p.cols; c++ {
					dst[r*p.cols+c] = src[c*p.rows+r]
				}
			}
		}
		losses[i] = data[float64](o.lossV)[0]
	}
	return nil
}
