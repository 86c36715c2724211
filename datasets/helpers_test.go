package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// idxBytes encodes an unsigned-byte IDX file.
func idxBytes(dims []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func gzBytes(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tinyImages returns n images of h×w with pixel (i, r, c) = (i*h*w + r*w + c) mod 256.
func tinyImages(n, h, w int) []byte {
	p := make([]byte, n*h*w)
	for i := range p {
		p[i] = byte(i)
	}
	return p
}

// cifarBytes encodes CIFAR-10 records; pixel k of record i is byte(i+k).
func cifarBytes(labels ...byte) []byte {
	var b []byte
	for i, l := range labels {
		b = append(b, l)
		for k := range cifarPixels {
			b = append(b, byte(i+k))
		}
	}
	return b
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeIDXDir writes a tiny IDX dataset (nTrain/nTest images of 2×3) to dir.
func writeIDXDir(t testing.TB, dir string, nTrain, nTest int, gz bool) {
	t.Helper()
	files := map[string][]byte{
		"train-images-idx3-ubyte": idxBytes([]int{nTrain, 2, 3}, tinyImages(nTrain, 2, 3)),
		"train-labels-idx1-ubyte": idxBytes([]int{nTrain}, labelsMod(nTrain)),
		"t10k-images-idx3-ubyte":  idxBytes([]int{nTest, 2, 3}, tinyImages(nTest, 2, 3)),
		"t10k-labels-idx1-ubyte":  idxBytes([]int{nTest}, labelsMod(nTest)),
	}
	for n, b := range files {
		if gz {
			writeFile(t, filepath.Join(dir, n+".gz"), gzBytes(t, b))
		} else {
			writeFile(t, filepath.Join(dir, n), b)
		}
	}
}

func labelsMod(n int) []byte {
	l := make([]byte, n)
	for i := range l {
		l[i] = byte(i % 10)
	}
	return l
}

func removeFile(p string) error { return os.Remove(p) }
