package trainer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

// releaseRun is a small seeded run that writes everything a run can write
// to release/ (model, summary, metrics with evaluations, plots).
func releaseRun(t *testing.T) Config {
	c := small(t)
	c.Model, c.Steps, c.EvalEvery, c.Plots = "logreg", 12, 4, true
	c.PrivateDiagnostics, c.KeepCheckpoint = false, false
	return c
}

// Every field of every released type declares a released provenance, and
// the check itself refuses a field that does not (so this test can fail).
func TestReleasedTypesDeclareProvenance(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[releasedSummary](), reflect.TypeFor[releasedRecord]()} {
		if errs := provenanceErrors(typ); len(errs) > 0 {
			t.Errorf("%s:\n%s", typ.Name(), strings.Join(errs, "\n"))
		}
	}
	type leaky struct {
		Step int     `json:"step" prov:"config"`
		Loss float64 `json:"loss"` // a raw training statistic, undeclared
		Norm float64 `json:"grad_norm_max" prov:"training"`
	}
	if errs := provenanceErrors(reflect.TypeFor[leaky]()); len(errs) != 2 {
		t.Errorf("undeclared and training-data fields not refused: %v", errs)
	}
	// The raw record is not a released type: its training statistics have
	// no released provenance.
	if errs := provenanceErrors(reflect.TypeFor[Record]()); len(errs) == 0 {
		t.Error("Record (with loss and gradient norms) passes as releasable")
	}
}

// Everything a run writes to release/ is a declared file, and every JSON
// key in it is a declared field of released provenance; private/ is 0700
// and its files 0600; the completed run's checkpoint is gone.
func TestReleaseHoldsOnlyDeclaredFields(t *testing.T) {
	c := releaseRun(t)
	c.PrivateDiagnostics = true
	run(t, c, Options{})
	fields := ReleaseFields()
	entries, err := os.ReadDir(filepath.Join(c.OutDir, "release"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		seen[name] = true
		if _, ok := releasedFiles[name]; !ok {
			t.Errorf("release/%s is not a declared release file", name)
			continue
		}
		decl, isJSON := fields[name]
		if !isJSON || decl[""] != "" {
			continue
		}
		for i, obj := range jsonObjects(t, filepath.Join(c.OutDir, "release", name)) {
			for k := range obj {
				if p, ok := decl[k]; !ok || !released(p) {
					t.Errorf("release/%s object %d: key %q has provenance %q", name, i, k, p)
				}
			}
		}
	}
	for _, want := range []string{"model.bin", "summary.json", "metrics.jsonl", "test.png", "epsilon.png"} {
		if !seen[want] {
			t.Errorf("release/%s missing", want)
		}
	}
	// The private side: 0700 directory, 0600 files, diagnostics present,
	// checkpoint removed after a completed run.
	fi, err := os.Stat(filepath.Join(c.OutDir, "private"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("private/: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
	for _, name := range []string{"diagnostics.jsonl", "summary.json"} {
		fi, err := os.Stat(filepath.Join(c.OutDir, "private", name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("private/%s: %v; want mode 0600", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(c.OutDir, "private", "checkpoint.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint of a completed run left behind: %v", err)
	}
	// The raw statistics are where they belong, and not in release/.
	diag := jsonObjects(t, filepath.Join(c.OutDir, "private", "diagnostics.jsonl"))
	if _, ok := diag[0]["grad_norm_max"]; !ok || len(diag) != c.Steps {
		t.Errorf("private diagnostics lack gradient norms: %v", diag[0])
	}
	rel, _ := os.ReadFile(filepath.Join(c.OutDir, "release", "metrics.jsonl"))
	for _, raw := range []string{"loss\"", "grad_norm", "clipped_frac", "batch_size", "train_acc", "elapsed"} {
		if bytes.Contains(bytes.ReplaceAll(rel, []byte("test_loss\""), nil), []byte(raw)) {
			t.Errorf("release/metrics.jsonl carries %s", raw)
		}
	}
}

func released(p string) bool {
	for _, k := range releasedKinds {
		if p == k {
			return true
		}
	}
	return false
}

// jsonObjects reads a JSON file or JSON-lines file as objects.
func jsonObjects(t *testing.T, path string) []map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]json.RawMessage
	if strings.HasSuffix(path, ".jsonl") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return append(out, m)
}

// The leak test: two seeded runs, one with a training record replaced by an
// outlier (pixels ×100, so its gradient is far larger). Everything released
// that is not derived from the noised model must be identical between them:
// the outlier may move the model (that is what ε bounds), nothing else.
// With the raw statistics that used to be released (grad_norm_max, loss),
// the private diagnostics show the outlier plainly; the test checks that
// too, so it would fail if the statistics reached release/.
// With a released clipped count (σ_b = 3) the same holds: the count is the
// only other field that moves, and it is noised and accounted.
func TestReleaseDoesNotLeakAnOutlier(t *testing.T) {
	for _, sigmaB := range []float64{0, 3} {
		t.Run(fmt.Sprintf("clipped_count_sigma=%g", sigmaB), func(t *testing.T) { testNoLeak(t, sigmaB) })
	}
}

func testNoLeak(t *testing.T, sigmaB float64) {
	dirs := [2]string{}
	for i := range dirs {
		c := releaseRun(t)
		c.Sigma, c.Epsilon = 0, 4 // calibrated σ: a function of the configuration and n
		c.BatchSize = 2000        // q = 0.4: the outlier is sampled
		c.PrivateDiagnostics = true
		c.ClippedCountSigma = sigmaB
		if i == 1 {
			testDataHook = func(p *prepared) {
				x := append([]float32(nil), p.train.X...)
				d := p.train.Dim()
				for j := 0; j < d; j++ {
					x[j] *= 100
				}
				p.train = withFeatures(p.train, x)
			}
		}
		run(t, c, Options{})
		testDataHook = nil
		dirs[i] = c.OutDir
	}
	fields := ReleaseFields()
	for _, name := range []string{"summary.json", "metrics.jsonl"} {
		a := jsonObjects(t, filepath.Join(dirs[0], "release", name))
		b := jsonObjects(t, filepath.Join(dirs[1], "release", name))
		if len(a) != len(b) {
			t.Fatalf("release/%s: %d vs %d objects", name, len(a), len(b))
		}
		for i := range a {
			keys := map[string]bool{}
			for k := range a[i] {
				keys[k] = true
			}
			for k := range b[i] {
				keys[k] = true
			}
			for k := range keys {
				if p := fields[name][k]; p == ProvModel || p == ProvNoised {
					continue
				}
				if !bytes.Equal(a[i][k], b[i][k]) {
					t.Errorf("release/%s object %d: %q differs with the outlier: %s vs %s", name, i, k, a[i][k], b[i][k])
				}
			}
		}
	}
	for _, name := range []string{"epsilon.png", "epsilon.svg"} {
		if !bytes.Equal(readFile(t, filepath.Join(dirs[0], "release", name)), readFile(t, filepath.Join(dirs[1], "release", name))) {
			t.Errorf("release/%s differs with the outlier", name)
		}
	}
	// The outlier is visible in the private statistics (so a release of
	// them would fail the comparison above).
	da := mustMetrics(t, dirs[0])
	db := mustMetrics(t, dirs[1])
	maxNorm := func(rs []Record) float64 {
		m := 0.0
		for _, r := range rs {
			m = math.Max(m, r.GradNormMax)
		}
		return m
	}
	if !(maxNorm(db) > 2*maxNorm(da)) {
		t.Errorf("the outlier did not show in the private diagnostics (max norm %v vs %v): the test has lost its teeth", maxNorm(db), maxNorm(da))
	}
}

// A final-only (hidden-state) run writes nothing intermediate to release/:
// no test figures before the last step, no model while interrupted; the
// hidden-state bound stays valid. Weight decay makes it not valid, saying why.
func TestFinalOnlyReleasesNothingIntermediate(t *testing.T) {
	hidden := func(t *testing.T) Config {
		c := releaseRun(t)
		c.Optimizer, c.Momentum, c.Radius, c.FinalOnly, c.LR = "sgd", 0, 5, true, 0.5
		return c
	}
	c := hidden(t)
	s := run(t, c, Options{})
	recs := jsonObjects(t, filepath.Join(c.OutDir, "release", "metrics.jsonl"))
	for i, r := range recs {
		if _, ok := r["test_acc"]; ok != (i == len(recs)-1) {
			t.Errorf("step %d: test figures released=%v; want only at the final step", i+1, ok)
		}
	}
	var hb *accountant.TrackedBound
	for i := range s.Bounds {
		if s.Bounds[i].Name == "hidden" {
			hb = &s.Bounds[i]
		}
	}
	if hb == nil || !hb.Applicable {
		t.Fatalf("hidden-state bound missing or not valid for a final-only run: %+v", hb)
	}

	wd := hidden(t)
	wd.WeightDecay = 5
	s = run(t, wd, Options{})
	for _, b := range s.Bounds {
		if b.Name == "hidden" && (b.Applicable || !strings.Contains(b.Reason, "weight decay 5")) {
			t.Errorf("weight decay 5: hidden bound applicable=%v, reason %q", b.Applicable, b.Reason)
		}
	}
	if s.Best.Accountant == "hidden" {
		t.Error("weight decay: the hidden-state bound is still the result")
	}

	// Interrupted: no model.bin in release/, the checkpoint in private/.
	in := hidden(t)
	if _, err := Run(context.Background(), in, Options{StopAfter: 5}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.OutDir, "release", "model.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("interrupted final-only run released a model: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(in.OutDir, "private", "checkpoint.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("checkpoint: %v; want private/checkpoint.json mode 0600", err)
	}
}

// Twice sampling with hybrid clipping on a model with D < d0 parameters:
// the clip uses d0 = min(d0, D), so the noise added is σ·C and the account
// describes it (issue 17's example: q1 = 0.05, σ = 1, T = 1000, q2 = 0.25,
// δ = 1e-5 gives 1.734 at d0 = 100, 1.746 at D = 33, 1.885 at D = 4: the
// old account charged 1.734 for the smaller models).
func TestTwiceHybridSmallModelAccountsItsNoise(t *testing.T) {
	for _, tc := range []struct {
		d0, want float64
	}{{100, 1.7343029554576814}, {33, 1.745696820925314}, {4, 1.8845516835502907}} {
		a := accountant.NewTwice()
		if err := a.Compose(accountant.NewTwiceSampled(0.05, 0.25, 1, tc.d0), 1000); err != nil {
			t.Fatal(err)
		}
		b, err := a.Epsilon(1e-5)
		if err != nil || math.Abs(b.Epsilon-tc.want) > 1e-9 {
			t.Errorf("d0 = %v: ε = %v (%v), want %v", tc.d0, b.Epsilon, err, tc.want)
		}
	}
	c := small(t)
	c.Model, c.Sampler, c.Q2, c.Clip, c.D0, c.Steps = "logreg", "twice", 0.25, "hybrid", 1000, 5
	s := run(t, c, Options{})
	const D = 32*10 + 10
	if s.Params != D || math.Abs(s.Sensitivity-c.ClipNorm) > 1e-12 {
		t.Fatalf("D = %d, L2 sensitivity %v; want %d and C = %v", s.Params, s.Sensitivity, D, c.ClipNorm)
	}
	a := accountant.NewTwice()
	if err := a.Compose(accountant.NewTwiceSampled(float64(c.BatchSize)/float64(s.TrainN), c.Q2, c.Sigma, D), c.Steps); err != nil {
		t.Fatal(err)
	}
	want, _ := a.Epsilon(c.Delta)
	if math.Abs(s.Best.Epsilon-want.Epsilon) > 1e-12 {
		t.Errorf("run's ε %v, the account of the noise it added (d0 = D = %d) %v", s.Best.Epsilon, D, want.Epsilon)
	}
}

// Resume refuses a checkpoint whose mechanism differs, naming the setting,
// and a completed run is not resumed.
func TestResumeRefusals(t *testing.T) {
	c := small(t)
	c.Model = "logreg"
	if _, err := Run(context.Background(), c, Options{StopAfter: 3}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		edit func(*Config)
	}{
		{"sigma:", func(c *Config) { c.Sigma = 2 }},
		{"batch_size:", func(c *Config) { c.BatchSize = 100 }},
		{"clip:", func(c *Config) { c.Clip = "linf" }},
		{"sampler:", func(c *Config) { c.Sampler = "shuffle" }},
	} {
		c2 := c
		tc.edit(&c2)
		_, err := Run(context.Background(), c2, Options{Resume: true})
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s changed: resume error %v", tc.key, err)
		}
	}
	// The checkpoint's σ differs from the one this run would use (as a
	// calibration on another machine might): refused.
	ck := mustCheckpoint(t, c.OutDir)
	st := &state{cfg: c, out: &outputs{root: c.OutDir}}
	if err := st.initRoot(ck); err != nil {
		t.Fatal(err)
	}
	if err := st.setup(); err != nil {
		t.Fatal(err)
	}
	ck.Q *= 1.5
	if err := st.checkMechanism(ck); err == nil || !strings.Contains(err.Error(), "q: checkpoint") {
		t.Errorf("a checkpoint with another q: %v", err)
	}
	// Finish, then resume: refused as finished.
	c.KeepCheckpoint = false
	if _, err := Run(context.Background(), c, Options{Resume: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), c, Options{Resume: true}); !errors.Is(err, ErrFinished) {
		t.Errorf("resuming a completed run: %v, want ErrFinished", err)
	}
}

// ReleaseFields lists every release file with a provenance.
func TestReleaseFieldsCoverEveryFile(t *testing.T) {
	f := ReleaseFields()
	var names []string
	for n := range releasedFiles {
		names = append(names, n)
		if _, ok := f[n]; !ok {
			t.Errorf("%s has no provenance entry", n)
		}
	}
	sort.Strings(names)
	if len(f) != len(names) {
		t.Errorf("ReleaseFields lists %d files, %d declared", len(f), len(names))
	}
}

// --public-data: a separate public set leaves the training set whole (the
// claim covers every record); "test" takes the first public_n test records
// out of evaluation; the private corpus itself, or data of another shape,
// is refused.
func TestPublicDataForSubspace(t *testing.T) {
	c := small(t)
	c.Clip, c.SubspaceRanks, c.PublicN, c.Steps = "subspace", []int{4, 8}, 50, 3
	c.PublicData = "test"
	s := run(t, c, Options{})
	if s.CoveredN != s.TrainN || s.TrainN != 5000 || s.TestN != 1000-50 || strings.Contains(s.Claim, "carved") {
		t.Errorf("public_data test: covered %d of %d, test %d, claim %q", s.CoveredN, s.TrainN, s.TestN, s.Claim)
	}
	for _, tc := range []struct {
		data, dataset, want string
	}{
		{"synthetic", "synthetic", "is (part of) the private training corpus"},
		{"embedded", "fashion-mnist", "is (part of) the private training corpus"},
	} {
		bad := small(t)
		bad.Clip, bad.SubspaceRanks, bad.PublicN = "subspace", []int{4, 8}, 50
		bad.PublicData, bad.Dataset = tc.data, Dataset(tc.dataset)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("public_data %s on %s: %v", tc.data, tc.dataset, err)
		}
	}
	flat := small(t)
	flat.PublicData = "embedded"
	if err := flat.Validate(); err == nil || !strings.Contains(err.Error(), "needs clip subspace") {
		t.Errorf("public_data without subspace clipping: %v", err)
	}
	// Embedded Fashion-MNIST (784 features) for a 32-feature synthetic run.
	shape := small(t)
	shape.Clip, shape.SubspaceRanks, shape.PublicN, shape.PublicData = "subspace", []int{4, 8}, 50, "embedded"
	if _, err := Run(context.Background(), shape, Options{}); err == nil || !strings.Contains(err.Error(), "784 features per record; the training data has 32") {
		t.Errorf("public data of another shape: %v", err)
	}
}
