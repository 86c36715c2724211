package clip_test

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/optim"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// One DP-SGD step with Poisson sampling, flat L2 clipping, isotropic noise
// and SGD divided by the EXPECTED batch size.
func Example() {
	const n, d, q, c, z = 1000, 6, 0.01, 1.0, 1.1
	seed := rng.New(1)
	smp, _ := sampler.NewPoisson(n, q, seed.Child("sampler"))
	clp, _ := clip.NewL2(c, d, nil)
	noise, _ := clip.IsotropicFor(clp, z)
	opt, _ := optim.NewSGD(optim.SGDConfig{LR: optim.Constant(0.1)})
	params := make([]float32, d)

	batch := smp.Next(nil)
	grads := make([]float32, len(batch)*d) // the model's per-sample gradients
	for i := range grads {
		grads[i] = float32(i%d) - 2
	}
	sum := make([]float32, d)
	clp.ClipSum(grads, len(batch), nil, sum)
	noise.Add(sum, seed.Child("noise"))
	_ = opt.Step(params, sum, smp.ExpectedBatch())

	ev := smp.Event(accountant.Gaussian{Sigma: z})
	fmt.Println(accountant.Kind(ev), smp.ExpectedBatch(), clp.Sensitivity().L2, noise.Std()[0])
	// Output: poisson_sampled 10 1 1.1
}

// Twice sampling with hybrid subspace clipping: masks are drawn per
// selected example over the released coordinates (principal coefficients
// then the residual), applied after clipping; the noisy release is decoded
// to parameter space and divided by n·q1·q2.
func Example_twiceSubspace() {
	const n, d = 500, 8
	seed := rng.New(2)
	pub := make([]float32, 4*d) // PUBLIC per-sample gradients
	seed.Child("public").FillNormal(pub, 1)
	basis, _ := clip.PrincipalBasis(pub, 4, d, []int{2}, 3, seed.Child("pca"))
	budgets, _ := clip.AllocateBudgets(pub, 4, basis, 1)
	sub, _ := clip.NewSubspace(basis, budgets, clip.DefaultD0(1))
	tw, _ := sampler.NewTwice(n, sub.OutDim(), 0.04, 0.5, seed.Child("sampler"))

	batch := tw.Next(nil)
	grads := make([]float32, len(batch)*d)
	seed.Child("grads").FillNormal(grads, 1)
	masks := make([]*sampler.Mask, len(batch))
	for i := range masks {
		masks[i] = sampler.NewMask(sub.OutDim())
		tw.FillMask(masks[i])
	}
	released := make([]float32, sub.OutDim())
	sub.ClipSum(grads, len(batch), masks, released)

	blocks, _ := sub.Sensitivity().AccountantBlocks([]float64{1})
	sigma, _ := accountant.OptimalNoise(blocks, 1.0)
	vars := []float64{sigma[0] * sigma[0], sigma[1] * sigma[1]}
	noise, _ := clip.BlockNoiseFor(sub, vars)
	noise.Add(released, seed.Child("noise"))
	grad := make([]float32, d)
	sub.Decode(grad, released)
	for j := range blocks {
		blocks[j].Sigma = sigma[j]
	}
	ev := tw.Event(blocks)
	fmt.Println(sub.OutDim(), len(ev.Blocks), ev.Blocks[1].Dim, ev.Blocks[1].D0, tw.ExpectedCoordBatch(), ev.Validate() == nil)
	// Output: 10 2 8 100 10 true
}
