package datasets

import (
	"bufio"
	"bytes"
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

// CSVOptions says how to read a CSV table. One reader serves training,
// evaluation and prediction, so a file is read the same way everywhere: a
// byte-order mark is dropped, an empty file, a header naming a column twice
// and a ragged row are errors. An error names the file and the column,
// never a cell's value nor a record's position (the file may hold private
// training records; see docs/tabular.md).
type CSVOptions struct {
	// Header: the first record names the columns. SniffHeader: decide it
	// from the first record, a header when one of its fields other than the
	// label column's is neither a number nor a missing-value token.
	Header      bool
	SniffHeader bool
	// Label names the label column (needs a header). When empty, LabelIndex
	// is used; a negative LabelIndex counts from the end (-1: last column).
	Label      string
	LabelIndex int
	// NoLabel: no column holds labels, every column (or every one of
	// Columns) is a feature. LabelOptional: the label column may be absent
	// (a table to predict): with Columns, when no header field is Label;
	// without, when a record has exactly Features fields.
	NoLabel       bool
	LabelOptional bool
	Features      int
	// Columns, when set, names the feature columns to read, in this order
	// (needs a header): the table's columns must be exactly these and the
	// label column (Label, by name), in any order. A missing or an unknown
	// column is an error naming it.
	Columns []string
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
	// [0, NumClasses). A label outside the set is an error that names its
	// column but neither its value nor its line.
	Classes    []string
	NumClasses int
}

// ErrOutsideClasses is wrapped by the error for a label outside the public
// class set (CSVOptions.Classes or NumClasses).
var ErrOutsideClasses = errors.New("label outside the public class set")

// ErrColumns is wrapped by the error for a table whose columns are not the
// ones asked for (CSVOptions.Columns): the message names the missing and
// the unknown columns.
var ErrColumns = errors.New("columns differ")

// isMissing reports whether a CSV field denotes a missing value.
func isMissing(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "na", "nan", "?":
		return true
	}
	return false
}

// Table is a CSV table's feature values, its schema and its label column's
// text.
type Table struct {
	// X holds N rows of len(Columns) (or Dim) features each, row-major.
	X []float32
	N int
	// Dim is the number of features per row.
	Dim int
	// Columns names the features in the order of X (nil without a header).
	Columns []string
	// Labels holds each row's label text, trimmed; nil when the table has
	// no label column. LabelColumn names it (its 0-based index as text
	// without a header) and LabelIndex is its position (-1: none).
	Labels      []string
	LabelColumn string
	LabelIndex  int
}

// utf8BOM is the byte-order mark spreadsheet programs write first.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// csvReader returns a CSV reader of r without its byte-order mark.
func csvReader(r io.Reader, comma rune) *csv.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	cr := csv.NewReader(br)
	if comma != 0 {
		cr.Comma = comma
	}
	cr.FieldsPerRecord = 0 // the first record fixes the width
	return cr
}

// csvError drops the position encoding/csv puts in a parse error: the
// line of a training file is a record's position.
func csvError(err error) error {
	if pe, ok := errors.AsType[*csv.ParseError](err); ok {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return errors.New("a row with the wrong number of fields (every row needs as many as the first)")
		}
		return fmt.Errorf("malformed CSV: %w", pe.Err)
	}
	return err
}

// isNumberOrMissing reports whether a field reads as a value of a data row.
func isNumberOrMissing(s string) bool {
	if isMissing(s) {
		return true
	}
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// ReadTable reads a CSV table of numeric features and at most one label
// column (see CSVOptions). name appears in no message; LoadTable adds the
// file's.
func ReadTable(r io.Reader, opts CSVOptions) (*Table, error) {
	cr := csvReader(r, opts.Comma)
	first, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty file")
	}
	if err != nil {
		return nil, csvError(err)
	}
	width := len(first)
	t := &Table{LabelIndex: -1}
	li, hasLabel := -1, false
	if !opts.NoLabel && opts.Label == "" && opts.Columns == nil {
		li = opts.LabelIndex
		if li < 0 {
			li += width
		}
		hasLabel = !(opts.LabelOptional && width == opts.Features)
		if hasLabel && (li < 0 || li >= width) {
			return nil, fmt.Errorf("label column index %d outside the %d columns", opts.LabelIndex, width)
		}
	}
	header := opts.Header
	var second []string // read ahead to tell a header from a data row
	if opts.SniffHeader {
		ignore := NoColumn
		if hasLabel {
			ignore = li
		}
		if second, err = cr.Read(); err != nil && !errors.Is(err, io.EOF) {
			return nil, csvError(err)
		}
		header = looksLikeHeader(first, second, ignore)
	}
	var names []string
	if header {
		names = make([]string, width)
		for j, f := range first {
			names[j] = strings.TrimSpace(f)
			if slices.Contains(names[:j], names[j]) {
				return nil, fmt.Errorf("column %q appears twice in the header", names[j])
			}
		}
	}
	if (opts.Label != "" || opts.Columns != nil) && names == nil {
		what := fmt.Sprintf("label column %q is a name", opts.Label)
		if opts.Columns != nil {
			what = fmt.Sprintf("the columns are read by name (%s)", QuoteSome(opts.Columns))
		}
		return nil, fmt.Errorf("%s but the file has no header line", what)
	}
	if opts.Label != "" && !opts.NoLabel {
		li = slices.Index(names, opts.Label)
		hasLabel = li >= 0
		if !hasLabel && !opts.LabelOptional {
			return nil, fmt.Errorf("no column named %q in the header (columns %s)", opts.Label, QuoteSome(names))
		}
	}
	// order[i] is the file column of feature i.
	var order []int
	if opts.Columns != nil {
		var missing, extra []string
		for _, c := range opts.Columns {
			j := slices.Index(names, c)
			if j < 0 {
				missing = append(missing, c)
			}
			order = append(order, j)
		}
		for j, h := range names {
			if !(hasLabel && j == li) && !slices.Contains(opts.Columns, h) {
				extra = append(extra, h)
			}
		}
		if missing != nil || extra != nil {
			return nil, columnsError(missing, extra)
		}
		t.Columns = slices.Clone(opts.Columns)
	} else {
		for j := range width {
			if !(hasLabel && j == li) {
				order = append(order, j)
				if names != nil {
					t.Columns = append(t.Columns, names[j])
				}
			}
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%d column(s): need at least one feature", width)
	}
	if hasLabel {
		t.LabelIndex, t.LabelColumn = li, strconv.Itoa(li)
		if names != nil {
			t.LabelColumn = names[li]
		}
	}
	column := func(j int) string {
		if names != nil {
			return strconv.Quote(names[j])
		}
		return strconv.Itoa(j + 1)
	}
	t.Dim = len(order)
	pending := [][]string{first, second}
	if header {
		pending = pending[1:]
	}
	for {
		var rec []string
		if len(pending) > 0 {
			rec, pending = pending[0], pending[1:]
		}
		if rec == nil {
			if rec, err = cr.Read(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, csvError(err)
			}
		}
		if hasLabel {
			if isMissing(rec[li]) {
				return nil, fmt.Errorf("label column %s: a missing label", column(li))
			}
			t.Labels = append(t.Labels, strings.TrimSpace(rec[li]))
		}
		for _, j := range order {
			v, err := parseCell(rec[j], opts.AllowMissing)
			if err != nil {
				if hasLabel && j == 0 && opts.Label == "" && opts.LabelIndex == -1 {
					err = fmt.Errorf("%w (if it holds the labels, name it with --label-column)", err)
				}
				return nil, fmt.Errorf("column %s: %w", column(j), err)
			}
			t.X = append(t.X, v)
		}
		t.N++
	}
	if t.N == 0 {
		return nil, errors.New("no data rows")
	}
	return t, nil
}

// parseCell reads one feature value; its error never quotes the cell.
func parseCell(s string, allowMissing bool) (float32, error) {
	if isMissing(s) {
		if !allowMissing {
			return 0, errors.New("a missing value, which this table may not hold")
		}
		return float32(math.NaN()), nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, errors.New("a value that is not a number")
	}
	if math.IsInf(v, 0) || math.IsInf(float64(float32(v)), 0) {
		return 0, errors.New("an infinite value, or one too large for 32-bit floats")
	}
	return float32(v), nil
}

// columnsError names the columns a table lacks and those it has in excess.
func columnsError(missing, extra []string) error {
	var parts []string
	if missing != nil {
		parts = append(parts, "missing column "+QuoteSome(missing))
	}
	if extra != nil {
		parts = append(parts, "unknown column "+QuoteSome(extra)+" (if it holds labels, name it with --label-column)")
	}
	return fmt.Errorf("%w: %s", ErrColumns, strings.Join(parts, "; "))
}

// QuoteSome quotes up to five names, saying how many more there are.
func QuoteSome(names []string) string {
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

// LoadTable reads a CSV file with ReadTable; errors name the file and wrap
// ErrBadData.
func LoadTable(path string, opts CSVOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badData(err)
	}
	defer f.Close()
	t, err := ReadTable(f, opts)
	if err != nil {
		return nil, badData(fmt.Errorf("csv %s: %w", path, err))
	}
	return t, nil
}

// ReadCSV reads a table of numeric features and one label column. Labels
// that are all non-negative integers are used as class indices
// (NumClasses = max+1); otherwise the distinct label strings, sorted, become
// classes 0..k-1 and are kept in ClassNames. Infinite feature values are
// rejected. name is the dataset name.
func ReadCSV(r io.Reader, name string, opts CSVOptions) (*Dataset, error) {
	opts.NoLabel, opts.LabelOptional = false, false
	t, err := ReadTable(r, opts)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Name: name, X: t.X, Y: make([]int, t.N), Shape: []int{t.Dim},
		Columns: t.Columns, LabelColumn: t.LabelColumn, LabelIndex: t.LabelIndex}
	col := "column " + t.LabelColumn
	if t.Columns != nil {
		col = "column " + strconv.Quote(t.LabelColumn)
	} else {
		col = fmt.Sprintf("column %d", t.LabelIndex+1)
	}
	if opts.Classes != nil || opts.NumClasses > 0 {
		if err := setPublicLabels(d, t.Labels, opts, col); err != nil {
			return nil, err
		}
		return d, d.Validate()
	}
	if err := setLabels(d, t.Labels); err != nil {
		if errors.Is(err, ErrNonIntegerLabels) {
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
// count never depends on the labels read, and an error names no label and
// no record.
func setPublicLabels(d *Dataset, labels []string, opts CSVOptions, col string) error {
	n := opts.NumClasses
	if opts.Classes != nil {
		n = len(opts.Classes)
	}
	for i, s := range labels {
		k := -1
		if opts.Classes != nil {
			k = slices.Index(opts.Classes, s)
		} else if v, err := strconv.Atoi(s); err == nil && v >= 0 && v < opts.NumClasses {
			k = v
		}
		if k < 0 {
			return fmt.Errorf("label %s: a record's %w of %d classes (remove the record, or add its class to --classes)", col, ErrOutsideClasses, n)
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

// SniffCSVHeader reports whether a CSV file's first line is a header, as
// ReadTable decides it (CSVOptions.SniffHeader), not counting column ignore
// (the label column, which may hold class names; negative counts from the
// end, NoColumn: none).
func SniffCSVHeader(path string, ignore int) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, badData(fmt.Errorf("csv: %w", err))
	}
	defer f.Close()
	cr := csvReader(f, 0)
	first, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return false, badData(fmt.Errorf("csv %s: empty file", path))
		}
		return false, badData(fmt.Errorf("csv %s: %w", path, csvError(err)))
	}
	second, err := cr.Read()
	if err != nil && !errors.Is(err, io.EOF) {
		return false, badData(fmt.Errorf("csv %s: %w", path, csvError(err)))
	}
	if ignore < 0 && ignore != NoColumn {
		ignore += len(first)
	}
	return looksLikeHeader(first, second, ignore), nil
}

// looksLikeHeader reports whether first is a header line: a field (other
// than column ignore) that is neither a number nor a missing-value token,
// above a field of the next record (second, nil if none) that is one. A
// column of text in both (class names in an unnamed label column) makes no
// header, so a data row is never taken for column names.
func looksLikeHeader(first, second []string, ignore int) bool {
	for j, f := range first {
		if j == ignore || isNumberOrMissing(f) {
			continue
		}
		if second == nil || (j < len(second) && isNumberOrMissing(second[j])) {
			return true
		}
	}
	return false
}

// LoadFeatureCSV reads a CSV table whose every column is a feature (no
// labels), skipping a header line when header is set: n rows of d finite
// values, row-major.
func LoadFeatureCSV(path string, header bool) (x []float32, n, d int, err error) {
	t, err := LoadTable(path, CSVOptions{Header: header, NoLabel: true})
	if err != nil {
		return nil, 0, 0, err
	}
	return t.X, t.N, t.Dim, nil
}
