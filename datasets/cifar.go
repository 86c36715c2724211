package datasets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// CIFAR-10 binary layout: each record is one label byte followed by
// 3·32·32 pixel bytes, the red plane, then green, then blue, each row-major.
const (
	cifarPixels = 3 * 32 * 32
	cifarRecord = 1 + cifarPixels
	// cifarMaxBytes bounds one batch file (the real ones are 30,730,000 bytes).
	cifarMaxBytes = 1 << 30
)

// CIFAR10Classes are the CIFAR-10 class names by label.
var CIFAR10Classes = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// ReadCIFAR10 decodes CIFAR-10 binary records from r and appends them to d
// (which must have Shape [3,32,32]). An empty stream adds nothing. On
// error d is unchanged.
func ReadCIFAR10(r io.Reader, d *Dataset) error {
	data, err := io.ReadAll(io.LimitReader(r, cifarMaxBytes+1))
	if err != nil {
		return err
	}
	if len(data) > cifarMaxBytes {
		return fmt.Errorf("larger than %d bytes", cifarMaxBytes)
	}
	if len(data)%cifarRecord != 0 {
		return fmt.Errorf("size %d is not a multiple of the %d-byte record (truncated or not CIFAR-10 binary; %d whole records, %d bytes left over)",
			len(data), cifarRecord, len(data)/cifarRecord, len(data)%cifarRecord)
	}
	n := len(data) / cifarRecord
	// Check every label before growing d, so a bad file leaves d unchanged.
	for i := range n {
		if l := data[i*cifarRecord]; l >= 10 {
			return errors.New("a record's label is outside [0,10)")
		}
	}
	x0 := len(d.X)
	d.X = append(d.X, make([]float32, n*cifarPixels)...)
	for i := range n {
		rec := data[i*cifarRecord : (i+1)*cifarRecord]
		d.Y = append(d.Y, int(rec[0]))
		scaleBytes(d.X[x0+i*cifarPixels:x0+(i+1)*cifarPixels], rec[1:])
	}
	return nil
}

// newCIFAR10 returns an empty CIFAR-10 dataset.
func newCIFAR10(name string) *Dataset {
	return &Dataset{Name: name, Shape: []int{3, 32, 32}, NumClasses: 10, ClassNames: append([]string(nil), CIFAR10Classes...)}
}

// LoadCIFAR10Files reads and concatenates CIFAR-10 binary batch files.
func LoadCIFAR10Files(name string, paths ...string) (*Dataset, error) {
	d := newCIFAR10(name)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, badData(err)
		}
		err = ReadCIFAR10(f, d)
		f.Close()
		if err != nil {
			return nil, badData(fmt.Errorf("cifar10 %s: %w", p, err))
		}
	}
	if d.N() == 0 {
		return nil, badData(fmt.Errorf("cifar10 %s: no records", strings.Join(paths, ", ")))
	}
	return d, nil
}
