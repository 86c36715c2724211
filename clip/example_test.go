package clip_test

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/optim"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// One DP-SGD step with Poisson sampling, flat L2 clipping, isotropic noise
// and SGD divided by the EXPECTED batch size.
func Example() {
	const n, d, batch, c, z = 1000, 6, 10, 1.0, 1.1
	seed := rng.New(1)
	// The mechanism gives the sampler, the clipper, the noise and the event.
	spec := mechanism.Spec{Sampler: mechanism.Poisson, N: n, Batch: batch, Clip: mechanism.Flat, C: c}
	clp, _ := spec.NewClipper(d, nil)
	smp, expected, _ := spec.NewSampler(d, seed.Child("sampler"))
	mech, _ := mechanism.New(spec, clp)
	noise, _ := mech.Noise(z, 0)
	opt, _ := optim.NewSGD(optim.SGDConfig{LR: optim.Constant(0.1)})
	params := make([]float32, d)

	idx := smp.Next(nil)
	grads := make([]float32, len(idx)*d) // the model's per-sample gradients
	for i := range grads {
		grads[i] = float32(i%d) - 2
	}
	sum := make([]float32, d)
	clp.ClipSum(grads, len(idx), nil, sum)
	noise.Add(sum, seed.Child("noise"))
	_ = opt.Step(params, sum, expected)

	ev := mech.StepEvent(z, 1)
	fmt.Printf("%s %g %g %.3g\n", accountant.Kind(ev), expected, clp.Sensitivity().L2, math.Sqrt(noise.TotalVariance()/d))
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
	spec := mechanism.Spec{Sampler: mechanism.Twice, N: n, Batch: 20, Q2: 0.5,
		Clip: mechanism.Subspace, C: 1, D0: 100, SubspaceRanks: []int{2}}
	smp, expected, _ := spec.NewSampler(sub.OutDim(), seed.Child("sampler"))
	tw := smp.(*sampler.Twice)
	mech, _ := mechanism.New(spec, sub)

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

	noise, _ := mech.Noise(1.0, 0) // per-block noise shaped by the optimal-noise solver
	noise.Add(released, seed.Child("noise"))
	grad := make([]float32, d)
	sub.Decode(grad, released)
	ev := mech.StepEvent(1.0, 1).(accountant.TwiceSampled)
	fmt.Println(sub.OutDim(), len(ev.Blocks), ev.Blocks[1].Dim, ev.Blocks[1].D0, expected, ev.Validate() == nil)
	// Output: 10 2 8 100 10 true
}
