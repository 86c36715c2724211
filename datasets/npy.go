package datasets

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"
)

// NPYOptions configures [LoadNPY].
type NPYOptions struct {
	// NumClasses is the size of the class set; every label must lie in
	// [0, NumClasses). Zero takes it from the labels themselves (largest
	// label + 1), which only a public split (a test set) may do: a class
	// set read off private training labels would leak them.
	NumClasses int
	// Shape, when set, is the per-example shape the features must have
	// (the other split's).
	Shape []int
}

// maxNPYClasses bounds a class set taken from the labels, so that one stray
// label cannot ask for a model with billions of outputs.
const maxNPYClasses = 1 << 16

// LoadNPY reads a dataset from two .npy files: the features xPath, an array
// of N examples (float32, float64 or uint8, rank 2 to 4), and the labels
// yPath, N integers (any integer dtype, or floats that are all
// integer-valued). The per-example shape becomes Shape: (N,D) → [D],
// (N,H,W) → [1,H,W] (one channel), (N,C,H,W) → [C,H,W] (channels first, as
// PyTorch stores images). uint8 features are divided by 255, as the other
// image readers do.
//
// Little-endian float32 features in C order are memory-mapped, not read:
// X is a view of the file's pages, which the kernel loads as rows are
// touched and may evict (page cache, not the Go heap), so a feature file
// larger than memory trains. Call [Dataset.Close] to unmap them; until
// then X stays valid. Writes to a mapped X go to private copy-on-write
// pages and never reach the file. Every other layout (float64, uint8,
// big-endian, Fortran order) is converted into memory: 4 bytes per
// feature value on the Go heap, twice that while a Fortran-order array is
// transposed.
//
// Every error names the file and wraps [ErrBadData]. Label errors name no
// label value and no example, since the labels may be private.
func LoadNPY(xPath, yPath string, opts NPYOptions) (*Dataset, error) {
	x, shape, mapping, err := readNPYFeatures(xPath)
	if err != nil {
		return nil, badData(fmt.Errorf("npy %s: %w", xPath, err))
	}
	d := &Dataset{Name: strings.TrimSuffix(filepath.Base(xPath), ".npy"), X: x, mapped: mapping}
	n := shape[0]
	switch len(shape) {
	case 2:
		d.Shape = []int{shape[1]}
	case 3:
		d.Shape = []int{1, shape[1], shape[2]}
	default:
		d.Shape = append([]int(nil), shape[1:]...)
	}
	if opts.Shape != nil && !slices.Equal(d.Shape, opts.Shape) {
		d.Close()
		return nil, badData(fmt.Errorf("npy %s: examples of shape %v, the other split's are %v", xPath, d.Shape, opts.Shape))
	}
	y, k, err := readNPYLabels(yPath, n, opts.NumClasses)
	if err != nil {
		d.Close()
		return nil, badData(fmt.Errorf("npy %s: %w", yPath, err))
	}
	d.Y, d.NumClasses = y, k
	if err := d.validate(); err != nil {
		d.Close()
		return nil, badData(fmt.Errorf("npy %s: %w", xPath, err))
	}
	return d, nil
}

// Mapped reports whether X is a view of a memory-mapped file ([LoadNPY]);
// a shallow copy whose X was replaced is not.
func (d *Dataset) Mapped() bool {
	if d.mapped == nil || len(d.X) == 0 {
		return false
	}
	off := uintptr(unsafe.Pointer(&d.X[0])) - uintptr(unsafe.Pointer(&d.mapped[0]))
	return off < uintptr(len(d.mapped))
}

// Close unmaps the file a memory-mapped dataset's X views, after which X is
// nil; on other datasets it does nothing. Close only the dataset [LoadNPY]
// returned, once nothing uses its X (shallow copies share the mapping).
func (d *Dataset) Close() error {
	if d.mapped == nil {
		return nil
	}
	m := d.mapped
	d.mapped, d.X = nil, nil
	return unmapFile(m)
}

// openNPY opens path and reads its header, checking that the file holds
// exactly the bytes the header announces.
func openNPY(path string) (*os.File, *NPYHeader, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	h, err := ReadNPYHeader(f)
	if err == nil {
		err = checkNPYSize(f, h)
	}
	if err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	count, _ := h.Count()
	return f, h, count, nil
}

func checkNPYSize(f *os.File, h *NPYHeader) error {
	count, err := h.Count()
	if err != nil {
		return err
	}
	if count > math.MaxInt/h.Type.Size {
		return fmt.Errorf("shape %v overflows", h.Shape)
	}
	want := h.DataOffset + int64(count)*int64(h.Type.Size)
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	switch got := fi.Size(); {
	case got < want:
		return fmt.Errorf("truncated: the header announces %s %v (%d data bytes), the file has %d", h.Type, h.Shape, want-h.DataOffset, max(got-h.DataOffset, 0))
	case got > want:
		return fmt.Errorf("%d bytes of trailing data after the %s %v array", got-want, h.Type, h.Shape)
	}
	return nil
}

// hostLittleEndian: a mapped little-endian file can be viewed in place.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// noMap turns the memory map off (tests compare both paths).
var noMap = false

// readNPYFeatures returns the features in C order, their full shape (N
// first) and, when mapped, the mapping X views.
func readNPYFeatures(path string) ([]float32, []int, []byte, error) {
	f, h, count, err := openNPY(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	t := h.Type
	if t.Kind != 'f' && (t.Kind != 'u' || t.Size != 1) {
		return nil, nil, nil, fmt.Errorf("features of dtype %s: want float32 (<f4), float64 (<f8) or uint8 (|u1)", t)
	}
	if len(h.Shape) < 2 || len(h.Shape) > 4 {
		return nil, nil, nil, fmt.Errorf("features of shape %v: want (N, D), (N, H, W) or (N, C, H, W)", h.Shape)
	}
	for _, s := range h.Shape {
		if s == 0 {
			return nil, nil, nil, fmt.Errorf("features of shape %v: empty", h.Shape)
		}
	}
	if t.Kind == 'f' && t.Size == 4 && !t.BigEndian && !h.FortranOrder && h.DataOffset%4 == 0 && hostLittleEndian && !noMap {
		size := h.DataOffset + int64(count)*4
		if m, err := mapFile(f, size); err == nil {
			x := unsafe.Slice((*float32)(unsafe.Pointer(&m[h.DataOffset])), count)
			return x, h.Shape, m, nil
		}
		// No mmap here (platform or file system): read instead.
	}
	x := make([]float32, count)
	if err := readNPYData(bufio.NewReaderSize(f, 1<<20), t, count, func(i int, v float64) { x[i] = float32(v) }); err != nil {
		return nil, nil, nil, err
	}
	if t.Kind == 'u' {
		for i := range x {
			x[i] /= 255
		}
	}
	if h.FortranOrder && len(h.Shape) > 1 {
		x = fortranToC(x, h.Shape)
	}
	return x, h.Shape, nil, nil
}

// readNPYData decodes count elements of type t from r, in chunks, calling
// set for each.
func readNPYData(r io.Reader, t NPYType, count int, set func(i int, v float64)) error {
	var order binary.ByteOrder = binary.LittleEndian
	if t.BigEndian {
		order = binary.BigEndian
	}
	buf := make([]byte, min(count*t.Size, 1<<20)/t.Size*t.Size)
	for i := 0; i < count; {
		k := min(count-i, len(buf)/t.Size)
		b := buf[:k*t.Size]
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("reading data: %w", noEOF(err))
		}
		for j := range k {
			set(i+j, decodeNPY(b[j*t.Size:], t, order))
		}
		i += k
	}
	return nil
}

// decodeNPY decodes one element; integers of 8 bytes beyond ±2⁵³ lose
// precision, which no label reaches.
func decodeNPY(b []byte, t NPYType, order binary.ByteOrder) float64 {
	switch t.Kind {
	case 'f':
		if t.Size == 4 {
			return float64(math.Float32frombits(order.Uint32(b)))
		}
		return math.Float64frombits(order.Uint64(b))
	case 'i':
		switch t.Size {
		case 1:
			return float64(int8(b[0]))
		case 2:
			return float64(int16(order.Uint16(b)))
		case 4:
			return float64(int32(order.Uint32(b)))
		default:
			return float64(int64(order.Uint64(b)))
		}
	default: // 'u', 'b'
		switch t.Size {
		case 1:
			return float64(b[0])
		case 2:
			return float64(order.Uint16(b))
		case 4:
			return float64(order.Uint32(b))
		default:
			return float64(order.Uint64(b))
		}
	}
}

// fortranToC reorders an array stored in Fortran order (first index
// fastest) into C order (last index fastest).
func fortranToC(src []float32, shape []int) []float32 {
	dst := make([]float32, len(src))
	stride := make([]int, len(shape)) // C-order strides
	s := 1
	for j := len(shape) - 1; j >= 0; j-- {
		stride[j] = s
		s *= shape[j]
	}
	idx := make([]int, len(shape))
	c := 0
	for _, v := range src {
		dst[c] = v
		for j := range shape { // advance the Fortran-order index
			idx[j]++
			c += stride[j]
			if idx[j] < shape[j] {
				break
			}
			c -= idx[j] * stride[j]
			idx[j] = 0
		}
	}
	return dst
}

// readNPYLabels reads n labels. k > 0 is the class set's size; k = 0 takes
// it from the labels. Errors name no label value (they may be private).
func readNPYLabels(path string, n, k int) ([]int, int, error) {
	f, h, count, err := openNPY(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if h.Type.Kind == 'b' {
		return nil, 0, fmt.Errorf("labels of dtype %s: want integers (or integer-valued floats)", h.Type)
	}
	if len(h.Shape) != 1 {
		hint := ""
		if len(h.Shape) == 2 && h.Shape[1] == 1 {
			hint = " (flatten it: y.ravel())"
		}
		return nil, 0, fmt.Errorf("labels of shape %v: want one dimension, (N,)%s", h.Shape, hint)
	}
	if count != n {
		return nil, 0, fmt.Errorf("%d labels for %d feature rows", count, n)
	}
	y := make([]int, n)
	var nonInt, negative, tooBig bool
	err = readNPYData(bufio.NewReader(f), h.Type, n, func(i int, v float64) {
		switch {
		case v != math.Trunc(v): // NaN and fractions
			nonInt = true
		case v < 0:
			negative = true
		case v >= maxNPYClasses || k > 0 && v >= float64(k):
			tooBig = true
		default:
			y[i] = int(v)
		}
	})
	switch {
	case err != nil:
		return nil, 0, err
	case nonInt:
		return nil, 0, fmt.Errorf("labels of dtype %s: some are not integers (labels are class indices 0, 1, …)", h.Type)
	case negative:
		return nil, 0, errors.New("some labels are negative (labels are class indices 0, 1, …)")
	case tooBig && k > 0:
		return nil, 0, fmt.Errorf("some labels lie outside the class set 0..%d (taken from the test labels)", k-1)
	case tooBig:
		return nil, 0, fmt.Errorf("some labels are %d or more; labels are class indices 0..K-1 with K at most %d", maxNPYClasses, maxNPYClasses)
	}
	if k == 0 {
		for _, v := range y {
			k = max(k, v+1)
		}
	}
	return y, k, nil
}

// NPYFeatures is a .npy array of examples without labels (what predict
// reads): N examples of the per-example Shape, row-major in X.
type NPYFeatures struct {
	X     []float32
	N     int
	Shape []int

	mapped []byte
}

// LoadNPYFeatures reads an array of examples as LoadNPY reads its features
// (dtypes, shapes, memory-mapping and uint8 scaling alike). Close it once
// X is no longer used. Errors name the file and wrap ErrBadData.
func LoadNPYFeatures(path string) (*NPYFeatures, error) {
	x, shape, mapping, err := readNPYFeatures(path)
	if err != nil {
		return nil, badData(fmt.Errorf("npy %s: %w", path, err))
	}
	f := &NPYFeatures{X: x, N: shape[0], Shape: append([]int(nil), shape[1:]...), mapped: mapping}
	if len(shape) == 3 {
		f.Shape = []int{1, shape[1], shape[2]}
	}
	return f, nil
}

// Close unmaps a memory-mapped X (X is nil afterwards).
func (f *NPYFeatures) Close() error {
	if f.mapped == nil {
		return nil
	}
	m := f.mapped
	f.mapped, f.X = nil, nil
	return unmapFile(m)
}
