package datasets

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strings"
)

// The embedded subset: the first 5,000 training and 1,000 test examples of
// the real Fashion-MNIST (about 2.6 MB as gzip IDX), written by
// datasets/internal/mkembed from Debian's dataset-fashion-mnist files.
//
//go:embed embedded/fashion-mnist/*.gz embedded/fashion-mnist/SHA256SUMS
var embeddedFS embed.FS

const embeddedDir = "embedded/fashion-mnist"

// EmbeddedTrainN and EmbeddedTestN are the sizes of the embedded subset.
const (
	EmbeddedTrainN = 5000
	EmbeddedTestN  = 1000
)

var embeddedSource = Source{Kind: FromEmbedded, Path: "embedded:fashion-mnist"}

// Embedded loads the Fashion-MNIST subset compiled into the binary. It needs
// no files, so the default training run works with no set-up.
func Embedded() (*Loaded, error) {
	load := func(im, lb string) (*Dataset, error) {
		i, err := readEmbeddedIDX(im)
		if err != nil {
			return nil, err
		}
		l, err := readEmbeddedIDX(lb)
		if err != nil {
			return nil, err
		}
		d, err := NewIDXDataset("fashion-mnist", i, l, im, lb, 10)
		if err != nil {
			return nil, err
		}
		d.ClassNames = FashionMNISTClasses
		return d, nil
	}
	tr, err := load(idxNames[0], idxNames[1])
	if err != nil {
		return nil, err
	}
	te, err := load(idxNames[2], idxNames[3])
	if err != nil {
		return nil, err
	}
	return &Loaded{Train: tr, Test: te}, nil
}

func readEmbeddedIDX(name string) (*IDX, error) {
	b, err := embeddedFS.ReadFile(path.Join(embeddedDir, name+".gz"))
	if err != nil {
		return nil, err
	}
	m, err := ReadIDX(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("idx embedded %s: %w", name, err)
	}
	return m, nil
}

func probeEmbedded() (Summary, error) {
	return probeIDXPair(idxNames[:2], idxNames[2:], func(name string) ([]int, error) {
		m, err := readEmbeddedIDX(name)
		if err != nil {
			return nil, err
		}
		return m.Dims, nil
	})
}

// verifyEmbedded checks the embedded files' content against their
// SHA256SUMS manifest.
func verifyEmbedded() ([]FileCheck, error) {
	sums, err := embeddedFS.ReadFile(path.Join(embeddedDir, "SHA256SUMS"))
	if err != nil {
		return nil, err
	}
	var out []FileCheck
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		want, name := f[0], f[1]
		fc := FileCheck{Path: path.Join("embedded:fashion-mnist", name+".gz")}
		b, err := embeddedFS.ReadFile(path.Join(embeddedDir, name+".gz"))
		if err == nil {
			var r io.Reader
			r, err = maybeGunzip(bytes.NewReader(b))
			if err == nil {
				h := sha256.New()
				_, err = io.Copy(h, r)
				fc.Got = hex.EncodeToString(h.Sum(nil))
			}
		}
		switch {
		case err != nil:
			fc.Err = err
		case fc.Got == want:
			fc.Status = "content sha256 ok"
		default:
			fc.Err = fmt.Errorf("content sha256 %s, want %s", fc.Got, want)
		}
		out = append(out, fc)
	}
	return out, nil
}
