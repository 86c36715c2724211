package main

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
)

// readModelCSV reads the rows of path the model md describes, with the one
// CSV reader train and eval use: by column name when the model knows its
// columns (the file then needs a header line; its label column, label or
// the model's, is dropped when present, and any other column is refused),
// else by position, d features, or d+1 columns of which the label column
// (label, else the model's, else the last) is dropped.
func readModelCSV(path string, md models.Meta, d int, label string) ([]float32, int, error) {
	opts := datasets.CSVOptions{SniffHeader: true, LabelOptional: true, LabelIndex: -1}
	if len(md.Input.Columns) == d {
		if slices.Contains(md.Input.Columns, label) {
			return nil, 0, fmt.Errorf("--label-column %s names a column the model reads as a feature", label)
		}
		opts.Columns, opts.Label = md.Input.Columns, label
		if label == "" {
			opts.Label = md.Input.LabelColumn
		}
	} else {
		if label == "" && md.Input.Kind == "table" && md.Input.LabelColumn != "" {
			label = strconv.Itoa(md.Input.LabelIndex)
		}
		if i, err := strconv.Atoi(label); err == nil {
			opts.LabelIndex = i
		} else {
			opts.Label = label
		}
		opts.Features = d
	}
	t, err := datasets.LoadTable(path, opts)
	if err != nil {
		return nil, 0, err
	}
	if t.Dim != d {
		return nil, 0, fmt.Errorf("csv %s: %d features per row after dropping the label column; the model takes %d (give it %d columns, or %d with a label column)", path, t.Dim, d, d, d+1)
	}
	return t.X, t.N, nil
}
