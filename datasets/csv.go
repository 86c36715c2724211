package datasets

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
)

// CSVOptions says how to read a CSV table.
type CSVOptions struct {
	// Header: the first record names the columns.
	Header bool
	// Label names the label column (needs Header). When empty, LabelIndex
	// is used; a negative LabelIndex counts from the end (-1: last column).
	Label      string
	LabelIndex int
	// AllowMissing accepts missing feature values ("", "NA", "NaN", "?",
	// any case), stored as NaN. Without it a missing value is an error.
	// Labels may never be missing.
	AllowMissing bool
	// Comma is the field separator; 0 means ','.
	Comma rune
	// Classes, when set, is the public class set: a label must equal one
	// of its entries (label Classes[i] is class i), and Classes becomes
	// ClassNames. NumClasses, when positive and Classes is nil, is the
	// public count of integer labels: every label must be an integer in
	// [0, NumClasses). A label outside the set is an error that names the
	// label column, never the value or its line (it may be a training
	// record's).
	Classes    []string
	NumClasses int
}

// ErrOutsideClasses is wrapped by the error for a label outside the public
// class set (CSVOptions.Classes or NumClasses).
var ErrOutsideClasses = errors.New("label outside the public class set")

// isMissing reports whether a CSV field denotes a missing value.
func isMissing(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "na", "nan", "?":
		return true
	}
	return false
}

// ReadCSV reads a table of numeric features and one label column. Labels
// that are all non-negative integers are used as class indices
// (NumClasses = max+1); otherwise the distinct label strings, sorted, become
// classes 0..k-1 and are kept in ClassNames. Infinite feature values are
// rejected. name is the dataset name and appears in errors.
func ReadCSV(r io.Reader, name string, opts CSVOptions) (*Dataset, error) {
	cr := csv.NewReader(r)
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.ReuseRecord = false
	cr.FieldsPerRecord = 0 // the first record fixes the width
	var header []string
	if opts.Header {
		h, err := cr.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("empty file (no header)")
			}
			return nil, err
		}
		header = h
	}
	var rows [][]string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvSyntax(err)
		}
		rows = append(rows, rec)
	}
	if len(rows) == 0 {
		return nil, errors.New("no data rows")
	}
	width := len(rows[0])
	if header != nil {
		width = len(header)
	}
	if width < 2 {
		return nil, fmt.Errorf("%d column(s): need at least one feature and a label", width)
	}
	li, err := labelColumn(header, width, opts)
	if err != nil {
		return nil, err
	}
	// Messages name the file (the caller) and the column, never a cell's
	// value or a record's line: the file may hold training records.
	col := func(j int) string {
		if header != nil {
			return fmt.Sprintf("column %d (%q)", j+1, strings.TrimSpace(header[j]))
		}
		return fmt.Sprintf("column %d", j+1)
	}
	dim := width - 1
	d := &Dataset{Name: name, X: make([]float32, 0, len(rows)*dim), Y: make([]int, len(rows)), Shape: []int{dim}}
	labels := make([]string, len(rows))
	for i, rec := range rows {
		if len(rec) != width {
			return nil, fmt.Errorf("a row does not have the %d fields of the others", width)
		}
		for j, f := range rec {
			if j == li {
				if isMissing(f) {
					return nil, fmt.Errorf("label %s: a label is missing", col(li))
				}
				labels[i] = strings.TrimSpace(f)
				continue
			}
			if isMissing(f) {
				if !opts.AllowMissing {
					return nil, fmt.Errorf("%s: a value is missing, which is not allowed here", col(j))
				}
				d.X = append(d.X, float32(math.NaN()))
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("%s: a value is not a number", col(j))
			}
			if math.IsInf(v, 0) || math.IsInf(float64(float32(v)), 0) {
				return nil, fmt.Errorf("%s: a value is infinite or overflows float32", col(j))
			}
			d.X = append(d.X, float32(v))
		}
	}
	if opts.Classes != nil || opts.NumClasses > 0 {
		if err := setPublicLabels(d, labels, opts, col(li)); err != nil {
			return nil, err
		}
		return d, d.Validate()
	}
	if err := setLabels(d, labels); err != nil {
		if errors.Is(err, ErrNonIntegerLabels) {
			col := fmt.Sprintf("column %d", li+1)
			if header != nil {
				col = fmt.Sprintf("column %q", strings.TrimSpace(header[li]))
			}
			if opts.Label == "" && opts.LabelIndex == -1 {
				col += " (the last, taken as the label by default)"
			}
			return nil, fmt.Errorf("label %s: %w; name the label column with --label-column NAME or 0-based INDEX", col, err)
		}
		return nil, err
	}
	return d, d.Validate()
}

// ErrNonIntegerLabels is wrapped by the error for a label column whose
// values are all numbers but not all integers: almost always a feature
// taken for the label. The error names the column, never a value.
var ErrNonIntegerLabels = errors.New("the values are numbers but not all integers, so not class labels")

// labelColumn resolves the label column index.
func labelColumn(header []string, width int, opts CSVOptions) (int, error) {
	if opts.Label != "" {
		if header == nil {
			return 0, fmt.Errorf("label column %q named but the file has no header", opts.Label)
		}
		for j, h := range header {
			if strings.TrimSpace(h) == opts.Label {
				return j, nil
			}
		}
		return 0, fmt.Errorf("no column named %q in header %q", opts.Label, header)
	}
	li := opts.LabelIndex
	if li < 0 {
		li += width
	}
	if li < 0 || li >= width {
		return 0, fmt.Errorf("label column index %d outside the %d columns", opts.LabelIndex, width)
	}
	return li, nil
}

// maxCSVClasses bounds integer class labels so a stray large number cannot
// create millions of empty classes.
const maxCSVClasses = 1 << 16

// setLabels turns label strings into class indices.
func setLabels(d *Dataset, labels []string) error {
	ints := make([]int, len(labels))
	allInts := true
	maxv := 0
	for i, s := range labels {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v >= maxCSVClasses {
			allInts = false
			break
		}
		ints[i] = v
		maxv = max(maxv, v)
	}
	if allInts {
		copy(d.Y, ints)
		d.NumClasses = maxv + 1
		return nil
	}
	// Numbers with a fraction among numbers only: a feature column, not
	// labels (labels such as -1/1 or pandas' 0.0/1.0 stay class names).
	numbers, fraction := true, false
	for _, s := range labels {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			numbers = false
			break
		}
		fraction = fraction || v != math.Trunc(v)
	}
	if numbers && fraction {
		return ErrNonIntegerLabels
	}
	names := slices.Clone(labels)
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) > maxCSVClasses {
		return fmt.Errorf("%d distinct labels: the label column looks continuous", len(names))
	}
	for i, s := range labels {
		d.Y[i], _ = slices.BinarySearch(names, s)
	}
	d.NumClasses = len(names)
	d.ClassNames = names
	return nil
}

// setPublicLabels maps labels onto the public class set of opts. The class
// count never depends on the labels read, and an error names the label
// column (col), never a label or its line.
func setPublicLabels(d *Dataset, labels []string, opts CSVOptions, col string) error {
	n := opts.NumClasses
	if opts.Classes != nil {
		n = len(opts.Classes)
	}
	outside := fmt.Errorf("label %s: a record's %w of %d classes (remove the record, or add its class to --classes)", col, ErrOutsideClasses, n)
	for i, s := range labels {
		k := -1
		if opts.Classes != nil {
			k = slices.Index(opts.Classes, s)
		} else if v, err := strconv.Atoi(s); err == nil && v >= 0 && v < opts.NumClasses {
			k = v
		}
		if k < 0 {
			return outside
		}
		d.Y[i] = k
	}
	d.NumClasses, d.ClassNames = opts.NumClasses, nil
	if opts.Classes != nil {
		d.NumClasses, d.ClassNames = len(opts.Classes), slices.Clone(opts.Classes)
	}
	return nil
}

// LoadCSV reads a CSV file; errors name the file.
func LoadCSV(path string, opts CSVOptions) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badData(err)
	}
	defer f.Close()
	d, err := ReadCSV(f, path, opts)
	if err != nil {
		return nil, badData(fmt.Errorf("csv %s: %w", path, err))
	}
	return d, nil
}

// NoColumn passed to SniffCSVHeader ignores no column.
const NoColumn = math.MinInt

// SniffCSVHeader reports whether a CSV file's first line is a header: a
// field that is not a number, not counting column ignore (the label
// column, which may hold class names; negative counts from the end,
// NoColumn: none).
func SniffCSVHeader(path string, ignore int) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, badData(fmt.Errorf("csv: %w", err))
	}
	defer f.Close()
	rec, err := csv.NewReader(f).Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return false, badData(fmt.Errorf("csv %s: empty file", path))
		}
		return false, badData(fmt.Errorf("csv %s: %w", path, err))
	}
	if ignore < 0 && ignore != NoColumn {
		ignore += len(rec)
	}
	for i, field := range rec {
		if i == ignore {
			continue
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(field), 64); err != nil {
			return true, nil
		}
	}
	return false, nil
}

// LoadFeatureCSV reads a CSV table whose every column is a feature (no
// labels), skipping a header line when header is set: n rows of d finite
// values, row-major.
func LoadFeatureCSV(path string, header bool) (x []float32, n, d int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, badData(fmt.Errorf("csv: %w", err))
	}
	defer f.Close()
	cr := csv.NewReader(f)
	if header {
		if _, err := cr.Read(); err != nil {
			return nil, 0, 0, badData(fmt.Errorf("csv %s: %w", path, err))
		}
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, 0, badData(fmt.Errorf("csv %s: %w", path, csvSyntax(err)))
		}
		d = len(rec)
		for j, s := range rec {
			v, perr := strconv.ParseFloat(strings.TrimSpace(s), 32)
			if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, 0, 0, badData(fmt.Errorf("csv %s: column %d: a value is not a finite number", path, j+1))
			}
			x = append(x, float32(v))
		}
		n++
	}
	if n == 0 {
		return nil, 0, 0, badData(fmt.Errorf("csv %s: no rows", path))
	}
	return x, n, d, nil
}

// csvSyntax is a CSV syntax error without its line and column (a position
// in a file that may hold training records): what went wrong only.
func csvSyntax(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("malformed CSV: %w", pe.Err)
	}
	return err
}
