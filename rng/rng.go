package rng

import irng "github.com/dptrain/dptrain/internal/rng"

// Stream is a deterministic, splittable random stream. It is the same type
// the library's packages take, so a *Stream made here can be passed to any
// of them.
type Stream = irng.Stream

// New returns the stream seeded by seed: the same seed gives the same
// numbers on every machine. Use it for tests and reproducible experiments;
// the noise of a private release should come from NewCrypto.
func New(seed uint64) *Stream { return irng.NewSeeded(seed) }

// NewCrypto returns a stream seeded from the operating system's
// cryptographic source.
func NewCrypto() (*Stream, error) { return irng.NewCrypto() }
