package datasets

import (
	"fmt"
	"slices"
	"strings"
)

// FromSlices builds a tabular dataset from rows of features and their class
// labels (0 … K−1; K is the largest label plus one). Every row must have the
// same length. The rows are copied.
func FromSlices(name string, rows [][]float32, labels []int) (*Dataset, error) {
	if len(rows) == 0 || len(rows) != len(labels) {
		return nil, badData(fmt.Errorf("dataset %s: %d rows and %d labels", name, len(rows), len(labels)))
	}
	d := len(rows[0])
	ds := &Dataset{Name: name, Shape: []int{d}, X: make([]float32, 0, len(rows)*d), Y: append([]int(nil), labels...)}
	for _, r := range rows {
		if len(r) != d {
			return nil, badData(fmt.Errorf("dataset %s: the rows do not all have the first row's %d values", name, d))
		}
		ds.X = append(ds.X, r...)
	}
	for _, y := range labels {
		ds.NumClasses = max(ds.NumClasses, y+1)
	}
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	if err := ds.CheckFinite(); err != nil {
		return nil, err
	}
	return ds, nil
}

// SetSchema names a table's feature columns (one per feature, distinct)
// and its classes (distinct; label i is classes[i]): the public schema a
// model trained on d records, so that the command line reads its inputs by
// column name and prints class names. classes, when given, is the public
// class set and fixes NumClasses (at least the largest label plus one).
// Either may be nil to leave it unset.
func (d *Dataset) SetSchema(columns, classes []string) error {
	distinct := func(what string, names []string) error {
		for i, n := range names {
			if strings.TrimSpace(n) != n || n == "" || slices.Contains(names[:i], n) {
				return fmt.Errorf("dataset %s: %s %d of %d is empty, padded with spaces or repeated", d.Name, what, i+1, len(names))
			}
		}
		return nil
	}
	if columns != nil {
		if len(d.Shape) != 1 || len(columns) != d.Dim() {
			return fmt.Errorf("dataset %s: %d column names for %d features of shape %v", d.Name, len(columns), d.Dim(), d.Shape)
		}
		if err := distinct("column", columns); err != nil {
			return err
		}
	}
	if classes != nil {
		if len(classes) < d.NumClasses {
			return fmt.Errorf("dataset %s: %d class names for labels up to %d", d.Name, len(classes), d.NumClasses-1)
		}
		if err := distinct("class", classes); err != nil {
			return err
		}
		d.ClassNames, d.NumClasses = slices.Clone(classes), len(classes)
	}
	if columns != nil {
		d.Columns = slices.Clone(columns)
	}
	return nil
}

// SelectColumns returns a copy of d's features in the order names gives,
// by column name: d's columns must be exactly names, in any order; a
// missing or unknown one is an error (wrapping ErrColumns) naming it.
func (d *Dataset) SelectColumns(names []string) (*Dataset, error) {
	var missing, extra []string
	order := make([]int, len(names))
	for i, n := range names {
		if order[i] = slices.Index(d.Columns, n); order[i] < 0 {
			missing = append(missing, n)
		}
	}
	for _, c := range d.Columns {
		if !slices.Contains(names, c) {
			extra = append(extra, c)
		}
	}
	if missing != nil || extra != nil {
		return nil, columnsError(missing, extra)
	}
	s := d.emptyLike(d.N())
	copy(s.Y, d.Y)
	dim := len(names)
	for r := range d.N() {
		for i, j := range order {
			s.X[r*dim+i] = d.X[r*dim+j]
		}
	}
	s.Columns = slices.Clone(names)
	return s, nil
}
