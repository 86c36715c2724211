package accountant_test

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
)

// DP-SGD on CIFAR-10 as in Opacus' test: q = 0.04, σ = 1.5, 2250 steps.
func ExamplePoissonEpsilon() {
	b, err := accountant.PoissonEpsilon(0.04, 1.5, 2250, 1e-5, accountant.WithSeries(accountant.SignedSeries))
	if err != nil {
		panic(err)
	}
	fmt.Printf("ε = %.4f at δ = %g (order %v, %s)\n", b.Epsilon, b.Delta, b.Order, b.Relation)
	// Output: ε = 7.3291 at δ = 1e-05 (order 3.9, add-remove)
}

// The same run step by step, with both series side by side; the
// signed-series figure is Opacus' published 7.3291.
func ExampleTracker() {
	abs, _ := accountant.NewRDP()
	signed, _ := accountant.NewRDP(accountant.WithSeries(accountant.SignedSeries), accountant.WithName("rdp-signed"))
	tr, _ := accountant.NewTracker(abs, signed)
	step := accountant.PoissonSampled{Q: 0.04, Event: accountant.Gaussian{Sigma: 1.5}}
	for range 2250 {
		if err := tr.Step(step); err != nil {
			panic(err)
		}
	}
	for _, b := range tr.Bounds(1e-5) {
		fmt.Printf("%s: ε = %.4f (order %v)\n", b.Name, b.Epsilon, b.Order)
	}
	// Output:
	// rdp: ε = 7.3293 (order 3.9)
	// rdp-signed: ε = 7.3291 (order 3.9)
}
