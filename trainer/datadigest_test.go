package trainer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/datasets"
)

// referenceDigest encodes a split with encoding/binary, field by field as
// DigestSplit documents it, and hashes the whole buffer at once.
func referenceDigest(ds *datasets.Dataset, file string) string {
	var b bytes.Buffer
	le := binary.LittleEndian
	str := func(s string) { binary.Write(&b, le, uint64(len(s))); b.WriteString(s) }
	u := func(v int) { binary.Write(&b, le, uint64(int64(v))) }
	str("dptrain data digest v1")
	str(file)
	u(ds.N())
	u(len(ds.Shape))
	for _, s := range ds.Shape {
		u(s)
	}
	u(ds.NumClasses)
	u(len(ds.ClassNames))
	for _, n := range ds.ClassNames {
		str(n)
	}
	u(len(ds.X))
	binary.Write(&b, le, ds.X)
	u(len(ds.Y))
	for _, y := range ds.Y {
		u(y)
	}
	h := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(h[:])
}

// The digest is the documented encoding's SHA-256 (checked against an
// independent encoder, on a split larger than the write buffer), and any
// one change to the data or to the file's identity changes it, while a
// copy of the same data does not.
func TestDataDigest(t *testing.T) {
	g, err := datasets.GaussianMixture{N: 3000, K: 3, D: 7, Sep: 2, Seed: 5}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	g.ClassNames = []string{"a", "b", "c"}
	if got, want := DigestSplit(g, "train.csv").SHA256, referenceDigest(g, "train.csv"); got != want {
		t.Fatalf("digest %s, reference encoding %s", got, want)
	}
	base := DigestSplit(g, "train.csv")
	clone := func() *datasets.Dataset {
		c := *g
		c.X, c.Y, c.Shape, c.ClassNames = slices.Clone(g.X), slices.Clone(g.Y), slices.Clone(g.Shape), slices.Clone(g.ClassNames)
		return &c
	}
	if DigestSplit(clone(), "train.csv") != base {
		t.Fatal("a copy of the same data digests differently")
	}
	for _, tc := range []struct {
		name string
		file string
		edit func(*datasets.Dataset)
	}{
		{"one feature's last bit", "train.csv", func(d *datasets.Dataset) { d.X[12345] = nextUp32(d.X[12345]) }},
		{"a feature set to zero", "train.csv", func(d *datasets.Dataset) { d.X[0] = 0 }},
		{"one label", "train.csv", func(d *datasets.Dataset) { d.Y[2999] = (d.Y[2999] + 1) % 3 }},
		{"two rows swapped", "train.csv", func(d *datasets.Dataset) {
			a, b := d.X[0:7], d.X[7:14]
			for j := range a {
				a[j], b[j] = b[j], a[j]
			}
			d.Y[0], d.Y[1] = d.Y[1], d.Y[0]
		}},
		{"last row dropped", "train.csv", func(d *datasets.Dataset) { d.X, d.Y = d.X[:len(d.X)-7], d.Y[:len(d.Y)-1] }},
		{"shape", "train.csv", func(d *datasets.Dataset) { d.Shape = []int{7, 1} }},
		{"class count", "train.csv", func(d *datasets.Dataset) { d.NumClasses = 4 }},
		{"class name", "train.csv", func(d *datasets.Dataset) { d.ClassNames[1] = "B" }},
		{"class names split differently", "train.csv", func(d *datasets.Dataset) { d.ClassNames = []string{"ab", "", "c"} }},
		{"another file", "other.csv", func(*datasets.Dataset) {}},
	} {
		d := clone()
		tc.edit(d)
		if got := DigestSplit(d, tc.file); got.SHA256 == base.SHA256 {
			t.Errorf("%s: the digest did not change", tc.name)
		}
	}
}

func nextUp32(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) + 1)
}

// Check names the file of each split whose data differ, and nothing else.
func TestDataDigestCheck(t *testing.T) {
	a := DataDigest{Train: SplitDigest{"tr.csv", "aa"}, Test: SplitDigest{"te.csv", "bb"}}
	for _, tc := range []struct {
		name string
		now  DataDigest
		want []string // substrings; nil: no error
		not  []string
	}{
		{"same", a, nil, nil},
		{"train", DataDigest{Train: SplitDigest{"tr.csv", "ab"}, Test: a.Test}, []string{"training data (tr.csv)"}, []string{"test data", "ab", "aa"}},
		{"test", DataDigest{Train: a.Train, Test: SplitDigest{"te.csv", "cc"}}, []string{"test data (te.csv)"}, []string{"training data", "cc", "bb"}},
		{"both", DataDigest{Train: SplitDigest{"x.csv", "aa"}, Test: SplitDigest{"te.csv", "cc"}}, []string{"training data (x.csv) and the test data (te.csv)"}, nil},
	} {
		err := a.Check(tc.now)
		if tc.want == nil {
			if err != nil || !a.Equal(tc.now) {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrDataChanged) || !errors.Is(err, ErrInvalidConfig) || a.Equal(tc.now) {
			t.Errorf("%s: %v, want ErrDataChanged", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q names %q", tc.name, err, w)
			}
		}
	}
}
