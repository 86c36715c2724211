package sampler

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/dptrain/dptrain/rng"
)

// Sampler is what a training loop needs of any sampling scheme.
type Sampler interface {
	// Next returns the indices of the next step's batch, reusing dst's
	// storage. The batch may be empty (Poisson); the step still counts.
	Next(dst []int) []int
	// ExpectedBatch is the expected number of examples per step.
	ExpectedBatch() float64
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

// stateVersion guards the binary layout of every sampler's state.
const stateVersion = 1

// enc is a small append-only binary writer for checkpoint states.
type enc struct{ b bytes.Buffer }

func (e *enc) u64(v uint64) { _ = binary.Write(&e.b, binary.LittleEndian, v) }
func (e *enc) i64(v int64)  { e.u64(uint64(v)) }
func (e *enc) f64(v float64) {
	e.u64(math.Float64bits(v))
}
func (e *enc) bytes(p []byte) { e.u64(uint64(len(p))); e.b.Write(p) }
func (e *enc) str(s string)   { e.bytes([]byte(s)) }
func (e *enc) stream(s *rng.Stream) error {
	st, err := s.MarshalBinary()
	if err != nil {
		return err
	}
	e.bytes(st)
	return nil
}

var errShort = errors.New("truncated state")

// dec reads what enc wrote; the first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errShort
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
func (d *dec) i64() int64   { return int64(d.u64()) }
func (d *dec) f64() float64 { return math.Float64frombits(d.u64()) }
func (d *dec) bytes() []byte {
	n := d.u64()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}
func (d *dec) str() string { return string(d.bytes()) }
func (d *dec) stream() *rng.Stream {
	p := d.bytes()
	if d.err != nil {
		return nil
	}
	s := rng.New(0)
	if err := s.UnmarshalBinary(p); err != nil {
		d.err = err
		return nil
	}
	return s
}

// header writes and checks the kind tag and version of a state.
func (e *enc) header(kind string) { e.str(kind); e.u64(stateVersion) }

func (d *dec) header(kind string) error {
	k := d.str()
	v := d.u64()
	if d.err != nil {
		return fmt.Errorf("sampler: %s state: %w", kind, d.err)
	}
	if k != kind {
		return fmt.Errorf("sampler: state is for a %q sampler, not %q", k, kind)
	}
	if v != stateVersion {
		return fmt.Errorf("sampler: %s state version %d, want %d", kind, v, stateVersion)
	}
	return nil
}

func (d *dec) finish(kind string) error {
	if d.err != nil {
		return fmt.Errorf("sampler: %s state: %w", kind, d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("sampler: %s state: %d trailing bytes", kind, len(d.b))
	}
	return nil
}

// geomSkip returns the number of failures before the next success of
// independent Bernoulli(q) trials, 0 < q < 1, as ⌊log U / log(1−q)⌋ with U
// uniform on (0,1]. logq1 is log1p(−q). The result saturates at limit, so
// callers can stop at the end of their range without overflow.
func geomSkip(s *rng.Stream, logq1 float64, limit int) int {
	u := 1 - s.Float64() // (0, 1]
	k := math.Floor(math.Log(u) / logq1)
	if !(k < float64(limit)) { // also catches +Inf
		return limit
	}
	return int(k)
}

// bernoulliIndices appends to dst the indices in [0, n) that succeed in
// independent Bernoulli(q) trials, in increasing order, at a cost of
// O(1 + q·n) draws.
func bernoulliIndices(s *rng.Stream, n int, q float64, dst []int) []int {
	switch {
	case q <= 0 || n == 0:
		return dst
	case q >= 1:
		for i := 0; i < n; i++ {
			dst = append(dst, i)
		}
		return dst
	}
	logq1 := math.Log1p(-q)
	i := -1
	for {
		i += 1 + geomSkip(s, logq1, n)
		if i >= n {
			return dst
		}
		dst = append(dst, i)
	}
}

func checkRate(name string, q float64) error {
	if !(q > 0 && q <= 1) {
		return fmt.Errorf("sampler: %s must be in (0,1], got %v", name, q)
	}
	return nil
}
