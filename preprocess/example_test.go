package preprocess_test

import (
	"fmt"

	"github.com/dptrain/dptrain/preprocess"
	"gonum.org/v1/gonum/mat"
)

// A pipeline with one data-dependent step: its sensitivity comes from the
// declared collection, and the fitted statistics are reused on the test set.
func ExamplePipeline() {
	train := mat.NewDense(4, 2, []float64{0.5, 0.1, -0.3, 0.2, 0.1, -0.4, -0.2, 0.3})
	test := mat.NewDense(1, 2, []float64{0.1, 0.05})

	p := preprocess.Pipeline{Steps: []preprocess.Step{
		preprocess.StandardScaler{},
		preprocess.ProjectBall{Radius: 1},
	}}
	sens, err := p.Sensitivity(preprocess.Bounds{N: 4, D: 2, SigmaMin: 0.25})
	if err != nil {
		panic(err)
	}
	fmt.Printf("Δ2 = %.3f, Δ∞ = %v, τ = %.1f\n", sens.L2, sens.LInf, sens.Tau())

	fitted, _, err := p.Fit(train)
	if err != nil {
		panic(err)
	}
	out, err := fitted.Transform(test)
	if err != nil {
		panic(err)
	}
	fmt.Printf("test row: %.4f\n", out.RawRowView(0))
	// Output:
	// Δ2 = 66.000, Δ∞ = 4, τ = 264.0
	// test row: [0.2410 0.0000]
}
