package trainer

import (
	"fmt"
	"strings"

	"github.com/dptrain/dptrain/datasets"
)

// npyPair splits dataset npy's "X.npy,y.npy" into its two paths.
func npyPair(s string) (x, y string, ok bool) {
	x, y, ok = strings.Cut(s, ",")
	x, y = strings.TrimSpace(x), strings.TrimSpace(y)
	return x, y, ok && x != "" && y != "" && !strings.Contains(y, ",")
}

// validateNPY checks dataset npy's settings: two file pairs, nothing else.
func (c *Config) validateNPY(bad func(string, ...any)) {
	for _, f := range []struct{ flag, v string }{{"train", c.TrainFile}, {"test", c.TestFile}} {
		if _, _, ok := npyPair(f.v); !ok {
			bad("dataset npy needs --%s FEATURES.npy,LABELS.npy (got %q)", f.flag, f.v)
		}
	}
	if c.DataDir != "" || c.LabelColumn != "" {
		bad("dataset npy reads --train and --test only (not --data or --label-column)")
	}
}

// loadNPYData reads dataset npy. The class set is the test labels' (largest
// + 1): public, never read off the training labels, and a training label
// outside it is refused with a message that names no training value.
// Float32 training features are memory-mapped (datasets.LoadNPY) and stay
// mapped for the process's life.
func loadNPYData(cfg *Config) (*datasets.Loaded, string, error) {
	tx, ty, _ := npyPair(cfg.TestFile)
	te, err := datasets.LoadNPY(tx, ty, datasets.NPYOptions{})
	if err != nil {
		return nil, "", err
	}
	x, y, _ := npyPair(cfg.TrainFile)
	tr, err := datasets.LoadNPY(x, y, datasets.NPYOptions{NumClasses: te.NumClasses, Shape: te.Shape})
	if err != nil {
		te.Close()
		return nil, "", err
	}
	how := "read into memory"
	if tr.Mapped() {
		how = "memory-mapped"
	}
	return &datasets.Loaded{Train: tr, Test: te}, fmt.Sprintf("%s / %s (%d classes from the test labels; training features %s)", cfg.TrainFile, cfg.TestFile, te.NumClasses, how), nil
}
