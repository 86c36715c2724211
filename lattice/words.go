package lattice

import (
	"math/bits"

	"github.com/dptrain/dptrain/rng"
)

// words is the exact sampler's supply of uniform 64-bit words from a
// stream. Buffered (newWords), it draws a block at a time from a block
// stream (rng.Blocks, AES-CTR) and the words left at the end are discarded
// with it: for the noise's own chunk streams, which nothing else reads. Unbuffered (streamWords), it returns the
// stream's Uint64 word for word, where the stream goes on being used after
// the draw (counts, sums, the reference sampler), so their seeded draws are
// unchanged. Either way the sampler sees the stream's words in order.
type words struct {
	r   *rng.Stream
	b   *rng.Blocks // the buffered source's block stream
	buf []uint64    // nil: unbuffered
	i   int         // buf[i:] not yet used
}

// wordsBlock is a buffered source's block: 2 KiB, a few dozen samples.
const wordsBlock = 256

func newWords(b *rng.Blocks) *words { return &words{b: b, buf: make([]uint64, 0, wordsBlock)} }

func streamWords(r *rng.Stream) *words { return &words{r: r} }

// Uint64 returns the next word.
func (w *words) Uint64() uint64 {
	if w.i < len(w.buf) {
		v := w.buf[w.i]
		w.i++
		return v
	}
	return w.refill()
}

func (w *words) refill() uint64 {
	if cap(w.buf) == 0 {
		return w.r.Uint64()
	}
	w.buf = w.buf[:cap(w.buf)]
	w.b.Fill(w.buf)
	w.i = 1
	return w.buf[0]
}

// Uint64N returns a uniform integer in [0, n), n > 0, exactly, with the
// words math/rand/v2's Rand.Uint64N would use (Lemire's multiply with
// rejection), so an unbuffered source keeps its stream's seeded draws.
func (w *words) Uint64N(n uint64) uint64 {
	if n&(n-1) == 0 {
		return w.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(w.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(w.Uint64(), n)
		}
	}
	return hi
}
