package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The quick run trains every cell on the embedded subset, calibrates each
// to its ε, and writes the table beside the paper's values.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 5 small models")
	}
	out := t.TempDir()
	if err := run(true, out, ""); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+5 { // header, 4 private cells, 1 SGD
		t.Fatalf("%d rows", len(recs))
	}
	for _, r := range recs[1:] {
		acc, _ := strconv.ParseFloat(r[4], 64)
		eps, _ := strconv.ParseFloat(r[5], 64)
		if !(acc > 0.5) {
			t.Errorf("%v: accuracy %v", r, acc)
		}
		for _, target := range []float64{1, 2} {
			if strings.HasSuffix(r[1], "ε="+strconv.Itoa(int(target))) && !(eps <= target && eps > target-0.01) {
				t.Errorf("%v: ε %v not calibrated to %v", r, eps, target)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "dpsgdf_table1.md"))
	if err != nil || !strings.Contains(string(md), "| fashion-mnist | DPSGD-F ε=1 |") || !strings.Contains(string(md), "| 84.0 |") {
		t.Fatalf("markdown: %v\n%s", err, md)
	}
}
