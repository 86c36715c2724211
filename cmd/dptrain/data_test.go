package main

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dptrain/dptrain/datasets"
)

func TestDataList(t *testing.T) {
	t.Setenv(datasets.EnvData, "")
	code, out, stderr := runCLI(t, "data", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Column widths depend on which rows are present; compare fields.
	fields := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(fields, "fashion-mnist embedded 5000 1000 1x28x28 embedded:fashion-mnist ok") {
		t.Errorf("list lacks the embedded subset:\n%s", out)
	}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"); err == nil &&
		!strings.Contains(fields, "fashion-mnist system 60000 10000 1x28x28 /usr/share/datasets/fashion-mnist") {
		t.Errorf("list lacks Debian's Fashion-MNIST:\n%s", out)
	}
	if !strings.Contains(out, "not found (dptrain data fetch cifar10)") {
		t.Errorf("list does not say cifar10 is missing:\n%s", out)
	}
}

func TestDataVerify(t *testing.T) {
	t.Setenv(datasets.EnvData, "")
	if testing.Short() {
		t.Skip("-short: verify hashes and loads the full datasets")
	}
	code, out, stderr := runCLI(t, "data", "verify", "fashion-mnist")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(out, "ok   5000 train + 1000 test, shape 1x28x28") {
		t.Errorf("verify output:\n%s", out)
	}
	// A corrupt file in --data is reported by name with a non-zero exit.
	dir := t.TempDir()
	for _, n := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("\x00\x00\x08\x01\x00\x00\x00\x05ab"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr = runCLI(t, "data", "verify", "mnist", "--data", dir)
	if code != 2 || !strings.Contains(out, "truncated") || !strings.Contains(out, filepath.Join(dir, "train-images-idx3-ubyte")) {
		t.Errorf("corrupt data: exit %d\n%s\n%s", code, out, stderr)
	}
}

// Verifying a dataset that is nowhere to be found is bad input too.
func TestDataVerifyNothingFound(t *testing.T) {
	t.Setenv(datasets.EnvData, "")
	dir := t.TempDir()
	if locs, err := datasets.Locate("cifar10", datasets.Options{Dir: dir}); err != nil || len(locs) != 0 {
		t.Skipf("a CIFAR-10 copy is installed on this machine (%v, %v)", locs, err)
	}
	code, _, stderr := runCLI(t, "data", "verify", "cifar10", "--data", dir)
	if code != 2 || !strings.Contains(stderr, "no dataset found to verify (cifar10)") {
		t.Errorf("exit %d, stderr %q, want 2 and 'no dataset found'", code, stderr)
	}
}

func TestDataFetchRejectsBadChecksum(t *testing.T) {
	// A loopback server that serves wrong bytes for every file: the real
	// Fashion-MNIST checksums must reject them, leaving no file behind.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("not the file you are looking for"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "data", "fetch", "fashion-mnist", "--to", dir, "--base-url", srv.URL, "--quiet")
	if code != 1 || !strings.Contains(stderr, "checksum mismatch") || !strings.Contains(stderr, "train-images-idx3-ubyte.gz") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "fashion-mnist", "*"))
	if len(left) != 0 {
		t.Errorf("files left after a rejected download: %v", left)
	}
}

func TestDataBadInput(t *testing.T) {
	t.Setenv(datasets.EnvData, "")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"data"}, "missing subcommand"},
		{[]string{"data", "frobnicate"}, "unknown subcommand"},
		{[]string{"data", "fetch"}, "missing dataset name"},
		{[]string{"data", "fetch", "imagenet", "--to", "x"}, "unknown dataset"},
		{[]string{"data", "fetch", "mnist"}, "no destination"},
		{[]string{"data", "verify", "mnist", "cifar10"}, "unexpected argument"},
		{[]string{"data", "list", "--nope"}, "flag provided but not defined"},
		{[]string{"data", "import", "--from", "x"}, "both --from and --to"},
		{[]string{"data", "import", "--from", "/nonexistent", "--to", "y"}, "/nonexistent"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestDataImport(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"train/dog/1.png", "train/cat/1.png", "test/cat/2.png"} {
		full := filepath.Join(from, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := runCLI(t, "data", "import", "--from", from, "--to", to, "--classes", "dog,cat")
	if code != 0 || !strings.Contains(out, "imported 2 train + 1 test images, classes dog,cat") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	ld, _, err := datasets.Load("cifar10", datasets.Options{Dir: to, NoEnv: true, NoSystem: true})
	if err != nil {
		t.Fatal(err)
	}
	if ld.Train.N() != 2 || ld.Train.Y[0] != 0 || ld.Test.Y[0] != 1 || ld.Train.X[5] != float32(20)/255 {
		t.Errorf("imported train %d Y %v test Y %v X[5] %v", ld.Train.N(), ld.Train.Y, ld.Test.Y, ld.Train.X[5]*255)
	}
}

// data clean-cache removes cached features (oldest first down to --max).
func TestDataCleanCache(t *testing.T) {
	dir := t.TempDir()
	for i, age := range []time.Duration{2 * time.Hour, time.Hour} {
		p := filepath.Join(dir, fmt.Sprintf("scatternet-%d.f32", i))
		if err := os.WriteFile(p, make([]byte, 100), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
	}
	code, out, errs := runCLI(t, "data", "clean-cache", "--dir", dir, "--max", "150")
	if code != 0 || !strings.Contains(out, "removed 1 cached feature file(s)") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "scatternet-1.f32")); err != nil {
		t.Errorf("the newest file was removed: %v", err)
	}
	if code, out, _ = runCLI(t, "data", "clean-cache", "--dir", dir); code != 0 || !strings.Contains(out, "removed 1") {
		t.Errorf("clean all: exit %d: %s", code, out)
	}
	if code, _, _ = runCLI(t, "data", "clean-cache", "--dir", dir, "--max", "-1"); code != 2 {
		t.Errorf("--max -1: exit %d, want 2", code)
	}
}
