// Package rng is the public face of dptrain's random streams: the
// ChaCha8-based Stream every sampler, noise source and initialiser takes.
// It exists so that code outside this module (which cannot import
// internal/rng) can seed them.
//
//	s := rng.New(42)                 // reproducible
//	s, err := rng.NewCrypto()        // unpredictable: what a private run uses
//	noise := s.Child("noise")        // independent sub-stream by label
package rng
