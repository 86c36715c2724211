package datasets

import "fmt"

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
