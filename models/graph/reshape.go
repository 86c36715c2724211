package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// copyReshapeOp is a reshape that copies. Gorgonia's own Reshape returns a
// tensor sharing memory with its input, but the compiler does not know they
// alias: an elementwise op applied in place to the reshaped node then
// overwrites the input's value, which silently corrupts the backward pass of
// the op that produced it (verified: tanh → Reshape → Sub gives a wrong
// gradient). A fresh tensor per run is the price of correctness.
type copyReshapeOp struct{ from, to tensor.Shape }

func (op copyReshapeOp) Arity() int { return 1 }

func (op copyReshapeOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(&G.TensorType{Dims: op.from.Dims(), Of: a}, &G.TensorType{Dims: op.to.Dims(), Of: a})
}

func (op copyReshapeOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.to.Clone(), nil }

func (op copyReshapeOp) Do(vals ...G.Value) (G.Value, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("copyReshape: %d inputs", len(vals))
	}
	d, ok := vals[0].(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("copyReshape: input is a %T, want a dense tensor", vals[0])
	}
	if d.Shape().TotalSize() != op.to.TotalSize() {
		return nil, fmt.Errorf("copyReshape: input shape %v does not fit %v", d.Shape(), op.to)
	}
	if d.IsView() {
		d = d.Materialize().(*tensor.Dense)
	}
	out := tensor.New(tensor.WithShape(op.to...), tensor.Of(d.Dtype()))
	switch src := d.Data().(type) {
	case []float64:
		copy(out.Data().([]float64), src)
	case []float32:
		copy(out.Data().([]float32), src)
	default:
		return nil, fmt.Errorf("copyReshape: dtype %v not supported", d.Dtype())
	}
	return out, nil
}

func (op copyReshapeOp) ReturnsPtr() bool     { return false }
func (op copyReshapeOp) CallsExtern() bool    { return false }
func (op copyReshapeOp) OverwritesInput() int { return -1 }
func (op copyReshapeOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "copyReshape %v→%v", op.from, op.to)
}
func (op copyReshapeOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (op copyReshapeOp) String() string { return fmt.Sprintf("CopyReshape%v", op.to) }

func (op copyReshapeOp) DiffWRT(int) []bool { return []bool{true} }

func (op copyReshapeOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	back, err := G.ApplyOp(copyReshapeOp{from: op.to, to: op.from}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{back}, nil
}

// reshape is a copying reshape (see copyReshapeOp).
func (b *Builder) reshape(x *G.Node, to tensor.Shape, what string) *G.Node {
	if !b.ok(x) {
		return nil
	}
	if x.Shape().TotalSize() != to.TotalSize() {
		return b.Fail(fmt.Errorf("graph: %s: cannot reshape %v to %v", what, x.Shape(), to))
	}
	return b.check(what)(G.ApplyOp(copyReshapeOp{from: x.Shape(), to: to.Clone()}, x))
}
