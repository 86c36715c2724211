package trainer

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dptrain/dptrain/datasets"
)

// validateUserData checks the settings of a user's own data (datasets
// "csv" and "folder") and that a data directory is only given to a dataset
// that reads one.
func (c *Config) validateUserData(bad func(string, ...any)) {
	if c.Dataset == DatasetNPY {
		c.validateNPY(bad)
		return
	}
	switch c.Dataset {
	case DatasetCSV:
		if c.TrainFile == "" || c.TestFile == "" {
			bad("dataset csv needs --train FILE and --test FILE")
		}
		if c.DataDir != "" {
			bad("data %q: dataset csv reads --train and --test, not a directory", c.DataDir)
		}
	case DatasetFolder:
		if c.DataDir == "" {
			bad("dataset folder needs --data DIR (holding train/<class>/*.png|jpg and test/<class>/…)")
		}
	case DatasetEmbedded, DatasetSynthetic, DatasetMemory:
		if c.DataDir != "" {
			bad("data %q: dataset %s reads no directory; name the dataset it holds (--dataset fashion-mnist, mnist, cifar10 or folder)", c.DataDir, c.Dataset)
		}
	}
	if c.Dataset != DatasetCSV && (c.TrainFile != "" || c.TestFile != "" || c.LabelColumn != "") {
		bad("--train, --test and --label-column need --dataset csv (dataset is %q)", c.Dataset)
	}
	if c.Channels != 0 || c.Resize != "" {
		if _, _, err := ParseResize(c.Resize); err != nil {
			bad("%v", err)
		}
		if c.Channels != 0 && c.Channels != 1 && c.Channels != 3 {
			bad("--channels %d: use 1 (grey) or 3 (RGB)", c.Channels)
		}
		if c.Dataset != DatasetFolder {
			bad("--channels and --resize need --dataset folder (dataset is %q)", c.Dataset)
		}
	}
	if c.Classes != nil {
		if c.Dataset != DatasetCSV && c.Dataset != DatasetFolder {
			bad("--classes needs --dataset csv or folder (dataset is %q)", c.Dataset)
		}
		for i, k := range c.Classes {
			if strings.TrimSpace(k) != k || k == "" || slices.Contains(c.Classes[:i], k) {
				bad("--classes %q: class %d is empty, padded with spaces or repeated", strings.Join(c.Classes, ","), i+1)
				break
			}
		}
	}
}

// ParseResize parses --resize "HxW" (height by width, e.g. 28x28); "" is
// 0, 0 (no resizing).
func ParseResize(s string) (h, w int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	hs, ws, ok := strings.Cut(strings.ToLower(s), "x")
	h, err1 := strconv.Atoi(hs)
	w, err2 := strconv.Atoi(ws)
	if !ok || err1 != nil || err2 != nil || h <= 0 || w <= 0 || h > 4096 || w > 4096 {
		return 0, 0, fmt.Errorf("--resize %q: want HEIGHTxWIDTH, e.g. 28x28 (each 1 to 4096)", s)
	}
	return h, w, nil
}

// badUserData marks an error as the data's fault (exit status 2 in the
// CLI) without changing its message.
type badUserData struct{ error }

func (e badUserData) Unwrap() []error { return []error{e.error, datasets.ErrBadData} }

func userDataErr(format string, args ...any) error {
	return badUserData{fmt.Errorf(format, args...)}
}

// loadUserData reads dataset "csv" (two tables) or "folder" (an image
// tree with train/ and test/ splits, as 'data import' reads).
//
// The class set (and so the model's output size) must be public: it is
// Config.Classes, else the test set's labels (public, like every test-set
// figure), never the training data's. A training record whose label is
// outside it is refused, by line and without its value: dropping it would
// change n, and naming it would print a training value.
func loadUserData(cfg *Config) (*datasets.Loaded, string, error) {
	if cfg.Dataset == DatasetFolder {
		if _, err := os.Stat(cfg.DataDir); err != nil {
			return nil, "", userDataErr("data %s: %w", cfg.DataDir, err)
		}
		// The shape comes from the flags, else from the (public) test images;
		// the training images must match it or be converted as asked.
		h, w, _ := ParseResize(cfg.Resize)
		convert := datasets.ImageFolderOptions{Channels: cfg.Channels, Convert: cfg.Channels != 0, Resize: h > 0, Width: w, Height: h}
		teOpts := convert
		teOpts.Classes, teOpts.OnlyClasses = cfg.Classes, cfg.Classes != nil
		te, err := datasets.LoadImageFolder(cfg.DataDir, "test", teOpts)
		if err != nil {
			return nil, "", err
		}
		trOpts := convert
		trOpts.Classes, trOpts.OnlyClasses = te.ClassNames, true
		trOpts.Channels, trOpts.Height, trOpts.Width = te.Shape[0], te.Shape[1], te.Shape[2]
		tr, err := datasets.LoadImageFolder(cfg.DataDir, "train", trOpts)
		if err != nil {
			return nil, "", err
		}
		return &datasets.Loaded{Train: tr, Test: te}, fmt.Sprintf("image folder %s (%d classes)", cfg.DataDir, te.NumClasses), nil
	}
	te, err := loadCSV(cfg.TestFile, cfg.LabelColumn, cfg.Classes, 0, nil)
	if err != nil {
		return nil, "", err
	}
	// The training table is read by the test table's column names, in the
	// test table's order: the order the weights use and model.bin records.
	label := cfg.LabelColumn
	if te.Columns != nil {
		label = te.LabelColumn
	}
	tr, err := loadCSV(cfg.TrainFile, label, te.ClassNames, te.NumClasses, te.Columns)
	if err != nil {
		if errors.Is(err, datasets.ErrColumns) {
			return nil, "", userDataErr("%w (the columns of %s and %s are matched by name; the test file has %s)", err, cfg.TrainFile, cfg.TestFile, datasets.QuoteSome(te.Columns))
		}
		return nil, "", err
	}
	if tr.Columns != nil && te.Columns == nil {
		return nil, "", userDataErr("csv: %s has a header line and %s has none; give both a header (columns are matched by name) or neither", cfg.TrainFile, cfg.TestFile)
	}
	if tr.Dim() != te.Dim() {
		return nil, "", userDataErr("csv: %s has %d features, %s has %d", cfg.TrainFile, tr.Dim(), cfg.TestFile, te.Dim())
	}
	src := fmt.Sprintf("csv %s / %s", cfg.TrainFile, cfg.TestFile)
	if cfg.TrainFile == cfg.TestFile {
		src = "csv " + cfg.TestFile // eval reads one table
	}
	return &datasets.Loaded{Train: tr, Test: te}, src, nil
}

// loadCSV reads one table; a first line of text above a data row is a
// header. label is a header name or a 0-based index ("": the last column).
// classes (names) or k > 0 (integer labels) is the public class set; both
// unset: the table's own labels. columns, when set, are the feature
// columns to read by name, in order.
func loadCSV(path, label string, classes []string, k int, columns []string) (*datasets.Dataset, error) {
	opts := datasets.CSVOptions{SniffHeader: true, LabelIndex: -1, Classes: classes, Columns: columns}
	if classes == nil {
		opts.NumClasses = k
	}
	if label != "" {
		if i, err := strconv.Atoi(label); err == nil && columns == nil {
			opts.LabelIndex = i
		} else {
			opts.Label = label
		}
	}
	return datasets.LoadCSV(path, opts)
}

// LoadDataset loads the train and test splits cfg's data settings name
// (Dataset, DataDir, TrainFile, TestFile, LabelColumn), without limits or
// feature maps: what 'dptrain eval' evaluates a saved model on.
func LoadDataset(cfg Config) (*datasets.Loaded, string, error) {
	if err := cfg.Validate(); err != nil {
		return nil, "", err
	}
	return loadNamed(cfg.Dataset, &cfg)
}
