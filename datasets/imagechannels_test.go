package datasets

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// greyPNG returns a w×h 8-bit grey PNG whose pixel (x, y) is seed+x+w·y.
func greyPNG(t *testing.T, w, h, seed int) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetGray(x, y, color.Gray{uint8(seed + x + w*y)})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rgbPNG returns a w×h PNG with every pixel c.
func rgbPNG(t *testing.T, w, h int, c color.NRGBA) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestImageFolderChannels(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "train/a/1.png"), greyPNG(t, 2, 2, 10))
	writeFile(t, filepath.Join(root, "train/b/2.png"), greyPNG(t, 2, 2, 20))
	mixed := filepath.Join(root, "train/b/3.png")
	// (200, 100, 50): luminance 0.299·200 + 0.587·100 + 0.114·50 = 124.2 → 124.
	writeFile(t, mixed, rgbPNG(t, 2, 2, color.NRGBA{200, 100, 50, 255}))
	px := func(v ...int) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x) / 255
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		opts  ImageFolderOptions
		shape []int
		x     []float32 // all images, CHW each
		err   string
	}{
		{name: "mixed, no flag", err: mixed + ": colour (3 channels), but the images are grey (1 channel); pass --channels 1"},
		{name: "mixed, --channels 1 without converting", opts: ImageFolderOptions{Channels: 1}, err: mixed},
		{name: "to grey", opts: ImageFolderOptions{Channels: 1, Convert: true}, shape: []int{1, 2, 2},
			x: px(10, 11, 12, 13, 20, 21, 22, 23, 124, 124, 124, 124)},
		{name: "to RGB", opts: ImageFolderOptions{Channels: 3, Convert: true}, shape: []int{3, 2, 2},
			x: px(10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13, 20, 21, 22, 23, 20, 21, 22, 23, 20, 21, 22, 23,
				200, 200, 200, 200, 100, 100, 100, 100, 50, 50, 50, 50)},
		// 2×2 → 1 wide, 4 high: each row's mean (10.5, 12.5), interpolated
		// to 10.5, 11, 12, 12.5 and rounded half away from zero.
		{name: "to grey and resized", opts: ImageFolderOptions{Channels: 1, Convert: true, Resize: true, Width: 1, Height: 4}, shape: []int{1, 4, 1},
			x: px(11, 11, 12, 13, 21, 21, 22, 23, 124, 124, 124, 124)},
		{name: "bad channel count", opts: ImageFolderOptions{Channels: 2}, err: "2 channels; use 1 (grey) or 3 (RGB)"},
	} {
		d, err := LoadImageFolder(root, "train", tc.opts)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBadData) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(d.Shape, tc.shape) || !slices.Equal(d.X, tc.x) {
			t.Errorf("%s: shape %v x %v, want %v %v", tc.name, d.Shape, d.X, tc.shape, tc.x)
		}
	}
	// A grey-only folder keeps its one channel without any flag.
	writeFile(t, mixed, greyPNG(t, 2, 2, 30))
	d, err := LoadImageFolder(root, "train", ImageFolderOptions{})
	if err != nil || !slices.Equal(d.Shape, []int{1, 2, 2}) || !slices.Equal(d.X, px(10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33)) {
		t.Errorf("grey folder: %v %v %v", err, d.Shape, d.X)
	}
}

func TestResizeBilinear(t *testing.T) {
	// Reference values: PyTorch's interpolate(mode="bilinear",
	// align_corners=False), worked by hand: the source coordinate of output
	// x is (x+0.5)·w/ow − 0.5, clamped to the edges.
	for _, tc := range []struct {
		src          []byte
		h, w, oh, ow int
		want         []byte
	}{
		{[]byte{0, 100}, 1, 2, 1, 4, []byte{0, 25, 75, 100}},                                 // up: −0.25→0, 0.25, 0.75, 1.25→1
		{[]byte{0, 10, 20, 30}, 1, 4, 1, 2, []byte{5, 25}},                                   // down: 0.5, 2.5
		{[]byte{0, 100, 200, 44}, 2, 2, 1, 1, []byte{86}},                                    // centre: mean 86
		{[]byte{0, 100, 200, 40}, 2, 2, 3, 3, []byte{0, 50, 100, 100, 85, 70, 200, 120, 40}}, // 3×3: source coordinates 0 (clamped), 0.5, 1 (clamped)
		{[]byte{7, 8, 9}, 1, 3, 1, 3, []byte{7, 8, 9}},                                       // same size: identity
	} {
		got := make([]byte, tc.oh*tc.ow)
		ResizeBilinear(got, tc.src, 1, tc.h, tc.w, tc.oh, tc.ow)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v %d×%d → %d×%d: got %v, want %v", tc.src, tc.h, tc.w, tc.oh, tc.ow, got, tc.want)
		}
	}
}
