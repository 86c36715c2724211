// Package nn is dptrain's native per-sample-gradient engine: neural-network
// layers that each own their forward pass, their backward pass and their
// per-sample gradient rule, side by side (the Opacus "grad sampler" idea,
// without a registry keyed on types: the rule is a method of the layer).
//
// Layers are generic over T (float32 for speed, float64 for exact tests).
// A batch is a row-major, sample-major slice: sample i of an input of Shape s
// occupies x[i*s.Size():(i+1)*s.Size()], an image laid out C×H×W.
//
// A Network chains layers, ends in a Loss, and keeps every parameter in one
// flat vector; each parametric layer is a named, contiguous Group of it, so
// clipping, noise and optimizers work on a single vector. For a chunk of at
// most MaxBatch samples a Network gives
//
//   - PerSampleGrads: the materialised B×D per-sample gradients;
//   - PerSampleNormsSq: per-sample, per-group squared gradient norms, without
//     materialising the batch × D gradients (Linear: ‖a_i‖²‖dz_i‖²; Conv2d:
//     per-sample gradients cached by Backward, or without the cache a
//     per-sample GEMM into scratch or the ghost-norm Gram identity, by cost);
//   - AccumulateScaled: Σ_i s_{i,k} g_{i,k} without materialising (Linear:
//     Aᵀ·diag(s)·dZ as one GEMM).
//
// Every buffer is allocated once, in NewNetwork, for MaxBatch samples; the
// steady state allocates nothing. Per-sample work (convolutions,
// normalisation, pooling, activations) is split over GOMAXPROCS workers of a
// fixed goroutine pool; every sum over samples runs in an order that does not
// depend on the split, so results are bit-identical for any core count. Larger logical batches are split into
// chunks by the caller (models.Chunker does it for any models.PerSampleModel).
//
// The engine never switches on layer types: it walks Containers for their
// children and asks each ParamLayer for its own rule. BatchNorm is refused
// (it mixes samples, so per-sample gradients and DP accounting break); use
// GroupNorm. Package nn knows nothing about privacy: clipping, noise and
// accounting live in other packages. It is not safe for concurrent use.
package nn
