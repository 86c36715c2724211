package trainer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/datasets"
)

func writeCSV(t *testing.T, path string, header bool, n int) {
	t.Helper()
	var b strings.Builder
	if header {
		b.WriteString("a,b,class\n")
	}
	for i := range n {
		c := i % 3
		fmt.Fprintf(&b, "%d.%d,%d,%d\n", c*3, i%7, -c*2, c)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUserDataConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"csv ok", func(c *Config) { c.Dataset, c.TrainFile, c.TestFile = "csv", "a", "b" }, ""},
		{"csv without test", func(c *Config) { c.Dataset, c.TrainFile = "csv", "a" }, "needs --train FILE and --test FILE"},
		{"csv with data", func(c *Config) { c.Dataset, c.TrainFile, c.TestFile, c.DataDir = "csv", "a", "b", "d" }, "not a directory"},
		{"folder without data", func(c *Config) { c.Dataset = "folder" }, "needs --data DIR"},
		{"embedded with data", func(c *Config) { c.DataDir = "somewhere" }, `data "somewhere": dataset embedded reads no directory`},
		{"train without csv", func(c *Config) { c.TrainFile = "a" }, "need --dataset csv"},
	} {
		c := Default()
		tc.edit(&c)
		err := c.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadCSVTables(t *testing.T) {
	dir := t.TempDir()
	tr, te, bare := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv"), filepath.Join(dir, "bare.csv")
	writeCSV(t, tr, true, 30)
	writeCSV(t, te, true, 9)
	writeCSV(t, bare, false, 6)
	for _, tc := range []struct {
		train, test, label string
		n, dim, k          int
		err                string
	}{
		{tr, te, "", 30, 2, 3, ""},
		{tr, te, "class", 30, 2, 3, ""},
		{tr, te, "2", 30, 2, 3, ""},
		{bare, bare, "", 6, 2, 3, ""},
		{bare, bare, "class", 0, 0, 0, "has no header line"},
		{tr, filepath.Join(dir, "none.csv"), "", 0, 0, 0, "no such file"},
	} {
		cfg := Default()
		cfg.Dataset, cfg.TrainFile, cfg.TestFile, cfg.LabelColumn = "csv", tc.train, tc.test, tc.label
		l, _, err := loadUserData(&cfg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, datasets.ErrBadData) {
				t.Errorf("%s label %q: err %v, want %q (bad data)", filepath.Base(tc.train), tc.label, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s label %q: %v", filepath.Base(tc.train), tc.label, err)
			continue
		}
		if l.Train.N() != tc.n || l.Train.Dim() != tc.dim || l.Train.NumClasses != tc.k || l.Test.NumClasses != tc.k {
			t.Errorf("%s label %q: n=%d dim=%d k=%d/%d, want %d %d %d", filepath.Base(tc.train), tc.label,
				l.Train.N(), l.Train.Dim(), l.Train.NumClasses, l.Test.NumClasses, tc.n, tc.dim, tc.k)
		}
	}
}

func TestTrainOnCSV(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeCSV(t, tr, true, 300)
	writeCSV(t, te, true, 60)
	cfg := Default()
	cfg.Dataset, cfg.TrainFile, cfg.TestFile, cfg.Model = "csv", tr, te, "logreg"
	cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 1e-4, 5, 60, 1, 1
	cfg.Seeded, cfg.Plots = true, false
	sum, err := Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.TrainN != 300 || sum.TestN != 60 || sum.Steps != 25 || sum.TestAcc < 0.9 {
		t.Fatalf("train %d test %d steps %d accuracy %.3f; want 300, 60, 25 and ≥ 0.9", sum.TrainN, sum.TestN, sum.Steps, sum.TestAcc)
	}
}
