package trainer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/datasets"
)

// writeRows writes a CSV table of two features and a label per row.
func writeRows(t *testing.T, path string, rows []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// twoClassRows is n rows of two separable classes labelled with names[0]
// and names[1].
func twoClassRows(n int, names [2]string) []string {
	rows := make([]string, n)
	for i := range rows {
		c := i % 2
		rows[i] = fmt.Sprintf("%d.%d,%d,%s", 2*c-1, i%7, 1-2*c, names[c])
	}
	return rows
}

// csvRun is a small seeded logistic regression on two CSV tables.
func csvRun(t *testing.T, train, test []string) Config {
	t.Helper()
	dir := t.TempDir()
	c := small(t)
	c.Dataset, c.Model, c.Hidden = "csv", "logreg", nil
	c.TrainFile, c.TestFile = filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	c.BatchSize, c.Steps, c.EvalEvery, c.CheckpointEvery = 30, 8, 4, 0
	c.OutDir = filepath.Join(dir, "out")
	writeRows(t, c.TrainFile, train)
	writeRows(t, c.TestFile, test)
	return c
}

var _ = errors.Is

// The class set is public (issue 29, finding 1): the test set's labels or
// Config.Classes, never the training data's. A training record outside it
// is refused as bad data, naming the label column, neither its line nor its
// value (issue 37's rule: a record's position is private too); before the fix one
// relabelled record grew the model (logreg(2,2) → logreg(2,6)) and a
// text-label mismatch printed the training label set.
func TestClassSetIsPublic(t *testing.T) {
	ints, names := [2]string{"0", "1"}, [2]string{"ant", "bee"}
	relabel := func(rows []string, label string) []string {
		rows[2] = rows[2][:strings.LastIndex(rows[2], ",")+1] + label
		return rows
	}
	for _, tc := range []struct {
		name        string
		train, test []string
		classes     []string
		k           int    // class count, when loaded
		refused     string // training value the refusal must not name
	}{
		{"integer labels", twoClassRows(20, ints), twoClassRows(6, ints), nil, 2, ""},
		{"integer label outside the test set's", relabel(twoClassRows(20, ints), "5"), twoClassRows(6, ints), nil, 0, "5"},
		{"text label outside the test set's", relabel(twoClassRows(20, names), "zebra"), twoClassRows(6, names), nil, 0, "zebra"},
		{"--classes adds a class the test set lacks", twoClassRows(20, names), twoClassRows(6, names), []string{"ant", "bee", "cow"}, 3, ""},
		{"--classes orders the classes", twoClassRows(20, names), twoClassRows(6, names), []string{"bee", "ant"}, 2, ""},
		{"a training label outside --classes", relabel(twoClassRows(20, names), "cow"), twoClassRows(6, names), []string{"ant", "bee"}, 0, "cow"},
	} {
		c := csvRun(t, tc.train, tc.test)
		c.Classes = tc.classes
		l, _, err := loadUserData(&c)
		if tc.refused != "" {
			msg := ""
			if err != nil {
				msg = strings.ReplaceAll(err.Error(), c.TrainFile, "TRAIN")
			}
			if !errors.Is(err, datasets.ErrBadData) || !errors.Is(err, datasets.ErrOutsideClasses) ||
				!strings.Contains(msg, "label column") || strings.Contains(msg, "line") || strings.Contains(msg, tc.refused) {
				t.Errorf("%s: err %v; want bad data naming the label column, neither the line nor %q", tc.name, err, tc.refused)
			}
			continue
		}
		if err != nil || l.Train.NumClasses != tc.k || l.Test.NumClasses != tc.k {
			t.Fatalf("%s: %v; want %d classes", tc.name, err, tc.k)
		}
		if tc.classes != nil && (l.Train.Y[1] != slices.Index(tc.classes, "bee") || l.Test.Y[0] != slices.Index(tc.classes, "ant")) {
			t.Errorf("%s: labels %v / %v do not follow --classes %v", tc.name, l.Train.Y[:2], l.Test.Y[:2], tc.classes)
		}
	}
	for _, bad := range []struct {
		dataset Dataset
		classes []string
	}{{"embedded", []string{"a", "b"}}, {"csv", []string{"a", "a"}}, {"csv", []string{"a", ""}}, {"csv", []string{" a", "b"}}} {
		c := csvRun(t, twoClassRows(4, ints), twoClassRows(4, ints))
		if c.Classes = bad.classes; bad.dataset != "csv" {
			c.Dataset, c.TrainFile, c.TestFile = bad.dataset, "", ""
		}
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--classes") {
			t.Errorf("dataset %s, classes %q: %v; want an invalid configuration", bad.dataset, bad.classes, err)
		}
	}
}

// writeImageTree writes root/split/class/i.png (4×4 grey images).
func writeImageTree(t *testing.T, root string, tree map[string]int) {
	t.Helper()
	for dir, n := range tree {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			img := image.NewGray(image.Rect(0, 0, 4, 4))
			img.Pix[i%16] = 200
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, dir, fmt.Sprintf("%d.png", i)), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Image folders take their classes from test/ (or --classes): a class
// directory only train/ holds is refused without being named; before the
// fix train/'s directories were the classes.
func TestImageFolderClassesArePublic(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tree    map[string]int
		classes []string
		k       int // 0: refused
	}{
		{"same classes", map[string]int{"train/ant": 3, "train/bee": 3, "test/ant": 2, "test/bee": 2}, nil, 2},
		{"test has more", map[string]int{"train/ant": 3, "train/bee": 3, "test/ant": 2, "test/bee": 2, "test/cow": 1}, nil, 3},
		{"train has another", map[string]int{"train/ant": 3, "train/zebra": 3, "test/ant": 2, "test/bee": 2}, nil, 0},
		{"--classes", map[string]int{"train/ant": 3, "test/ant": 2}, []string{"ant", "bee"}, 2},
		{"train outside --classes", map[string]int{"train/ant": 3, "train/zebra": 1, "test/ant": 2}, []string{"ant", "bee"}, 0},
	} {
		c := Default()
		c.Dataset, c.DataDir, c.Classes = "folder", t.TempDir(), tc.classes
		writeImageTree(t, c.DataDir, tc.tree)
		l, _, err := loadUserData(&c)
		if tc.k == 0 {
			if !errors.Is(err, datasets.ErrBadData) || !errors.Is(err, datasets.ErrOutsideClasses) || strings.Contains(err.Error(), "zebra") {
				t.Errorf("%s: err %v; want bad data that does not name the class", tc.name, err)
			}
			continue
		}
		if err != nil || l.Train.NumClasses != tc.k || l.Test.NumClasses != tc.k {
			t.Errorf("%s: %v; want %d classes", tc.name, err, tc.k)
		}
	}
}

// hiddenBound is the summary's hidden-state bound (nil: none).
func hiddenBound(s *Summary) *accountant.TrackedBound {
	for i := range s.Bounds {
		if s.Bounds[i].Name == "hidden" {
			return &s.Bounds[i]
		}
	}
	return nil
}

// An interrupted final-only run releases nothing about its iterate: no
// test figures in release/summary.json or report.html, and its resumption
// keeps the hidden-state bound. Asked for them (InterruptedTest), it
// releases them, and the run and its resumption drop the hidden-state
// bound, saying why (issue 29, finding 3).
func TestInterruptedFinalOnlyWithholdsTest(t *testing.T) {
	for _, ask := range []bool{false, true} {
		c := small(t) // as TestHiddenStateApplicability: the hidden-state bound applies
		c.Optimizer, c.Momentum, c.Radius, c.FinalOnly = "sgd", 0, 0.1, true
		c.BatchSize, c.Sigma, c.LR, c.Steps = 5, 10, 1, 20
		s, err := Run(context.Background(), c, Options{StopAfter: 7, InterruptedTest: ask})
		if !errors.Is(err, ErrInterrupted) {
			t.Fatal(err)
		}
		sum := jsonObjects(t, filepath.Join(c.OutDir, "release", "summary.json"))[0]
		_, hasAcc := sum["test_acc"]
		_, hasLoss := sum["test_loss"]
		page := string(readFile(t, filepath.Join(c.OutDir, "release", "report.html")))
		if hasAcc != ask || hasLoss != ask || strings.Contains(page, "withheld") == ask || s.TestWithheld == ask {
			t.Errorf("asked %v: released test_acc %v, test_loss %v, report withholds %v; want the figures exactly when asked",
				ask, hasAcc, hasLoss, strings.Contains(page, "withheld"))
		}
		hb := hiddenBound(s)
		if hb == nil || hb.Applicable == ask || strings.Contains(s.Claim, "hidden-state bound does not apply") != ask {
			t.Fatalf("asked %v: interrupted run's hidden bound %+v, claim %q", ask, hb, s.Claim)
		}
		// The resumption claims what covers everything released.
		r, err := Run(context.Background(), c, Options{Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		hb = hiddenBound(r)
		if hb == nil || hb.Applicable == ask || ask && r.Best.Accountant == "hidden" || strings.Contains(r.Claim, "hidden-state bound does not apply") != ask {
			t.Errorf("asked %v: resumed run's hidden bound %+v, best %s, claim %q", ask, hb, r.Best.Accountant, r.Claim)
		}
		if _, ok := jsonObjects(t, filepath.Join(c.OutDir, "release", "summary.json"))[0]["test_acc"]; !ok || r.TestWithheld {
			t.Errorf("asked %v: the completed run withholds its test figures", ask)
		}
	}
}

// The total of a sweep (issue 29, finding 5): two 5-step runs on the same
// data compose to the account of one 10-step run of the same mechanism;
// a shuffled run is accounted under replace-one, so it gets a total of its
// own (its own ε), not added to the add/remove total.
func TestComposeRuns(t *testing.T) {
	base := small(t)
	base.Model, base.Hidden, base.PrivateDiagnostics, base.KeepCheckpoint = "logreg", nil, false, false
	base.Steps, base.EvalEvery, base.CheckpointEvery, base.OutDir = 5, 0, 0, ""
	var sums []*Summary
	for _, lr := range []float64{0.5, 1} {
		c := base
		c.LR = lr
		sums = append(sums, run(t, c, Options{}))
	}
	long := base
	long.Steps = 10
	want := run(t, long, Options{})
	sh := base
	sh.Sampler = "shuffle"
	shuffled := run(t, sh, Options{})
	sums = append(sums, nil, shuffled)

	totals, err := ComposeRuns(sums, base.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if len(totals) != 2 {
		t.Fatalf("%d totals, want one per relation: %+v", len(totals), totals)
	}
	ar, ro := totals[0], totals[1]
	if ar.Relation != accountant.AddRemove || !slices.Equal(ar.Runs, []int{0, 1}) || ar.Bound.Accountant != want.Best.Accountant ||
		math.Abs(ar.Bound.Epsilon-want.Best.Epsilon) > 1e-9*want.Best.Epsilon {
		t.Errorf("add/remove total %+v; want runs [0 1] at the 10-step run's %s ε = %v", ar, want.Best.Accountant, want.Best.Epsilon)
	}
	if one := sums[0].Best.Epsilon; !(ar.Bound.Epsilon > one && ar.Bound.Epsilon < 2*one) {
		t.Errorf("total %v of two runs of ε %v: want more than one, less than their sum", ar.Bound.Epsilon, one)
	}
	if ro.Relation != accountant.ReplaceOne || !slices.Equal(ro.Runs, []int{3}) || ro.Bound.Epsilon != shuffled.Best.Epsilon {
		t.Errorf("replace-one total %+v; want run [3] at its own ε = %v", ro, shuffled.Best.Epsilon)
	}
}

// summary.json says what is true of its directory (issue 29, finding 4):
// a seeded run's release/ is not a private release, and private/ is never
// to be published; only an unseeded run's release/ may be published.
func TestSummaryPublishSaysWhatIsTrue(t *testing.T) {
	for _, seeded := range []bool{true, false} {
		c := releaseRun(t)
		c.Steps, c.EvalEvery, c.Plots, c.Seeded = 2, 0, false, seeded
		run(t, c, Options{})
		publish := func(side string) string {
			var p string
			if err := json.Unmarshal(jsonObjects(t, filepath.Join(c.OutDir, side, "summary.json"))[0]["publish"], &p); err != nil {
				t.Fatal(err)
			}
			return p
		}
		rel, priv := publish("release"), publish("private")
		if strings.Contains(rel, "may be published") == seeded || strings.HasPrefix(rel, "NOT a private release") != seeded {
			t.Errorf("seeded %v: release/summary.json publish %q", seeded, rel)
		}
		if strings.Contains(priv, "may be published") || !strings.Contains(priv, "never publish") {
			t.Errorf("seeded %v: private/summary.json publish %q", seeded, priv)
		}
	}
}

// Every Record key is either released (a releasedRecord key) or declared
// private with its reason, never both: wall time (elapsed_s) is private,
// shown on the curator's terminal only (issue 29, finding 6).
func TestRecordFieldsClassified(t *testing.T) {
	rel := fieldProvenance(reflect.TypeFor[releasedRecord]())
	for key := range fieldProvenance(reflect.TypeFor[Record]()) {
		_, r := rel[key]
		_, p := privateRecordFields[key]
		if r == p {
			t.Errorf("record key %q: released %v, declared private %v; want exactly one", key, r, p)
		}
	}
	if _, ok := privateRecordFields["elapsed_s"]; !ok {
		t.Error("wall time is not declared private")
	}
	for key := range privateRecordFields {
		if _, ok := fieldProvenance(reflect.TypeFor[Record]())[key]; !ok {
			t.Errorf("declared private key %q is no Record key", key)
		}
	}
}

// Twice sampling with hybrid clipping on a model with fewer parameters
// than d0 clips and accounts with d0 = D; release/summary.json says so
// (d0_used and a note), not only the configured d0 (issue 29, finding 6).
func TestSummaryEchoesD0Used(t *testing.T) {
	c := releaseRun(t)
	c.Sampler, c.Q2, c.Clip, c.D0, c.Steps, c.EvalEvery, c.Plots = "twice", 0.25, "hybrid", 1000, 2, 0, false
	s := run(t, c, Options{})
	sum := jsonObjects(t, filepath.Join(c.OutDir, "release", "summary.json"))[0]
	var used float64
	var notes []string
	json.Unmarshal(sum["d0_used"], &used)
	json.Unmarshal(sum["notes"], &notes)
	if used != float64(s.Params) || !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, fmt.Sprintf("d0 = %d used", s.Params)) }) {
		t.Errorf("d0_used %v, notes %q; want %d and a note", used, notes, s.Params)
	}
}

// Every file a run writes into private/ is 0600, plots included; the audit
// plot, drawn from the canaries' private inclusion bits, is among them
// (issue 29, finding 6).
func TestPrivateFilesAre0600(t *testing.T) {
	c := releaseRun(t)
	c.Steps, c.PrivateDiagnostics, c.KeepCheckpoint, c.PerInstance = 4, true, true, 20
	run(t, c, Options{})
	ents, err := os.ReadDir(filepath.Join(c.OutDir, "private"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".png") {
			seen++
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("private/%s: mode %v, want 0600", e.Name(), fi.Mode().Perm())
		}
	}
	if seen == 0 {
		t.Errorf("no plot in private/ to check: %v", ents)
	}
	if _, ok := releasedFiles["audit_scores.png"]; ok {
		t.Error("audit_scores.png is declared a release file")
	}
}

// --resume with no checkpoint refuses, naming the way out, when release/
// already holds an earlier run's records (issue 29, finding 6); with an
// empty directory it starts afresh as before.
func TestResumeWithoutCheckpointRefusesOverRecords(t *testing.T) {
	c := releaseRun(t)
	c.Steps, c.EvalEvery, c.Plots = 4, 0, false
	if _, err := Run(context.Background(), c, Options{StopAfter: 2}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(c.OutDir, "private", "checkpoint.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), c, Options{Resume: true})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("resume without checkpoint over records: %v; want refused naming --overwrite", err)
	}
	fresh := c
	fresh.OutDir = t.TempDir()
	if _, err := Run(context.Background(), fresh, Options{Resume: true}); err != nil {
		t.Errorf("resume in an empty directory: %v; want a fresh start", err)
	}
}

// A run stops as diverged only on released parameters: every step's when
// it releases every step, only the final step's in a final-only run, whose
// intermediate iterates are hidden (issue 29, finding 2).
func TestDivergedOnlyOnReleasedParameters(t *testing.T) {
	for _, finalOnly := range []bool{false, true} {
		c := small(t)
		c.Model, c.Hidden, c.FinalOnly = "logreg", nil, finalOnly
		st := &state{cfg: c, out: &outputs{root: c.OutDir}}
		if err := st.initRoot(nil); err != nil {
			t.Fatal(err)
		}
		if err := st.setup(); err != nil {
			t.Fatal(err)
		}
		if st.divergedAt(1) || st.divergedAt(st.steps) {
			t.Fatalf("final_only=%v: finite parameters diverged", finalOnly)
		}
		st.model.Params()[3] = float32(math.Inf(1))
		if got := st.divergedAt(1); got == finalOnly {
			t.Errorf("final_only=%v: non-finite parameters at step 1 stop the run: %v", finalOnly, got)
		}
		if !st.divergedAt(st.steps) {
			t.Errorf("final_only=%v: non-finite final parameters do not stop the run", finalOnly)
		}
	}
}
