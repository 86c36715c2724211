package graph_test

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/graph"
)

// A small CNN declared with the Builder, trained through the
// models.PerSampleModel contract.
func ExampleNewModel() {
	spec := graph.Spec{
		Input: []int{1, 8, 8},
		Loss:  graph.SoftmaxCrossEntropy,
		Build: func(b *graph.Builder, x *G.Node) *G.Node {
			h := b.MaxPool2d(b.ReLU(b.Conv2d("conv", x, 4, 3, 1, 1, true)), 2, 2)
			return b.Linear("fc", b.Flatten(h), 3, true)
		},
	}
	m, err := graph.NewModel(spec, 16, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	var _ models.PerSampleModel = m
	fmt.Println(m.NumParams(), m.InputSize(), m.MaxBatch())
	for _, g := range m.Groups() {
		fmt.Println(g.Name, g.Offset, g.Len)
	}
	// Output:
	// 235 64 16
	// conv 0 40
	// fc 40 195
}
