package datasets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// npyRaw is a .npy file of the given version whose header dictionary is
// dict, padded to a multiple of align bytes, followed by data.
func npyRaw(major byte, dict string, align int, data []byte) []byte {
	pre := 10
	if major > 1 {
		pre = 12
	}
	pad := (align - (pre+len(dict)+1)%align) % align
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	b := append([]byte(npyMagic), major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	return append(append(b, hdr...), data...)
}

// npyData encodes values as type t.
func npyData(t NPYType, values []float64) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if t.BigEndian {
		order = binary.BigEndian
	}
	var b []byte
	for _, v := range values {
		switch {
		case t.Kind == 'f' && t.Size == 4:
			b = order.AppendUint32(b, math.Float32bits(float32(v)))
		case t.Kind == 'f':
			b = order.AppendUint64(b, math.Float64bits(v))
		case t.Size == 1:
			b = append(b, byte(int8(v)))
		case t.Size == 2:
			b = order.AppendUint16(b, uint16(int16(v)))
		case t.Size == 4:
			b = order.AppendUint32(b, uint32(int32(v)))
		default:
			b = order.AppendUint64(b, uint64(int64(v)))
		}
	}
	return b
}

// npyFile is a current-numpy .npy file (EncodeNPYHeader) of values.
func npyFile(t NPYType, fortran bool, shape []int, values []float64) []byte {
	return append(EncodeNPYHeader(t, fortran, shape), npyData(t, values)...)
}

func mustDescr(t testing.TB, d string) NPYType {
	t.Helper()
	ty, err := parseNPYDescr(d)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

const dictF4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"

func TestReadNPYHeader(t *testing.T) {
	f4 := NPYType{Kind: 'f', Size: 4}
	ok := []struct {
		name  string
		file  []byte
		typ   NPYType
		fort  bool
		shape []int
		off   int64
	}{
		{"v1 f4", npyRaw(1, dictF4, 64, nil), f4, false, []int{2, 3}, 128},
		{"v2 f4", npyRaw(2, dictF4, 64, nil), f4, false, []int{2, 3}, 128},
		{"v3 f4", npyRaw(3, dictF4, 64, nil), f4, false, []int{2, 3}, 128},
		{"old 16-byte alignment", npyRaw(1, dictF4, 16, nil), f4, false, []int{2, 3}, 80},
		{"f8 big-endian", npyRaw(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (4,), }", 64, nil), NPYType{'f', 8, true}, false, []int{4}, 128},
		{"u1 fortran", npyRaw(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 2, 2), }", 64, nil), NPYType{'u', 1, false}, true, []int{2, 2, 2}, 128},
		{"i1", npyRaw(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'i', 1, false}, false, []int{3}, 128},
		{"i2", npyRaw(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'i', 2, false}, false, []int{3}, 128},
		{"i4", npyRaw(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'i', 4, false}, false, []int{3}, 128},
		{"i8", npyRaw(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'i', 8, false}, false, []int{3}, 128},
		{"u2 big", npyRaw(1, "{'descr': '>u2', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'u', 2, true}, false, []int{3}, 128},
		{"u4", npyRaw(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'u', 4, false}, false, []int{3}, 128},
		{"u8", npyRaw(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'u', 8, false}, false, []int{3}, 128},
		{"b1", npyRaw(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 64, nil), NPYType{'b', 1, false}, false, []int{3}, 128},
		{"scalar shape", npyRaw(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 64, nil), f4, false, []int{}, 128},
		{"python 2 longs, key order, double quotes, no trailing comma", npyRaw(1, `{"shape": (2L, 3L), "fortran_order": False, "descr": "<f4"}`, 16, nil), f4, false, []int{2, 3}, 80},
	}
	for _, c := range ok {
		h, err := ReadNPYHeader(bytes.NewReader(c.file))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if h.Type != c.typ || h.FortranOrder != c.fort || !slices.Equal(h.Shape, c.shape) || h.DataOffset != c.off {
			t.Errorf("%s: got %+v, want type %+v fortran %v shape %v offset %d", c.name, h, c.typ, c.fort, c.shape, c.off)
		}
	}

	bad := []struct {
		name, file, want string
	}{
		{"empty", "", "reading magic"},
		{"bad magic", "\x93NUMPZ\x01\x00", "bad magic"},
		{"version 4.0", "\x93NUMPY\x04\x00\x10\x00", "version 4.0"},
		{"version 1.1", "\x93NUMPY\x01\x01\x10\x00", "version 1.1"},
		{"truncated length", "\x93NUMPY\x02\x00\x10\x00", "header length"},
		{"truncated header", "\x93NUMPY\x01\x00\x40\x00{'descr'", "reading the 64-byte header"},
		{"huge header", "\x93NUMPY\x02\x00\xff\xff\xff\xff", "exceeds"},
		{"fortran order not bool", string(npyRaw(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", 64, nil)), "True or False"},
		{"missing shape", string(npyRaw(1, "{'descr': '<f4', 'fortran_order': False, }", 64, nil)), `"shape" missing`},
		{"extra key", string(npyRaw(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }", 64, nil)), `unexpected key "x"`},
		{"repeated key", string(npyRaw(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 64, nil)), "repeated"},
		{"structured", string(npyRaw(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 64, nil)), "structured"},
		{"complex", string(npyRaw(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 64, nil)), `unsupported dtype "<c8"`},
		{"float16", string(npyRaw(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", 64, nil)), "unsupported dtype"},
		{"unicode", string(npyRaw(1, "{'descr': '<U10', 'fortran_order': False, 'shape': (2,), }", 64, nil)), "unsupported dtype"},
		{"object", string(npyRaw(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 64, nil)), "unsupported dtype"},
		{"no byte order on f4", string(npyRaw(1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", 64, nil)), "unsupported dtype"},
		{"negative dimension", string(npyRaw(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 64, nil)), "non-negative integer"},
		{"text after dict", string(npyRaw(1, dictF4+" junk", 64, nil)), "after the dictionary"},
		{"not a dict", string(npyRaw(1, "['descr']", 64, nil)), "not a dictionary"},
		{"unterminated key", string(npyRaw(1, "{'descr: '<f4'", 64, nil)), "no ':' after key"},
		{"unterminated string", string(npyRaw(1, "{'descr': '<f4", 64, nil)), "unterminated string"},
		{"unclosed tuple", string(npyRaw(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 64, nil)), "expected ',' or ')'"},
	}
	for _, c := range bad {
		_, err := ReadNPYHeader(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// TestEncodeNPYHeader checks the layout numpy writes: version 1.0, the
// data at a multiple of 64 bytes, a trailing newline, and a round trip.
func TestEncodeNPYHeader(t *testing.T) {
	for _, shape := range [][]int{{5}, {2, 3}, {7, 1, 28, 28}, {}} {
		ty := NPYType{Kind: 'f', Size: 8, BigEndian: true}
		b := EncodeNPYHeader(ty, true, shape)
		if len(b)%64 != 0 || b[len(b)-1] != '\n' || b[6] != 1 {
			t.Errorf("shape %v: header %q not version 1.0, padded to 64 bytes and newline-terminated", shape, b)
		}
		h, err := ReadNPYHeader(bytes.NewReader(b))
		if err != nil || h.Type != ty || !h.FortranOrder || !slices.Equal(h.Shape, shape) || h.DataOffset != int64(len(b)) {
			t.Errorf("shape %v: round trip gave %+v, %v", shape, h, err)
		}
	}
	if want := "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"; !bytes.Contains(EncodeNPYHeader(NPYType{Kind: 'f', Size: 4}, false, []int{3}), []byte(want)) {
		t.Errorf("1-D header does not contain %s (numpy's own spelling)", want)
	}
}

func writeNPY(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	writeFile(t, p, b)
	return p
}

func TestLoadNPY(t *testing.T) {
	dir := t.TempDir()
	vals := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	f32 := func(v []float64, scale float64) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x) / float32(scale)
		}
		return out
	}
	// The 2×2×3 array with value 100i+10j+k at (i,j,k), in C order and
	// as Fortran order stores it (i fastest).
	var cube, cubeF []float64
	for i := range 2 {
		for j := range 2 {
			for k := range 3 {
				cube = append(cube, float64(100*i+10*j+k))
			}
		}
	}
	for k := range 3 {
		for j := range 2 {
			for i := range 2 {
				cubeF = append(cubeF, float64(100*i+10*j+k))
			}
		}
	}
	yI8 := npyFile(NPYType{Kind: 'i', Size: 8}, false, []int{2}, []float64{1, 0})
	cases := []struct {
		name   string
		x, y   []byte
		wantX  []float32
		shape  []int
		mapped bool
	}{
		{"f4 (N,D) mapped", npyFile(mustDescr(t, "<f4"), false, []int{2, 6}, vals), yI8, f32(vals, 1), []int{6}, true},
		{"f4 old 16-byte header, mapped", npyRaw(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 6), }", 16, npyData(mustDescr(t, "<f4"), vals)), yI8, f32(vals, 1), []int{6}, true},
		{"f4 v2 (N,H,W)", npyRaw(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 3), }", 64, npyData(mustDescr(t, "<f4"), vals)), yI8, f32(vals, 1), []int{1, 2, 3}, true},
		{"f4 v3 (N,C,H,W)", npyRaw(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 1, 2), }", 64, npyData(mustDescr(t, "<f4"), vals)), yI8, f32(vals, 1), []int{3, 1, 2}, true},
		{"f4 unaligned data read", npyRaw(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 6), }", 1, npyData(mustDescr(t, "<f4"), vals)), yI8, f32(vals, 1), []int{6}, false},
		{"f4 big-endian converted", npyFile(mustDescr(t, ">f4"), false, []int{2, 6}, vals), yI8, f32(vals, 1), []int{6}, false},
		{"f8", npyFile(mustDescr(t, "<f8"), false, []int{2, 6}, vals), yI8, f32(vals, 1), []int{6}, false},
		{"f8 big-endian", npyFile(mustDescr(t, ">f8"), false, []int{2, 6}, vals), yI8, f32(vals, 1), []int{6}, false},
		{"u1 scaled by 1/255", npyFile(mustDescr(t, "|u1"), false, []int{2, 6}, vals), yI8, f32(vals, 255), []int{6}, false},
		{"f4 Fortran order transposed", npyFile(mustDescr(t, "<f4"), true, []int{2, 2, 3}, cubeF), yI8, f32(cube, 1), []int{1, 2, 3}, false},
		{"f8 big-endian Fortran (N,D)", npyFile(mustDescr(t, ">f8"), true, []int{2, 2}, []float64{1, 3, 2, 4}), yI8, []float32{1, 2, 3, 4}, []int{2}, false},
	}
	for _, c := range cases {
		d, err := LoadNPY(writeNPY(t, dir, "x.npy", c.x), writeNPY(t, dir, "y.npy", c.y), NPYOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(d.X, c.wantX) || !slices.Equal(d.Shape, c.shape) || !slices.Equal(d.Y, []int{1, 0}) || d.NumClasses != 2 || d.Mapped() != c.mapped {
			t.Errorf("%s: X %v shape %v Y %v K %d mapped %v; want X %v shape %v Y [1 0] K 2 mapped %v", c.name, d.X, d.Shape, d.Y, d.NumClasses, d.Mapped(), c.wantX, c.shape, c.mapped)
		}
		if err := d.Close(); err != nil || d.X != nil && c.mapped {
			t.Errorf("%s: Close: %v", c.name, err)
		}
	}

	// Every label dtype, and the class set: from the labels, or given.
	x := writeNPY(t, dir, "x3.npy", npyFile(mustDescr(t, "<f4"), false, []int{3, 1}, []float64{1, 2, 3}))
	for _, descr := range []string{"|i1", "<i2", "<i4", "<i8", ">i8", "|u1", "<u2", ">u4", "<u8", "<f4", ">f8"} {
		y := writeNPY(t, dir, "y3.npy", npyFile(mustDescr(t, descr), false, []int{3}, []float64{2, 0, 4}))
		for _, k := range []int{0, 5, 9} {
			d, err := LoadNPY(x, y, NPYOptions{NumClasses: k})
			wantK := max(k, 5)
			if err != nil || !slices.Equal(d.Y, []int{2, 0, 4}) || d.NumClasses != wantK {
				t.Errorf("labels %s, K %d: %v; want Y [2 0 4], K %d", descr, k, err, wantK)
				continue
			}
			d.Close()
		}
	}
}

func TestLoadNPYErrors(t *testing.T) {
	dir := t.TempDir()
	f4 := mustDescr(t, "<f4")
	x23 := npyFile(f4, false, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	y2 := npyFile(mustDescr(t, "<i8"), false, []int{2}, []float64{0, 1})
	cases := []struct {
		name      string
		x, y      []byte
		k         int
		inX, want string
	}{
		{"bad magic", []byte("PK\x03\x04 not npy at all"), y2, 0, "x", "bad magic"},
		{"truncated data", x23[:len(x23)-1], y2, 0, "x", "truncated"},
		{"header only", x23[:len(EncodeNPYHeader(f4, false, []int{2, 3}))], y2, 0, "x", "truncated"},
		{"trailing data", append(append([]byte(nil), x23...), 0, 0, 0, 0), y2, 0, "x", "trailing"},
		{"int features", npyFile(mustDescr(t, "<i4"), false, []int{2, 3}, make([]float64, 6)), y2, 0, "x", "want float32"},
		{"bool features", npyFile(mustDescr(t, "|b1"), false, []int{2, 3}, make([]float64, 6)), y2, 0, "x", "want float32"},
		{"rank-1 features", npyFile(f4, false, []int{6}, make([]float64, 6)), y2, 0, "x", "want (N, D)"},
		{"rank-5 features", npyFile(f4, false, []int{2, 1, 1, 1, 3}, make([]float64, 6)), y2, 0, "x", "want (N, D)"},
		{"no examples", npyFile(f4, false, []int{0, 3}, nil), npyFile(mustDescr(t, "<i8"), false, []int{0}, nil), 0, "x", "empty"},
		{"fewer labels than rows", x23, npyFile(mustDescr(t, "<i8"), false, []int{3}, []float64{0, 1, 0}), 0, "y", "3 labels for 2 feature rows"},
		{"labels of rank 2", x23, npyFile(mustDescr(t, "<i8"), false, []int{2, 1}, []float64{0, 1}), 0, "y", "y.ravel()"},
		{"non-integer labels", x23, npyFile(f4, false, []int{2}, []float64{0, 1.5}), 0, "y", "not integers"},
		{"NaN label", x23, npyFile(mustDescr(t, "<f8"), false, []int{2}, []float64{0, math.NaN()}), 0, "y", "not integers"},
		{"negative label", x23, npyFile(mustDescr(t, "<i8"), false, []int{2}, []float64{-7777, 1}), 0, "y", "negative"},
		{"label outside the class set", x23, npyFile(mustDescr(t, "<i8"), false, []int{2}, []float64{7777, 1}), 3, "y", "outside the class set 0..2"},
		{"absurd label", x23, npyFile(mustDescr(t, "<u8"), false, []int{2}, []float64{1 << 40, 1}), 0, "y", "65536 or more"},
		{"bool labels", x23, npyFile(mustDescr(t, "|b1"), false, []int{2}, []float64{0, 1}), 0, "y", "want integers"},
	}
	for _, c := range cases {
		xp, yp := writeNPY(t, dir, "x.npy", c.x), writeNPY(t, dir, "y.npy", c.y)
		_, err := LoadNPY(xp, yp, NPYOptions{NumClasses: c.k})
		at := xp
		if c.inX == "y" {
			at = yp
		}
		if err == nil || !errors.Is(err, ErrBadData) || !strings.HasPrefix(err.Error(), "npy "+at+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want a bad-data error starting %q and mentioning %q", c.name, err, "npy "+at+": ", c.want)
		}
		if err != nil && strings.Contains(err.Error(), "7777") {
			t.Errorf("%s: %v names a label value", c.name, err)
		}
	}
	xp, yp := writeNPY(t, dir, "x.npy", x23), writeNPY(t, dir, "y.npy", y2)
	if _, err := LoadNPY(xp, yp, NPYOptions{Shape: []int{1, 2, 3}}); !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), "examples of shape [3], the other split's are [1 2 3]") {
		t.Errorf("shape unlike the other split's: %v", err)
	}
	if _, err := LoadNPY(filepath.Join(dir, "absent.npy"), filepath.Join(dir, "y.npy"), NPYOptions{}); !errors.Is(err, ErrBadData) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestLoadNPYMapped checks that a float32 file is viewed, not copied: X
// starts at the mapping's data offset, the Go heap does not grow by the
// file's 16 MB, both paths read the same values, and a write to X stays
// out of the file.
func TestLoadNPYMapped(t *testing.T) {
	dir := t.TempDir()
	const n, dim = 4096, 1024 // 16 MB of features
	vals := make([]float64, n*dim)
	for i := range vals {
		vals[i] = float64(i%1000) / 7
	}
	xb := npyFile(mustDescr(t, "<f4"), false, []int{n, dim}, vals)
	off := len(EncodeNPYHeader(mustDescr(t, "<f4"), false, []int{n, dim}))
	ys := make([]float64, n)
	for i := range ys {
		ys[i] = float64(i % 10)
	}
	xp := writeNPY(t, dir, "x.npy", xb)
	yp := writeNPY(t, dir, "y.npy", npyFile(mustDescr(t, "|u1"), false, []int{n}, ys))
	vals, xb = nil, nil

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := LoadNPY(xp, yp, NPYOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("the heap grew by %d bytes loading a 16 MB mapped file", grew)
	}
	if !d.Mapped() || unsafe.Pointer(&d.X[0]) != unsafe.Pointer(&d.mapped[off]) || len(d.X) != n*dim {
		t.Fatalf("X (len %d) is not the mapping's view from byte %d (mapped %v)", len(d.X), off, d.Mapped())
	}

	if c := *d; !c.Mapped() || func() bool { c.X = make([]float32, 1); return c.Mapped() }() {
		t.Error("Mapped: a shallow copy of X is mapped, one with its own X is not")
	}

	noMap = true
	r, err := LoadNPY(xp, yp, NPYOptions{})
	noMap = false
	if err != nil {
		t.Fatal(err)
	}
	if r.Mapped() || !slices.Equal(r.X, d.X) || !slices.Equal(r.Y, d.Y) || r.NumClasses != 10 {
		t.Errorf("read and mapped datasets differ (mapped %v, K %d)", r.Mapped(), r.NumClasses)
	}

	d.X[0] = 42 // a private copy-on-write page
	if h, err := os.ReadFile(xp); err != nil || !bytes.Equal(h[off:off+4], []byte{0, 0, 0, 0}) {
		t.Errorf("a write to X reached the file: %v %v", h[off:off+4], err)
	}
}

// FuzzReadNPYHeader: the header parser never panics, and what it accepts
// is a .npy header whose decoded fields survive a re-encoding.
func FuzzReadNPYHeader(f *testing.F) {
	for _, s := range []string{
		dictF4,
		"{'descr': '>f8', 'fortran_order': True, 'shape': (4,), }",
		"{'descr': '|u1', 'fortran_order': False, 'shape': (), }",
		`{"shape": (2L, 3L), "fortran_order": False, "descr": "<i2"}`,
		"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3",
		"{'descr': '<c8', 'fortran_order': 0, 'shape': (-1,), 'x': 1}",
		"",
	} {
		for _, v := range []byte{1, 2, 3} {
			f.Add(npyRaw(v, s, 64, nil))
		}
	}
	f.Add([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"))
	f.Add([]byte("\x93NUMPY\x01\x00\x03\x00{}\n"))
	f.Add([]byte("not a numpy file"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadNPYHeader(bytes.NewReader(b))
		if err != nil {
			if h != nil {
				t.Fatal("a header returned with an error")
			}
			return
		}
		if !bytes.HasPrefix(b, []byte(npyMagic)) || h.DataOffset > int64(len(b)) || h.Major < 1 || h.Major > 3 {
			t.Fatalf("accepted %q as %+v", b, h)
		}
		if ty, err := parseNPYDescr(h.Descr); err != nil || ty != h.Type {
			t.Fatalf("descr %q decodes to %+v, %v; header has %+v", h.Descr, ty, err, h.Type)
		}
		for _, s := range h.Shape {
			if s < 0 {
				t.Fatalf("negative dimension in %v", h.Shape)
			}
		}
		g, err := ReadNPYHeader(bytes.NewReader(EncodeNPYHeader(h.Type, h.FortranOrder, h.Shape)))
		if err != nil || g.Type != h.Type || g.FortranOrder != h.FortranOrder || !slices.Equal(g.Shape, h.Shape) {
			t.Fatalf("re-encoding %+v gave %+v, %v", h, g, err)
		}
	})
}
