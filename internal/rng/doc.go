// Package rng provides the random streams of dptrain: ChaCha8 generators
// seeded either from crypto/rand (the default for DP noise) or from a fixed
// seed (reproducible runs), with named child streams that do not disturb each
// other and binary state for checkpoints.
//
// It is not a general random-number library: it exists so that the sampler,
// the noise and dropout all draw from the same audited kind of stream.
package rng
