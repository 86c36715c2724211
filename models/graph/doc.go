// Package graph trains Gorgonia ExprGraph models with exact per-sample
// gradients, and serves as the float64 autodiff oracle that the native engine
// (models/nn) is tested against.
//
// A model is a Spec: a per-example input shape, a loss, and a Build function
// that wires the network with a *Builder. Parametric layers (Linear, Conv2d,
// GroupNorm) are declared through the Builder, which adds a zero "probe" node P
// of the pre-activation's shape (z = f(x) + P) and captures the layer's input
// with gorgonia.Read. Because the batch loss is the SUM of per-example losses,
// one backward pass gives dL/dP = the per-example dL/dz, and the per-sample
// weight gradients follow from each layer's rule (Linear g_i = dz_iᵀ a_i,
// Conv2d g_i = dZ_iᵀ im2col(x_i), GroupNorm dγ_i = Σ dz ⊙ x̂, dβ_i = Σ dz).
//
//   - Net[T] is the engine in float32 or float64: materialised per-sample
//     gradients, per-sample per-group squared norms, and scaled sums.
//   - Model wraps Net[float32] as a models.PerSampleModel for the trainer.
//   - Oracle computes per-sample gradients the plain way: it runs a
//     batch-of-one graph on each example and takes the ordinary autodiff
//     gradient of every parameter. It is slow and exists to check engines.
//
// The flat parameter vector uses the PyTorch layouts (Linear weight out×in,
// Conv2d weight outC×inC×kH×kW, each followed by its bias); one group per layer.
//
// Gorgonia v0.9.18 has silent bugs (see
// docs/architecture.md#gorgonia-pitfalls). This package avoids them: values
// are read with gorgonia.Read only, log-softmax and the logistic loss are
// built from max-subtracted primitives, GroupNorm and average pooling are
// built from primitives (not the broken ops), and there is no dropout.
// Gorgonia's Reshape aliases its input without the compiler knowing, so an
// in-place elementwise op after it corrupts the input (and its backward pass);
// the helpers reshape through a copying op instead. Gorgonia's gradient of a
// broadcast over three axes is wrong, so biases are added on 2-D products.
//
// Not for speed: the native engine in models/nn is the fast path; this backend
// is for custom architectures and for testing.
package graph
