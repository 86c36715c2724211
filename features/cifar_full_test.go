package features

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/rng"
)

// readCIFARBinary reads CIFAR-10 binary batches (1 label byte + 3072 pixel
// bytes per record) into planes scaled to [0,1].
func readCIFARBinary(t *testing.T, paths ...string) ([]float32, []int) {
	var x []float32
	var y []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b)%3073 != 0 {
			t.Fatalf("%s: %d bytes is not a whole number of records", p, len(b))
		}
		for i := 0; i < len(b); i += 3073 {
			y = append(y, int(b[i]))
			for _, v := range b[i+1 : i+3073] {
				x = append(x, float32(v)/255)
			}
		}
	}
	return x, y
}

// TestCIFAR10FullFeatures is the opt-in run over the whole imported
// CIFAR-10: DPTRAIN_CIFAR10_DIR=../cifar10 [DPTRAIN_FEATURE_CACHE=dir]
// go test -run CIFAR10Full -v -timeout 1h ./features. It logs images/s,
// the cache round trip, the private channel statistics' error, and a
// nearest-class-mean accuracy as a sanity figure for the features.
func TestCIFAR10FullFeatures(t *testing.T) {
	dir := os.Getenv("DPTRAIN_CIFAR10_DIR")
	if dir == "" {
		t.Skip("set DPTRAIN_CIFAR10_DIR to an imported CIFAR-10 directory")
	}
	cache := os.Getenv("DPTRAIN_FEATURE_CACHE")
	if cache == "" {
		cache = filepath.Join(dir, "features")
	}
	var trainFiles []string
	for i := 1; i <= 5; i++ {
		trainFiles = append(trainFiles, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i)))
	}
	xtr, ytr := readCIFARBinary(t, trainFiles...)
	xte, yte := readCIFARBinary(t, filepath.Join(dir, "test_batch.bin"))
	t.Logf("loaded %d train + %d test images, GOMAXPROCS %d", len(ytr), len(yte), runtime.GOMAXPROCS(0))

	feats := func(x []float32, n int, name string) []float32 {
		cpu0, t0 := cputime.Process(), time.Now()
		f, shape, hit, err := LoadOrCompute(cache, x, n, [3]int{3, 32, 32}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		wall, cpu := time.Since(t0).Seconds(), cputime.Process()-cpu0
		t.Logf("%s: %d images → %v in %.1f s wall, %.1f CPU-s (cache hit %v): %.0f images/s, %.0f images/CPU-s",
			name, n, shape, wall, cpu, hit, float64(n)/wall, float64(n)/cpu)
		return f
	}
	ftr := feats(xtr, len(ytr), "train")
	fte := feats(xte, len(yte), "test")

	s, _ := cachedScattering(32, 32, DefaultConfig())
	shape := s.OutputShape(3)
	exact := exactStats(ftr, len(ytr), shape)
	scales := ReferenceScales(s, 3, 16, 1)
	for _, clip := range []float64{1, 10, 30, 100} {
		// Fraction of examples whose weighted stats vector exceeds the clip
		// (a diagnostic on the private data: not itself private).
		clipped := 0
		hw := shape[1] * shape[2]
		for i := range len(ytr) {
			var n2 float64
			for ch := range shape[0] {
				var m, sq float64
				for _, v := range ftr[(i*shape[0]+ch)*hw : (i*shape[0]+ch+1)*hw] {
					m += float64(v)
					sq += float64(v) * float64(v)
				}
				m, sq = scales[ch]*m/float64(hw), scales[ch]*scales[ch]*sq/float64(hw)
				n2 += m*m + sq*sq
			}
			if math.Sqrt(n2) > clip {
				clipped++
			}
		}
		for _, sigma := range []float64{2, 10} {
			res, err := PrivateChannelStats(ftr, len(ytr), shape, PrivateStatsConfig{
				Clip: clip, Sigma: sigma, ChannelScale: scales, Delta: 1e-5}, rng.New(7))
			if err != nil {
				t.Fatal(err)
			}
			var worstM, worstS, meanM, meanS float64
			for ch := range shape[0] {
				dm := math.Abs(res.Stats.Mean[ch]-exact.Mean[ch]) / exact.Std[ch]
				ds := math.Abs(res.Stats.Std[ch]/exact.Std[ch] - 1)
				worstM, worstS = max(worstM, dm), max(worstS, ds)
				meanM, meanS = meanM+dm/float64(shape[0]), meanS+ds/float64(shape[0])
			}
			t.Logf("private stats clip %g (%.1f%% of examples clipped) σ=%g (ε=%.3f at δ=1e-5): |μ̂−μ|/s mean %.4f max %.4f; |ŝ/s−1| mean %.4f max %.4f",
				clip, 100*float64(clipped)/float64(len(ytr)), sigma, res.Epsilon, meanM, worstM, meanS, worstS)
		}
	}

	// Nearest class mean on standardised features vs on raw pixels.
	ncm := func(tr, te []float32, d int, norm func([]float32, int)) float64 {
		tr, te = append([]float32{}, tr...), append([]float32{}, te...)
		norm(tr, len(ytr))
		norm(te, len(yte))
		means := make([]float64, 10*d)
		counts := make([]float64, 10)
		for i, c := range ytr {
			counts[c]++
			for k, v := range tr[i*d : (i+1)*d] {
				means[c*d+k] += float64(v)
			}
		}
		for c := range 10 {
			for k := range d {
				means[c*d+k] /= counts[c]
			}
		}
		right := 0
		for i, c := range yte {
			best, arg := math.Inf(1), -1
			for k := range 10 {
				var dist float64
				for j, v := range te[i*d : (i+1)*d] {
					e := float64(v) - means[k*d+j]
					dist += e * e
				}
				if dist < best {
					best, arg = dist, k
				}
			}
			if arg == c {
				right++
			}
		}
		return float64(right) / float64(len(yte))
	}
	std := func(st ChannelStats, shape []int) func([]float32, int) {
		return func(x []float32, n int) { st.Apply(x, n, shape) }
	}
	pix := exactStats(xtr, len(ytr), []int{3, 32, 32})
	t.Logf("nearest class mean, test accuracy: raw pixels (standardised) %.4f, ScatterNet (standardised) %.4f",
		ncm(xtr, xte, 3072, std(pix, []int{3, 32, 32})), ncm(ftr, fte, 15552, std(exact, shape)))
}
