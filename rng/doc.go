// Package rng provides the random streams of dptrain: ChaCha8 generators
// seeded either from crypto/rand (the default for DP noise) or from a fixed
// seed (reproducible runs), with named child streams that do not disturb
// each other and binary state for checkpoints. Every sampler, noise source
// and initialiser takes its Stream, and so can code outside this module.
//
//	s := rng.New(42)                 // reproducible
//	s, err := rng.NewCrypto()        // unpredictable: what a private run uses
//	noise := s.Child("noise")        // independent sub-stream by label
//
// It is not a general random-number library: it exists so that the sampler,
// the noise and dropout all draw from the same audited kind of stream.
package rng
