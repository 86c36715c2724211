package trainer

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/mechanism"
)

func TestDefaultValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// sections are Validate's section sentinels: each fault wraps exactly one.
var sections = []error{ErrData, ErrFeatures, ErrModel, ErrMechanism, ErrPrivacy, ErrOptimization, ErrOutput}

// Every fault wraps ErrInvalidConfig and its section's sentinel (and no
// other section's), a bad choice also ErrUnknownChoice, and the one-line
// message names every bad value.
func TestValidateNamesEveryBadValue(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		is    []error // sections (and ErrUnknownChoice) the error must wrap; others must not be wrapped
		wants []string
	}{
		{"delta", func(c *Config) { c.Delta = 1 }, []error{ErrPrivacy}, []string{"delta must be in (0,1), got 1"}},
		{"nan sigma", func(c *Config) { c.Sigma = math.NaN() }, []error{ErrPrivacy}, []string{"sigma must be finite"}},
		{"model", func(c *Config) { c.Model = "bn-net" }, []error{ErrModel, ErrUnknownChoice},
			[]string{`model "bn-net" is not one of logreg, linreg, mlp, cnn, resnet20, resnet22, scatcnn`}},
		{"hidden", func(c *Config) { c.Model, c.Hidden = ModelMLP, []int{8, 0} }, []error{ErrModel}, []string{"hidden widths must be >= 1, got [8 0]"}},
		{"dataset", func(c *Config) { c.Dataset = "imagenet" }, []error{ErrData, ErrUnknownChoice},
			[]string{`dataset "imagenet" is not one of embedded, fashion-mnist, mnist, cifar10, synthetic, csv, folder, npy, memory`}},
		{"csv files", func(c *Config) { c.Dataset = DatasetCSV }, []error{ErrData}, []string{"dataset csv needs --train FILE and --test FILE"}},
		{"limits", func(c *Config) { c.TrainLimit = -1 }, []error{ErrData}, []string{"train_limit and test_limit must be >= 0, got -1 and 0"}},
		{"public data is private", func(c *Config) {
			c.Clip, c.SubspaceRanks, c.PublicData = "subspace", []int{4}, "fashion-mnist"
		}, []error{ErrData}, []string{`public_data "fashion-mnist" is (part of) the private training corpus "embedded"`}},
		{"public data without subspace", func(c *Config) { c.PublicData = "test" }, []error{ErrMechanism},
			[]string{`public_data feeds subspace clipping's basis; it needs clip subspace, got "flat"`}},
		{"features", func(c *Config) { c.Features = "wavelets" }, []error{ErrFeatures, ErrUnknownChoice},
			[]string{`features "wavelets" is not one of "", scatternet`}},
		{"feature norm", func(c *Config) { c.Model, c.Features, c.FeatureNorm = ModelLogReg, FeaturesScatterNet, "batch" },
			[]error{ErrFeatures, ErrUnknownChoice}, []string{`feature_norm "batch" is not one of group, private, none`}},
		{"scatternet cnn", func(c *Config) { c.Features = FeaturesScatterNet }, []error{ErrFeatures},
			[]string{`features scatternet feeds logreg, mlp or scatcnn; model "cnn" takes raw images`}},
		{"pca", func(c *Config) { c.Preprocess = PreprocessPCA }, []error{ErrFeatures},
			[]string{"pca_k must be >= 1 with preprocess pca, got 0", "eigen_gap_min must be > 0 with preprocess pca"}},
		{"preprocess", func(c *Config) { c.Preprocess = "whiten" }, []error{ErrFeatures, ErrUnknownChoice},
			[]string{`preprocess "whiten" is not one of "", pca, standardize`}},
		{"dpsgdf variant", func(c *Config) { c.DPSGDF, c.FeatureEps, c.FeatureCF, c.DPSGDFVariant = true, 1, 1, "exact" },
			[]error{ErrFeatures, ErrUnknownChoice}, []string{`dpsgdf_variant "exact" is not one of "", practical, theory`}},
		{"dpsgdf variant alone", func(c *Config) { c.DPSGDFVariant = DPSGDFTheory }, []error{ErrFeatures},
			[]string{`dpsgdf_variant "theory" needs dpsgdf`}},
		{"no noise", func(c *Config) { c.Sigma, c.Epsilon = 0, 0 }, []error{ErrPrivacy}, []string{"set sigma"}},
		{"accountant", func(c *Config) { c.Accountant = "moments" }, []error{ErrPrivacy, ErrUnknownChoice},
			[]string{`accountant "moments" is not one of "", rdp, pld`}},
		{"audit kind", func(c *Config) { c.AuditCanaries, c.AuditKind = 10, "label" }, []error{ErrPrivacy, ErrUnknownChoice},
			[]string{`audit_kind "label" is not one of gradient, input`}},
		{"gradient canaries radius", func(c *Config) { c.AuditCanaries, c.AuditKind, c.Radius = 10, AuditGradient, 1 },
			[]error{ErrPrivacy}, []string{"gradient canaries are not offered with radius"}},
		{"gradient canaries hybrid", func(c *Config) { c.AuditCanaries, c.AuditKind, c.Clip = 10, AuditGradient, "hybrid" },
			[]error{ErrMechanism}, []string{"gradient canaries need clip flat and sampler poisson (isotropic noise, Poisson rate q), got hybrid and poisson"}},
		{"sampler", func(c *Config) { c.Sampler = "uniform" }, []error{ErrMechanism, ErrUnknownChoice},
			[]string{`sampler "uniform" is not one of poisson, twice, shuffle`}},
		{"twice q2", func(c *Config) { c.Sampler, c.Q2 = "twice", 1.5 }, []error{ErrMechanism}, []string{"q2 must be in (0,1]"}},
		{"subspace shuffle", func(c *Config) {
			c.Clip, c.Sampler, c.SubspaceRanks = "subspace", "shuffle", []int{4}
		}, []error{ErrMechanism, mechanism.ErrUnsupported}, []string{"clip subspace is accounted by the twice-sampling accountant"}},
		{"srdp twice", func(c *Config) {
			c.Preprocess, c.PCAK, c.EigenGapMin, c.Sampler, c.Q2 = PreprocessPCA, 5, 0.1, "twice", 0.5
		}, []error{ErrMechanism, mechanism.ErrUnsupported}, []string{"accounted by SRDP for Poisson sampling"}},
		{"pld shuffle", func(c *Config) { c.Accountant, c.Sampler = AccountantPLD, "shuffle" }, []error{ErrMechanism},
			[]string{"accountant pld needs sampler poisson without preprocess or clip subspace (got sampler shuffle)"}},
		{"clipped count", func(c *Config) { c.ClippedCountSigma, c.Clip = 1, "hybrid" }, []error{ErrMechanism},
			[]string{`clipped_count_sigma needs clip flat or linf`}},
		{"quantile", func(c *Config) { c.ClipQuantile = 1.5 }, []error{ErrMechanism}, []string{"clip_quantile must be in (0,1) (0 = off), got 1.5"}},
		{"several", func(c *Config) { c.BatchSize, c.LR, c.ClipNorm = 0, -1, 0 }, []error{ErrMechanism, ErrOptimization},
			[]string{"batch_size must be >= 1, got 0", "lr must be > 0, got -1", "clip_norm must be > 0, got 0"}},
		{"optimizer", func(c *Config) { c.Optimizer = "lbfgs" }, []error{ErrOptimization, ErrUnknownChoice},
			[]string{`optimizer "lbfgs" is not one of sgd, momentum, adam`}},
		{"schedule", func(c *Config) { c.Schedule = "step" }, []error{ErrOptimization, ErrUnknownChoice},
			[]string{`schedule "step" is not one of constant, cosine`}},
		{"ema 1", func(c *Config) { c.EMA = 1 }, []error{ErrOptimization}, []string{"ema must be in [0,1) (0 = off), got 1"}},
		{"ema negative", func(c *Config) { c.EMA = -0.5 }, []error{ErrOptimization}, []string{"ema must be in [0,1) (0 = off), got -0.5"}},
		{"ema nan", func(c *Config) { c.EMA = math.NaN() }, []error{ErrOptimization}, []string{"ema must be finite, got NaN"}},
		{"ema hidden state", func(c *Config) { c.EMA, c.FinalOnly, c.Optimizer, c.Radius = 0.999, true, OptimizerSGD, 1 },
			[]error{ErrOptimization}, []string{"ema cannot be combined with final_only: the hidden-state bound covers only the last iterate"}},
		{"ema with others", func(c *Config) { c.EMA, c.Delta = 2, 0 }, []error{ErrOptimization, ErrPrivacy},
			[]string{"ema must be in [0,1) (0 = off), got 2", "delta must be in (0,1), got 0"}},
		{"augmult", func(c *Config) { c.Augmult = 256 }, []error{ErrOptimization}, []string{"augmult 256 exceeds max_physical_batch 128"}},
		{"cadence", func(c *Config) { c.EvalEvery = -1 }, []error{ErrOutput}, []string{"eval_every and checkpoint_every must be >= 0"}},
		{"distributed", func(c *Config) { c.Distributed = "nccl" }, []error{ErrOutput, ErrUnknownChoice},
			[]string{`distributed "nccl" is not one of "", mpi`}},
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
		for _, s := range append(sections, ErrUnknownChoice) {
			if want := slices.Contains(tc.is, s); errors.Is(err, s) != want {
				t.Errorf("%s: errors.Is(%v) = %v, want %v (error %q)", tc.name, s, !want, want, err)
			}
		}
		if !strings.HasPrefix(err.Error(), "invalid config: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line after \"invalid config: \": %q", tc.name, err)
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

// A bad choice is a *ChoiceError naming the field, the value and every
// valid value, from JSON configs (UnmarshalText) and Validate alike.
func TestChoiceErrors(t *testing.T) {
	tests := []struct {
		json, field, value string
		valid              []string
	}{
		{`{"dataset":"imagenet"}`, "dataset", "imagenet", []string{"embedded", "fashion-mnist", "mnist", "cifar10", "synthetic", "csv", "folder", "npy", "memory"}},
		{`{"model":"vit"}`, "model", "vit", []string{"logreg", "linreg", "mlp", "cnn", "resnet20", "resnet22", "scatcnn"}},
		{`{"optimizer":"Adam"}`, "optimizer", "Adam", []string{"sgd", "momentum", "adam"}},
		{`{"schedule":""}`, "schedule", "", []string{"constant", "cosine"}},
		{`{"features":"raw"}`, "features", "raw", []string{"", "scatternet"}},
		{`{"feature_norm":"batch"}`, "feature_norm", "batch", []string{"", "group", "private", "none"}},
		{`{"preprocess":"whiten"}`, "preprocess", "whiten", []string{"", "pca", "standardize"}},
		{`{"dpsgdf_variant":"exact"}`, "dpsgdf_variant", "exact", []string{"", "practical", "theory"}},
		{`{"accountant":"gdp"}`, "accountant", "gdp", []string{"", "rdp", "pld"}},
		{`{"audit_kind":"label"}`, "audit_kind", "label", []string{"gradient", "input"}},
		{`{"distributed":"nccl"}`, "distributed", "nccl", []string{"", "mpi"}},
	}
	for _, tc := range tests {
		_, err := ParseConfig([]byte(tc.json), Default())
		var ce *ChoiceError
		if !errors.As(err, &ce) || !errors.Is(err, ErrUnknownChoice) {
			t.Errorf("%s: error %v is not a *ChoiceError", tc.json, err)
			continue
		}
		if ce.Field != tc.field || ce.Value != tc.value || !slices.Equal(ce.Valid, tc.valid) {
			t.Errorf("%s: got %+v, want field %s value %q valid %q", tc.json, *ce, tc.field, tc.value, tc.valid)
		}
		for _, v := range tc.valid {
			if v != "" && !strings.Contains(err.Error(), v) {
				t.Errorf("%s: %q does not list %q", tc.json, err, v)
			}
		}
	}
	if err := (&ChoiceError{Field: "features", Value: "x", Valid: []string{"", "scatternet"}}).Error(); err != `features "x" is not one of "", scatternet` {
		t.Errorf("ChoiceError prints %q", err)
	}
}

// Every constant round-trips through JSON as the string it always was:
// configs, checkpoints and the released summary keep their bytes.
func TestChoicesRoundTrip(t *testing.T) {
	var c Config
	check := func(name string, v any, text string, back func() any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil || string(b) != strconv.Quote(text) {
			t.Errorf("%s: marshals as %s (%v), want %q", name, b, err, text)
		}
		if err := json.Unmarshal(b, back()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, v := range datasetValues {
		check("dataset", v, string(v), func() any { return &c.Dataset })
	}
	for _, v := range modelValues {
		check("model", v, string(v), func() any { return &c.Model })
	}
	for _, v := range optimizerValues {
		check("optimizer", v, string(v), func() any { return &c.Optimizer })
	}
	for _, v := range scheduleValues {
		check("schedule", v, string(v), func() any { return &c.Schedule })
	}
	for _, v := range featureMapValues {
		check("features", v, string(v), func() any { return &c.Features })
	}
	for _, v := range featureNormValues {
		check("feature_norm", v, string(v), func() any { return &c.FeatureNorm })
	}
	for _, v := range preprocessValues {
		check("preprocess", v, string(v), func() any { return &c.Preprocess })
	}
	for _, v := range dpsgdfVariantValues {
		check("dpsgdf_variant", v, string(v), func() any { return &c.DPSGDFVariant })
	}
	for _, v := range accountantValues {
		check("accountant", v, string(v), func() any { return &c.Accountant })
	}
	for _, v := range auditKindValues {
		check("audit_kind", v, string(v), func() any { return &c.AuditKind })
	}
	for _, v := range distributedValues {
		check("distributed", v, string(v), func() any { return &c.Distributed })
	}
}

// The JSON and hash of a config are those of the commit before the choices
// were typed (b19036b, printed by json.Marshal and Hash there): checkpoints
// resume and released summaries keep their bytes.
func TestConfigJSONUnchanged(t *testing.T) {
	const defaultJSON = `{"dataset":"embedded","data_dir":"","train_limit":0,"test_limit":0,"features":"","feature_norm":"group","feature_groups":27,"feature_norm_sigma":8,"feature_norm_clip":30,"feature_cache":"","model":"cnn","hidden":null,"dpsgdf":false,"feature_epsilon":0,"feature_clip":0,"preprocess":"","pca_k":0,"pca_dim":false,"eigen_gap_min":0,"sigma_min":0,"lipschitz_mu":0,"sampler":"poisson","batch_size":512,"q2":0,"clip":"flat","clip_norm":0.1,"d0":100,"subspace_ranks":null,"public_n":200,"power_iters":2,"subspace_refresh":0,"sigma":0,"epsilon":3,"delta":0.00001,"epochs":15,"steps":0,"optimizer":"momentum","lr":4,"momentum":0.9,"weight_decay":0,"schedule":"constant","radius":0,"final_only":false,"per_instance":0,"max_physical_batch":128,"seed":1,"seeded":false,"eval_every":20,"out_dir":"","checkpoint_every":50,"plots":true}`
	other := Default()
	other.Dataset, other.Model, other.Features, other.FeatureNorm, other.Preprocess = DatasetCIFAR10, ModelScatCNN, FeaturesScatterNet, FeatureNormPrivate, PreprocessPCA
	other.DPSGDFVariant, other.Accountant, other.Optimizer, other.Schedule = DPSGDFTheory, AccountantPLD, OptimizerAdam, ScheduleCosine
	other.AuditKind, other.Distributed = AuditInput, DistributedMPI
	tests := []struct {
		c          Config
		json, hash string
		// continuous is the hash with --noise continuous: the hash these
		// settings had before lattice became the default, which their old
		// checkpoints carry.
		continuous string
	}{
		{Default(), defaultJSON, "04bfc9c6d196dedc", "d713dbe4719273bb"},
		{other, `{"dataset":"cifar10","data_dir":"","train_limit":0,"test_limit":0,"features":"scatternet","feature_norm":"private","feature_groups":27,"feature_norm_sigma":8,"feature_norm_clip":30,"feature_cache":"","model":"scatcnn","hidden":null,"dpsgdf":false,"dpsgdf_variant":"theory","feature_epsilon":0,"feature_clip":0,"preprocess":"pca","pca_k":0,"pca_dim":false,"eigen_gap_min":0,"sigma_min":0,"lipschitz_mu":0,"sampler":"poisson","batch_size":512,"q2":0,"accountant":"pld","clip":"flat","clip_norm":0.1,"d0":100,"subspace_ranks":null,"public_n":200,"power_iters":2,"subspace_refresh":0,"sigma":0,"epsilon":3,"delta":0.00001,"epochs":15,"steps":0,"optimizer":"adam","lr":4,"momentum":0.9,"weight_decay":0,"schedule":"cosine","radius":0,"final_only":false,"per_instance":0,"max_physical_batch":128,"seed":1,"seeded":false,"eval_every":20,"out_dir":"","checkpoint_every":50,"plots":true,"audit_kind":"input","distributed":"mpi"}`, "87b7ea6993054f15", "913afb05a91bfc60"},
	}
	for i, tc := range tests {
		b, err := json.Marshal(tc.c)
		if err != nil || string(b) != tc.json {
			t.Errorf("config %d marshals as\n%s (%v), want\n%s", i, b, err, tc.json)
		}
		if h := tc.c.Hash(); h != tc.hash {
			t.Errorf("config %d hashes to %s, want %s", i, h, tc.hash)
		}
		back, err := ParseConfig([]byte(tc.json), Config{})
		if err != nil || back.Hash() != tc.hash {
			t.Errorf("config %d does not parse back: %v", i, err)
		}
		cont := tc.c
		cont.Noise = NoiseContinuous
		if h := cont.Hash(); h != tc.continuous {
			t.Errorf("config %d with noise continuous hashes to %s, want %s (its hash before the lattice default)", i, h, tc.continuous)
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
	if c.Model != ModelLogReg || c.Epsilon != 1 || c.Delta != 1e-5 || len(c.Hidden) != 1 {
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
