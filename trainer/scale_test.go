package trainer

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/preprocess"
	"github.com/dptrain/dptrain/rng"
)

// TestScaleRun trains on a CSV table with declared feature bounds and checks
// (1) the run's ε is a fresh accountant's composition of the statistics'
// Gaussian event and the steps, (2) model.bin holds the clip_scale
// transform, and (3) predict's path (raw records through the stored
// transform) gives the same probabilities as the trainer's evaluation path,
// and so the run's test accuracy.
func TestScaleRun(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeCSV(t, tr, true, 300)
	writeCSV(t, te, true, 60)
	derived, err := preprocess.ScaleSigma(0.1, 4, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		scale   Scale
		sigma   float64 // --scale-sigma
		charged float64 // the statistics' noise multiplier (0: nothing charged)
	}{
		{"minmax", ScaleMinMax, 0, 0},
		{"standardize declared", ScaleStandardize, 5, 5},
		{"standardize derived", ScaleStandardize, 0, derived},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.Dataset, cfg.TrainFile, cfg.TestFile, cfg.Model = DatasetCSV, tr, te, "logreg"
			cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 1e-4, 3, 60, 1, 1
			cfg.Seeded, cfg.Seed, cfg.Plots, cfg.OutDir = true, 3, false, filepath.Join(t.TempDir(), "out")
			cfg.Scale, cfg.FeatureBounds, cfg.ScaleSigma = tc.scale, "0:10,-5:1", tc.sigma
			sum, err := Run(context.Background(), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// (1) the composed ε.
			var prefix []accountant.Event
			if tc.charged > 0 {
				prefix = append(prefix, accountant.Gaussian{Sigma: tc.charged})
			}
			step := accountant.PoissonSampled{Q: sum.Q, Event: accountant.Gaussian{Sigma: sum.Sigma}}
			for name, newAcc := range map[string]func() (accountant.Accountant, error){
				"rdp": func() (accountant.Accountant, error) { return accountant.NewRDP() },
				"pld": func() (accountant.Accountant, error) { return accountant.NewPLD() },
			} {
				acc, err := newAcc()
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range prefix {
					if err := acc.Compose(ev, 1); err != nil {
						t.Fatal(err)
					}
				}
				if err := acc.Compose(step, sum.Steps); err != nil {
					t.Fatal(err)
				}
				b, err := acc.Epsilon(cfg.Delta)
				if err != nil {
					t.Fatal(err)
				}
				if got := sum.Epsilon[name]; math.Abs(got-b.Epsilon) > 1e-9*b.Epsilon {
					t.Errorf("%s ε %v, composition of %v and %d steps gives %v", name, got, prefix, sum.Steps, b.Epsilon)
				}
			}
			// (2) the stored transform.
			m, err := models.LoadNet(filepath.Join(cfg.OutDir, "release", "model.bin"), models.Options{})
			if err != nil {
				t.Fatal(err)
			}
			md, err := m.Meta()
			if err != nil {
				t.Fatal(err)
			}
			if len(md.Preprocess) != 1 || md.Preprocess[0].Type != "clip_scale" || !slices.Equal(md.Preprocess[0].Lo, []float64{0, -5}) || !slices.Equal(md.Preprocess[0].Hi, []float64{10, 1}) {
				t.Fatalf("stored preprocessing %+v", md.Preprocess)
			}
			if tc.scale == ScaleMinMax && (!slices.Equal(md.Preprocess[0].Mean, []float64{0, -5}) || !slices.Equal(md.Preprocess[0].Scale, []float64{10, 6})) {
				t.Errorf("minmax stored %+v, want centre (0, -5) and scale (10, 6)", md.Preprocess[0])
			}
			// (3) predict's path against the evaluation path.
			l, _, err := LoadDataset(cfg)
			if err != nil {
				t.Fatal(err)
			}
			raw := slices.Clone(l.Test.X)
			if err := m.ApplyPreprocess(raw, l.Test.N()); err != nil {
				t.Fatal(err)
			}
			got, err := m.Predict(raw, l.Test.N())
			if err != nil {
				t.Fatal(err)
			}
			p, err := loadData(&cfg, rng.New(cfg.Seed), nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Predict(p.test.X, p.test.N())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("predict path %v, evaluation path %v", got[:4], want[:4])
			}
			k, correct := len(got)/l.Test.N(), 0
			for i, y := range l.Test.Y {
				row := got[i*k : (i+1)*k]
				if slices.Index(row, slices.Max(row)) == y {
					correct++
				}
			}
			if acc := float64(correct) / float64(l.Test.N()); math.Abs(acc-sum.TestAcc) > 1e-12 {
				t.Errorf("predict accuracy %v, run's %v", acc, sum.TestAcc)
			}
		})
	}
}

func TestScaleConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"minmax", func(c *Config) { c.Scale, c.FeatureBounds = ScaleMinMax, "0:1" }, true},
		{"standardize from epsilon", func(c *Config) { c.Scale, c.FeatureBounds = ScaleStandardize, "0:1" }, true},
		{"no bounds", func(c *Config) { c.Scale = ScaleStandardize }, false},
		{"bounds without scale", func(c *Config) { c.FeatureBounds = "0:1" }, false},
		{"no epsilon no sigma", func(c *Config) { c.Scale, c.FeatureBounds, c.Epsilon, c.Sigma = ScaleStandardize, "0:1", 0, 1 }, false},
		{"declared sigma", func(c *Config) {
			c.Scale, c.FeatureBounds, c.Epsilon, c.Sigma, c.ScaleSigma = ScaleStandardize, "0:1", 0, 1, 3
		}, true},
		{"fraction 1", func(c *Config) { c.Scale, c.FeatureBounds, c.ScaleEpsFraction = ScaleStandardize, "0:1", 1 }, false},
		{"with dpsgdf", func(c *Config) {
			c.Scale, c.FeatureBounds, c.DPSGDF, c.FeatureEps, c.FeatureCF = ScaleMinMax, "0:1", true, 1, 1
		}, false},
	} {
		c := Default()
		c.Dataset, c.TrainFile, c.TestFile, c.Model = DatasetCSV, "a.csv", "b.csv", "logreg"
		tc.edit(&c)
		err := c.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrFeatures) {
			t.Errorf("%s: %v is not ErrFeatures", tc.name, err)
		}
	}
}
