package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // register decoders
	_ "image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/dptrain/dptrain/rng"
)

// ImageFolderOptions controls LoadImageFolder.
type ImageFolderOptions struct {
	// Classes fixes the class order (label i is Classes[i]); nil means the
	// class directories of the split, sorted by name.
	Classes []string
	// Width and Height, when set, are required of every image; otherwise
	// every image must have the size of the first one.
	Width, Height int
	// OnlyClasses refuses a class directory outside Classes (which must
	// be set) instead of skipping it: Classes is then the public class
	// set, and the error names no directory (it may be a training label).
	OnlyClasses bool
	// Channels is the number of planes per image: 1 (grey) or 3 (RGB);
	// 0 means the first image's (1 when its file stores one grey channel,
	// else 3). Unless Convert is set, an image with the other channel
	// count is an error naming it.
	Channels int
	// Convert converts images to Channels instead of refusing those with
	// the other count: colour to grey is the luminance 0.299 R + 0.587 G +
	// 0.114 B (ITU-R BT.601, as PIL's convert("L")) rounded to the nearest
	// 8-bit level; grey to colour replicates the grey plane. Alpha is
	// ignored (pixels are read non-premultiplied).
	Convert bool
	// Resize scales every image to Width×Height (both must be set) by
	// [ResizeBilinear] instead of requiring that size.
	Resize bool
}

// imageSet is a decoded image folder: pixel bytes in CHW order (one grey
// plane, or R, G, B planes as CIFAR-10 stores them).
type imageSet struct {
	pix     []byte
	labels  []int
	classes []string
	c, h, w int
	convert bool
	resize  bool
}

// isImageFile reports whether a file name has an image extension we decode.
func isImageFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jpg", ".jpeg", ".png":
		return !strings.HasPrefix(name, ".")
	}
	return false
}

// LoadImageFolder reads root/split/<class>/*.{jpg,jpeg,png} into a dataset
// with Shape [C,H,W] (pixels scaled to [0,1]): C is 1 for grey images and
// 3 (RGB planes) for colour ones, or opts.Channels. Within a class, files
// are read in name order. A file that does not decode, or has another size
// or channel count (unless opts asks to convert), is an error naming the
// file.
func LoadImageFolder(root, split string, opts ImageFolderOptions) (*Dataset, error) {
	s, err := readImageFolder(filepath.Join(root, split), opts)
	if err != nil {
		return nil, badData(err)
	}
	d := &Dataset{
		Name:       filepath.Base(filepath.Clean(root)),
		X:          make([]float32, len(s.pix)),
		Y:          s.labels,
		Shape:      []int{s.c, s.h, s.w},
		NumClasses: len(s.classes),
		ClassNames: s.classes,
	}
	scaleBytes(d.X, s.pix)
	return d, d.Validate()
}

func readImageFolder(dir string, opts ImageFolderOptions) (*imageSet, error) {
	classes := opts.Classes
	if classes == nil {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("image folder: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				classes = append(classes, e.Name())
			}
		}
		slices.Sort(classes)
	}
	if len(classes) == 0 {
		return nil, fmt.Errorf("image folder %s: no class directories", dir)
	}
	if opts.OnlyClasses {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("image folder: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !slices.Contains(classes, e.Name()) {
				return nil, fmt.Errorf("image folder %s: a class directory is %w of %d classes (remove it, or add its class to --classes)", dir, ErrOutsideClasses, len(classes))
			}
		}
	}
	var files []string
	var labels []int
	for k, c := range classes {
		ents, err := os.ReadDir(filepath.Join(dir, c))
		if errors.Is(err, os.ErrNotExist) && opts.Classes != nil {
			continue // a split may lack a class of the given list
		}
		if err != nil {
			return nil, fmt.Errorf("image folder: class %q: %w", c, err)
		}
		before := len(files)
		for _, e := range ents { // ReadDir returns entries sorted by name
			p := filepath.Join(dir, c, e.Name())
			if isImageFile(e.Name()) && isRegularFile(e, p) {
				files = append(files, p)
				labels = append(labels, k)
			}
		}
		if len(files) == before {
			// A class no image teaches would still widen the model and
			// be named in its outputs: almost always a mistake.
			return nil, fmt.Errorf("image folder %s: class folder %s holds no .jpg/.jpeg/.png files: add its images or remove the folder", dir, filepath.Join(dir, c))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("image folder %s: no .jpg/.jpeg/.png files", dir)
	}
	s, err := newImageSet(files[0], opts)
	if err != nil {
		return nil, err
	}
	s.labels, s.classes = labels, slices.Clone(classes)
	if s.h <= 0 || s.w <= 0 || int64(len(files))*int64(s.c)*int64(s.h)*int64(s.w) > 1<<33 {
		return nil, fmt.Errorf("image folder %s: %d images of %d×%d is too large", dir, len(files), s.h, s.w)
	}
	s.pix = make([]byte, len(files)*s.c*s.h*s.w)
	// Decode in parallel: JPEG decoding dominates an import of 60,000 images.
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = s.decodeInto(i, files[i])
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	// Report the first bad file (in file order) and how many others there
	// are, so the error stays one line however many images are broken.
	bad := 0
	var first error
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			bad++
		}
	}
	if bad > 1 {
		return nil, fmt.Errorf("%w (and %d more bad images)", first, bad-1)
	}
	if first != nil {
		return nil, first
	}
	return s, nil
}

// isRegularFile reports whether the entry is a regular file or a symbolic
// link to one (trees of links into a larger image folder are common). A
// dangling link counts, so that decoding reports it by name instead of the
// image silently going missing.
func isRegularFile(e fs.DirEntry, path string) bool {
	if e.Type().IsRegular() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(path)
	return err != nil || st.Mode().IsRegular()
}

// maxImagePixels bounds the size an image header may announce when no size
// is required (the first image of a folder sets it): a corrupt header must
// not make the decoder allocate gigabytes.
const maxImagePixels = 1 << 24

// decodeImage decodes the image at path; errors name the file. When w and h
// are positive the image must be w×h, which is checked on the header before
// the pixels are decoded.
func decodeImage(path string, w, h int) (image.Image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	img, err := decodeImageBytes(b, w, h)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", path, err)
	}
	return img, nil
}

// decodeImageBytes decodes a JPEG or PNG, checking the size its header
// announces first (w×h when both are positive, else at most maxImagePixels).
func decodeImageBytes(b []byte, w, h int) (image.Image, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	switch {
	case w > 0 && h > 0 && (cfg.Width != w || cfg.Height != h):
		return nil, fmt.Errorf("size %d×%d, want %d×%d (pass --resize %dx%d to resize every image)", cfg.Width, cfg.Height, w, h, h, w)
	case cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxImagePixels:
		return nil, fmt.Errorf("size %d×%d is empty or above %d pixels", cfg.Width, cfg.Height, maxImagePixels)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if bd := img.Bounds(); bd.Dx() != cfg.Width || bd.Dy() != cfg.Height {
		return nil, fmt.Errorf("decoded size %d×%d differs from the header's %d×%d", bd.Dx(), bd.Dy(), cfg.Width, cfg.Height)
	}
	return img, nil
}

// newImageSet returns an empty set with the channel count and size opts
// ask for, taking what they leave open from the image at first.
func newImageSet(first string, opts ImageFolderOptions) (*imageSet, error) {
	s := &imageSet{c: opts.Channels, h: opts.Height, w: opts.Width, convert: opts.Convert, resize: opts.Resize}
	switch {
	case s.c != 0 && s.c != 1 && s.c != 3:
		return nil, fmt.Errorf("images: %d channels; use 1 (grey) or 3 (RGB)", s.c)
	case s.resize && (s.h <= 0 || s.w <= 0):
		return nil, fmt.Errorf("images: resizing needs a size, got %d×%d", s.w, s.h)
	}
	if s.c == 0 || s.h <= 0 || s.w <= 0 {
		w, h := s.w, s.h
		if s.resize || w <= 0 || h <= 0 {
			w, h = 0, 0
		}
		img, err := decodeImage(first, w, h)
		if err != nil {
			return nil, err
		}
		if s.c == 0 {
			s.c = imageChannels(img)
		}
		if s.h <= 0 || s.w <= 0 {
			b := img.Bounds()
			s.h, s.w = b.Dy(), b.Dx()
		}
	}
	return s, nil
}

// imageChannels is 1 when img's file stores one grey channel (a grey PNG of
// 8 or 16 bits, a one-component JPEG), else 3. A palette image counts as
// colour even when its palette is grey: the rule reads the file's format,
// never its pixel values.
func imageChannels(img image.Image) int {
	switch img.ColorModel() {
	case color.GrayModel, color.Gray16Model:
		return 1
	}
	return 3
}

// decodeInto decodes image i into its CHW slot.
func (s *imageSet) decodeInto(i int, path string) error {
	w, h := s.w, s.h
	if s.resize {
		w, h = 0, 0 // any size: it is resized below
	}
	img, err := decodeImage(path, w, h)
	if err != nil {
		return err
	}
	if c := imageChannels(img); c != s.c && !s.convert {
		return fmt.Errorf("image %s: %s, but the images are %s; pass --channels %d to convert all to %s, or --channels %d", path, channelWord(c), channelWord(s.c), s.c, channelWord(s.c), c)
	}
	size := s.c * s.h * s.w
	out := s.pix[i*size : (i+1)*size]
	b := img.Bounds()
	if b.Dx() == s.w && b.Dy() == s.h {
		toCHW(out, img, s.c)
		return nil
	}
	tmp := make([]byte, s.c*b.Dx()*b.Dy())
	toCHW(tmp, img, s.c)
	ResizeBilinear(out, tmp, s.c, b.Dy(), b.Dx(), s.h, s.w)
	return nil
}

func channelWord(c int) string {
	if c == 1 {
		return "grey (1 channel)"
	}
	return "colour (3 channels)"
}

// toCHW writes img's c planes into out, which holds c·W·H bytes: for c = 3
// the R, G and B planes (non-premultiplied; a grey image gives three equal
// planes), for c = 1 the grey plane (colour converted by its
// luminance, see ImageFolderOptions.Convert).
func toCHW(out []byte, img image.Image, c int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	plane := w * h
	grey, isGrey := img.(*image.Gray)
	for y := range h {
		for x := range w {
			k := y*w + x
			if isGrey { // the common case for c = 1, read directly
				v := grey.Pix[y*grey.Stride+x]
				out[k] = v
				if c == 3 {
					out[plane+k], out[2*plane+k] = v, v
				}
				continue
			}
			p := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			if c == 1 {
				out[k] = luminance(p.R, p.G, p.B)
			} else {
				out[k], out[plane+k], out[2*plane+k] = p.R, p.G, p.B
			}
		}
	}
}

// luminance is ITU-R BT.601's 0.299 R + 0.587 G + 0.114 B rounded to the
// nearest level, in the 16-bit fixed point of Go's color.GrayModel (PIL's
// convert("L") uses the same weights).
func luminance(r, g, b uint8) uint8 {
	return uint8((19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 1<<15) >> 16)
}

// ResizeBilinear scales each of the c planes of src (c·h·w bytes, CHW) to
// oh×ow in dst: bilinear interpolation with half-pixel centres and edge
// clamping, the convention of PyTorch's interpolate(mode="bilinear",
// align_corners=False, antialias=False) and OpenCV's INTER_LINEAR, rounded to
// the nearest 8-bit level. Output pixel (y, x) samples the source at
// ((y+0.5)·h/oh − 0.5, (x+0.5)·w/ow − 0.5).
func ResizeBilinear(dst, src []byte, c, h, w, oh, ow int) {
	type tap struct {
		i0, i1 int
		f      float64
	}
	taps := func(n, on int) []tap {
		t := make([]tap, on)
		for o := range t {
			p := max((float64(o)+0.5)*float64(n)/float64(on)-0.5, 0)
			i0 := min(int(p), n-1)
			t[o] = tap{i0, min(i0+1, n-1), p - float64(i0)}
		}
		return t
	}
	ty, tx := taps(h, oh), taps(w, ow)
	for ch := range c {
		in := src[ch*h*w : (ch+1)*h*w]
		out := dst[ch*oh*ow : (ch+1)*oh*ow]
		for y, a := range ty {
			for x, b := range tx {
				top := float64(in[a.i0*w+b.i0])*(1-b.f) + float64(in[a.i0*w+b.i1])*b.f
				bot := float64(in[a.i1*w+b.i0])*(1-b.f) + float64(in[a.i1*w+b.i1])*b.f
				out[y*ow+x] = uint8(math.Round(top*(1-a.f) + bot*a.f))
			}
		}
	}
}

// ImportMarker is the file ImportCIFAR10 writes beside the batches to record
// their provenance; Verify then skips the canonical checksums (which an
// import from re-encoded images cannot match) and checks only the shapes.
const ImportMarker = "dptrain-import.txt"

// ImportReport says what ImportCIFAR10 wrote.
type ImportReport struct {
	TrainN, TestN int
	Classes       []string
	Files         []string
}

// ImportCIFAR10 converts an image-folder tree (from/train/<class>/*,
// from/test/<class>/*; 32×32 images, at most 10 classes) into the CIFAR-10
// binary layout in dir to: data_batch_1.bin … data_batch_5.bin (the
// training images in five near-equal consecutive parts), test_batch.bin and
// batches.meta.txt (one class name per line). Classes are the training
// split's class directories sorted by name, unless classes is given; for
// CIFAR-10 pass CIFAR10Classes to keep its label order. Each file is written
// to a temporary name and renamed, so an interrupted import leaves no
// half-written batch under a final name.
func ImportCIFAR10(from, to string, classes []string) (ImportReport, error) {
	var rep ImportReport
	opts := ImageFolderOptions{Classes: classes, Width: 32, Height: 32, Channels: 3, Convert: true}
	train, err := readImageFolder(filepath.Join(from, "train"), opts)
	if err != nil {
		return rep, badData(err)
	}
	if len(train.classes) > 10 {
		return rep, badData(fmt.Errorf("import %s: %d classes; the CIFAR-10 layout holds at most 10", from, len(train.classes)))
	}
	// A given class without training images is almost always a typo in
	// --classes; importing would silently leave its label empty.
	seen := make([]bool, len(train.classes))
	for _, y := range train.labels {
		seen[y] = true
	}
	for k, ok := range seen {
		if !ok {
			return rep, badData(fmt.Errorf("import %s: class %q has no images in %s", from, train.classes[k], filepath.Join(from, "train")))
		}
	}
	opts.Classes = train.classes
	test, err := readImageFolder(filepath.Join(from, "test"), opts)
	if err != nil {
		return rep, badData(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return rep, err
	}
	// Image folders list images class by class; the canonical batches are
	// mixed, and users take prefixes (--train-limit, one batch file), so
	// both splits are shuffled by a fixed, documented permutation.
	train.shuffle(importShuffleSeed)
	test.shuffle(importShuffleSeed + 1)
	n := len(train.labels)
	for b := range 5 {
		lo, hi := b*n/5, (b+1)*n/5
		p := filepath.Join(to, cifarTrain[b])
		if err := writeAtomic(p, cifarRecords(train, lo, hi)); err != nil {
			return rep, err
		}
		rep.Files = append(rep.Files, p)
	}
	p := filepath.Join(to, cifarTest[0])
	if err := writeAtomic(p, cifarRecords(test, 0, len(test.labels))); err != nil {
		return rep, err
	}
	meta := filepath.Join(to, "batches.meta.txt")
	if err := writeAtomic(meta, []byte(strings.Join(train.classes, "\n")+"\n")); err != nil {
		return rep, err
	}
	// The marker tells Verify that the canonical checksums do not apply.
	absFrom, _ := filepath.Abs(from)
	mark := filepath.Join(to, ImportMarker)
	note := fmt.Sprintf("imported by dptrain data import from the image folder %s\n%d train + %d test images; classes %s\n",
		absFrom, n, len(test.labels), strings.Join(train.classes, ","))
	if err := writeAtomic(mark, []byte(note)); err != nil {
		return rep, err
	}
	rep.Files = append(rep.Files, p, meta, mark)
	rep.TrainN, rep.TestN, rep.Classes = n, len(test.labels), train.classes
	return rep, nil
}

// importShuffleSeed fixes the order ImportCIFAR10 writes: re-importing the
// same tree gives the same files.
const importShuffleSeed = 20261122

// shuffle permutes the images in place with a seeded stream.
func (s *imageSet) shuffle(seed uint64) {
	n := len(s.labels)
	perm := rng.New(seed).Perm(n)
	size := len(s.pix) / max(n, 1)
	pix := make([]byte, len(s.pix))
	labels := make([]int, n)
	for i, j := range perm {
		copy(pix[i*size:(i+1)*size], s.pix[j*size:(j+1)*size])
		labels[i] = s.labels[j]
	}
	s.pix, s.labels = pix, labels
}

// cifarRecords encodes images lo..hi-1 as CIFAR-10 binary records.
func cifarRecords(s *imageSet, lo, hi int) []byte {
	out := make([]byte, 0, (hi-lo)*cifarRecord)
	for i := lo; i < hi; i++ {
		out = append(out, byte(s.labels[i]))
		out = append(out, s.pix[i*cifarPixels:(i+1)*cifarPixels]...)
	}
	return out
}

// writeAtomic writes b to path through a temporary file and a rename.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// ListImages returns the image files under dir, searched recursively (so
// both DIR/*.jpg and DIR/<class>/*.jpg work), as paths relative to dir in
// lexical order. Hidden files and directories are skipped.
func ListImages(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.IsDir() && isImageFile(e.Name()) && isRegularFile(e, p) {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, badData(fmt.Errorf("image folder %s: %w", dir, err))
	}
	if len(out) == 0 {
		return nil, badData(fmt.Errorf("image folder %s: no .jpg, .jpeg or .png files", dir))
	}
	return out, nil
}

// LoadImages decodes the images at paths into RGB planes in CHW order
// scaled to [0,1], as LoadImageFolder does: sample i occupies
// x[i·3·h·w:(i+1)·3·h·w]; grey images are expanded to three planes. Every
// image must be w×h, or, when w or h is 0, the size of the first. A file
// that does not decode or has another size is an error naming it.
func LoadImages(paths []string, w, h int) (x []float32, width, height int, err error) {
	x, _, width, height, err = LoadImagesAs(paths, ImageFolderOptions{Width: w, Height: h, Channels: 3, Convert: true})
	return x, width, height, err
}

// LoadImagesAs decodes the images at paths as LoadImageFolder decodes a
// folder with opts (Classes and OnlyClasses do not apply): sample i
// occupies x[i·c·h·w:(i+1)·c·h·w], in CHW order scaled to [0,1].
func LoadImagesAs(paths []string, opts ImageFolderOptions) (x []float32, c, w, h int, err error) {
	if len(paths) == 0 {
		return nil, 0, 0, 0, badData(errors.New("images: none given"))
	}
	s, err := newImageSet(paths[0], opts)
	if err != nil {
		return nil, 0, 0, 0, badData(err)
	}
	s.pix = make([]byte, len(paths)*s.c*s.w*s.h)
	for i, p := range paths {
		if err := s.decodeInto(i, p); err != nil {
			return nil, 0, 0, 0, badData(err)
		}
	}
	x = make([]float32, len(s.pix))
	scaleBytes(x, s.pix)
	return x, s.c, s.w, s.h, nil
}
