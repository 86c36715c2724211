// Command mkembed writes the Fashion-MNIST subset that package datasets
// embeds: the first -train training and -test test examples of the real
// Fashion-MNIST, as gzip IDX files, plus a SHA256SUMS file of their
// decompressed content.
//
// It was run once, from the repository root, as
//
//	go run ./datasets/internal/mkembed -src /usr/share/datasets/fashion-mnist -out datasets/embedded/fashion-mnist
//
// with the files of Debian's dataset-fashion-mnist 0.0~git20200523.55506a9-1
// (Zalando's Fashion-MNIST, MIT licence). The source files are verified
// against the decompressed-content SHA-256 sums before anything is written.
// The gzip header carries no timestamp, so the output is reproducible.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Decompressed-content SHA-256 of the full Fashion-MNIST files (the same
// values as datasets/catalog.go).
var sourceSums = map[string]string{
	"train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
	"train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
	"t10k-images-idx3-ubyte":  "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
	"t10k-labels-idx1-ubyte":  "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}

func main() {
	src := flag.String("src", "/usr/share/datasets/fashion-mnist", "directory with the full Fashion-MNIST .gz files")
	out := flag.String("out", "datasets/embedded/fashion-mnist", "output directory")
	nTrain := flag.Int("train", 5000, "training examples to keep")
	nTest := flag.Int("test", 1000, "test examples to keep")
	flag.Parse()
	if err := run(*src, *out, *nTrain, *nTest); err != nil {
		fmt.Fprintln(os.Stderr, "mkembed:", err)
		os.Exit(1)
	}
}

func run(src, out string, nTrain, nTest int) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var sums bytes.Buffer
	for _, job := range []struct {
		name string
		n    int
	}{
		{"train-images-idx3-ubyte", nTrain}, {"train-labels-idx1-ubyte", nTrain},
		{"t10k-images-idx3-ubyte", nTest}, {"t10k-labels-idx1-ubyte", nTest},
	} {
		raw, err := readGz(filepath.Join(src, job.name+".gz"))
		if err != nil {
			return err
		}
		h := sha256.Sum256(raw)
		if got := hex.EncodeToString(h[:]); got != sourceSums[job.name] {
			return fmt.Errorf("%s: content SHA-256 %s, want %s", job.name, got, sourceSums[job.name])
		}
		sub, err := prefix(raw, job.n)
		if err != nil {
			return fmt.Errorf("%s: %w", job.name, err)
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Name = job.name
		if _, err := zw.Write(sub); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, job.name+".gz"), gz.Bytes(), 0o644); err != nil {
			return err
		}
		hs := sha256.Sum256(sub)
		fmt.Fprintf(&sums, "%x  %s\n", hs, job.name)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), sums.Bytes(), 0o644)
}

func readGz(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(zr)
}

// prefix keeps the first n items of an IDX file and rewrites its count.
func prefix(raw []byte, n int) ([]byte, error) {
	if len(raw) < 4 {
		return nil, fmt.Errorf("too short")
	}
	nd := int(raw[3])
	hdr := 4 + 4*nd
	total := int(binary.BigEndian.Uint32(raw[4:]))
	if n > total {
		return nil, fmt.Errorf("only %d items, asked for %d", total, n)
	}
	item := 1
	for i := 1; i < nd; i++ {
		item *= int(binary.BigEndian.Uint32(raw[4+4*i:]))
	}
	sub := append([]byte(nil), raw[:hdr+n*item]...)
	binary.BigEndian.PutUint32(sub[4:], uint32(n))
	return sub, nil
}
