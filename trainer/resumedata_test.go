package trainer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
)

// Resuming a run that released statistics of its training data before its
// first step (issue 37, finding 3): over changed data it is refused, naming
// the data and never a value; over the same data it reuses the statistics
// the checkpoint holds (tampered here, so that a recomputation would show);
// and a checkpoint without the data's digest is refused with the way out.
func TestResumeOverChangedDataIsRefused(t *testing.T) {
	all, err := datasets.GaussianMixture{N: 500, K: 3, D: 4, Sep: 3, Seed: 7}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	tabTrain, tabTest := all.Split(0.8, 1)
	emb, err := datasets.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	imgTrain, imgTest := emb.Train.Subset(seq(120)), emb.Test.Subset(seq(40))
	const secret = 98765.4321
	for _, tc := range []struct {
		name        string
		train, test *datasets.Dataset
		set         func(*Config)
		// stat is the released statistic in the checkpoint; trans the
		// transform of model.bin that holds it ("": none, withheld).
		stat  func(*releasedStats) []*float64
		trans string
	}{
		{"standardize", tabTrain, tabTest, func(c *Config) {
			c.Scale, c.FeatureBounds, c.ScaleSigma = ScaleStandardize, "-9:9,-9:9,-9:9,-9:9", 5
		}, func(r *releasedStats) []*float64 { return ptrs(r.Standardize.Mean) }, "clip_scale"},
		{"dpsgdf", tabTrain, tabTest, func(c *Config) {
			c.DPSGDF, c.FeatureEps, c.FeatureCF = true, 1, 1
		}, func(r *releasedStats) []*float64 { return ptrs(r.DPSGDF.Mu) }, "center"},
		{"dpsgdf theory", tabTrain, tabTest, func(c *Config) {
			c.DPSGDF, c.DPSGDFVariant, c.FeatureCF, c.Epsilon = true, DPSGDFTheory, 10, 8
			c.Accountant = AccountantRDP // (the PLD of its many search counts is slow)
		}, func(r *releasedStats) []*float64 { return append(ptrs(r.DPSGDF.Mu), &r.DPSGDF.Tau) }, ""},
		{"scatternet", imgTrain, imgTest, func(c *Config) {
			c.Features, c.FeatureNorm, c.FeatureCache = FeaturesScatterNet, FeatureNormPrivate, t.TempDir()
		}, func(r *releasedStats) []*float64 { return ptrs(r.ScatterNet.Mean) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			train, test := tc.train, tc.test
			cfg := Default()
			cfg.Model, cfg.Hidden, cfg.BatchSize, cfg.Steps, cfg.Epsilon, cfg.Sigma = "logreg", nil, 50, 6, 0, 1
			cfg.Seeded, cfg.Seed, cfg.Plots, cfg.EvalEvery, cfg.CheckpointEvery = true, 3, false, 0, 0
			cfg.OutDir = filepath.Join(t.TempDir(), "out")
			tc.set(&cfg)
			opts := Options{Train: train, Test: test, StopAfter: 3}
			if _, err := Run(context.Background(), cfg, opts); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("first leg: %v", err)
			}
			ckPath := filepath.Join(cfg.OutDir, "private", "checkpoint.json")
			ckBytes, err := os.ReadFile(ckPath)
			if err != nil {
				t.Fatal(err)
			}
			resume := func(tr *datasets.Dataset) error {
				_, err := Run(context.Background(), cfg, Options{Train: tr, Test: test, Resume: true})
				return err
			}

			// One training value changed: refused, naming the training
			// data only, never the value; the checkpoint stays.
			changed := *train
			changed.X = slices.Clone(train.X)
			changed.X[train.Dim()*17+2] = secret
			err = resume(&changed)
			if !errors.Is(err, ErrDataChanged) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("resume over changed data: %v, want ErrDataChanged", err)
			}
			// (The checkpoint's temporary path has random digits.)
			msg := strings.ReplaceAll(err.Error(), ckPath, "CHECKPOINT")
			if !strings.Contains(msg, "training data (Options.Train)") || strings.Contains(msg, "test data") ||
				!strings.Contains(msg, "--overwrite") || strings.Contains(msg, "98765") || strings.Contains(msg, "17") {
				t.Errorf("message %q: want the training data named, no value or position, and the way out", msg)
			}
			if b, _ := os.ReadFile(ckPath); !slices.Equal(b, ckBytes) {
				t.Error("the refused resume changed the checkpoint")
			}

			// The same data: the checkpoint's released statistic is used
			// (set to values no fit would give), not a recomputed one.
			parsed, err := parseCheckpoint(ckBytes)
			if err != nil {
				t.Fatal(err)
			}
			ck := *parsed
			if ck.Data == nil || ck.Data.Digest.Train.SHA256 == "" {
				t.Fatalf("checkpoint holds no data digest: %+v", ck.Data)
			}
			var want []float64
			for i, v := range tc.stat(&ck.Data.Released) {
				*v = 0.125 * float64(i+1)
				want = append(want, *v)
			}
			b, err := encodeCheckpoint(&ck)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ckPath, b, 0o600); err != nil {
				t.Fatal(err)
			}
			var used []float64
			testDataHook = func(p *prepared) {
				for _, v := range tc.stat(&p.released) {
					used = append(used, *v)
				}
			}
			err = resume(train)
			testDataHook = nil
			if err != nil {
				t.Fatalf("resume over the same data: %v", err)
			}
			if !slices.Equal(used, want) {
				t.Errorf("the resumed run released %v, want the checkpoint's %v", used, want)
			}
			if tc.trans == "" {
				return
			}
			m, err := models.LoadNet(filepath.Join(cfg.OutDir, "release", "model.bin"), models.Options{})
			if err != nil {
				t.Fatal(err)
			}
			md, err := m.Meta()
			if err != nil {
				t.Fatal(err)
			}
			if len(md.Preprocess) != 1 || md.Preprocess[0].Type != tc.trans || !slices.Equal(md.Preprocess[0].Mean, want) {
				t.Errorf("model.bin preprocessing %+v, want the checkpoint's %s mean %v", md.Preprocess, tc.trans, want)
			}

			// A checkpoint written before the digest existed. (The run above
			// completed: its summary goes, or the resume would say so.)
			if err := os.Remove(filepath.Join(cfg.OutDir, "release", "summary.json")); err != nil {
				t.Fatal(err)
			}
			ck.Data = nil
			old, err := encodeCheckpoint(&ck)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ckPath, old, 0o600); err != nil {
				t.Fatal(err)
			}
			err = resume(train)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "digest") || !strings.Contains(err.Error(), "--overwrite") {
				t.Errorf("resume from a checkpoint without a digest: %v", err)
			}
		})
	}
}

// ptrs points at each element of v.
func ptrs(v []float64) []*float64 {
	p := make([]*float64, len(v))
	for i := range v {
		p[i] = &v[i]
	}
	return p
}
