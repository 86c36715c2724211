package trainer

import (
	"context"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/dptrain/dptrain/models/graph"
)

// A Gorgonia-defined model trains through the same loop as the zoo models,
// with the same accounting.
func TestTrainsGorgoniaModel(t *testing.T) {
	spec := graph.Spec{
		Input: []int{32},
		Loss:  graph.SoftmaxCrossEntropy,
		Build: func(b *graph.Builder, x *G.Node) *G.Node {
			return b.Linear("out", b.Tanh(b.Linear("hidden", x, 16, true)), 10, true)
		},
	}
	m, err := graph.NewModel(spec, 128, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c := small(t)
	c.Steps, c.MaxPhysicalBatch = 80, 128
	s, err := Run(context.Background(), c, Options{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if s.Params != 32*16+16+16*10+10 {
		t.Fatalf("params %d", s.Params)
	}
	if s.TestAcc < 0.6 {
		t.Fatalf("Gorgonia MLP reached test accuracy %v on the mixture", s.TestAcc)
	}
	if s.Epsilon["rdp"] <= 0 || s.Samples < c.Steps*c.BatchSize/2 {
		t.Fatalf("summary %+v", s)
	}
}
