package trainer

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateNamesEveryBadValue(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		wants []string
	}{
		{"delta", func(c *Config) { c.Delta = 1 }, []string{"delta must be in (0,1), got 1"}},
		{"nan sigma", func(c *Config) { c.Sigma = math.NaN() }, []string{"sigma must be finite"}},
		{"model", func(c *Config) { c.Model = "bn-net" }, []string{`model "bn-net" is not one of`}},
		{"no noise", func(c *Config) { c.Sigma, c.Epsilon = 0, 0 }, []string{"set sigma"}},
		{"twice q2", func(c *Config) { c.Sampler, c.Q2 = "twice", 1.5 }, []string{"q2 must be in (0,1]"}},
		{"subspace shuffle", func(c *Config) {
			c.Clip, c.Sampler, c.SubspaceRanks = "subspace", "shuffle", []int{4}
		}, []string{"clip subspace is accounted by the twice-sampling accountant"}},
		{"srdp twice", func(c *Config) {
			c.Preprocess, c.PCAK, c.EigenGapMin, c.Sampler, c.Q2 = "pca", 5, 0.1, "twice", 0.5
		}, []string{"accounted by SRDP for Poisson sampling"}},
		{"several", func(c *Config) { c.BatchSize, c.LR, c.ClipNorm = 0, -1, 0 },
			[]string{"batch_size must be >= 1, got 0", "lr must be > 0, got -1", "clip_norm must be > 0, got 0"}},
		{"ema 1", func(c *Config) { c.EMA = 1 }, []string{"ema must be in [0,1) (0 = off), got 1"}},
		{"ema negative", func(c *Config) { c.EMA = -0.5 }, []string{"ema must be in [0,1) (0 = off), got -0.5"}},
		{"ema nan", func(c *Config) { c.EMA = math.NaN() }, []string{"ema must be finite, got NaN"}},
		{"ema hidden state", func(c *Config) { c.EMA, c.FinalOnly, c.Optimizer, c.Radius = 0.999, true, "sgd", 1 },
			[]string{"ema cannot be combined with final_only: the hidden-state bound covers only the last iterate"}},
		{"ema with others", func(c *Config) { c.EMA, c.Delta = 2, 0 },
			[]string{"ema must be in [0,1) (0 = off), got 2", "delta must be in (0,1), got 0"}},
	}
	for _, tc := range tests {
		c := Default()
		tc.edit(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: error does not wrap ErrInvalidConfig", tc.name)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", tc.name, err)
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	if err := os.WriteFile(p, []byte(`{"model":"logreg","epsilon":1,"hidden":[8]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(p, Default())
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "logreg" || c.Epsilon != 1 || c.Delta != 1e-5 || len(c.Hidden) != 1 {
		t.Fatalf("got %+v", c)
	}
	if err := os.WriteFile(p, []byte(`{"modle":"logreg"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(p, Default()); err == nil || !strings.Contains(err.Error(), "modle") {
		t.Fatalf("unknown key accepted or not named: %v", err)
	}
}

func TestValidateAcceptsEMA(t *testing.T) {
	for _, d := range []float64{0, 0.5, 0.9999} {
		c := Default()
		c.EMA = d
		if err := c.Validate(); err != nil {
			t.Errorf("ema %v: %v", d, err)
		}
	}
	c := Default()
	c.FinalOnly = true // final_only alone (ema 0) stays valid
	if err := c.Validate(); err != nil {
		t.Errorf("final_only without ema: %v", err)
	}
}

// The resume guard sees ema: a config with an average never resumes a
// checkpoint without one, or with another d. ema 0 is left out of the JSON,
// so configs and checkpoints from before the field hash as they did.
func TestHashCoversEMA(t *testing.T) {
	off := Default()
	b, err := json.Marshal(off)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"ema"`) {
		t.Fatalf("ema 0 is marshalled (changes every earlier config hash): %s", b)
	}
	seen := map[string]float64{off.Hash(): 0}
	for _, d := range []float64{0.9, 0.99, 0.999} {
		c := Default()
		c.EMA = d
		h := c.Hash()
		if prev, ok := seen[h]; ok {
			t.Errorf("ema %v hashes like ema %v", d, prev)
		}
		seen[h] = d
	}
	if c, err := ParseConfig([]byte(`{"ema":0.99}`), Default()); err != nil || c.EMA != 0.99 {
		t.Fatalf(`{"ema":0.99}: %v, %v`, c.EMA, err)
	}
}

func TestHashIgnoresOutputOptions(t *testing.T) {
	a, b := Default(), Default()
	b.OutDir, b.EvalEvery = "/tmp/x", 7
	if a.Hash() != b.Hash() {
		t.Fatal("output options changed the hash")
	}
	b.LR = 0.5
	if a.Hash() == b.Hash() {
		t.Fatal("lr did not change the hash")
	}
}

// A config file's "seed" fixes the initialisation only: the noise stays
// crypto-seeded unless the file also says "seeded": true (issue 17: people
// add a seed for reproducible initialisation and silently lost privacy).
func TestParseConfigSeedIsInitialisationOnly(t *testing.T) {
	tests := []struct {
		json   string
		seed   uint64
		seeded bool
	}{
		{`{}`, 1, false},
		{`{"model":"logreg"}`, 1, false},
		{`{"seed":5}`, 5, false},
		{`{"SEED":3}`, 3, false}, // keys match fields case-insensitively
		{`{"seed":5,"seeded":true}`, 5, true},
		{`{"seed":5,"seeded":false}`, 5, false},
		{`{"seeded":false,"seed":7}`, 7, false},
		{`{"seeded":true}`, 1, true},
	}
	for _, tc := range tests {
		c, err := ParseConfig([]byte(tc.json), Default())
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if c.Seed != tc.seed || c.Seeded != tc.seeded {
			t.Errorf("%s: seed %d seeded %v, want %d %v", tc.json, c.Seed, c.Seeded, tc.seed, tc.seeded)
		}
	}
}

// Every example in configs/ loads (no unknown keys), validates, is listed in
// configs/README.md, and default.json is exactly the built-in default run.
func TestExampleConfigs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "configs", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 6 {
		t.Fatalf("%d example configs in configs/, want at least 6: %v", len(paths), paths)
	}
	readme, err := os.ReadFile(filepath.Join("..", "configs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		c, err := LoadConfig(p, Default())
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if c.Seeded {
			t.Errorf("%s: an example config seeds the DP noise (not private for release)", p)
		}
		if !strings.Contains(string(readme), "| "+filepath.Base(p)+" |") {
			t.Errorf("%s is not described in configs/README.md", filepath.Base(p))
		}
		if filepath.Base(p) == "default.json" {
			if got, want := c.Hash(), Default().Hash(); got != want {
				b, _ := json.Marshal(c)
				t.Errorf("default.json differs from Default() (hash %s vs %s): %s", got, want, b)
			}
		}
	}
}
