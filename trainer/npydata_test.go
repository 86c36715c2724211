package trainer

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/datasets"
)

// writeNPYPair writes n examples of three separable classes as float32
// features (n, 2) and labels of dtype ydescr ("<i8" or "|u1"); labels
// listed in override replace the class of the first examples.
func writeNPYPair(t *testing.T, dir, name string, n int, ydescr string, override ...int) string {
	t.Helper()
	x := datasets.EncodeNPYHeader(datasets.NPYType{Kind: 'f', Size: 4}, false, []int{n, 2})
	yt := datasets.NPYType{Kind: 'i', Size: 8}
	if ydescr == "|u1" {
		yt = datasets.NPYType{Kind: 'u', Size: 1}
	}
	y := datasets.EncodeNPYHeader(yt, false, []int{n})
	for i := range n {
		c := i % 3
		x = binary.LittleEndian.AppendUint32(x, math.Float32bits(float32(c*3)+float32(i%7)/10))
		x = binary.LittleEndian.AppendUint32(x, math.Float32bits(float32(-c*2)))
		if i < len(override) {
			c = override[i]
		}
		if yt.Size == 1 {
			y = append(y, byte(c))
		} else {
			y = binary.LittleEndian.AppendUint64(y, uint64(c))
		}
	}
	xp, yp := filepath.Join(dir, name+"_x.npy"), filepath.Join(dir, name+"_y.npy")
	for p, b := range map[string][]byte{xp: x, yp: y} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return xp + "," + yp
}

func TestNPYConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"ok", func(c *Config) { c.Dataset, c.TrainFile, c.TestFile = "npy", "x.npy,y.npy", "a.npy, b.npy" }, ""},
		{"no test", func(c *Config) { c.Dataset, c.TrainFile = "npy", "x.npy,y.npy" }, `needs --test FEATURES.npy,LABELS.npy (got "")`},
		{"one file", func(c *Config) { c.Dataset, c.TrainFile, c.TestFile = "npy", "x.npy", "a.npy,b.npy" }, `needs --train FEATURES.npy,LABELS.npy (got "x.npy")`},
		{"three files", func(c *Config) { c.Dataset, c.TrainFile, c.TestFile = "npy", "x.npy,y.npy", "a,b,c" }, "needs --test"},
		{"label column", func(c *Config) {
			c.Dataset, c.TrainFile, c.TestFile, c.LabelColumn = "npy", "x.npy,y.npy", "a.npy,b.npy", "0"
		}, "not --data or --label-column"},
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

// TestTrainOnNPY trains a few steps on .npy files, the training features
// memory-mapped, and checks that a training label outside the test labels'
// classes is refused before training without naming it.
func TestTrainOnNPY(t *testing.T) {
	dir := t.TempDir()
	cfg := Default()
	cfg.Dataset, cfg.Model = "npy", "logreg"
	cfg.TrainFile = writeNPYPair(t, dir, "train", 300, "<i8")
	cfg.TestFile = writeNPYPair(t, dir, "test", 60, "|u1")
	cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 1e-4, 5, 60, 1, 1
	cfg.Seeded, cfg.Plots = true, false
	sum, err := Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.TrainN != 300 || sum.TestN != 60 || sum.Steps != 25 || sum.TestAcc < 0.9 || !strings.Contains(sum.Source, "3 classes from the test labels; training features memory-mapped") {
		t.Fatalf("train %d test %d steps %d accuracy %.3f source %q; want 300, 60, 25, ≥ 0.9, mapped", sum.TrainN, sum.TestN, sum.Steps, sum.TestAcc, sum.Source)
	}

	cfg.TrainFile = writeNPYPair(t, dir, "stray", 300, "<i8", 0, 1, 42)
	_, err = Run(context.Background(), cfg, Options{})
	if !errors.Is(err, datasets.ErrBadData) || !strings.Contains(err.Error(), "outside the class set 0..2 (taken from the test labels)") || strings.Contains(strings.ReplaceAll(err.Error(), dir, ""), "42") {
		t.Errorf("a training label outside the test classes: %v", err)
	}
}
