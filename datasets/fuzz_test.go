package datasets

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the fixtures in testdata/")

// fixtures are the tiny files in testdata/ that seed the fuzz corpora; the
// test below checks that each decodes to what the helpers generate.
func fixtures(t testing.TB) map[string][]byte {
	return map[string][]byte{
		"tiny-images-idx3-ubyte.gz": gzBytes(t, idxBytes([]int{2, 3, 3}, tinyImages(2, 3, 3))),
		"tiny-labels-idx1-ubyte":    idxBytes([]int{2}, []byte{7, 1}),
		"tiny-cifar.bin":            cifarBytes(6),
		"tiny.csv":                  []byte("x1,x2,label\n0.5,NA,1\n-2,3e-1,0\n,7,1\n"),
	}
}

func TestFixtures(t *testing.T) {
	for name, want := range fixtures(t) {
		p := filepath.Join("testdata", name)
		if *update {
			writeFile(t, p, want)
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test -run TestFixtures -update)", err)
		}
		switch {
		case strings.Contains(name, "idx"):
			g, err1 := ReadIDX(bytes.NewReader(got))
			w, err2 := ReadIDX(bytes.NewReader(want))
			if err1 != nil || err2 != nil || !slices.Equal(g.Dims, w.Dims) || !bytes.Equal(g.Data, w.Data) {
				t.Errorf("%s: decodes differently (%v, %v)", name, err1, err2)
			}
		default:
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the generated fixture", name)
			}
		}
	}
}

func seed(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzReadIDX(f *testing.F) {
	seed(f, "tiny-images-idx3-ubyte.gz", "tiny-labels-idx1-ubyte")
	f.Add(idxBytes([]int{1, 1, 1, 1}, []byte{9}))
	f.Add([]byte("\x00\x00\x08\x01\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadIDX(bytes.NewReader(b))
		if err != nil {
			return
		}
		want := 1
		for _, d := range m.Dims {
			want *= d
		}
		if len(m.Data) != want {
			t.Fatalf("dims %v but %d data bytes", m.Dims, len(m.Data))
		}
		// Re-encoding raw round-trips.
		m2, err := ReadIDX(bytes.NewReader(idxBytes(m.Dims, m.Data)))
		if err != nil || !slices.Equal(m2.Dims, m.Dims) || !bytes.Equal(m2.Data, m.Data) {
			t.Fatalf("round trip: %v", err)
		}
		if len(m.Dims) == 3 && m.Dims[0] > 0 && m.Dims[0] <= len(m.Data) {
			lb := &IDX{Dims: []int{m.Dims[0]}, Data: make([]byte, m.Dims[0])}
			if d, err := NewIDXDataset("f", m, lb, "i", "l", 10); err == nil {
				if err := d.Validate(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func FuzzReadCIFAR10(f *testing.F) {
	seed(f, "tiny-cifar.bin")
	f.Add(cifarBytes(0, 9))
	f.Add([]byte{3})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := newCIFAR10("f")
		if err := ReadCIFAR10(bytes.NewReader(b), d); err != nil {
			if d.N() != 0 || len(d.X) != 0 {
				t.Fatal("dataset changed on error")
			}
			return
		}
		if d.N()*cifarRecord != len(b) {
			t.Fatalf("%d records from %d bytes", d.N(), len(b))
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, v := range d.X {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("pixel %v outside [0,1]", v)
			}
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	seed(f, "tiny.csv")
	f.Add([]byte("1,2,a\n3,4,b\n"))
	f.Add([]byte("\"1\",\"2\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, opts := range []CSVOptions{
			{Header: true, Label: "label", AllowMissing: true},
			{LabelIndex: -1},
			{LabelIndex: 0, AllowMissing: true, Comma: ';'},
		} {
			d, err := ReadCSV(bytes.NewReader(b), "f", opts)
			if err != nil {
				continue
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, v := range d.X {
				if math.IsInf(float64(v), 0) || (!opts.AllowMissing && v != v) {
					t.Fatalf("value %v accepted with %+v", v, opts)
				}
			}
		}
	})
}

func FuzzContentRange(f *testing.F) {
	f.Add("bytes 100-199/200")
	f.Add("bytes */200")
	f.Fuzz(func(t *testing.T, h string) {
		_, _ = contentRangeStart(h) // must not panic
	})
}
