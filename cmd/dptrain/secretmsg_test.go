package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/objpert"
)

// dptrain report reads the training data: its errors name the column,
// never a cell's value or a record's line (issue 37, finding 8).
func TestReportCSVNamesNoValueNorLine(t *testing.T) {
	const n, at = 5000, 4321
	table := func(cell string) string {
		var b strings.Builder
		b.WriteString("age,income,y\n")
		for i := range n {
			v := fmt.Sprint(i % 7)
			if i == at {
				v = cell
			}
			fmt.Fprintf(&b, "%d,%s,%d\n", i%50, v, i%2)
		}
		return b.String()
	}
	for _, tc := range []struct{ name, cell, want string }{
		{"not a number", "SSN-123-45-6789", `column 1 ("income"): a value is not a finite number`},
		{"malformed", `"SSN-123-45-6789`, "malformed CSV"},
	} {
		_, _, _, err := readNumericCSV(strings.NewReader(table(tc.cell)), "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		for _, s := range []string{"123-45-6789", "4321", "4322", "4323"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q gives away %q", tc.name, err, s)
			}
		}
	}
	if _, err := prepareLabels([]float64{1, 0, 31415.926}, objpert.Logistic{}); err == nil || strings.Contains(err.Error(), "31415") || strings.Contains(err.Error(), "row 2") {
		t.Errorf("labels: %v", err)
	}
}
