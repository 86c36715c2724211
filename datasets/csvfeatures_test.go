package datasets

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func writeTemp(t testing.TB, s string) string {
	p := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSniffCSVHeader(t *testing.T) {
	for _, tc := range []struct {
		text   string
		ignore int
		want   bool
	}{
		{"1,2,3\n4,5,6\n", NoColumn, false},
		{"a,b,y\n1,2,3\n", NoColumn, true},
		{"1,2,cat\n3,4,dog\n", -1, false},       // string labels are not a header
		{"1,2,cat\n3,4,dog\n", NoColumn, false}, // text in both rows: data
		{"a,b,y\n1,2,cat\n", NoColumn, true},
		{"cat,1,2\ndog,3,4\n", -1, false},     // labels in the first column
		{"\ufeff1,2\n3,4\n", NoColumn, false}, // a byte-order mark is no header
		{"\ufeffa,b\n3,4\n", NoColumn, true},
		{"\"x\",2\n1,2\n", 1, true},
	} {
		got, err := SniffCSVHeader(writeTemp(t, tc.text), tc.ignore)
		if err != nil || got != tc.want {
			t.Errorf("%q ignore %d: %v (%v), want %v", tc.text, tc.ignore, got, err, tc.want)
		}
	}
	if _, err := SniffCSVHeader(writeTemp(t, ""), NoColumn); err == nil {
		t.Error("empty file accepted")
	}
}

func TestLoadFeatureCSV(t *testing.T) {
	x, n, d, err := LoadFeatureCSV(writeTemp(t, "a,b\n1,2\n3.5,-4\n"), true)
	if err != nil || n != 2 || d != 2 || !reflect.DeepEqual(x, []float32{1, 2, 3.5, -4}) {
		t.Fatalf("%v %d %d %v", x, n, d, err)
	}
	for _, bad := range []string{"1,2\n3\n", "1,NaN\n", "1,inf\n", "1,x\n", ""} {
		if _, _, _, err := LoadFeatureCSV(writeTemp(t, bad), false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzLoadFeatureCSV(f *testing.F) {
	f.Add("1,2\n3,4\n", false)
	f.Add("a,b\n1,2\n", true)
	f.Fuzz(func(t *testing.T, s string, header bool) {
		x, n, d, err := LoadFeatureCSV(writeTemp(t, s), header)
		if err == nil && len(x) != n*d {
			t.Fatalf("%d values for %d rows of %d", len(x), n, d)
		}
		SniffCSVHeader(writeTemp(t, s), -1)
	})
}
