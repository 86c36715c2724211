package datasets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadIDXRoundTrip(t *testing.T) {
	raw := idxBytes([]int{3, 2, 4}, tinyImages(3, 2, 4))
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"raw", raw}, {"gzip", gzBytes(t, raw)}} {
		m, err := ReadIDX(bytes.NewReader(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(m.Dims, []int{3, 2, 4}) || !bytes.Equal(m.Data, tinyImages(3, 2, 4)) {
			t.Errorf("%s: dims %v data %v", tc.name, m.Dims, m.Data)
		}
	}
}

func TestReadIDXErrors(t *testing.T) {
	good := idxBytes([]int{2, 2, 2}, tinyImages(2, 2, 2))
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "magic"},
		{"wrong magic", "\x12\x34\x08\x03" + string(good[4:]), "bad magic"},
		{"float type", "\x00\x00\x0d\x03" + string(good[4:]), "not supported"},
		{"zero dims", "\x00\x00\x08\x00", "dimensions"},
		{"empty item", "\x00\x00\x08\x02\x00\x00\x00\x05\x00\x00\x00\x00", "dimension 1 is 0"},
		{"truncated header", string(good[:9]), "dimensions"},
		{"truncated data", string(good[:len(good)-1]), "truncated"},
		{"trailing data", string(good) + "x", "trailing"},
		{"huge header", "\x00\x00\x08\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "exceed"},
		{"bad gzip", "\x1f\x8b\x00\x00", "gzip"},
		{"truncated gzip", string(gzBytes(t, good)[:20]), "EOF"},
	}
	for _, tc := range tests {
		_, err := ReadIDX(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadIDXValuesAndErrors(t *testing.T) {
	dir := t.TempDir()
	writeIDXDir(t, dir, 4, 2, true)
	d, err := LoadIDX("tiny", filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if d.N() != 4 || d.Dim() != 6 || !slices.Equal(d.Shape, []int{1, 2, 3}) {
		t.Fatalf("N %d Dim %d Shape %v", d.N(), d.Dim(), d.Shape)
	}
	for i, v := range d.X { // pixel byte i is i (mod 256); scaled by 1/255
		if want := float32(byte(i)) / 255; v != want {
			t.Fatalf("X[%d] = %v, want %v", i, v, want)
		}
	}
	if !slices.Equal(d.Y, []int{0, 1, 2, 3}) {
		t.Errorf("Y = %v", d.Y)
	}

	// Mismatched counts and out-of-range labels name the files.
	im := filepath.Join(dir, "train-images-idx3-ubyte.gz")
	short := filepath.Join(dir, "short-labels")
	writeFile(t, short, idxBytes([]int{3}, []byte{0, 1, 2}))
	if _, err := LoadIDX("tiny", im, short, 10); err == nil || !strings.Contains(err.Error(), "4 images") || !strings.Contains(err.Error(), short) || !errors.Is(err, ErrBadData) {
		t.Errorf("mismatched counts: %v", err)
	}
	bad := filepath.Join(dir, "bad-labels")
	writeFile(t, bad, idxBytes([]int{4}, []byte{0, 1, 12, 3}))
	if _, err := LoadIDX("tiny", im, bad, 10); err == nil || !strings.Contains(err.Error(), "a label is outside [0,10)") || strings.Contains(err.Error(), "label 12") || !strings.Contains(err.Error(), bad) || !errors.Is(err, ErrBadData) {
		t.Errorf("bad label: %v", err)
	}
	corrupt := filepath.Join(dir, "corrupt-images")
	writeFile(t, corrupt, []byte("\x00\x00\x08\x03\x00\x00"))
	if _, err := LoadIDX("tiny", corrupt, short, 10); err == nil || !strings.Contains(err.Error(), corrupt) || !errors.Is(err, ErrBadData) {
		t.Errorf("corrupt: %v", err)
	}
	// Labels passed as images.
	if _, err := LoadIDX("tiny", short, short, 10); err == nil || !strings.Contains(err.Error(), "3 dimensions") {
		t.Errorf("labels as images: %v", err)
	}
}

const debianFashion = "/usr/share/datasets/fashion-mnist"

// TestDebianFashionMNIST loads the real Fashion-MNIST installed by
// `apt-get install dataset-fashion-mnist`, when present.
func TestDebianFashionMNIST(t *testing.T) {
	if _, err := os.Stat(filepath.Join(debianFashion, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("real Fashion-MNIST not installed (%v); apt-get install dataset-fashion-mnist", err)
	}
	if testing.Short() {
		t.Skip("-short: skipping the 70,000-image load")
	}
	ld, src, err := Load("fashion-mnist", Options{NoEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != FromSystem || src.Path != debianFashion {
		t.Errorf("source %v, want the Debian directory", src)
	}
	for _, tc := range []struct {
		d *Dataset
		n int
	}{{ld.Train, 60000}, {ld.Test, 10000}} {
		if tc.d.N() != tc.n || !slices.Equal(tc.d.Shape, []int{1, 28, 28}) || tc.d.NumClasses != 10 {
			t.Errorf("N %d shape %v classes %d, want %d, [1 28 28], 10", tc.d.N(), tc.d.Shape, tc.d.NumClasses, tc.n)
		}
		counts := make([]int, 10)
		for _, y := range tc.d.Y {
			counts[y]++
		}
		for c, k := range counts { // Fashion-MNIST is exactly balanced
			if k != tc.n/10 {
				t.Errorf("class %d has %d examples, want %d", c, k, tc.n/10)
			}
		}
	}
	// Known first labels: train starts 9 (Ankle boot), 0, 0, 3; test 9, 2, 1, 1.
	if !slices.Equal(ld.Train.Y[:4], []int{9, 0, 0, 3}) || !slices.Equal(ld.Test.Y[:4], []int{9, 2, 1, 1}) {
		t.Errorf("first labels train %v test %v", ld.Train.Y[:4], ld.Test.Y[:4])
	}
	st := ld.Train.FeatureStats()
	mean := 0.0
	for _, m := range st.Mean {
		mean += m
	}
	mean /= float64(len(st.Mean))
	// Fashion-MNIST's published pixel mean is 0.2860 (72.94/255).
	if mean < 0.2855 || mean > 0.2865 {
		t.Errorf("mean pixel %v, want 0.2860", mean)
	}
	// The embedded subset is exactly the first examples of the real data.
	emb, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(emb.Train.X, ld.Train.X[:len(emb.Train.X)]) || !slices.Equal(emb.Train.Y, ld.Train.Y[:EmbeddedTrainN]) ||
		!slices.Equal(emb.Test.X, ld.Test.X[:len(emb.Test.X)]) || !slices.Equal(emb.Test.Y, ld.Test.Y[:EmbeddedTestN]) {
		t.Error("embedded subset differs from the first examples of the real Fashion-MNIST")
	}
}

func TestEmbedded(t *testing.T) {
	ld, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if ld.Train.N() != EmbeddedTrainN || ld.Test.N() != EmbeddedTestN || ld.Train.Dim() != 784 {
		t.Fatalf("embedded: %d + %d of dim %d", ld.Train.N(), ld.Test.N(), ld.Train.Dim())
	}
	if !slices.Equal(ld.Train.Y[:4], []int{9, 0, 0, 3}) {
		t.Errorf("first labels %v, want Fashion-MNIST's 9 0 0 3", ld.Train.Y[:4])
	}
	for _, v := range ld.Train.X {
		if v < 0 || v > 1 {
			t.Fatalf("pixel %v outside [0,1]", v)
		}
	}
	r := Verify(Location{Name: "fashion-mnist", Source: embeddedSource})
	if !r.OK() || len(r.Files) != 4 {
		t.Errorf("verify embedded: %+v", r)
	}
}
