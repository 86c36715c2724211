package datasets

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX is a decoded IDX file of unsigned bytes (type code 0x08), the format of
// MNIST and Fashion-MNIST: Dims[0] items of shape Dims[1:].
type IDX struct {
	Dims []int
	Data []byte
}

// maxIDXBytes bounds what a header may announce (MNIST's training images
// are 47 MB); it keeps a corrupt header from asking for absurd sizes.
const maxIDXBytes = 1 << 31

// ReadIDX decodes an IDX stream, gzip-compressed or raw (detected from the
// gzip magic bytes). Only the unsigned-byte type is supported. The stream
// must hold exactly the number of bytes the header announces.
func ReadIDX(r io.Reader) (*IDX, error) {
	r, err := maybeGunzip(r)
	if err != nil {
		return nil, err
	}
	dims, err := readIDXHeader(r)
	if err != nil {
		return nil, err
	}
	want := 1
	for _, d := range dims {
		want *= d
	}
	// Read at most want+1 bytes: the buffer grows with the data actually
	// present, not with what a corrupt header claims.
	data, err := io.ReadAll(io.LimitReader(r, int64(want)+1))
	if err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	switch {
	case len(data) < want:
		return nil, fmt.Errorf("truncated: header announces %d data bytes (dims %v), file has %d", want, dims, len(data))
	case len(data) > want:
		return nil, fmt.Errorf("trailing data after the %d bytes the header announces (dims %v)", want, dims)
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// maybeGunzip wraps r in a gzip reader when it starts with the gzip magic.
func maybeGunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// readIDXHeader reads the magic number and dimension sizes.
func readIDXHeader(r io.Reader) ([]int, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("reading magic number: %w", noEOF(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("bad magic number %#08x: not an IDX file", binary.BigEndian.Uint32(magic[:]))
	}
	if magic[2] != 0x08 {
		return nil, fmt.Errorf("IDX data type %#02x not supported (only 0x08, unsigned byte)", magic[2])
	}
	nd := int(magic[3])
	if nd < 1 || nd > 4 {
		return nil, fmt.Errorf("IDX with %d dimensions not supported (want 1 to 4)", nd)
	}
	raw := make([]byte, 4*nd)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("reading dimensions: %w", noEOF(err))
	}
	dims := make([]int, nd)
	total := int64(1)
	for i := range dims {
		v := binary.BigEndian.Uint32(raw[4*i:])
		if v == 0 && i > 0 {
			return nil, fmt.Errorf("dimension %d is 0 (dims must describe non-empty items)", i)
		}
		total *= int64(v)
		if total > maxIDXBytes {
			return nil, fmt.Errorf("dimensions exceed %d bytes", int64(maxIDXBytes))
		}
		dims[i] = int(v)
	}
	return dims, nil
}

// noEOF turns a bare EOF into ErrUnexpectedEOF: inside a header it means the
// file is truncated.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ReadIDXFile reads an IDX file; errors name the file.
func ReadIDXFile(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badData(err)
	}
	defer f.Close()
	m, err := ReadIDX(f)
	if err != nil {
		return nil, badData(fmt.Errorf("idx %s: %w", path, err))
	}
	return m, nil
}

// ProbeIDXFile reads only the header of an IDX file (decompressing just its
// first bytes) and returns the dimensions.
func ProbeIDXFile(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badData(err)
	}
	defer f.Close()
	r, err := maybeGunzip(f)
	if err != nil {
		return nil, badData(fmt.Errorf("idx %s: %w", path, err))
	}
	dims, err := readIDXHeader(r)
	if err != nil {
		return nil, badData(fmt.Errorf("idx %s: %w", path, err))
	}
	return dims, nil
}

// NewIDXDataset combines an image IDX (N×H×W) and a label IDX (N) into a
// dataset with Shape [1,H,W], pixels scaled to [0,1] and numClasses classes.
// The names are used in error messages.
func NewIDXDataset(name string, images, labels *IDX, imagesName, labelsName string, numClasses int) (*Dataset, error) {
	d, err := newIDXDataset(name, images, labels, imagesName, labelsName, numClasses)
	return d, badData(err)
}

func newIDXDataset(name string, images, labels *IDX, imagesName, labelsName string, numClasses int) (*Dataset, error) {
	if len(images.Dims) != 3 {
		return nil, fmt.Errorf("idx %s: images must have 3 dimensions (N, rows, cols), got %v", imagesName, images.Dims)
	}
	if len(labels.Dims) != 1 {
		return nil, fmt.Errorf("idx %s: labels must have 1 dimension, got %v", labelsName, labels.Dims)
	}
	n, h, w := images.Dims[0], images.Dims[1], images.Dims[2]
	if labels.Dims[0] != n {
		return nil, fmt.Errorf("idx %s has %d images but %s has %d labels", imagesName, n, labelsName, labels.Dims[0])
	}
	if h == 0 || w == 0 {
		return nil, fmt.Errorf("idx %s: empty images (%d×%d)", imagesName, h, w)
	}
	d := &Dataset{
		Name:       name,
		X:          make([]float32, len(images.Data)),
		Y:          make([]int, n),
		Shape:      []int{1, h, w},
		NumClasses: numClasses,
	}
	scaleBytes(d.X, images.Data)
	for i, b := range labels.Data {
		if int(b) >= numClasses {
			return nil, fmt.Errorf("idx %s: a label is outside [0,%d)", labelsName, numClasses)
		}
		d.Y[i] = int(b)
	}
	return d, nil
}

// scaleBytes maps pixel bytes to [0,1]: dst[i] = src[i]/255.
func scaleBytes(dst []float32, src []byte) {
	var lut [256]float32
	for i := range lut {
		lut[i] = float32(i) / 255
	}
	for i, b := range src {
		dst[i] = lut[b]
	}
}

// LoadIDX reads an image and a label IDX file into a dataset.
func LoadIDX(name, imagesPath, labelsPath string, numClasses int) (*Dataset, error) {
	im, err := ReadIDXFile(imagesPath)
	if err != nil {
		return nil, err
	}
	lb, err := ReadIDXFile(labelsPath)
	if err != nil {
		return nil, err
	}
	return NewIDXDataset(name, im, lb, imagesPath, labelsPath, numClasses)
}
