package trainer

import (
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/dptrain/dptrain/datasets"
)

// validateUserData checks the settings of a user's own data (datasets
// "csv" and "folder") and that a data directory is only given to a dataset
// that reads one.
func (c *Config) validateUserData(bad func(string, ...any)) {
	if c.Dataset == "npy" {
		c.validateNPY(bad)
		return
	}
	switch c.Dataset {
	case "csv":
		if c.TrainFile == "" || c.TestFile == "" {
			bad("dataset csv needs --train FILE and --test FILE")
		}
		if c.DataDir != "" {
			bad("data %q: dataset csv reads --train and --test, not a directory", c.DataDir)
		}
	case "folder":
		if c.DataDir == "" {
			bad("dataset folder needs --data DIR (holding train/<class>/*.png|jpg and test/<class>/…)")
		}
	case "embedded", "synthetic", InMemory:
		if c.DataDir != "" {
			bad("data %q: dataset %s reads no directory; name the dataset it holds (--dataset fashion-mnist, mnist, cifar10 or folder)", c.DataDir, c.Dataset)
		}
	}
	if c.Dataset != "csv" && (c.TrainFile != "" || c.TestFile != "" || c.LabelColumn != "") {
		bad("--train, --test and --label-column need --dataset csv (dataset is %q)", c.Dataset)
	}
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
func loadUserData(cfg *Config) (*datasets.Loaded, string, error) {
	if cfg.Dataset == "folder" {
		if _, err := os.Stat(cfg.DataDir); err != nil {
			return nil, "", userDataErr("data %s: %w", cfg.DataDir, err)
		}
		tr, err := datasets.LoadImageFolder(cfg.DataDir, "train", datasets.ImageFolderOptions{})
		if err != nil {
			return nil, "", err
		}
		te, err := datasets.LoadImageFolder(cfg.DataDir, "test", datasets.ImageFolderOptions{Classes: tr.ClassNames, Width: tr.Shape[2], Height: tr.Shape[1]})
		if err != nil {
			return nil, "", err
		}
		return &datasets.Loaded{Train: tr, Test: te}, fmt.Sprintf("image folder %s (%d classes)", cfg.DataDir, tr.NumClasses), nil
	}
	tr, err := loadCSV(cfg.TrainFile, cfg.LabelColumn)
	if err != nil {
		return nil, "", err
	}
	te, err := loadCSV(cfg.TestFile, cfg.LabelColumn)
	if err != nil {
		return nil, "", err
	}
	if tr.Dim() != te.Dim() {
		return nil, "", userDataErr("csv: %s has %d features, %s has %d", cfg.TrainFile, tr.Dim(), cfg.TestFile, te.Dim())
	}
	if tr.ClassNames != nil || te.ClassNames != nil {
		if !slices.Equal(tr.ClassNames, te.ClassNames) {
			return nil, "", userDataErr("csv: the label classes differ: %s has %v, %s has %v", cfg.TrainFile, tr.ClassNames, cfg.TestFile, te.ClassNames)
		}
	}
	k := max(tr.NumClasses, te.NumClasses)
	tr.NumClasses, te.NumClasses = k, k
	return &datasets.Loaded{Train: tr, Test: te}, fmt.Sprintf("csv %s / %s", cfg.TrainFile, cfg.TestFile), nil
}

// loadCSV reads one table; a first line with a non-numeric field is a
// header. label is a header name or a 0-based index ("": the last column).
func loadCSV(path, label string) (*datasets.Dataset, error) {
	opts := datasets.CSVOptions{LabelIndex: -1}
	if label != "" {
		if i, err := strconv.Atoi(label); err == nil {
			opts.LabelIndex = i
		} else {
			opts.Label = label
		}
	}
	header, err := datasets.SniffCSVHeader(path, opts.LabelIndex)
	if err != nil {
		return nil, userDataErr("%w", err)
	}
	if opts.Header = header; opts.Label != "" && !header {
		return nil, userDataErr("csv %s: label column %q is a name but the file has no header line", path, label)
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
