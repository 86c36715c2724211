package trainer

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestWritePlotsAndMetricsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m, err := openMetrics(filepath.Join(dir, "metrics.jsonl"), false, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 30; s++ {
		r := &Record{Step: s, Loss: 2 / float64(s), Epsilon: map[string]float64{"rdp": 0.1 * float64(s), "hidden": 0.05 * float64(s)}}
		if s%10 == 0 {
			a, b := 0.5+float64(s)/100, 0.55+float64(s)/100
			l := 2 / float64(s)
			r.TestAcc, r.TrainAcc, r.TestLoss = &a, &b, &l
		}
		if err := m.write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 30 || recs[29].Epsilon["rdp"] != 0.1*30 || recs[9].TestAcc == nil || *recs[9].TestAcc != 0.6 {
		t.Fatalf("round trip lost data: %d records, last %+v", len(recs), recs[len(recs)-1])
	}
	if err := WritePlots(dir, recs); err != nil {
		t.Fatal(err)
	}
	if err := writeDiagnosticsPlot(dir, recs); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"test.png", "epsilon.png", "diagnostics.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Fatalf("%s: tiny image %v", name, b)
		}
	}
	for _, name := range []string{"test.svg", "epsilon.svg"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() < 1000 {
			t.Fatalf("%s missing or empty: %v", name, err)
		}
	}
}
