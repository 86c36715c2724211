package benchmarks_test

import (
	"context"
	"fmt"

	"github.com/dptrain/dptrain/benchmarks"
	"github.com/dptrain/dptrain/trainer"
)

// Two clip variants against two samplers for logistic regression on the
// synthetic mixture (D = 330). Timings and memory vary from run to run;
// the noise variance σ²C²D and ε do not.
func ExampleRun() {
	cfg := trainer.Default()
	cfg.Dataset, cfg.Model = "synthetic", "logreg"
	cfg.Steps, cfg.BatchSize = 5, 50
	cfg.Sigma, cfg.Epsilon, cfg.Q2, cfg.ClipNorm = 1.5, 0, 0.5, 1
	rows, err := benchmarks.Run(context.Background(), benchmarks.Grid{
		Base: cfg, Clips: []string{"flat", "hybrid"}, Samplers: []string{"poisson", "twice"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("%-6s %-7s E‖e‖² = %.2f  ε = %.4f (%s)\n", r.Clip, r.Sampler, r.NoiseVariance, r.Epsilon, r.Accountant)
	}
	// Output:
	// flat   poisson E‖e‖² = 742.50  ε = 0.0913 (pld)
	// flat   twice   E‖e‖² = 742.50  ε = 0.3236 (twice)
	// hybrid poisson E‖e‖² = 742.50  ε = 0.0913 (pld)
	// hybrid twice   E‖e‖² = 742.50  ε = 0.0863 (twice)
}
