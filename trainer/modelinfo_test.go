package trainer

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTableInput: the columns and label column model.bin records for a CSV
// test file, with and without a header, the label named, indexed or last.
func TestTableInput(t *testing.T) {
	dir := t.TempDir()
	withHeader := filepath.Join(dir, "h.csv")
	os.WriteFile(withHeader, []byte("target,a,b,c\n1,1,2,3\n"), 0o644)
	bare := filepath.Join(dir, "b.csv")
	os.WriteFile(bare, []byte("1,2,3,0\n"), 0o644)
	for _, tc := range []struct {
		path, label string
		cols        []string
		labelCol    string
		labelIndex  int
		err         bool
	}{
		{withHeader, "target", []string{"a", "b", "c"}, "target", 0, false},
		{withHeader, "0", []string{"a", "b", "c"}, "target", 0, false},
		{withHeader, "", []string{"target", "a", "b"}, "c", 3, false},
		{withHeader, "-2", []string{"target", "a", "c"}, "b", 2, false},
		{bare, "", nil, "3", 3, false},
		{bare, "1", nil, "1", 1, false},
		{bare, "7", nil, "", 0, true},
	} {
		in, err := tableInput(tc.path, tc.label)
		if (err != nil) != tc.err {
			t.Errorf("%s %q: err %v", filepath.Base(tc.path), tc.label, err)
			continue
		}
		if tc.err {
			continue
		}
		if !slices.Equal(in.Columns, tc.cols) || in.LabelColumn != tc.labelCol || in.LabelIndex != tc.labelIndex || in.Kind != "table" {
			t.Errorf("%s %q: %+v, want columns %v label %q at %d", filepath.Base(tc.path), tc.label, in, tc.cols, tc.labelCol, tc.labelIndex)
		}
	}
}
