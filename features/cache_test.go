package features

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLoadOrComputeCaches(t *testing.T) {
	dir := t.TempDir()
	const n = 2
	x := randomPlanes(21, n*3*32*32)
	first, shape, hit, err := LoadOrCompute(dir, x, n, [3]int{3, 32, 32}, DefaultConfig())
	if err != nil || hit {
		t.Fatalf("first call: hit=%v err=%v", hit, err)
	}
	second, shape2, hit, err := LoadOrCompute(dir, x, n, [3]int{3, 32, 32}, DefaultConfig())
	if err != nil || !hit {
		t.Fatalf("second call: hit=%v err=%v", hit, err)
	}
	if !equalInts(shape, shape2) || len(first) != len(second) {
		t.Fatalf("shapes %v vs %v", shape, shape2)
	}
	for i := range first {
		if first[i] != second[i] {
			t.Fatalf("cached value %d = %g, computed %g", i, second[i], first[i])
		}
	}
	// Independent of the cache: the values are the transform's.
	direct, _, _ := ScatterNet(x, n, [3]int{3, 32, 32})
	for i := range direct {
		if direct[i] != second[i] {
			t.Fatalf("cached value %d = %g, ScatterNet %g", i, second[i], direct[i])
		}
	}
	// Different data, or another transform, is another key.
	y := append([]float32{}, x...)
	y[100] += 1e-3
	if CacheKey(y, n, [3]int{3, 32, 32}, DefaultConfig()) == CacheKey(x, n, [3]int{3, 32, 32}, DefaultConfig()) {
		t.Error("changing one pixel kept the cache key")
	}
	if CacheKey(x, n, [3]int{3, 32, 32}, Config{J: 2, L: 8, Periodic: true}) == CacheKey(x, n, [3]int{3, 32, 32}, DefaultConfig()) {
		t.Error("changing the padding kept the cache key")
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("cache dir holds %d entries, want 1", len(ents))
	}
	// A corrupted file is detected, recomputed and replaced.
	path := CachePath(dir, CacheKey(x, n, [3]int{3, 32, 32}, DefaultConfig()))
	b, _ := os.ReadFile(path)
	b[len(b)-10] ^= 0x40
	os.WriteFile(path, b, 0o644)
	if _, _, _, _, err := LoadFeatures(path); !errors.Is(err, ErrCorrupt) {
		t.Errorf("flipped bit: err = %v, want ErrCorrupt", err)
	}
	third, _, hit, err := LoadOrCompute(dir, x, n, [3]int{3, 32, 32}, DefaultConfig())
	if err != nil || hit || third[len(third)-1] != first[len(first)-1] {
		t.Errorf("corrupt cache: hit=%v err=%v", hit, err)
	}
}

func TestReadFeaturesRejects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := WriteFeatures(path, [32]byte{1}, []float32{1, 2, 3, 4, 5, 6}, 2, []int{3}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	key, feats, n, shape, err := ReadFeatures(bytes.NewReader(good), int64(len(good)))
	if err != nil || key != [32]byte{1} || n != 2 || !equalInts(shape, []int{3}) || feats[5] != 6 {
		t.Fatalf("round trip: %v %v %v %v %v", key, feats, n, shape, err)
	}
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"rank 0", func(b []byte) []byte { b[48] = 0; return b }},
		{"huge n", func(b []byte) []byte { b[47] = 0x7f; return b }},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
	} {
		b := tc.edit(append([]byte{}, good...))
		if _, _, _, _, err := ReadFeatures(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func FuzzReadFeatures(f *testing.F) {
	var buf bytes.Buffer
	path := filepath.Join(f.TempDir(), "seed")
	if err := WriteFeatures(path, [32]byte{7}, []float32{1, -2, 3.5, 0}, 2, []int{1, 2}); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		_, feats, n, shape, err := ReadFeatures(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		per := 1
		for _, d := range shape {
			per *= d
		}
		if len(feats) != n*per {
			t.Fatalf("%d values for n=%d shape %v", len(feats), n, shape)
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The cache is private (0700 directory, 0600 files) and bounded: Evict
// removes the oldest files first and never the one just written.
func TestCacheIsPrivateAndBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	n := 2
	x := make([]float32, n*3*32*32)
	for i := range x {
		x[i] = float32(i%7) / 7
	}
	if _, _, _, err := LoadOrCompute(dir, x, n, [3]int{3, 32, 32}, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
	path := CachePath(dir, CacheKey(x, n, [3]int{3, 32, 32}, DefaultConfig()))
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v; want mode 0600", err)
	}
	// Three more files of known sizes and ages.
	var olds []string
	for i, age := range []time.Duration{3 * time.Hour, 2 * time.Hour, time.Hour} {
		p := filepath.Join(dir, fmt.Sprintf("scatternet-old%d.f32", i))
		if err := os.WriteFile(p, make([]byte, 1000), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
		olds = append(olds, p)
	}
	other := filepath.Join(dir, "notes.txt") // not a cache file: never touched
	os.WriteFile(other, make([]byte, 5000), 0o600)
	keepSize := fileSize(t, path)
	removed, err := Evict(dir, keepSize+1500, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || removed[0] != olds[0] || removed[1] != olds[1] {
		t.Fatalf("evicted %v; want the two oldest %v", removed, olds[:2])
	}
	if removed, _ = Evict(dir, 0, path); len(removed) != 1 || removed[0] != olds[2] {
		t.Fatalf("limit 0 evicted %v; want %v", removed, olds[2])
	}
	for _, p := range []string{path, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
