// Package clip bounds how far one example can move a DP-SGD step: it clips
// per-sample gradients, sums them, describes the resulting sensitivity for
// the accountant, and adds the matching Gaussian noise.
//
// Variants (each a Clipper):
//
//   - L2: flat L2 clipping, g·min(1, C/‖g‖).
//   - PerLayer: L2 clipping of each parameter group k to C_k, with a budget
//     split Σ C_k² = C² so the whole vector's L2 sensitivity stays C.
//   - LInf: clamp every coordinate to [−c∞, c∞].
//   - L2LInf: hybrid L2 then L∞ clipping, c∞ = c2/√d0
//     (docs/twice-sampling.md#hybrid-clipping).
//   - Subspace: hybrid subspace clipping
//     (docs/twice-sampling.md#subspace-clipping): coefficients in orthonormal
//     principal blocks plus the residual as one block in natural coordinates;
//     each block clipped in L2, then clamped in L∞. Bases come from PUBLIC
//     per-sample gradients (PrincipalBasis, randomized subspace iteration).
//
// Noise: Gaussian adds isotropic noise (std = multiplier × L2 sensitivity)
// or per-block anisotropic noise with given per-block variances (paper 003
// Theorem 4.6: variances from accountant.OptimalNoise or its problem-(9)
// solver); package mechanism describes Sensitivity.Blocks to the
// twice-sampling accountant, so clip does not import the accountants.
//
// Norm-only fast path: L2 and PerLayer map per-sample per-group squared
// norms (models.PerSampleModel.PerSampleNormsSq) to the scales that
// AccumulateScaled takes; with the same norms this gives bit for bit the
// clipped sum of the materialised path.
//
// Twice sampling: masks (mask.Mask) are applied to the CLIPPED released
// vector, per docs/twice-sampling.md#twice-poisson-sampling (clip, then sample
// coordinates); clipping after masking would make each coordinate's
// contribution depend on the other coordinates' masks, which the Theorem 5.2
// analysis does not cover.
//
// Hot paths (ClipSum, Scales, Gaussian.Add) do not allocate. Clippers keep
// scratch buffers and are not safe for concurrent use.
//
// The package does not choose σ: that is the accountant's calibration.
package clip
