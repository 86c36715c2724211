// Package bandmf builds the strategies of the banded matrix-factorization
// mechanism (BandMF): correlated Gaussian noise across training steps.
//
// Training releases, after T steps, linear combinations of the clipped
// gradient sums x₁…x_T: the iterates of SGD are A·x for a lower-triangular
// workload A (prefix sums; with momentum and a learning-rate schedule, a
// weighted version of them). The matrix mechanism factors A = B·C, releases
// C·x + z with z Gaussian, and post-processes it with B. Training does the
// same by adding (C⁻¹z)_t to the step's gradient sum: the model then sees
// x + C⁻¹z, whose image under C is the released C·x + z.
//
// The strategies here are b-banded lower-triangular Toeplitz matrices,
// C[i][j] = c[i−j] for 0 ≤ i−j < b, with c₀ = 1. A b-banded C has columns
// whose supports are b rows long, so an example that takes part in steps at
// least b apart touches disjoint rows: its sensitivity is the root of the
// sum of its columns' squared norms, and with cyclic Poisson sampling each
// participation is an ordinary Poisson-subsampled Gaussian (b = 1 is
// DP-SGD). docs/matrix-mechanism.md gives the argument and the conditions.
//
// The package chooses c for a workload (Optimize: minimising the workload's
// total squared error per unit of sensitivity), computes that error and the
// sensitivity, and generates C⁻¹z step by step in O(b·d) memory
// (Correlator), and states the privacy event of a run under cyclic Poisson
// sampling (AmplifiedEvent). It draws no random numbers itself; the
// accountants compose the event.
package bandmf
