package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
)

// columnOrder maps the columns a model reads (want, in its order) to their
// positions in a table's columns (have): a column the model reads that is
// missing, or a column of the table that it does not read and that is not
// one of drop (label columns), is an error naming it. Never a silent shift.
func columnOrder(have, want []string, drop ...string) ([]int, error) {
	pos := make(map[string]int, len(have))
	for j, h := range have {
		h = strings.TrimSpace(h)
		if _, dup := pos[h]; dup {
			return nil, fmt.Errorf("column %q appears twice", h)
		}
		pos[h] = j
	}
	var missing, extra []string
	order := make([]int, len(want))
	for i, w := range want {
		j, ok := pos[w]
		if !ok {
			missing = append(missing, w)
		}
		order[i] = j
	}
	for _, h := range have {
		h = strings.TrimSpace(h)
		if !slices.Contains(want, h) && !slices.Contains(drop, h) {
			extra = append(extra, h)
		}
	}
	switch {
	case len(missing) > 0:
		return nil, fmt.Errorf("missing column %s that the model reads", quoteSome(missing))
	case len(extra) > 0:
		return nil, fmt.Errorf("column %s is not one the model reads (if it holds labels, name it with --label-column)", quoteSome(extra))
	}
	return order, nil
}

// quoteSome quotes up to five names, saying how many more there are.
func quoteSome(names []string) string {
	q := make([]string, 0, 5)
	for _, n := range names[:min(5, len(names))] {
		q = append(q, strconv.Quote(n))
	}
	s := strings.Join(q, ", ")
	if len(names) > 5 {
		s += fmt.Sprintf(" and %d more", len(names)-5)
	}
	return s
}

// readModelCSV reads the rows of path the model md describes: by column
// name when the model knows its columns (the file then needs a header
// line; its label column, or label, is dropped), else by position, d
// features, or d+1 columns of which the label column (label, else the
// model's, else the last) is dropped.
func readModelCSV(path string, md models.Meta, d int, label string) ([]float32, int, error) {
	if len(md.Input.Columns) != d {
		if label == "" && md.Input.Kind == "table" && md.Input.LabelColumn != "" {
			label = strconv.Itoa(md.Input.LabelIndex)
		}
		return readFeatureCSV(path, d, label)
	}
	if slices.Contains(md.Input.Columns, label) {
		return nil, 0, fmt.Errorf("--label-column %s names a column the model reads as a feature", label)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	cr := csv.NewReader(fh)
	header, err := cr.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("csv %s: %w", path, err)
	}
	if hasHeader, _ := datasets.SniffCSVHeader(path, datasets.NoColumn); !hasHeader {
		return nil, 0, fmt.Errorf("csv %s: no header line; the model reads its %d columns by name (%s)", path, d, quoteSome(md.Input.Columns))
	}
	order, err := columnOrder(header, md.Input.Columns, md.Input.LabelColumn, label)
	if err != nil {
		return nil, 0, fmt.Errorf("csv %s: %w", path, err)
	}
	var x []float32
	n := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("csv %s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		for i, j := range order {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[j]), 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, 0, fmt.Errorf("csv %s: line %d, column %q: %q is not a finite number", path, line, md.Input.Columns[i], rec[j])
			}
			x = append(x, float32(v))
		}
		n++
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("csv %s: no data rows", path)
	}
	return x, n, nil
}

// byColumnName reorders x (n rows, the features of path in file order,
// label column label dropped) into the order of the model's columns,
// refusing a missing or extra column by name.
func byColumnName(path, label string, cols []string, x []float32, n int) ([]float32, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	header, err := csv.NewReader(fh).Read()
	fh.Close()
	if err != nil {
		return nil, fmt.Errorf("csv %s: %w", path, err)
	}
	if hasHeader, _ := datasets.SniffCSVHeader(path, datasets.NoColumn); !hasHeader {
		return nil, fmt.Errorf("csv %s: no header line; the model reads its %d columns by name (%s)", path, len(cols), quoteSome(cols))
	}
	li := len(header) - 1
	if i, err := strconv.Atoi(label); err == nil {
		li = i
		if li < 0 {
			li += len(header)
		}
	} else if label != "" {
		li = slices.IndexFunc(header, func(h string) bool { return strings.TrimSpace(h) == label })
	}
	if li < 0 || li >= len(header) {
		return nil, fmt.Errorf("csv %s: no label column %q", path, label)
	}
	features := slices.Delete(slices.Clone(header), li, li+1)
	order, err := columnOrder(features, cols)
	if err != nil {
		return nil, fmt.Errorf("csv %s: %w", path, err)
	}
	d := len(cols)
	out := make([]float32, len(x))
	for r := range n {
		for i, j := range order {
			out[r*d+i] = x[r*d+j]
		}
	}
	return out, nil
}
