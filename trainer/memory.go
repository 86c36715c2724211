package trainer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dptrain/dptrain/datasets"
)

// InMemory is the dataset name of a run whose data the caller passes in
// Options.Train and Options.Test.
const InMemory = DatasetMemory

// holdOut fixes the test set of a run on the caller's data: Options.Test,
// or Options.HoldOut of Train's rows held out by a seeded split. The test
// set's figures are published, so a silent default split would publish
// figures of private rows under a claim that says it covers them.
func (o *Options) holdOut(seed uint64) error {
	switch {
	case o.Test != nil && o.HoldOut != 0:
		return fmt.Errorf("%w: dataset memory: set Options.Test or Options.HoldOut, not both", ErrInvalidConfig)
	case o.Test != nil:
		return nil
	case o.HoldOut == 0:
		return fmt.Errorf("%w: dataset memory: Options.Test is nil; pass a public test set, or set Options.HoldOut to hold a fraction of Train out as the test set (those rows are then not protected)", ErrInvalidConfig)
	case !(o.HoldOut > 0 && o.HoldOut < 1):
		return fmt.Errorf("%w: dataset memory: Options.HoldOut %v outside (0, 1)", ErrInvalidConfig, o.HoldOut)
	}
	if err := o.Train.Validate(); err != nil {
		return fmt.Errorf("dataset memory (train): %w", err)
	}
	tr, te := o.Train.Split(1-o.HoldOut, seed)
	if tr.N() == 0 || te.N() == 0 {
		return fmt.Errorf("%w: dataset memory: Options.HoldOut %v of %d rows leaves an empty split", ErrInvalidConfig, o.HoldOut, o.Train.N())
	}
	o.Train, o.Test, o.heldOut = tr, te, te.N()
	return nil
}

// inMemory checks the caller's data. Columns named on both sides are
// matched by name (the training rows are put in the test set's order).
func inMemory(train, test *datasets.Dataset) (*datasets.Loaded, string, error) {
	if train == nil || test == nil {
		return nil, "", errors.New(`dataset memory: pass the data in Options.Train and Options.Test (or Options.HoldOut)`)
	}
	if err := train.Validate(); err != nil {
		return nil, "", fmt.Errorf("dataset memory (train): %w", err)
	}
	src := fmt.Sprintf("in-memory data %q (%d rows)", train.Name, train.N())
	if err := test.Validate(); err != nil {
		return nil, "", fmt.Errorf("dataset memory (test): %w", err)
	}
	if (train.Columns == nil) != (test.Columns == nil) {
		return nil, "", fmt.Errorf("dataset memory: name the columns of both Train and Test, or of neither")
	}
	if train.Columns != nil && !slices.Equal(train.Columns, test.Columns) {
		tr, err := train.SelectColumns(test.Columns)
		if err != nil {
			return nil, "", fmt.Errorf("dataset memory (train against the test set's columns): %w", err)
		}
		train = tr
	}
	if train.ClassNames != nil && test.ClassNames != nil && !slices.Equal(train.ClassNames, test.ClassNames) {
		return nil, "", fmt.Errorf("dataset memory: Train names the classes %s, Test %s", datasets.QuoteSome(train.ClassNames), datasets.QuoteSome(test.ClassNames))
	}
	if test.ClassNames != nil {
		// The test set's names are the public class set.
		if train.NumClasses > len(test.ClassNames) {
			return nil, "", fmt.Errorf("%w: dataset memory: a training label is %w of %d classes Test names", datasets.ErrBadData, datasets.ErrOutsideClasses, len(test.ClassNames))
		}
		named := *train
		named.ClassNames, named.NumClasses = test.ClassNames, len(test.ClassNames)
		train = &named
	}
	if test.Dim() != train.Dim() {
		return nil, "", fmt.Errorf("dataset memory: train has %d features per row, test %d", train.Dim(), test.Dim())
	}
	return &datasets.Loaded{Train: train, Test: test}, src, nil
}
