package datasets

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A float feature taken for the label (the last column by default) is a
// short error naming the column and --label-column, never a list of
// "classes" nor any value; labels that are whole numbers or names still
// load.
func TestCSVNonIntegerLabelColumn(t *testing.T) {
	var many strings.Builder
	many.WriteString("y,a,c\n")
	for i := range 500 {
		fmt.Fprintf(&many, "%d,%d,%.3f\n", i%2, i, float64(i)*1.37)
	}
	for _, tc := range []struct {
		name, in string
		opts     CSVOptions
		err      string
		names    []string
	}{
		{"float last column, header", many.String(), CSVOptions{Header: true, LabelIndex: -1},
			`label column "c" (the last, taken as the label by default): the values are numbers but not all integers, so not class labels; name the label column with --label-column`, nil},
		{"float column by index", "1,0.5\n2,1.5\n", CSVOptions{LabelIndex: 1}, "label column 2: the values are numbers but not all integers", nil},
		{"labels -1 and 1", "1,-1\n2,1\n", CSVOptions{LabelIndex: -1}, "", []string{"-1", "1"}},
		{"labels 0.0 and 1.0", "1,0.0\n2,1.0\n", CSVOptions{LabelIndex: -1}, "", []string{"0.0", "1.0"}},
		{"names", "1,cat\n2,2.5\n", CSVOptions{LabelIndex: -1}, "", []string{"2.5", "cat"}},
	} {
		d, err := ReadCSV(strings.NewReader(tc.in), "t", tc.opts)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNonIntegerLabels) || len(err.Error()) > 300 || strings.Contains(err.Error(), "1.37") {
				t.Errorf("%s: %v, want a short error containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(d.ClassNames, tc.names) {
			t.Errorf("%s: %v, classes %v, want %v", tc.name, err, d.ClassNames, tc.names)
		}
	}
}
