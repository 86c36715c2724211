package datasets

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCIFAR10Layout(t *testing.T) {
	d := newCIFAR10("c")
	if err := ReadCIFAR10(bytes.NewReader(cifarBytes(3, 9)), d); err != nil {
		t.Fatal(err)
	}
	if d.N() != 2 || d.Dim() != 3072 || d.Y[0] != 3 || d.Y[1] != 9 {
		t.Fatalf("N %d Dim %d Y %v", d.N(), d.Dim(), d.Y)
	}
	// Record i's pixel k is byte(i+k); feature index c*1024 + r*32 + col is
	// channel c (R, G, B planes), row r, column col.
	for _, tc := range []struct{ i, c, r, col int }{{0, 0, 0, 0}, {0, 1, 0, 0}, {1, 2, 31, 31}, {1, 0, 5, 7}} {
		k := tc.c*1024 + tc.r*32 + tc.col
		want := float32(byte(tc.i+k)) / 255
		if got := d.Row(tc.i)[k]; got != want {
			t.Errorf("record %d channel %d (%d,%d): %v, want %v", tc.i, tc.c, tc.r, tc.col, got, want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
}

func TestCIFAR10Errors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "no records"},
		{"truncated", cifarBytes(1, 2)[:cifarRecord+100], "not a multiple"},
		{"bad label", cifarBytes(1, 10), "label is outside [0,10)"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		p := filepath.Join(dir, tc.name+".bin")
		writeFile(t, p, tc.in)
		_, err := LoadCIFAR10Files("c", p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) || !errors.Is(err, ErrBadData) {
			t.Errorf("%s: err %v, want %q, the file name and ErrBadData", tc.name, err, tc.want)
		}
	}
	// A failed read leaves the dataset unchanged.
	d := newCIFAR10("c")
	_ = ReadCIFAR10(bytes.NewReader(cifarBytes(1, 10)), d)
	if d.N() != 0 || len(d.X) != 0 {
		t.Errorf("dataset grew on error: %d examples", d.N())
	}
}

func TestCIFAR10Discovery(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cifar10", "cifar-10-batches-bin")
	for i, n := range cifarTrain {
		writeFile(t, filepath.Join(dir, n), cifarBytes(byte(i), byte(i+1)))
	}
	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarBytes(7))
	ld, src, err := Load("CIFAR-10", Options{Dir: root, NoEnv: true, NoSystem: true})
	if err != nil {
		t.Fatal(err)
	}
	if src.Path != dir || src.Kind != FromDir {
		t.Errorf("source %v, want %s", src, dir)
	}
	if ld.Train.N() != 10 || ld.Test.N() != 1 || ld.Train.Y[9] != 5 || ld.Test.Y[0] != 7 {
		t.Errorf("train %d %v test %d %v", ld.Train.N(), ld.Train.Y, ld.Test.N(), ld.Test.Y)
	}
	locs, _ := Locate("cifar10", Options{Dir: root, NoEnv: true, NoSystem: true})
	s, err := locs[0].Probe()
	if err != nil || s.TrainN != 10 || s.TestN != 1 {
		t.Errorf("probe %+v %v", s, err)
	}
	// The checksums of these fixture files are not CIFAR-10's.
	r := Verify(locs[0])
	if r.OK() || r.Files[0].Err == nil || !strings.Contains(r.Files[0].Err.Error(), "checksum mismatch") {
		t.Errorf("verify of fixture files should fail on checksums: %+v", r.Files[0])
	}
}
