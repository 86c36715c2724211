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
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/dptrain/dptrain/internal/rng"
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
}

// imageSet is a decoded image folder: pixel bytes in CHW (R, G, B planes)
// order, as CIFAR-10 stores them.
type imageSet struct {
	pix     []byte
	labels  []int
	classes []string
	h, w    int
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
// with Shape [3,H,W] (RGB planes, pixels scaled to [0,1]); grey images are
// expanded to three equal planes. Within a class, files are read in name
// order. A file that does not decode, or has another size, is an error
// naming the file.
func LoadImageFolder(root, split string, opts ImageFolderOptions) (*Dataset, error) {
	s, err := readImageFolder(filepath.Join(root, split), opts)
	if err != nil {
		return nil, badData(err)
	}
	d := &Dataset{
		Name:       filepath.Base(filepath.Clean(root)),
		X:          make([]float32, len(s.pix)),
		Y:          s.labels,
		Shape:      []int{3, s.h, s.w},
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
		for _, e := range ents { // ReadDir returns entries sorted by name
			p := filepath.Join(dir, c, e.Name())
			if isImageFile(e.Name()) && isRegularFile(e, p) {
				files = append(files, p)
				labels = append(labels, k)
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("image folder %s: no .jpg/.jpeg/.png files", dir)
	}
	s := &imageSet{labels: labels, classes: slices.Clone(classes), h: opts.Height, w: opts.Width}
	if s.h == 0 || s.w == 0 {
		img, err := decodeImage(files[0], 0, 0)
		if err != nil {
			return nil, err
		}
		b := img.Bounds()
		s.h, s.w = b.Dy(), b.Dx()
	}
	if s.h <= 0 || s.w <= 0 || int64(len(files))*3*int64(s.h)*int64(s.w) > 1<<33 {
		return nil, fmt.Errorf("image folder %s: %d images of %d×%d is too large", dir, len(files), s.h, s.w)
	}
	s.pix = make([]byte, len(files)*3*s.h*s.w)
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
		return nil, fmt.Errorf("size %d×%d, want %d×%d", cfg.Width, cfg.Height, w, h)
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

// decodeInto decodes image i into its CHW slot.
func (s *imageSet) decodeInto(i int, path string) error {
	img, err := decodeImage(path, s.w, s.h)
	if err != nil {
		return err
	}
	plane := s.h * s.w
	toCHW(s.pix[i*3*plane:(i+1)*3*plane], img)
	return nil
}

// toCHW writes img's R, G and B planes (non-premultiplied; grey expands to
// three equal planes) into out, which holds 3·W·H bytes.
func toCHW(out []byte, img image.Image) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	plane := w * h
	for y := range h {
		for x := range w {
			c := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			k := y*w + x
			out[k], out[plane+k], out[2*plane+k] = c.R, c.G, c.B
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
	opts := ImageFolderOptions{Classes: classes, Width: 32, Height: 32}
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
	perm := rng.NewSeeded(seed).Perm(n)
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
// x[i·3·h·w:(i+1)·3·h·w]. Every image must be w×h, or, when w or h is 0,
// the size of the first. A file that does not decode or has another size
// is an error naming it.
func LoadImages(paths []string, w, h int) (x []float32, width, height int, err error) {
	if len(paths) == 0 {
		return nil, 0, 0, badData(errors.New("images: none given"))
	}
	if w <= 0 || h <= 0 {
		img, err := decodeImage(paths[0], 0, 0)
		if err != nil {
			return nil, 0, 0, badData(err)
		}
		w, h = img.Bounds().Dx(), img.Bounds().Dy()
	}
	s := &imageSet{pix: make([]byte, len(paths)*3*w*h), w: w, h: h}
	for i, p := range paths {
		if err := s.decodeInto(i, p); err != nil {
			return nil, 0, 0, badData(err)
		}
	}
	x = make([]float32, len(s.pix))
	scaleBytes(x, s.pix)
	return x, w, h, nil
}
