package trainer

import (
	"errors"
	"fmt"

	"github.com/dptrain/dptrain/datasets"
)

// InMemory is the dataset name of a run whose data the caller passes in
// Options.Train and Options.Test.
const InMemory = DatasetMemory

// inMemory checks the caller's data; test nil is a seeded 80/20 split of
// train.
func inMemory(train, test *datasets.Dataset, seed uint64) (*datasets.Loaded, string, error) {
	if train == nil {
		return nil, "", errors.New(`dataset memory: pass the data in Options.Train (and Options.Test)`)
	}
	if err := train.Validate(); err != nil {
		return nil, "", fmt.Errorf("dataset memory (train): %w", err)
	}
	src := fmt.Sprintf("in-memory data %q (%d rows)", train.Name, train.N())
	if test == nil {
		tr, te := train.Split(0.8, seed)
		return &datasets.Loaded{Train: tr, Test: te}, src + ", 80/20 split", nil
	}
	if err := test.Validate(); err != nil {
		return nil, "", fmt.Errorf("dataset memory (test): %w", err)
	}
	if test.Dim() != train.Dim() {
		return nil, "", fmt.Errorf("dataset memory: train has %d features per row, test %d", train.Dim(), test.Dim())
	}
	return &datasets.Loaded{Train: train, Test: test}, src, nil
}
