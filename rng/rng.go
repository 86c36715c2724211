package rng

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
)

// Stream is a ChaCha8 random stream. It embeds *rand.Rand for the usual
// draws (Float64, NormFloat64, IntN, ...).
type Stream struct {
	*mrand.Rand
	seed [32]byte
	src  *mrand.ChaCha8
}

// New returns a reproducible stream for seed.
func New(seed uint64) *Stream {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	s = sha256.Sum256(s[:])
	return fromSeed(s)
}

// NewCrypto returns a stream seeded from crypto/rand: the default for noise.
func NewCrypto() (*Stream, error) {
	var s [32]byte
	if _, err := rand.Read(s[:]); err != nil {
		return nil, fmt.Errorf("rng: reading crypto/rand: %w", err)
	}
	return fromSeed(s), nil
}

// NewSeededOrCrypto returns New(seed) when seeded is true and NewCrypto otherwise.
func NewSeededOrCrypto(seed uint64, seeded bool) (*Stream, error) {
	if seeded {
		return New(seed), nil
	}
	return NewCrypto()
}

func fromSeed(s [32]byte) *Stream {
	src := mrand.NewChaCha8(s)
	return &Stream{Rand: mrand.New(src), seed: s, src: src}
}

// Child returns an independent stream derived from this stream's seed and
// label. It does not consume from the parent, so adding a new child never
// shifts the draws of existing ones.
func (s *Stream) Child(label string) *Stream { return fromSeed(s.childSeed(label)) }

func (s *Stream) childSeed(label string) [32]byte {
	h := sha256.New()
	h.Write(s.seed[:])
	h.Write([]byte(label))
	var c [32]byte
	copy(c[:], h.Sum(nil))
	return c
}

// Blocks is a stream of uniform 64-bit words for bulk draws: AES-256 in
// counter mode from a zero counter, keyed like a child stream (Blocks). On
// CPUs with AES instructions it yields words about four times as fast as
// ChaCha8 (the lattice noise reads two per value); like ChaCha8 it is a
// cryptographic generator, so a crypto-seeded parent keeps its draws
// unpredictable.
type Blocks struct {
	ctr cipher.Stream
	buf []byte
}

// Blocks returns the block stream for label, derived from this stream's
// seed as Child derives its (under a label of its own, so the two never
// share a key); like Child it does not consume from the parent.
func (s *Stream) Blocks(label string) *Blocks {
	key := s.childSeed("aes-ctr/" + label)
	blk, err := aes.NewCipher(key[:])
	if err != nil {
		panic(fmt.Sprintf("rng: AES-256 with a 32-byte key: %v", err)) // cannot happen
	}
	return &Blocks{ctr: cipher.NewCTR(blk, make([]byte, aes.BlockSize))}
}

// Fill sets dst to the stream's next len(dst) words (little-endian 8-byte
// groups of the key stream).
func (b *Blocks) Fill(dst []uint64) {
	n := 8 * len(dst)
	if cap(b.buf) < n {
		b.buf = make([]byte, n)
	}
	buf := b.buf[:n]
	clear(buf)
	b.ctr.XORKeyStream(buf, buf)
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(buf[8*i:])
	}
}

// FillNormal sets dst[i] to independent N(0, sigma²) draws.
func (s *Stream) FillNormal(dst []float32, sigma float64) {
	for i := range dst {
		dst[i] = float32(sigma * s.NormFloat64())
	}
}

// AddNormal adds independent N(0, sigma²) draws to dst.
func (s *Stream) AddNormal(dst []float32, sigma float64) {
	for i := range dst {
		dst[i] += float32(sigma * s.NormFloat64())
	}
}

// MarshalBinary returns the stream's full state (seed and position).
func (s *Stream) MarshalBinary() ([]byte, error) {
	st, err := s.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("rng: %w", err)
	}
	return append(append([]byte{}, s.seed[:]...), st...), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (s *Stream) UnmarshalBinary(b []byte) error {
	if len(b) < 32 {
		return fmt.Errorf("rng: state too short (%d bytes)", len(b))
	}
	var seed [32]byte
	copy(seed[:], b[:32])
	src := mrand.NewChaCha8(seed)
	if err := src.UnmarshalBinary(b[32:]); err != nil {
		return fmt.Errorf("rng: restoring state: %w", err)
	}
	s.seed, s.src, s.Rand = seed, src, mrand.New(src)
	return nil
}
