package trainer_test

import (
	"context"
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/graph"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/trainer"
)

// Train a zoo model (logistic regression) on the embedded Fashion-MNIST
// subset at ε = 2. No files are written: OutDir is empty.
func ExampleRun() {
	cfg := trainer.Default()
	cfg.Model = "logreg"
	cfg.Epsilon, cfg.Epochs, cfg.BatchSize, cfg.LR = 2, 1, 500, 1
	cfg.Seeded = true // reproducible noise; leave false for a real release
	cfg.Plots = false
	sum, err := trainer.Run(context.Background(), cfg, trainer.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d steps on %d examples, ε = %.2f at δ = %g\n", sum.Steps, sum.TrainN, sum.Best.Epsilon, sum.Delta)
	// Output: 10 steps on 5000 examples, ε = 2.00 at δ = 1e-05
}

// twoBlobs is a toy problem held in slices: class 0 around (−1, −1), class 1
// around (+1, +1).
func twoBlobs(n int, seed uint64) *datasets.Dataset {
	noise := make([]float32, 2*n)
	rng.New(seed).FillNormal(noise, 0.5)
	rows, labels := make([][]float32, n), make([]int, n)
	for i := range rows {
		c := float32(2*(i%2) - 1)
		rows[i] = []float32{c + noise[2*i], c + noise[2*i+1]}
		labels[i] = i % 2
	}
	ds, err := datasets.FromSlices("blobs", rows, labels)
	if err != nil {
		panic(err)
	}
	return ds
}

// Train your own nn layer stack on your own in-memory data.
func ExampleRun_ownData() {
	m, err := models.FromLayers("mlp(2,16,2)", nn.Vec(2), 0, 1,
		nn.NewLinear[float32](2, 16, true), nn.NewReLU[float32](),
		nn.NewLinear[float32](16, 2, true))
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := trainer.Default()
	cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 1e-4, 5, 200, 1, 0.5
	cfg.Seeded, cfg.Plots = true, false
	sum, err := trainer.Run(context.Background(), cfg, trainer.Options{
		Model: m, Train: twoBlobs(2000, 1), Test: twoBlobs(400, 2),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("dataset %s, %d steps, accuracy above 90%%: %v, ε = %.2f\n", sum.Dataset, sum.Steps, sum.TestAcc > 0.9, sum.Best.Epsilon)
	// Output: dataset memory, 50 steps, accuracy above 90%: true, ε = 4.00
}

// Train a model declared as a Gorgonia graph.
func ExampleRun_gorgonia() {
	spec := graph.Spec{
		Input: []int{2},
		Loss:  graph.SoftmaxCrossEntropy,
		Build: func(b *graph.Builder, x *G.Node) *G.Node {
			return b.Linear("out", b.ReLU(b.Linear("hidden", x, 8, true)), 2, true)
		},
	}
	m, err := graph.NewModel(spec, 100, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	cfg := trainer.Default()
	cfg.Sigma, cfg.Epsilon, cfg.Delta, cfg.Steps, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 1, 0, 1e-4, 20, 100, 1, 0.5
	cfg.MaxPhysicalBatch = 100
	cfg.Seeded, cfg.Plots = true, false
	sum, err := trainer.Run(context.Background(), cfg, trainer.Options{Model: m, Train: twoBlobs(1000, 3), Test: twoBlobs(200, 4)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d steps at σ = %g, accuracy above 80%%: %v\n", sum.Steps, sum.Sigma, sum.TestAcc > 0.8)
	// Output: 20 steps at σ = 1, accuracy above 80%: true
}

// ε for a planned run, before training: 60,000 examples, expected batch
// 256, σ = 1.1, 60 epochs.
func Example_epsilon() {
	const n, batch, sigma, epochs = 60000, 256, 1.1, 60
	q := float64(batch) / n
	steps := epochs * n / batch
	b, err := accountant.PoissonEpsilon(q, sigma, steps, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d steps at q = %.5f: ε = %.2f at δ = %g\n", steps, q, b.Epsilon, b.Delta)
	// Output: 14062 steps at q = 0.00427: ε = 2.60 at δ = 1e-05
}
