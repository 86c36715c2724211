package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dptrain/dptrain/objpert"
)

func TestReportSynthetic(t *testing.T) {
	dir := t.TempDir()
	args := []string{"report", "--synthetic", "--n", "300", "--d", "5", "--seed", "7", "--mode", "adaptive", "--top", "3", "--out", dir}
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The grid release adds (1 + e^ε)τ to δ, τ = 2d·cap/w (docs/secure-noise.md).
	lam, sig, _ := objpert.CalibrateObjPert(1, 1e-5, 1, 0.25)
	w, _ := objpert.GridFor(300, 5, sig, lam, 1e-5*objpert.RoundingShare)
	delta := 1e-5 + (1+math.E)*2*5*objpert.RadiusCap(300, 5, sig, lam)/w
	for _, want := range []string{"exact eps1 (curator-only)", "report, data-independent", "report, adaptive", "most exposed", fmt.Sprintf("(1, %.3g)-DP", delta)} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A fixed seed reproduces the run exactly.
	_, out2, _ := runCLI(t, args...)
	if out != out2 {
		t.Error("same --seed, different output")
	}
	recs := readCSVFile(t, filepath.Join(dir, "private", "pdp_report.csv"))
	if len(recs) != 301 {
		t.Fatalf("csv has %d lines, want 301", len(recs))
	}
	png, err := os.ReadFile(filepath.Join(dir, "private", "pdp_hist.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("histogram is not a PNG (err %v)", err)
	}
	// The per-record table is curator-only: private/ is 0700, its files
	// 0600, and release/ holds the model alone.
	if fi, err := os.Stat(filepath.Join(dir, "private")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private/: %v; want mode 0700", err)
	}
	for _, f := range []string{"pdp_report.csv", "pdp_hist.png"} {
		if fi, err := os.Stat(filepath.Join(dir, "private", f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("private/%s: %v; want mode 0600", f, err)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "release")); err != nil || len(ents) != 1 || ents[0].Name() != "model.json" {
		t.Errorf("release/ holds %v (%v); want model.json only", ents, err)
	}
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestReportCSVData runs the CLI on a CSV with a header and 0/1 labels in a
// named column, and recomputes every record's data-independent report from
// the printed score with Thm 5's λ, σ and the closed form of
// docs/per-instance.md#publishable-reports.
func TestReportCSVData(t *testing.T) {
	dir := t.TempDir()
	data := "x1,label,x2\n0.5,1,0.3\n-0.4,0,0.6\n0.2,0,-0.7\n0.8,1,0.1\n-0.3,0,-0.5\n0.1,1,0.1\n"
	path := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "report", "--data", path, "--label", "label", "--epsilon", "2", "--delta", "1e-4", "--seed", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lambda, sigma, _ := objpert.CalibrateObjPert(2, 1e-4, 1, 0.25)
	xs := [][]float64{{0.5, 0.3}, {-0.4, 0.6}, {0.2, -0.7}, {0.8, 0.1}, {-0.3, -0.5}, {0.1, 0.1}}
	ys := []float64{1, -1, -1, 1, -1, 1}
	q := distuv.UnitNormal.Quantile(0.975)
	recs := readCSVFile(t, filepath.Join(dir, "private", "pdp_report.csv"))
	col := map[string]int{}
	for j, h := range recs[0] {
		col[h] = j
	}
	for i, rec := range recs[1:] {
		v := func(name string) float64 {
			f, err := strconv.ParseFloat(rec[col[name]], 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		s, y := v("score"), ys[i]
		f1 := -y / (1 + math.Exp(y*s))
		f2 := 1 / ((1 + math.Exp(s)) * (1 + math.Exp(-s)))
		n2 := xs[i][0]*xs[i][0] + xs[i][1]*xs[i][1]
		indep := -math.Log(1-f2*n2/lambda) + f1*f1*n2/(2*sigma*sigma) + math.Abs(f1)*math.Sqrt(n2)*q/sigma
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"f1", v("f1"), f1}, {"f2", v("f2"), f2}, {"eps1_indep", v("eps1_indep"), indep},
			{"eps1_exact", v("eps1_exact"), math.Abs(v("T1") + v("T2") + v("T3"))},
		} {
			if math.Abs(c.got-c.want) > 1e-8 {
				t.Errorf("row %d %s = %.10g, want %.10g", i, c.name, c.got, c.want)
			}
		}
	}
}

// TestReportModelFile: --out writes the public release as model.json, and
// --model FILE reports on it without refitting: every record's exact ex-post
// pDP and data-independent bound equal the first run's, the release's ε is
// the derived Thm 6 bound at the file's λ and σ, and the account adds the
// adaptive report's RDP-composed overhead; the same model against other
// data draws the implied-perturbation warning.
func TestReportModelFile(t *testing.T) {
	dir := t.TempDir()
	fit, again := filepath.Join(dir, "fit"), filepath.Join(dir, "again")
	code, _, errs := runCLI(t, "report", "--synthetic", "--n", "200", "--d", "4", "--seed", "3", "--epsilon", "1", "--out", fit)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	model := filepath.Join(fit, "release", "model.json")
	js, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	var m objpert.Model
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	lambda, sigma, _ := objpert.CalibrateObjPert(1, 1e-5, 1, 0.25)
	if m.Lambda != lambda || m.Sigma != sigma || len(m.Theta) != 4 || m.Loss.Name() != "logreg" {
		t.Fatalf("model.json = %s, want λ = %g, σ = %g, 4 coefficients, logreg", js, lambda, sigma)
	}
	code, out, errs := runCLI(t, "report", "--synthetic", "--n", "200", "--d", "4", "--seed", "3", "--model", model, "--mode", "adaptive", "--out", again)
	if code != 0 {
		t.Fatalf("--model FILE: exit %d: %s", code, errs)
	}
	rel := objpert.ObjPertEpsilon(lambda, sigma, 1, 0.25, 1e-5, true)
	if want := fmt.Sprintf("(%.4g, %.3g)-DP", rel, 1e-5+(1+math.Exp(rel))*m.Tau); !(m.Tau > 0) || !strings.Contains(out, want) {
		t.Errorf("release line lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out, "account: (") || !strings.Contains(out, "composed by RDP") || strings.Contains(out, "warning") {
		t.Errorf("output lacks the account or warns:\n%s", out)
	}
	first, second := readCSVFile(t, filepath.Join(fit, "private", "pdp_report.csv")), readCSVFile(t, filepath.Join(again, "private", "pdp_report.csv"))
	if len(first) != 201 || len(second) != 201 {
		t.Fatalf("csv lines %d and %d, want 201", len(first), len(second))
	}
	for i := 1; i < len(first); i++ {
		for _, j := range []int{8, 9} { // eps1_exact, eps1_indep
			if first[i][j] != second[i][j] {
				t.Errorf("record %d %s: %s after refit, %s from model.json", i-1, first[0][j], first[i][j], second[i][j])
			}
		}
		if second[i][10] == "NaN" {
			t.Fatalf("record %d: no adaptive bound with --mode adaptive", i-1)
		}
	}
	// The same model against other data: the implied perturbation gives it away.
	_, out, _ = runCLI(t, "report", "--synthetic", "--n", "2000", "--d", "4", "--seed", "4", "--model", model)
	if !strings.Contains(out, "warning: the implied perturbation") {
		t.Errorf("model reported against data it was not trained on, no warning:\n%s", out)
	}
	for _, args := range [][]string{
		{"report", "--synthetic", "--model", filepath.Join(dir, "missing.json")},
		{"report", "--synthetic", "--model", model, "--lambda", "3"},
		{"report", "--synthetic", "--d", "5", "--model", model},
	} {
		if code, _, errs := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errs)
		}
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "0.1,0.2,1\n0.3,0.1,0\n")
	nan := write("nan.csv", "0.1,NaN,1\n0.3,0.1,0\n")
	labels := write("labels.csv", "0.1,0.2,3\n0.3,0.1,0\n")
	ragged := write("ragged.csv", "0.1,0.2,1\n0.3,0\n")
	badModel := write("bad.json", `{"mechanism":"objective-perturbation","loss":"logreg","theta":[1],"lambda":-1,"sigma":1}`)
	for _, args := range [][]string{
		{"report"},
		{"report", "--synthetic", "--data", good},
		{"report", "--data", filepath.Join(dir, "missing.csv")},
		{"report", "--data", nan},
		{"report", "--data", labels},
		{"report", "--data", ragged},
		{"report", "--data", good, "--label", "7"},
		{"report", "--data", good, "--model", "svm"},
		{"report", "--data", good, "--mode", "fancy"},
		{"report", "--data", good, "--delta", "1.5"},
		{"report", "--data", good, "--epsilon", "-1"},
		{"report", "--data", good, "--lambda", "-2"},
		{"report", "--data", good, "--rho", "0"},
		{"report", "--synthetic", "--n", "0"},
		{"report", "--synthetic", "--model", "linreg"},
		{"report", "--data", good, "--model", badModel},
	} {
		code, _, errs := runCLI(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errs)
		}
		if n := strings.Count(strings.TrimSpace(errs), "\n"); n > 0 && !strings.Contains(errs, "Usage") {
			t.Errorf("%v: error is not one line: %q", args, errs)
		}
	}
}

func FuzzReadNumericCSV(f *testing.F) {
	f.Add("a,b,y\n1,2,0\n3,4,1\n", "y")
	f.Add("1,2,0\n3,4,1\n", "")
	f.Add("1,2,0\n3,4,1\n", "1")
	f.Add("\"1\",2\n", "0")
	f.Add("x\n", "")
	f.Fuzz(func(t *testing.T, data, label string) {
		rows, labels, _, err := readNumericCSV(strings.NewReader(data), label)
		if err != nil {
			return
		}
		if len(rows) == 0 || len(rows) != len(labels) {
			t.Fatalf("%d rows, %d labels without error", len(rows), len(labels))
		}
		for _, r := range rows {
			if len(r) != len(rows[0]) || len(r) == 0 {
				t.Fatalf("ragged or empty feature rows without error")
			}
			for _, v := range r {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite feature accepted")
				}
			}
		}
	})
}
