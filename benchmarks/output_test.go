package benchmarks

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
)

var sampleRows = []Row{
	{Clip: "flat", Sampler: "poisson", Noise: "continuous", Steps: 30, TrainN: 5000, Samples: 7680, Seconds: 2, SamplesPerSec: 3840, PeakHeapMiB: 30.5, PeakSysMiB: 40,
		Sigma: 1, Sensitivity: 1, Dim: 203530, NoiseVariance: 203530, Epsilon: 2.793, Delta: 1e-5, Accountant: "rdp", Relation: "add/remove-one", TestAcc: 0.719},
	{Clip: "subspace", Sampler: "twice", Noise: "continuous", Steps: 30, TrainN: 4800, Samples: 3900, Seconds: 25, SamplesPerSec: 156, PeakHeapMiB: 500, PeakSysMiB: 540,
		Sigma: 1, Sensitivity: 1, Dim: 203562, NoiseVariance: 150123.5, Epsilon: 1.234, Delta: 1e-5, Accountant: "twice", Relation: "add-remove", TestAcc: 0.6512},
	{Clip: "per-layer", Sampler: "twice", Noise: "bandmf", Delta: 1e-5, Err: "trainer: refused | with a pipe"},
}

func TestWriteCSVRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sampleRows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(sampleRows)+1 {
		t.Fatalf("%d records, want %d", len(recs), len(sampleRows)+1)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, r := range sampleRows {
		rec := recs[i+1]
		if len(rec) != len(CSVHeader) {
			t.Fatalf("record %d has %d fields, want %d", i, len(rec), len(CSVHeader))
		}
		num := func(name string) float64 {
			v, err := strconv.ParseFloat(rec[col[name]], 64)
			if err != nil {
				t.Fatalf("record %d %s: %v", i, name, err)
			}
			return v
		}
		if got := []float64{num("noise_variance"), num("samples_per_sec"), num("epsilon"), num("peak_sys_mib"), num("test_acc")}; got[0] != r.NoiseVariance ||
			got[1] != r.SamplesPerSec || got[2] != r.Epsilon || got[3] != r.PeakSysMiB || got[4] != r.TestAcc {
			t.Errorf("record %d numbers %v do not round-trip %+v", i, got, r)
		}
		if rec[col["clip"]] != r.Clip || rec[col["error"]] != r.Err || rec[col["train_n"]] != strconv.Itoa(r.TrainN) || rec[col["dim"]] != strconv.Itoa(r.Dim) {
			t.Errorf("record %d: %v does not match %+v", i, rec, r)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, sampleRows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(sampleRows)+2 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(sampleRows)+2, buf.String())
	}
	// Every line has the same number of unescaped cell separators.
	want := len(displayHeader) + 1
	for i, l := range lines {
		if n := strings.Count(l, "|") - strings.Count(l, `\|`); n != want {
			t.Errorf("line %d has %d separators, want %d: %s", i, n, want, l)
		}
	}
	for _, frag := range []string{"| flat | poisson | continuous | 30 | 3840 | 30.5 | 1 | 2.035e+05 | 2.793 | 1e-05 | rdp | add/remove-one | 0.7190 |  |",
		"| subspace | twice | continuous | 30 | 156 | 500.0 | 1 | 1.501e+05 | 1.234 | 1e-05 | twice | add-remove | 0.6512 |  |",
		`refused \| with a pipe`} {
		if !strings.Contains(buf.String(), frag) {
			t.Errorf("markdown lacks %q:\n%s", frag, buf.String())
		}
	}
	// A refused cell shows nothing measured, only its error.
	if !strings.Contains(lines[4], "| per-layer | twice | bandmf |  |  |  |  |  |  |  |  |  |  | trainer: refused") {
		t.Errorf("refused row shows measurements: %s", lines[4])
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, sampleRows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(sampleRows)+1 {
		t.Fatalf("%d lines, want %d", len(lines), len(sampleRows)+1)
	}
	// Columns are aligned: "samples/s" starts at the same offset as 3840.
	h := strings.Index(lines[0], "samples/s")
	if h < 0 || strings.Index(lines[1], "3840") != h {
		t.Errorf("samples/s column not aligned:\n%s", buf.String())
	}
}
