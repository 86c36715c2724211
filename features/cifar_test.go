package features

import (
	"archive/tar"
	"compress/gzip"
	"image/jpeg"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cifarTarball finds the shared CIFAR-10 JPEG tarball beside the repository
// (or at $DPTRAIN_CIFAR10_JPEG).
func cifarTarball() string {
	cands := []string{os.Getenv("DPTRAIN_CIFAR10_JPEG"),
		filepath.Join("..", "..", "shared", "data", "cifar10-jpeg", "cifar10-jpeg.tar.gz")}
	for _, p := range cands {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// TestScatterNetOnRealCIFARJPEGs decodes the first images of the shared
// tarball and checks the features: the right size, finite, order 0 close to
// the (low-passed) image, and order 1 carrying the images' texture.
func TestScatterNetOnRealCIFARJPEGs(t *testing.T) {
	path := cifarTarball()
	if path == "" {
		t.Skip("CIFAR-10 JPEG tarball not found")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	const want = 8
	var x []float32
	var names []string
	for len(names) < want {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(h.Name, ".jpg") {
			continue
		}
		img, err := jpeg.Decode(tr)
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		b := img.Bounds()
		if b.Dx() != 32 || b.Dy() != 32 {
			t.Fatalf("%s: %v", h.Name, b)
		}
		planes := make([]float32, 3*1024)
		for r := range 32 {
			for c := range 32 {
				R, G, B, _ := img.At(b.Min.X+c, b.Min.Y+r).RGBA()
				planes[r*32+c] = float32(R>>8) / 255
				planes[1024+r*32+c] = float32(G>>8) / 255
				planes[2048+r*32+c] = float32(B>>8) / 255
			}
		}
		x = append(x, planes...)
		names = append(names, h.Name)
	}
	if len(names) < want {
		t.Fatalf("only %d JPEGs in %s", len(names), path)
	}
	out, shape, err := ScatterNet(x, want, [3]int{3, 32, 32})
	if err != nil {
		t.Fatal(err)
	}
	if shape[0] != 243 || shape[1] != 8 || shape[2] != 8 || len(out) != want*15552 {
		t.Fatalf("shape %v, %d values", shape, len(out))
	}
	for i, name := range names {
		feat := out[i*15552 : (i+1)*15552]
		for k, v := range feat {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: feature %d = %v", name, k, v)
			}
		}
		for ch := range 3 {
			// Order 0 samples the image blurred by φ (σ = 1.6 px) every 4
			// pixels: its mean tracks the channel mean within a few percent
			// of the range, and each sample lies within the pixel range.
			var s0, img float64
			lo, hi := float32(1), float32(0)
			for _, v := range x[(i*3+ch)*1024 : (i*3+ch+1)*1024] {
				img += float64(v)
				lo, hi = min(lo, v), max(hi, v)
			}
			for _, v := range feat[ch*81*64 : ch*81*64+64] {
				s0 += float64(v)
				if v < lo-1e-3 || v > hi*float32(math.Pi/kymatioPi)+1e-3 {
					t.Errorf("%s channel %d: order-0 sample %g outside the pixel range [%g, %g]", name, ch, v, lo, hi)
				}
			}
			if d := math.Abs(s0/64 - img/1024); d > 0.05 {
				t.Errorf("%s channel %d: order-0 mean %.3f vs image mean %.3f", name, ch, s0/64, img/1024)
			}
			// A natural image has edges: order 1 is not zero (a constant one
			// would give exactly 0).
			var e1 float64
			for _, v := range feat[(ch*81+1)*64 : (ch*81+17)*64] {
				e1 += float64(v)
			}
			if !(e1/(16*64) > 1e-3) {
				t.Errorf("%s channel %d: mean order-1 coefficient %g", name, ch, e1/(16*64))
			}
		}
	}
	t.Logf("%d real CIFAR JPEGs (first %s): 243×8×8 features, finite, order 0 tracks the image", want, names[0])
}
