package trainer

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"strings"

	"github.com/dptrain/dptrain/datasets"
)

// DataDigest identifies the data a run trains and tests on, as the trainer
// read them: a SHA-256 of each split's parsed values in a canonical order,
// with the file (or dataset) each split came from. A checkpoint stores it,
// and a resume over different data is refused: the run's noise streams
// continue from the checkpoint, so statistics recomputed on changed data
// would be released with the same noise, and two releases would differ by
// the exact, noise-free change (docs/architecture.md#resuming-over-the-same-data). Ranks of a
// distributed run can compare it the same way (Equal).
//
// The digest is a function of the training data: it is kept in private/
// (the checkpoint) and never printed; messages name the split's file only.
type DataDigest struct {
	Train SplitDigest `json:"train"`
	Test  SplitDigest `json:"test"`
}

// SplitDigest is one split's file identity and the SHA-256 of its values.
type SplitDigest struct {
	// File names where the split was read from: the path as configured, a
	// data directory, or the name of a built-in dataset.
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// ErrDataChanged is wrapped by the refusal of a resume whose data differ
// from the checkpoint's (an invalid configuration: exit status 2).
var ErrDataChanged = fmt.Errorf("%w: the data differ from the checkpoint's", ErrInvalidConfig)

// DigestData digests the training and test splits, read from the files
// trainFile and testFile (their identities enter the digest too).
func DigestData(train, test *datasets.Dataset, trainFile, testFile string) DataDigest {
	return DataDigest{Train: DigestSplit(train, trainFile), Test: DigestSplit(test, testFile)}
}

// DigestSplit is the SHA-256 of a domain tag, the file identity, the
// example count, the per-example shape, the class set and names, every
// feature (IEEE 754 bits, little-endian, row-major) and every label
// (int64, little-endian), each length-prefixed so that no two datasets
// share an encoding.
func DigestSplit(ds *datasets.Dataset, file string) SplitDigest {
	h := sha256.New()
	w := digestWriter{h: h}
	w.str("dptrain data digest v1")
	w.str(file)
	w.u64(uint64(ds.N()))
	w.u64(uint64(len(ds.Shape)))
	for _, s := range ds.Shape {
		w.u64(uint64(s))
	}
	w.u64(uint64(ds.NumClasses))
	w.u64(uint64(len(ds.ClassNames)))
	for _, n := range ds.ClassNames {
		w.str(n)
	}
	w.u64(uint64(len(ds.X)))
	for _, v := range ds.X {
		w.u32(math.Float32bits(v))
	}
	w.u64(uint64(len(ds.Y)))
	for _, y := range ds.Y {
		w.u64(uint64(int64(y)))
	}
	w.flush()
	return SplitDigest{File: file, SHA256: hex.EncodeToString(h.Sum(nil))}
}

// Equal reports whether two digests identify the same data.
func (d DataDigest) Equal(o DataDigest) bool { return d == o }

// Check returns nil when now identifies the data d does, else an error
// wrapping ErrDataChanged that names each split's file whose data differ
// (never a value, a position or the digest itself).
func (d DataDigest) Check(now DataDigest) error {
	var which []string
	if d.Train != now.Train {
		which = append(which, fmt.Sprintf("training data (%s)", now.Train.File))
	}
	if d.Test != now.Test {
		which = append(which, fmt.Sprintf("test data (%s)", now.Test.File))
	}
	if len(which) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the %s are not those it was written with", ErrDataChanged, strings.Join(which, " and the "))
}

// errNoDigest refuses a checkpoint written before checkpoints carried the
// data's digest: it cannot show that the data are unchanged.
var errNoDigest = errors.New("it was written before checkpoints recorded a digest of the data, so a resume cannot tell changed data from the same (and would release statistics of changed data with the same noise)")

// digestWriter buffers the encoding into h.
type digestWriter struct {
	h   hash.Hash
	buf [1 << 16]byte
	n   int
}

func (w *digestWriter) room(k int) {
	if w.n+k > len(w.buf) {
		w.flush()
	}
}

func (w *digestWriter) flush() {
	w.h.Write(w.buf[:w.n])
	w.n = 0
}

func (w *digestWriter) u32(v uint32) {
	w.room(4)
	binary.LittleEndian.PutUint32(w.buf[w.n:], v)
	w.n += 4
}

func (w *digestWriter) u64(v uint64) {
	w.room(8)
	binary.LittleEndian.PutUint64(w.buf[w.n:], v)
	w.n += 8
}

func (w *digestWriter) str(s string) {
	w.u64(uint64(len(s)))
	w.flush()
	w.h.Write([]byte(s))
}
