package sampler

import (
	"fmt"

	"github.com/dptrain/dptrain/rng"
)

// WithoutReplacement draws, at every step, a fresh uniformly random subset
// of exactly b of the n examples (a partial Fisher–Yates shuffle of a
// persistent permutation: O(b) per step, no allocation).
type WithoutReplacement struct {
	n, b int
	perm []int
	s    *rng.Stream
}

// NewWithoutReplacement returns a sampler of fixed-size batches b ≤ n.
func NewWithoutReplacement(n, b int, s *rng.Stream) (*WithoutReplacement, error) {
	if n < 1 || b < 1 || b > n {
		return nil, fmt.Errorf("sampler: without replacement needs 1 <= batch <= n, got batch=%d n=%d", b, n)
	}
	if s == nil {
		return nil, fmt.Errorf("sampler: without replacement: nil random stream")
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	return &WithoutReplacement{n: n, b: b, perm: perm, s: s}, nil
}

// Next returns b distinct indices, a uniform subset, in dst's storage (in
// random order).
func (w *WithoutReplacement) Next(dst []int) []int {
	for i := 0; i < w.b; i++ {
		j := i + w.s.IntN(w.n-i)
		w.perm[i], w.perm[j] = w.perm[j], w.perm[i]
	}
	return append(dst[:0], w.perm[:w.b]...)
}

// ExpectedBatch is b (the batch size is fixed).
func (w *WithoutReplacement) ExpectedBatch() float64 { return float64(w.b) }

// MarshalBinary saves the parameters, the permutation and the stream.
func (w *WithoutReplacement) MarshalBinary() ([]byte, error) {
	var e enc
	e.header("without_replacement")
	e.i64(int64(w.n))
	e.i64(int64(w.b))
	for _, v := range w.perm {
		e.i64(int64(v))
	}
	if err := e.stream(w.s); err != nil {
		return nil, fmt.Errorf("sampler: without replacement: %w", err)
	}
	return e.b.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (w *WithoutReplacement) UnmarshalBinary(b []byte) error {
	const kind = "without_replacement"
	d := dec{b: b}
	if err := d.header(kind); err != nil {
		return err
	}
	n, bs := d.i64(), d.i64()
	perm, err := readPerm(&d, n, kind)
	if err != nil {
		return err
	}
	s := d.stream()
	if err := d.finish(kind); err != nil {
		return err
	}
	nw, err := NewWithoutReplacement(int(n), int(bs), s)
	if err != nil {
		return fmt.Errorf("sampler: %s state: %w", kind, err)
	}
	nw.perm = perm
	*w = *nw
	return nil
}

// readPerm reads n ints and checks they form a permutation of [0, n).
func readPerm(d *dec, n int64, kind string) ([]int, error) {
	if n < 1 || n > int64(len(d.b)/8) {
		return nil, fmt.Errorf("sampler: %s state: bad permutation length %d", kind, n)
	}
	perm := make([]int, n)
	seen := make([]bool, n)
	for i := range perm {
		v := d.i64()
		if v < 0 || v >= n || seen[v] {
			return nil, fmt.Errorf("sampler: %s state: not a permutation of [0,%d)", kind, n)
		}
		seen[v] = true
		perm[i] = int(v)
	}
	return perm, nil
}

// Shuffle walks epochs of fixed-size batches: each epoch a fresh random
// permutation of the n examples is cut into ⌊n/b⌋ batches of b (the n mod b
// examples left over in an epoch are skipped that epoch).
//
// Shuffling gives no privacy amplification that the accountant events can
// express. Replacing one record changes exactly one batch per epoch, so the
// epoch is charged once, as one Gaussian at its first step (package
// mechanism builds that event).
type Shuffle struct {
	n, b  int
	perm  []int
	pos   int   // next batch starts at perm[pos]
	epoch int64 // completed epochs
	s     *rng.Stream
}

// NewShuffle returns an epoch sampler of batches of b ≤ n.
func NewShuffle(n, b int, s *rng.Stream) (*Shuffle, error) {
	if n < 1 || b < 1 || b > n {
		return nil, fmt.Errorf("sampler: shuffle needs 1 <= batch <= n, got batch=%d n=%d", b, n)
	}
	if s == nil {
		return nil, fmt.Errorf("sampler: shuffle: nil random stream")
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	sh := &Shuffle{n: n, b: b, perm: perm, s: s}
	sh.reshuffle()
	return sh, nil
}

func (sh *Shuffle) reshuffle() {
	sh.s.Shuffle(sh.n, func(i, j int) { sh.perm[i], sh.perm[j] = sh.perm[j], sh.perm[i] })
	sh.pos = 0
}

// Next returns the next batch of b indices in dst's storage, starting a
// new epoch (and a new permutation) when the current one is used up.
func (sh *Shuffle) Next(dst []int) []int {
	if sh.pos+sh.b > sh.n {
		sh.epoch++
		sh.reshuffle()
	}
	dst = append(dst[:0], sh.perm[sh.pos:sh.pos+sh.b]...)
	sh.pos += sh.b
	return dst
}

// Epoch is the number of completed epochs; BatchesPerEpoch is ⌊n/b⌋.
func (sh *Shuffle) Epoch() int64         { return sh.epoch }
func (sh *Shuffle) BatchesPerEpoch() int { return sh.n / sh.b }

// ExpectedBatch is b.
func (sh *Shuffle) ExpectedBatch() float64 { return float64(sh.b) }

// MarshalBinary saves parameters, the epoch's permutation, the position in
// it, the epoch count and the stream.
func (sh *Shuffle) MarshalBinary() ([]byte, error) {
	var e enc
	e.header("shuffle")
	e.i64(int64(sh.n))
	e.i64(int64(sh.b))
	for _, v := range sh.perm {
		e.i64(int64(v))
	}
	e.i64(int64(sh.pos))
	e.i64(sh.epoch)
	if err := e.stream(sh.s); err != nil {
		return nil, fmt.Errorf("sampler: shuffle: %w", err)
	}
	return e.b.Bytes(), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (sh *Shuffle) UnmarshalBinary(b []byte) error {
	const kind = "shuffle"
	d := dec{b: b}
	if err := d.header(kind); err != nil {
		return err
	}
	n, bs := d.i64(), d.i64()
	perm, err := readPerm(&d, n, kind)
	if err != nil {
		return err
	}
	pos, epoch := d.i64(), d.i64()
	s := d.stream()
	if err := d.finish(kind); err != nil {
		return err
	}
	if bs < 1 || bs > n || pos < 0 || pos > n || pos%bs != 0 || epoch < 0 {
		return fmt.Errorf("sampler: %s state: inconsistent batch=%d pos=%d epoch=%d n=%d", kind, bs, pos, epoch, n)
	}
	*sh = Shuffle{n: int(n), b: int(bs), perm: perm, pos: int(pos), epoch: epoch, s: s}
	return nil
}
