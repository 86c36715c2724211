package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/benchmarks"
)

// tiny bench: logistic regression on the synthetic mixture (32 features,
// 10 classes: D = 330), 2 steps of expected batch 32.
var benchTiny = []string{"bench", "--steps", "2", "--dataset", "synthetic", "--model", "logreg", "--batch", "32"}

func TestBenchTable(t *testing.T) {
	code, stdout, stderr := runCLI(t, append(benchTiny, "--clips", "flat,linf,subspace", "--samplers", "poisson,shuffle")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	// setup line, header, 3 × 2 rows, the footnote of the † marking every
	// ε (bench cells are seeded: not private releases)
	if len(lines) != 9 || lines[8] != benchmarks.NotPrivateNote {
		t.Fatalf("%d lines, want 8 and the not-private footnote:\n%s", len(lines), stdout)
	}
	for _, l := range lines[2:6] {
		if f := strings.Fields(l); len(f) < 9 || !strings.HasSuffix(f[8], benchmarks.NotPrivateMark) {
			t.Errorf("row %q: ε not marked %s", l, benchmarks.NotPrivateMark)
		}
	}
	if !strings.HasPrefix(lines[0], "logreg on synthetic: 2 steps, expected batch 32, σ = 1,") {
		t.Errorf("setup line %q", lines[0])
	}
	for _, col := range []string{"clip", "samples/s", "peak heap MiB", "E‖e‖²", "ε", "test acc"} {
		if !strings.Contains(lines[1], col) {
			t.Errorf("header %q lacks %q", lines[1], col)
		}
	}
	want := [][2]string{{"flat", "poisson"}, {"flat", "shuffle"}, {"linf", "poisson"}, {"linf", "shuffle"}, {"subspace", "poisson"}, {"subspace", "shuffle"}}
	for i, w := range want {
		f := strings.Fields(lines[2+i])
		if len(f) < 2 || f[0] != w[0] || f[1] != w[1] {
			t.Errorf("row %d = %q, want %s × %s", i, lines[2+i], w[0], w[1])
		}
	}
	// The subspace cells go through the trainer: with Poisson sampling a
	// full row (ε by the twice-sampling accountant, test accuracy, no note);
	// with shuffling the trainer's refusal and nothing measured.
	if strings.Contains(stdout, "kernel only") {
		t.Errorf("a row is marked kernel only:\n%s", stdout)
	}
	sub := strings.Fields(lines[6])
	if len(sub) != 13 || sub[2] != "continuous" || sub[3] != "2" || sub[10] != "twice" || sub[11] != "add-remove" {
		t.Errorf("subspace × poisson row %q: want 2 steps, ε by twice (add-remove), accuracy and no note", lines[6])
	}
	if f := strings.Fields(lines[7]); len(f) < 4 || f[3] != "invalid" || !strings.HasSuffix(lines[7], subspaceShuffleRefusal) {
		t.Errorf("subspace × shuffle row %q: want only the trainer's refusal", lines[7])
	}
	if !strings.Contains(lines[0], "subspace ranks [16 32] from 200 public examples") {
		t.Errorf("setup line %q lacks the subspace settings", lines[0])
	}
	// Progress goes to stderr, one line per cell.
	if n := strings.Count(stderr, "\n"); n != 6 {
		t.Errorf("stderr has %d lines, want 6: %s", n, stderr)
	}
}

func TestBenchJSONAndFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, append(benchTiny, "--json", "--sigma", "2", "--clip-norm", "0.5", "--out", dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Setup string           `json:"setup"`
		Rows  []benchmarks.Row `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, stdout)
	}
	if len(got.Rows) != len(benchmarks.DefaultClips)*len(benchmarks.Samplers) {
		t.Fatalf("%d rows, want the default 4 clips × 3 samplers", len(got.Rows))
	}
	const d = (32 + 1) * 10
	want := 2.0 * 2 * 0.5 * 0.5 * d // σ²C²D
	for _, r := range got.Rows {
		if r.Err != "" || math.Abs(r.NoiseVariance-want) > 1e-9*want || r.Sigma != 2 || r.Steps != 2 {
			t.Errorf("%s × %s: err %q, σ %v, steps %d, E‖e‖² = %v; want σ = 2, 2 steps, σ²C²D = %v", r.Clip, r.Sampler, r.Err, r.Sigma, r.Steps, r.NoiseVariance, want)
		}
	}
	f, err := os.Open(filepath.Join(dir, "bench.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != len(got.Rows)+1 || !slices.Equal(recs[0], benchmarks.CSVHeader) {
		t.Errorf("bench.csv: %d records (want %d), err %v", len(recs), len(got.Rows)+1, err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), got.Setup) || strings.Count(string(md), "\n| ") != len(got.Rows)+2 {
		t.Errorf("bench.md lacks the setup line or has the wrong number of table lines:\n%s", md)
	}
}

// The trainer's refusal of subspace clipping with shuffling.
const subspaceShuffleRefusal = "clip subspace is accounted by the twice-sampling accountant, which needs sampler poisson or twice, not shuffle"

// Subspace cells report the trainer's run: K + D released coordinates,
// sensitivity C, per-block noise within the Cauchy–Schwarz bounds, ε by the
// twice-sampling accountant on the private set (public_n fewer examples).
func TestBenchSubspaceJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, append(benchTiny, "--json", "--clips", "subspace", "--samplers", "poisson,twice,shuffle",
		"--sigma", "1.5", "--clip-norm", "0.5", "--subspace-ranks", "4,8", "--public-n", "40")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Setup string           `json:"setup"`
		Rows  []benchmarks.Row `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, stdout)
	}
	if len(got.Rows) != 3 || !strings.Contains(got.Setup, "subspace ranks [4 8] from 40 public examples") {
		t.Fatalf("setup %q, %d rows; want the subspace settings and 3 rows", got.Setup, len(got.Rows))
	}
	const (
		sigma, c = 1.5, 0.5
		d, k, n  = (32 + 1) * 10, 8, 5000 - 40
	)
	poisson, twice, shuffle := got.Rows[0], got.Rows[1], got.Rows[2]
	want, err := accountant.PoissonEpsilon(32.0/n, sigma, 2, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []benchmarks.Row{poisson, twice} {
		if r.Err != "" || r.Steps != 2 || r.TrainN != n || r.Dim != k+d || r.Sigma != sigma || math.Abs(r.Sensitivity-c) > 1e-12 {
			t.Errorf("subspace × %s: err %q, %d steps, n %d, dim %d, σ %v, Δ₂ %v; want 2 steps, n = %d, K+D = %d, σ = %v, Δ₂ = C = %v",
				r.Sampler, r.Err, r.Steps, r.TrainN, r.Dim, r.Sigma, r.Sensitivity, n, k+d, sigma, c)
		}
		if lo, hi := sigma*sigma*c*c*4, sigma*sigma*c*c*(k+d); !(r.NoiseVariance > lo && r.NoiseVariance < hi) {
			t.Errorf("subspace × %s: E‖e‖² = %v outside (σ²C²·4, σ²C²(K+D)) = (%v, %v)", r.Sampler, r.NoiseVariance, lo, hi)
		}
		if r.Accountant != "twice" || r.Relation != "add-remove" || !(r.TestAcc >= 0 && r.TestAcc <= 1) {
			t.Errorf("subspace × %s: ε by %q (%s), accuracy %v", r.Sampler, r.Accountant, r.Relation, r.TestAcc)
		}
	}
	// At q2 = 1 the blocks' noise acts as one Gaussian of multiplier σ.
	if math.Abs(poisson.Epsilon-want.Epsilon) > 1e-9*want.Epsilon {
		t.Errorf("subspace × poisson: ε = %.10g, want PoissonEpsilon(32/%d, σ = %v, 2 steps) = %.10g", poisson.Epsilon, n, sigma, want.Epsilon)
	}
	if twice.NoiseVariance != poisson.NoiseVariance || !(twice.Epsilon < poisson.Epsilon) {
		t.Errorf("subspace × twice: E‖e‖² %v, ε %v; want poisson's noise %v and a smaller ε than %v",
			twice.NoiseVariance, twice.Epsilon, poisson.NoiseVariance, poisson.Epsilon)
	}
	if !strings.Contains(shuffle.Err, subspaceShuffleRefusal) || shuffle.Steps != 0 || shuffle.Epsilon != 0 {
		t.Errorf("subspace × shuffle: %+v; want the trainer's refusal", shuffle)
	}
}

func TestBenchBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--steps", "0"}, "--steps"},
		{[]string{"--sigma", "-1"}, "--sigma"},
		{[]string{"--sigma", "NaN"}, "--sigma"},
		{[]string{"--sigma", "1", "--epsilon", "2"}, "not both"},
		{[]string{"--epsilon", "0"}, "--epsilon"},
		{[]string{"--clips", "flat,bogus"}, `unknown name "bogus"`},
		{[]string{"--clips", ""}, "empty name"},
		{[]string{"--clips", "flat,flat"}, "twice"},
		{[]string{"--samplers", "poisson,,twice"}, "empty name"},
		{[]string{"--samplers", "twice", "--q2", "1.5"}, "q2"},
		{[]string{"--model", "nosuch"}, "model"},
		{[]string{"--dataset", "nosuch"}, "dataset"},
		{[]string{"--batch", "0"}, "batch_size"},
		{[]string{"--delta", "1"}, "delta"},
		{[]string{"--subspace-ranks", "8,x"}, "subspace-ranks"},
		{[]string{"--clips", "subspace", "--subspace-ranks", "8,4"}, "subspace_ranks must be increasing"},
		{[]string{"--clips", "flat,subspace", "--public-n", "20"}, "public_n (20) must be at least the largest subspace rank (32)"},
		{[]string{"--clips", "subspace", "--samplers", "shuffle", "--power-iters", "0"}, "power_iters"},
		{[]string{"--kernel-steps", "3"}, "kernel-steps"},
		{[]string{"--nosuchflag"}, "nosuchflag"},
		{[]string{"stray"}, "unexpected argument"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, stderr)
			continue
		}
		last := strings.TrimSpace(stderr)
		if i := strings.LastIndex(last, "\n"); i >= 0 { // the flag package may print usage first
			last = last[i+1:]
		}
		if !strings.Contains(last, tc.want) || !strings.HasPrefix(last, "dptrain bench: ") {
			t.Errorf("%v: last stderr line %q lacks %q", tc.args, last, tc.want)
		}
		if stdout != "" {
			t.Errorf("%v: printed %q on bad input", tc.args, stdout)
		}
	}
}

func FuzzParseNames(f *testing.F) {
	for _, s := range []string{"flat", "flat,linf", " hybrid , subspace", "", ",", "flat,,linf", "flat,flat", "FLAT", "per-layer,\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := parseNames("clips", s, benchmarks.Clips)
		if err != nil {
			if names != nil {
				t.Errorf("%q: names %v with error %v", s, names, err)
			}
			return
		}
		if len(names) == 0 {
			t.Fatalf("%q: no names and no error", s)
		}
		seen := map[string]bool{}
		for _, n := range names {
			if !slices.Contains(benchmarks.Clips, n) || seen[n] {
				t.Fatalf("%q: accepted %v", s, names)
			}
			seen[n] = true
		}
		again, err := parseNames("clips", strings.Join(names, ","), benchmarks.Clips)
		if err != nil || !slices.Equal(again, names) {
			t.Fatalf("%q: %v does not re-parse (%v, %v)", s, names, again, err)
		}
	})
}

// --clip-quantile applies to the L2 × poisson cells (labelled, noise at
// z_Δ > σ: a larger E‖e‖² at equal ε) and leaves the others at the fixed C.
func TestBenchClipQuantile(t *testing.T) {
	code, stdout, stderr := runCLI(t, append(benchTiny, "--clips", "flat,linf", "--samplers", "poisson", "--clip-quantile", "0.5")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5 (with the not-private footnote):\n%s", len(lines), stdout)
	}
	q, l := strings.Fields(lines[2]), strings.Fields(lines[3])
	if q[0] != "flat+q0.5" || l[0] != "linf" || q[8] != l[8] {
		t.Fatalf("rows %q / %q: want flat+q0.5 and linf at equal ε", lines[2], lines[3])
	}
	if code, _, _ := runCLI(t, append(benchTiny, "--clip-quantile", "1.5")...); code != 2 {
		t.Fatalf("--clip-quantile 1.5: exit %d, want 2", code)
	}
}
