package datasets

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// A message about a training file names the file and the column, never a
// cell's value or a record's position (issue 37, finding 8). Each case
// plants one bad value at record 4321 of 5000 (line 4322, or 4323 below a
// header) and checks that the error names what it should and carries
// neither the value nor any of those positions.
func TestErrorsNameNoValueNorPosition(t *testing.T) {
	const n, at = 5000, 4321
	positions := []string{"4321", "4322", "4323"}
	csvWith := func(header bool, cell func(i int) (feature, label string)) string {
		var b strings.Builder
		if header {
			b.WriteString("age,income,class\n")
		}
		for i := range n {
			f, l := cell(i)
			fmt.Fprintf(&b, "%d,%s,%s\n", i%50, f, l)
		}
		return b.String()
	}
	plain := func(i int) (string, string) { return fmt.Sprint(i % 7), fmt.Sprint(i % 3) }
	plant := func(f, l string) func(int) (string, string) {
		return func(i int) (string, string) {
			if i == at {
				pf, pl := plain(i)
				if f != "" {
					pf = f
				}
				if l != "" {
					pl = l
				}
				return pf, pl
			}
			return plain(i)
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		in     string
		opts   CSVOptions
		secret string
		want   []string // substrings the message must hold
	}{
		{"not a number", csvWith(true, plant("SSN-123-45-6789", "")), CSVOptions{Header: true, LabelIndex: -1},
			"123-45-6789", []string{`column "income"`, "not a number"}},
		{"not a number, no header", csvWith(false, plant("SSN-123-45-6789", "")), CSVOptions{LabelIndex: -1},
			"123-45-6789", []string{"column 2", "not a number"}},
		{"overflows float32", csvWith(true, plant("3.99e38", "")), CSVOptions{Header: true, LabelIndex: -1},
			"3.99e38", []string{`column "income"`, "too large for 32-bit"}},
		{"missing", csvWith(true, plant("NA", "")), CSVOptions{Header: true, LabelIndex: -1},
			`"NA"`, []string{`column "income"`, "missing"}},
		{"label outside the public classes", csvWith(true, plant("", "SSN-123-45-6789")), CSVOptions{Header: true, LabelIndex: -1, NumClasses: 3},
			"123-45-6789", []string{`label column "class"`, "outside the public class set"}},
		{"label outside --classes", csvWith(true, plant("", "Jane Roe")), CSVOptions{Header: true, LabelIndex: -1, Classes: []string{"0", "1", "2"}},
			"Jane", []string{`label column "class"`, "outside the public class set"}},
		{"malformed", csvWith(true, plant(`"SSN-123-45-6789`, "")), CSVOptions{Header: true, LabelIndex: -1},
			"123-45-6789", []string{"malformed CSV"}},
		{"ragged", csvWith(true, plant("SSN-123-45-6789,1", "")), CSVOptions{Header: true, LabelIndex: -1},
			"123-45-6789", []string{"wrong number of fields"}},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
		writeFile(t, p, []byte(tc.in))
		_, err := LoadCSV(p, tc.opts)
		if err == nil || !errors.Is(err, ErrBadData) {
			t.Errorf("%s: err %v, want a bad-data error", tc.name, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, p) {
			t.Errorf("%s: %q does not name the file", tc.name, msg)
		}
		// (The temporary path's random digits could hold a position.)
		checkMessage(t, tc.name, strings.ReplaceAll(msg, p, "FILE"), tc.want, append([]string{tc.secret}, positions...))
	}

	// The same rule for a dataset in memory: a non-finite feature, a label
	// out of range, a short row.
	x := make([]float32, n*3)
	y := make([]int, n)
	for i := range y {
		y[i] = i % 2
	}
	nonFinite := &Dataset{Name: "d", X: append([]float32(nil), x...), Y: y, Shape: []int{3}, NumClasses: 2}
	nonFinite.X[at*3+1] = float32(math.Inf(1))
	badLabel := &Dataset{Name: "d", X: x, Y: append([]int(nil), y...), Shape: []int{3}, NumClasses: 2}
	badLabel.Y[at] = 987654
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = []float32{1, 2, 3}
	}
	rows[at] = []float32{1, 2}
	_, shortErr := FromSlices("d", rows, y)
	for _, tc := range []struct {
		name   string
		err    error
		secret string
		want   []string
	}{
		{"CheckFinite", nonFinite.CheckFinite(), "Inf", []string{"feature 1"}},
		{"Validate", badLabel.Validate(), "987654", []string{"label"}},
		{"FromSlices", shortErr, "", []string{"values"}},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		checkMessage(t, tc.name, tc.err.Error(), tc.want, append([]string{tc.secret}, positions...))
	}
}

func checkMessage(t *testing.T, name, msg string, want, never []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not name %q", name, msg, w)
		}
	}
	for _, s := range never {
		if s != "" && strings.Contains(msg, s) {
			t.Errorf("%s: %q gives away %q", name, msg, s)
		}
	}
}
