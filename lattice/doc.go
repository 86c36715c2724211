// Package lattice is noise that resists floating-point attacks: a DP-SGD
// release computed exactly on the lattice γℤᵈ, γ = C·2⁻ᵏ, with integer
// noise drawn exactly from the rounded Gaussian.
//
// Each example's clipped gradient is truncated toward zero onto the lattice
// (Quantize), so its L2 norm is at most C whatever the float error of the
// norm, and the batch sum is an exact int64 vector (the same on every
// machine, in any order, and through an MPI reduction). Release adds
// round(Z), Z ~ N(0, (σC/γ)²) per coordinate in lattice units, sampled
// exactly with random bits and integer arithmetic: bins of the half-normal
// drawn from a table compared digit by digit, then an exact acceptance
// (bins.go). Counts and real sums keep the reference sampler, Karney's
// algorithm (Karney 2016, "Sampling exactly from the normal
// distribution"), which has the same output distribution. Because the sum S is a lattice
// point, S + round(Z) = round(S + Z): the released point is a post-processing
// of the Gaussian mechanism at sensitivity C, so every accountant of the
// continuous mechanism (RDP, PLD, twice sampling) holds unchanged and δ is
// not increased. The float32 parameters are a post-processing of that point.
//
// ClipFactor, ClipFactorTo, AddScaled, AddScaledClamped and FloorSteps are
// Quantize's steps for callers that hold an example in pieces (per layer)
// or clip it per layer or per coordinate. The package does not clip in a
// rotated basis, choose σ, or compute per-sample gradients; RotatedBound gives the clip norm a rotated-basis
// clipper must use so that the lattice rounding keeps its bound.
// docs/secure-noise.md gives the derivations (η, k, the sampler's
// exactness, the accounting argument) and the measured cost.
//
// The package is also the one place where every other noisy value a run
// releases is made (mechanism/boundary_test.go enforces it): CountNoise
// adds exact rounded-Gaussian integer noise to an integer count, and Sum
// clips real-valued records onto a lattice fixed by public parameters, sums
// them exactly and noises the sum the same way (docs/secure-noise.md,
// "Releases outside the gradient").
//
// A Noise, CountNoise or Sum keeps scratch for its sampler and is not safe
// for concurrent use.
package lattice
