package datasets

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The three ways a table is read: for training (labels required), for
// prediction (label optional) and as features only.
var tableReads = []struct {
	name string
	opts CSVOptions
}{
	{"train", CSVOptions{SniffHeader: true, LabelIndex: -1}},
	{"predict", CSVOptions{SniffHeader: true, LabelIndex: -1, LabelOptional: true, Features: 2}},
	{"features", CSVOptions{SniffHeader: true, NoLabel: true}},
}

func TestReadTableSameEverywhere(t *testing.T) {
	bom := "\ufeff"
	for _, tc := range []struct {
		name, in string
		want     string // "" : read; else a substring of the error
	}{
		{"bom header", bom + "a,b,y\n1,2,0\n3,4,1\n", ""},
		{"bom no header", bom + "1,2,0\n3,4,1\n", ""},
		{"empty", "", "empty file"},
		{"bom only", bom, "empty file"},
		{"header only", "a,b,y\n", "no data rows"},
		{"duplicate column", "a,a,y\n1,2,0\n", `column "a" appears twice`},
		{"duplicate after trim", "a, a ,y\n1,2,0\n", `column "a" appears twice`},
		{"ragged", "1,2,0\n1,0\n", "wrong number of fields"},
	} {
		for _, r := range tableReads {
			tab, err := ReadTable(strings.NewReader(tc.in), r.opts)
			if tc.want == "" {
				if err != nil {
					t.Errorf("%s, %s: %v", tc.name, r.name, err)
					continue
				}
				// The features are a, b (and y as a feature when there is no label).
				want := []float32{1, 2, 3, 4}
				if r.opts.NoLabel {
					want = []float32{1, 2, 0, 3, 4, 1}
				}
				if !slices.Equal(tab.X, want) || tab.N != 2 {
					t.Errorf("%s, %s: X %v N %d, want %v", tc.name, r.name, tab.X, tab.N, want)
				}
				if strings.Contains(tc.in, "a,b") && tab.Columns[0] != "a" {
					t.Errorf("%s, %s: columns %q (the byte-order mark kept?)", tc.name, r.name, tab.Columns)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %s: err %v, want %q", tc.name, r.name, err, tc.want)
			}
		}
	}
}

// TestReadTableByName reads a table whose columns are a permutation of the
// ones asked for: row r's feature i must be the cell of column Columns[i],
// checked against a map built from the text.
func TestReadTableByName(t *testing.T) {
	cols := []string{"alcohol", "ash", "hue", "proline"}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		perm := r.Perm(len(cols) + 1) // position len(cols) is the label
		header := make([]string, len(perm))
		for j, p := range perm {
			header[j] = "y"
			if p < len(cols) {
				header[j] = cols[p]
			}
		}
		var b strings.Builder
		b.WriteString(strings.Join(header, ",") + "\n")
		cell := map[[2]int]float32{} // (row, column name index) → value
		for row := range 3 {
			f := make([]string, len(perm))
			for j, p := range perm {
				v := float32(row*10 + p)
				if p < len(cols) {
					cell[[2]int{row, p}] = v
				}
				f[j] = strconv.FormatFloat(float64(v), 'g', -1, 32)
			}
			b.WriteString(strings.Join(f, ",") + "\n")
		}
		tab, err := ReadTable(strings.NewReader(b.String()), CSVOptions{SniffHeader: true, Label: "y", Columns: cols})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for row := range 3 {
			for i := range cols {
				if got := tab.X[row*len(cols)+i]; got != cell[[2]int{row, i}] {
					t.Fatalf("trial %d header %q: row %d column %q = %v, want %v", trial, header, row, cols[i], got, cell[[2]int{row, i}])
				}
			}
		}
		if !slices.Equal(tab.Columns, cols) || tab.LabelColumn != "y" || tab.LabelIndex != slices.Index(header, "y") {
			t.Fatalf("trial %d: columns %q label %q at %d", trial, tab.Columns, tab.LabelColumn, tab.LabelIndex)
		}
	}
}

func TestReadTableColumnErrors(t *testing.T) {
	cols := []string{"a", "b"}
	for _, tc := range []struct {
		name, in string
		opts     CSVOptions
		want     []string
	}{
		{"renamed", "a,c,y\n1,2,0\n", CSVOptions{SniffHeader: true, Label: "y", Columns: cols}, []string{`missing column "b"`, `unknown column "c"`}},
		{"extra", "a,b,c,y\n1,2,3,0\n", CSVOptions{SniffHeader: true, Label: "y", Columns: cols}, []string{`unknown column "c"`}},
		{"no header", "1,2,0\n", CSVOptions{SniffHeader: true, Label: "y", Columns: cols}, []string{"no header line", `"a", "b"`}},
		{"no label", "a,b\n1,2\n", CSVOptions{SniffHeader: true, Label: "y"}, []string{`no column named "y"`}},
	} {
		_, err := ReadTable(strings.NewReader(tc.in), tc.opts)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q", tc.name, err, w)
			}
		}
	}
	// The label column is optional when predicting.
	tab, err := ReadTable(strings.NewReader("b,a\n2,1\n"), CSVOptions{SniffHeader: true, Label: "y", LabelOptional: true, Columns: cols})
	if err != nil || !slices.Equal(tab.X, []float32{1, 2}) || tab.Labels != nil {
		t.Errorf("no label column: %v %v %v", tab, err, tab.Labels)
	}
}

// TestCSVErrorsNameNoValue checks that no error about a table quotes a
// cell or names a record's line.
func TestCSVErrorsNameNoValue(t *testing.T) {
	const secret = "SSN-123-45-6789"
	for _, tc := range []struct {
		name, in string
		opts     CSVOptions
		want     string
	}{
		{"feature", "a,b,y\n1,2,0\n1," + secret + ",1\n", CSVOptions{SniffHeader: true, LabelIndex: -1}, `column "b": a value that is not a number`},
		{"headerless feature", "1,2,0\n1," + secret + ",1\n", CSVOptions{SniffHeader: true, LabelIndex: -1}, "column 2"},
		{"text label first", secret + ",1,2\nx,3,4\n", CSVOptions{SniffHeader: true, LabelIndex: -1}, "--label-column"},
		{"outside classes", "a,y\n1,cat\n2," + secret + "\n", CSVOptions{SniffHeader: true, LabelIndex: -1, Classes: []string{"cat"}}, `label column "y"`},
		{"outside count", "1,0\n2,7\n", CSVOptions{LabelIndex: -1, NumClasses: 2}, "of 2 classes"},
		{"missing label", "a,y\n1,cat\n2,\n", CSVOptions{SniffHeader: true, LabelIndex: -1}, "missing label"},
		{"bare quote", "1,2,0\n1,2,0\n1,x\"" + secret + ",0\n", CSVOptions{LabelIndex: -1}, "malformed CSV"},
		{"ragged", "1,2,0\n1,2,0\n1,2,0,3\n", CSVOptions{LabelIndex: -1}, "wrong number of fields"},
	} {
		_, err := ReadCSV(strings.NewReader(tc.in), "t", tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, secret) || strings.Contains(msg, "line") || strings.Contains(msg, "7") {
			t.Errorf("%s: %q quotes a value or a position", tc.name, msg)
		}
	}
}

// FuzzReadTable: no input panics, a table read has N rows of Dim finite (or
// allowed NaN) values with distinct column names, and an error never
// quotes a longer cell of a headerless table.
func FuzzReadTable(f *testing.F) {
	f.Add([]byte("a,b,y\n1,2,0\n3,4,1\n"))
	f.Add([]byte("\ufeff1,2,x\n3,4,y\n"))
	f.Add([]byte("a,a\n1,2\n"))
	f.Add([]byte("cat,1\nSSN12345x,2\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, opts := range []CSVOptions{
			{SniffHeader: true, LabelIndex: -1},
			{SniffHeader: true, LabelIndex: 0, AllowMissing: true},
			{SniffHeader: true, Label: "y", Columns: []string{"a", "b"}, LabelOptional: true},
			{SniffHeader: true, LabelIndex: -1, LabelOptional: true, Features: 2},
			{NoLabel: true},
		} {
			tab, err := ReadTable(bytes.NewReader(b), opts)
			if err != nil {
				if opts.Header || opts.SniffHeader || opts.Columns != nil {
					continue // column names are public schema and may be quoted
				}
				for _, rec := range bytes.Split(b, []byte("\n")) {
					for _, cell := range bytes.Split(rec, []byte(",")) {
						if secretLike(string(cell)) && strings.Contains(err.Error(), string(cell)) {
							t.Fatalf("%+v: error %q quotes cell %q", opts, err, cell)
						}
					}
				}
				continue
			}
			if tab.N == 0 || len(tab.X) != tab.N*tab.Dim || (tab.Labels != nil && len(tab.Labels) != tab.N) {
				t.Fatalf("%+v: %d values, %d labels for %d rows of %d", opts, len(tab.X), len(tab.Labels), tab.N, tab.Dim)
			}
			if tab.Columns != nil && len(tab.Columns) != tab.Dim {
				t.Fatalf("%+v: %d names for %d features", opts, len(tab.Columns), tab.Dim)
			}
			for i, c := range tab.Columns {
				if slices.Contains(tab.Columns[:i], c) {
					t.Fatalf("%+v: column %q twice", opts, c)
				}
			}
			for _, v := range tab.X {
				if math.IsInf(float64(v), 0) || (!opts.AllowMissing && v != v) {
					t.Fatalf("%+v: value %v accepted", opts, v)
				}
			}
			d, err := ReadCSV(bytes.NewReader(b), "f", opts)
			if err == nil && d.Validate() != nil {
				t.Fatalf("%+v: invalid dataset: %v", opts, d.Validate())
			}
		}
	})
}

// secretLike reports whether a cell is long and mixes letters and digits
// without spaces, so no wording of a message contains it by chance.
func secretLike(s string) bool {
	if len(s) < 8 || strings.ContainsFunc(s, unicode.IsSpace) {
		return false
	}
	return strings.ContainsFunc(s, unicode.IsDigit) && strings.ContainsFunc(s, unicode.IsLetter)
}

func TestReadCSVColumns(t *testing.T) {
	d, err := ReadCSV(strings.NewReader("\ufeffx1, x2 ,label\n1,2,a\n3,4,b\n"), "t", CSVOptions{SniffHeader: true, LabelIndex: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Columns, []string{"x1", "x2"}) || d.LabelColumn != "label" || d.LabelIndex != 2 {
		t.Errorf("columns %q label %q at %d", d.Columns, d.LabelColumn, d.LabelIndex)
	}
	if _, err := ReadCSV(strings.NewReader("a,y\n1,0\n"), "t", CSVOptions{SniffHeader: true, Label: "y", Columns: []string{"b"}}); !errors.Is(err, ErrColumns) {
		t.Errorf("renamed column: %v, want ErrColumns", err)
	}
}
