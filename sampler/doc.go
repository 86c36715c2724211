// Package sampler decides which examples (and, for twice sampling, which
// coordinates of each example's clipped gradient) take part in one DP-SGD
// step. The privacy event of a step is built by package mechanism, from
// the sampler kind, never here.
//
// Six schemes:
//
//   - Poisson: every example independently with probability q each step
//     (variable and possibly empty batches); accounted as
//     accountant.PoissonSampled (add/remove-one).
//   - Twice: Poisson(q1) over examples, then an independent Bernoulli(q2)
//     mask per (selected example, released coordinate) (paper 003,
//     Algorithm 2). Masks are bitsets (geometric skips or threshold draws);
//     accounted as accountant.TwiceSampled.
//   - WithoutReplacement: a fresh uniform subset of exactly B of the n
//     examples each step; accounted as accountant.SampledWithoutReplacement
//     (replace-one).
//   - Shuffle: epochs of fixed-size batches over a random permutation. It
//     claims no amplification: each epoch is accounted as one Gaussian of
//     the replace-one sensitivity 2·C, charged at its first step.
//   - CyclicPoisson: the examples in b parts by index (i mod b), part
//     t mod b Poisson-sampled at step t; an example's steps are b apart,
//     the participation banded matrix factorization amplifies (package
//     bandmf, docs/matrix-mechanism.md). One part is Poisson, draw for draw.
//   - Cyclic: b-min-separation without sampling: step t takes all of part
//     t mod b, so every example takes part exactly once every b steps.
//
// Each sampler draws from an rng stream (crypto-seeded in
// production, fixed seed for reproducible runs) and checkpoints its full
// state, stream position included, with MarshalBinary.
//
// The gradient divisor is the EXPECTED batch size (ExpectedBatch, or
// Twice.ExpectedCoordBatch = n·q1·q2), never the realised one: dividing by a
// realised count would change the sensitivity.
//
// The package does not gather data, clip, or add noise.
package sampler
