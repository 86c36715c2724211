package datasets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pngImage returns a w×h RGB image whose pixel (x, y) has
// R = seed+x, G = seed+y, B = seed+x+y.
func pngImage(t *testing.T, w, h, seed int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(seed + x), uint8(seed + y), uint8(seed + x + y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tinyTree writes root/{train,test}/{cat,ant}/ images of size n×n; the
// seeds identify the images.
func tinyTree(t *testing.T, root string, n int) {
	for _, f := range []struct {
		path string
		seed int
	}{
		{"train/cat/b.png", 10}, {"train/cat/a.png", 20}, {"train/ant/z.png", 30},
		{"test/cat/x.png", 40}, {"test/ant/y.png", 50},
	} {
		writeFile(t, filepath.Join(root, f.path), pngImage(t, n, n, f.seed))
	}
	writeFile(t, filepath.Join(root, "train/cat/notes.txt"), []byte("ignored"))
}

func TestLoadImageFolder(t *testing.T) {
	root := t.TempDir()
	tinyTree(t, root, 4)
	d, err := LoadImageFolder(root, "train", ImageFolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Classes sorted (ant, cat); files by name within a class (a before b).
	if !slices.Equal(d.ClassNames, []string{"ant", "cat"}) || !slices.Equal(d.Y, []int{0, 1, 1}) || !slices.Equal(d.Shape, []int{3, 4, 4}) {
		t.Fatalf("classes %v Y %v shape %v", d.ClassNames, d.Y, d.Shape)
	}
	for i, seed := range []int{30, 20, 10} {
		row := d.Row(i)
		for _, p := range []struct{ c, x, y, want int }{{0, 3, 0, seed + 3}, {1, 0, 2, seed + 2}, {2, 3, 3, seed + 6}} {
			if got := row[p.c*16+p.y*4+p.x]; got != float32(p.want)/255 {
				t.Errorf("image %d channel %d (%d,%d) = %v, want %d/255", i, p.c, p.x, p.y, got*255, p.want)
			}
		}
	}
	// Symbolic links to images are followed (a tree of links into a larger
	// folder); a dangling link is a bad image, reported by name.
	linked := t.TempDir()
	for _, f := range []string{"train/cat/a.png", "train/ant/z.png"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(linked, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, f), filepath.Join(linked, f)); err != nil {
			t.Fatal(err)
		}
	}
	dl, err := LoadImageFolder(linked, "train", ImageFolderOptions{})
	if err != nil || !slices.Equal(dl.Y, []int{0, 1}) || !slices.Equal(dl.X, append(slices.Clone(d.Row(0)), d.Row(1)...)) {
		t.Errorf("linked tree: %v", err)
	}
	dangling := filepath.Join(linked, "train/cat/dangling.png")
	if err := os.Symlink(filepath.Join(root, "nowhere.png"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadImageFolder(linked, "train", ImageFolderOptions{}); err == nil || !strings.Contains(err.Error(), dangling) {
		t.Errorf("dangling link: %v", err)
	}
	// Given classes fix the order.
	d, err = LoadImageFolder(root, "train", ImageFolderOptions{Classes: []string{"cat", "ant"}})
	if err != nil || !slices.Equal(d.Y, []int{0, 0, 1}) {
		t.Errorf("given classes: %v %v", err, d.Y)
	}
}

func TestImageFolderBadImages(t *testing.T) {
	root := t.TempDir()
	tinyTree(t, root, 4)
	bad := filepath.Join(root, "train/ant/broken.jpg")
	writeFile(t, bad, []byte("\xff\xd8\xff not really a jpeg"))
	if _, err := LoadImageFolder(root, "train", ImageFolderOptions{}); err == nil || !strings.Contains(err.Error(), bad) || !errors.Is(err, ErrBadData) {
		t.Errorf("broken image: %v", err)
	}
	os.Remove(bad)
	// Several broken images (after a good first one, which fixes the size):
	// still one line, naming the first in file order and counting the rest.
	bad1, bad2 := filepath.Join(root, "train/ant/zz.jpg"), filepath.Join(root, "train/cat/broken.png")
	writeFile(t, bad1, []byte("\xff\xd8\xff not really a jpeg"))
	writeFile(t, bad2, []byte("\x89PNG\r\n\x1a\n truncated"))
	_, err := LoadImageFolder(root, "train", ImageFolderOptions{})
	if err == nil || !strings.Contains(err.Error(), bad1) || !strings.Contains(err.Error(), "and 1 more bad images") ||
		strings.Contains(err.Error(), "\n") || !errors.Is(err, ErrBadData) {
		t.Errorf("two broken images: %q", err)
	}
	os.Remove(bad1)
	os.Remove(bad2)
	big := filepath.Join(root, "train/cat/c.png")
	writeFile(t, big, pngImage(t, 5, 4, 0))
	if _, err := LoadImageFolder(root, "train", ImageFolderOptions{}); err == nil || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "5×4") {
		t.Errorf("wrong size: %v", err)
	}
	if _, err := LoadImageFolder(root, "validation", ImageFolderOptions{}); err == nil {
		t.Error("missing split accepted")
	}
	// A header announcing a huge image is refused before any pixel is
	// decoded (the decoder would allocate the whole image first).
	os.Remove(big)
	huge := filepath.Join(root, "train/ant/a.png")
	writeFile(t, huge, pngWithSize(t, 50000, 40000))
	if _, err := LoadImageFolder(root, "train", ImageFolderOptions{}); err == nil || !strings.Contains(err.Error(), huge) ||
		!strings.Contains(err.Error(), "50000×40000 is empty or above 16777216 pixels") {
		t.Errorf("huge header, first image: %v", err)
	}
	if _, err := LoadImageFolder(root, "train", ImageFolderOptions{Width: 4, Height: 4}); err == nil || !strings.Contains(err.Error(), huge) ||
		!strings.Contains(err.Error(), "size 50000×40000, want 4×4") {
		t.Errorf("huge header, size given: %v", err)
	}
}

// pngWithSize returns a 1×1 PNG whose IHDR chunk (checksum fixed up)
// announces w×h pixels.
func pngWithSize(t testing.TB, w, h uint32) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	p := b.Bytes()
	// Signature (8), IHDR length (4), "IHDR" (4), width, height, ..., CRC.
	binary.BigEndian.PutUint32(p[16:], w)
	binary.BigEndian.PutUint32(p[20:], h)
	binary.BigEndian.PutUint32(p[29:], crc32.ChecksumIEEE(p[12:29]))
	return p
}

func FuzzDecodeImage(f *testing.F) {
	var jb bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(37 * i)
	}
	if err := jpeg.Encode(&jb, img, nil); err != nil {
		f.Fatal(err)
	}
	var pb bytes.Buffer
	if err := png.Encode(&pb, img); err != nil {
		f.Fatal(err)
	}
	f.Add(jb.Bytes())
	f.Add(pb.Bytes())
	f.Add(pngWithSize(f, 1<<20, 1<<20))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, size := range [][2]int{{0, 0}, {3, 2}} {
			img, err := decodeImageBytes(b, size[0], size[1])
			if err != nil {
				continue
			}
			bd := img.Bounds()
			if bd.Dx()*bd.Dy() > maxImagePixels || (size[0] > 0 && (bd.Dx() != size[0] || bd.Dy() != size[1])) {
				t.Fatalf("accepted a %v image with size %v required", bd, size)
			}
			out := make([]byte, 3*bd.Dx()*bd.Dy())
			toCHW(out, img, 3)
			toCHW(out, img, 1)
		}
	})
}

func TestImportCIFAR10(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	tinyTree(t, root, 32)
	// One JPEG too: decoded with loss, so only approximately equal.
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = 128
	}
	var jb bytes.Buffer
	jpeg.Encode(&jb, img, &jpeg.Options{Quality: 95})
	writeFile(t, filepath.Join(root, "test/cat/z.jpg"), jb.Bytes())

	rep, err := ImportCIFAR10(root, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainN != 3 || rep.TestN != 3 || !slices.Equal(rep.Classes, []string{"ant", "cat"}) {
		t.Errorf("report %+v", rep)
	}
	ld, src, err := Load("cifar10", Options{Dir: out, NoEnv: true, NoSystem: true})
	if err != nil {
		t.Fatal(err)
	}
	if src.Path != out || ld.Train.N() != 3 || ld.Test.N() != 3 {
		t.Fatalf("loaded %v: %d/%d", src, ld.Train.N(), ld.Test.N())
	}
	// The import shuffles (image folders are class-sorted): the imported
	// set is a permutation of the folder's, image and label together.
	want, _ := LoadImageFolder(root, "train", ImageFolderOptions{})
	if !samePermuted(ld.Train, want) {
		t.Error("imported training set is not a permutation of the image folder")
	}
	if y := slices.Sorted(slices.Values(ld.Test.Y)); !slices.Equal(y, []int{0, 1, 1}) {
		t.Errorf("test labels %v", ld.Test.Y)
	}
	grey := 0
	for i := 0; i < ld.Test.N(); i++ {
		ok := true
		for _, v := range ld.Test.Row(i) {
			ok = ok && v >= 120.0/255 && v <= 136.0/255
		}
		if ok {
			grey++
		}
	}
	if grey != 1 {
		t.Fatalf("%d test images decode as the JPEG grey 128, want 1", grey)
	}
	meta, _ := os.ReadFile(filepath.Join(out, "batches.meta.txt"))
	if string(meta) != "ant\ncat\n" {
		t.Errorf("batches.meta.txt = %q", meta)
	}
	assertNoPart(t, out)
	// Verify knows the batches are an import and checks only the shapes
	// (the fixture's 3 + 3 images are not CIFAR-10's 50,000 + 10,000).
	locs, _ := Locate("cifar10", Options{Dir: out, NoEnv: true, NoSystem: true})
	r := Verify(locs[0])
	if len(r.Files) != 6 || r.Files[0].Err != nil || !strings.Contains(r.Files[0].Status, "dptrain data import") ||
		r.Err == nil || !strings.Contains(r.Err.Error(), "3 train + 3 test examples, want 50000 + 10000") {
		t.Errorf("verify of an import: %+v", r)
	}
	// Images that are not 32×32 are refused.
	small := t.TempDir()
	tinyTree(t, small, 4)
	if _, err := ImportCIFAR10(small, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "want 32×32") {
		t.Errorf("4×4 images: %v", err)
	}
}

// TestImportRealCIFAR10JPEG converts the shared CIFAR-10 JPEG tree when it
// has been unpacked to $DPTRAIN_CIFAR_JPEG (opt-in: it decodes 60,000 images).
func TestImportRealCIFAR10JPEG(t *testing.T) {
	src := os.Getenv("DPTRAIN_CIFAR_JPEG")
	if src == "" {
		t.Skip("set DPTRAIN_CIFAR_JPEG to an unpacked cifar10-jpeg tree to run")
	}
	out := t.TempDir()
	rep, err := ImportCIFAR10(src, out, CIFAR10Classes)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainN != 50000 || rep.TestN != 10000 {
		t.Errorf("imported %d + %d, want 50000 + 10000", rep.TrainN, rep.TestN)
	}
	ld, _, err := Load("cifar10", Options{Dir: out, NoEnv: true, NoSystem: true})
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 10)
	for _, y := range ld.Test.Y {
		counts[y]++
	}
	for c, k := range counts {
		if k != 1000 {
			t.Errorf("test class %s has %d images, want 1000", CIFAR10Classes[c], k)
		}
	}
}

// samePermuted reports whether a and b hold the same (image, label) pairs
// in some order.
func samePermuted(a, b *Dataset) bool {
	if a.N() != b.N() {
		return false
	}
	used := make([]bool, b.N())
	for i := 0; i < a.N(); i++ {
		found := false
		for j := 0; j < b.N() && !found; j++ {
			if !used[j] && a.Y[i] == b.Y[j] && slices.Equal(a.Row(i), b.Row(j)) {
				used[j], found = true, true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Image folders are class-sorted; the imported batches must not be, or a
// prefix (one batch file, --train-limit) would hold one class.
func TestImportCIFAR10Mixes(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	for i := 0; i < 12; i++ {
		for _, c := range []string{"a", "b"} {
			writeFile(t, filepath.Join(root, "train", c, fmt.Sprintf("%02d.png", i)), pngImage(t, 32, 32, 7*i+len(c)))
		}
	}
	writeFile(t, filepath.Join(root, "test/a/0.png"), pngImage(t, 32, 32, 1))
	if _, err := ImportCIFAR10(root, out, nil); err != nil {
		t.Fatal(err)
	}
	ld, _, err := Load("cifar10", Options{Dir: out, NoEnv: true, NoSystem: true})
	if err != nil {
		t.Fatal(err)
	}
	first := ld.Train.Y[:ld.Train.N()/2]
	if c := slices.Index(first, 1); c < 0 || slices.Index(first, 0) < 0 {
		t.Fatalf("first half of the imported training set is one class: %v", ld.Train.Y)
	}
}

func TestImportCIFAR10UnknownClass(t *testing.T) {
	root := t.TempDir()
	tinyTree(t, root, 32)
	for _, tc := range []struct {
		classes []string
		want    string // "" = accepted
	}{
		{[]string{"ant", "cat"}, ""},
		{[]string{"cat", "ant"}, ""},
		{[]string{"ant", "cta"}, `class "cta" has no images`},
		{[]string{"ant", "cat", "dog"}, `class "dog" has no images`},
	} {
		_, err := ImportCIFAR10(root, t.TempDir(), tc.classes)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("classes %v: %v", tc.classes, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("classes %v: error %v, want %q", tc.classes, err, tc.want)
		}
	}
}

// An empty class folder (or one holding no image files) is refused with a
// message naming it; before, the class was silently added with no images.
func TestImageFolderEmptyClassNamed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra func(root string)
		opts  ImageFolderOptions
		want  string
	}{
		{"empty folder", func(root string) { os.MkdirAll(filepath.Join(root, "train", "bee"), 0o755) }, ImageFolderOptions{}, filepath.Join("train", "bee") + " holds no .jpg/.jpeg/.png files"},
		{"no images in it", func(root string) { writeFile(t, filepath.Join(root, "train", "bee", "notes.txt"), []byte("x")) }, ImageFolderOptions{}, filepath.Join("train", "bee") + " holds no"},
		{"listed class, empty folder", func(root string) { os.MkdirAll(filepath.Join(root, "train", "bee"), 0o755) }, ImageFolderOptions{Classes: []string{"ant", "bee", "cat"}}, filepath.Join("train", "bee") + " holds no"},
		{"listed class, no folder", func(string) {}, ImageFolderOptions{Classes: []string{"ant", "bee", "cat"}}, ""},
	} {
		root := t.TempDir()
		tinyTree(t, root, 4)
		tc.extra(root)
		_, err := LoadImageFolder(root, "train", tc.opts)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadData)):
			t.Errorf("%s: %v, want a bad-data refusal naming %q", tc.name, err, tc.want)
		}
	}
}
