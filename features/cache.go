package features

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Feature cache file layout (little endian):
//
//	"DPSCATF1"              8-byte magic
//	key                     32 bytes: CacheKey of the source data and transform
//	n                       uint64: number of examples
//	rank                    uint32 (1..8), then rank × uint32 per-example dims
//	values                  n·Π dims × float32
//	crc                     uint32: CRC-32C of the values' bytes
const cacheMagic = "DPSCATF1"

const maxRank = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// cacheVersion changes whenever the transform's output would change for the
// same Config, so old caches miss instead of returning stale features.
const cacheVersion = "features-cache-v1"

// CacheKey returns the SHA-256 of the transform (cfg and cache version), the
// input shape and n, and the source values' bits.
func CacheKey(x []float32, n int, shape [3]int, cfg Config) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\nn=%d shape=%v\n", cacheVersion, cfg, n, shape)
	buf := make([]byte, 0, 1<<16)
	for i, v := range x {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) || i == len(x)-1 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

// CachePath is the cache file for key in dir.
func CachePath(dir string, key [32]byte) string {
	return filepath.Join(dir, "scatternet-"+hex.EncodeToString(key[:12])+".f32")
}

// Compute is ScatterNet with a chosen configuration.
func Compute(x []float32, n int, shape [3]int, cfg Config) ([]float32, []int, error) {
	c, h, w := shape[0], shape[1], shape[2]
	if c <= 0 || n < 0 {
		return nil, nil, fmt.Errorf("scatternet: bad shape %v for n = %d", shape, n)
	}
	s, err := cachedScattering(h, w, cfg)
	if err != nil {
		return nil, nil, err
	}
	if len(x) != n*c*h*w {
		return nil, nil, fmt.Errorf("scatternet: %d values for %d images of shape %v (want %d)", len(x), n, shape, n*c*h*w)
	}
	oshape := s.OutputShape(c)
	dst := make([]float32, n*oshape[0]*oshape[1]*oshape[2])
	s.Transform(dst, x, n, c, 0)
	return dst, oshape, nil
}

// LoadOrCompute returns the scattering features of x (as Compute does),
// read from dir when a valid cache file for exactly this data and cfg is
// there; otherwise it computes them and writes the cache file atomically
// (a temporary file renamed into place). hit reports a cache hit. A cache
// file that is corrupt is recomputed and replaced.
func LoadOrCompute(dir string, x []float32, n int, shape [3]int, cfg Config) (feats []float32, fshape []int, hit bool, err error) {
	key := CacheKey(x, n, shape, cfg)
	path := CachePath(dir, key)
	gotKey, feats, gotN, fshape, err := LoadFeatures(path)
	if err == nil && gotKey == key && gotN == n {
		return feats, fshape, true, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrCorrupt) {
		return nil, nil, false, err
	}
	feats, fshape, err = Compute(x, n, shape, cfg)
	if err != nil {
		return nil, nil, false, err
	}
	// The features are a deterministic function of the private images:
	// the cache is as private as the data (0700 directory, 0600 files).
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, false, fmt.Errorf("feature cache: %w", err)
	}
	if err := WriteFeatures(path, key, feats, n, fshape); err != nil {
		return nil, nil, false, err
	}
	if _, err := Evict(dir, CacheLimit(), path); err != nil {
		return nil, nil, false, err
	}
	return feats, fshape, false, nil
}

// DefaultCacheLimit bounds the feature cache's size (bytes) unless
// $DPTRAIN_FEATURE_CACHE_MAX says otherwise.
const DefaultCacheLimit = 8 << 30

// CacheLimit is $DPTRAIN_FEATURE_CACHE_MAX (bytes) when it parses as a
// positive integer, else DefaultCacheLimit.
func CacheLimit() int64 {
	if v, err := strconv.ParseInt(os.Getenv("DPTRAIN_FEATURE_CACHE_MAX"), 10, 64); err == nil && v > 0 {
		return v
	}
	return DefaultCacheLimit
}

// Evict removes the least recently modified cache files in dir until the
// cache holds at most limit bytes, never removing keep (the file just
// written); limit 0 removes every cache file but keep. It returns the paths
// removed. Only files named like cache files are touched.
func Evict(dir string, limit int64, keep string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "scatternet-*.f32"))
	if err != nil {
		return nil, fmt.Errorf("feature cache: %w", err)
	}
	type entry struct {
		path string
		size int64
		mod  int64
	}
	var es []entry
	var total int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		total += fi.Size()
		if p != keep {
			es = append(es, entry{p, fi.Size(), fi.ModTime().UnixNano()})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].mod < es[j].mod })
	var removed []string
	for _, e := range es {
		if total <= limit {
			break
		}
		if err := os.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("feature cache: %w", err)
		}
		total -= e.size
		removed = append(removed, e.path)
	}
	return removed, nil
}

// ErrCorrupt is wrapped by the errors of a cache file that does not parse.
var ErrCorrupt = errors.New("corrupt feature cache")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// WriteFeatures writes n examples of per-example shape fshape under key to
// path, through a temporary file in the same directory that is synced and
// renamed, so readers never see a partial file.
func WriteFeatures(path string, key [32]byte, feats []float32, n int, fshape []int) (err error) {
	per := 1
	for _, d := range fshape {
		per *= d
	}
	if len(fshape) == 0 || len(fshape) > maxRank || len(feats) != n*per {
		panic(fmt.Sprintf("features: %d values for %d examples of shape %v", len(feats), n, fshape))
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".scatternet-*.tmp")
	if err != nil {
		return fmt.Errorf("feature cache: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	hdr := append([]byte(cacheMagic), key[:]...)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(n))
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(fshape)))
	for _, d := range fshape {
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(d))
	}
	w.Write(hdr)
	crc := uint32(0)
	buf := make([]byte, 0, 1<<16)
	for i, v := range feats {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) == cap(buf) || i == len(feats)-1 {
			crc = crc32.Update(crc, castagnoli, buf)
			w.Write(buf)
			buf = buf[:0]
		}
	}
	if _, err = w.Write(binary.LittleEndian.AppendUint32(nil, crc)); err != nil {
		return fmt.Errorf("feature cache %s: %w", path, err)
	}
	// 0600: the features are a function of the private data.
	if err = errors.Join(w.Flush(), f.Chmod(0o600), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("feature cache %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("feature cache: %w", err)
	}
	return nil
}

// LoadFeatures reads a cache file written by WriteFeatures.
func LoadFeatures(path string) (key [32]byte, feats []float32, n int, fshape []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return key, nil, 0, nil, fmt.Errorf("feature cache: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return key, nil, 0, nil, fmt.Errorf("feature cache: %w", err)
	}
	key, feats, n, fshape, err = ReadFeatures(bufio.NewReaderSize(f, 1<<20), st.Size())
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return key, feats, n, fshape, err
}

// ReadFeatures parses a cache stream of exactly size bytes. The header must
// agree with size before anything large is allocated.
func ReadFeatures(r io.Reader, size int64) (key [32]byte, feats []float32, n int, fshape []int, err error) {
	head := make([]byte, len(cacheMagic)+32+8+4)
	if _, err := io.ReadFull(r, head); err != nil {
		return key, nil, 0, nil, corrupt("header: %v", err)
	}
	if string(head[:8]) != cacheMagic {
		return key, nil, 0, nil, corrupt("bad magic %q", head[:8])
	}
	copy(key[:], head[8:40])
	n64 := binary.LittleEndian.Uint64(head[40:48])
	rank := binary.LittleEndian.Uint32(head[48:52])
	if rank == 0 || rank > maxRank {
		return key, nil, 0, nil, corrupt("rank %d", rank)
	}
	dims := make([]byte, 4*rank)
	if _, err := io.ReadFull(r, dims); err != nil {
		return key, nil, 0, nil, corrupt("dims: %v", err)
	}
	per := uint64(1)
	for i := range rank {
		d := uint64(binary.LittleEndian.Uint32(dims[4*i:]))
		if d == 0 || per > math.MaxInt32/d {
			return key, nil, 0, nil, corrupt("dimension %d", d)
		}
		per *= d
		fshape = append(fshape, int(d))
	}
	hdrLen := uint64(len(head) + len(dims))
	if n64 > math.MaxInt32 || size < 0 || uint64(size) != hdrLen+4*n64*per+4 {
		return key, nil, 0, nil, corrupt("%d examples of %d values do not fill %d bytes", n64, per, size)
	}
	n = int(n64)
	feats = make([]float32, n*int(per))
	buf := make([]byte, 1<<16)
	crc := uint32(0)
	for i := 0; i < len(feats); {
		k := min(len(buf)/4, len(feats)-i)
		if _, err := io.ReadFull(r, buf[:4*k]); err != nil {
			return key, nil, 0, nil, corrupt("values: %v", err)
		}
		crc = crc32.Update(crc, castagnoli, buf[:4*k])
		for j := range k {
			feats[i+j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
		}
		i += k
	}
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return key, nil, 0, nil, corrupt("checksum: %v", err)
	}
	if got := binary.LittleEndian.Uint32(buf[:4]); got != crc {
		return key, nil, 0, nil, corrupt("checksum %08x, values hash to %08x", got, crc)
	}
	return key, feats, n, fshape, nil
}
