package trainer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/mechanism"
)

// mustFeature decodes the feature state ck keeps under name.
func mustFeature[T any](t *testing.T, ck *checkpoint, name string) T {
	t.Helper()
	var v T
	if err := ck.Features.get(name, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A checkpoint round-trips through the file format exactly, and the file's
// checksum is the SHA-256 of the checkpoint's bytes as written.
func TestCheckpointFormat(t *testing.T) {
	ck := &checkpoint{ConfigHash: "abc", Config: Default(), Step: 4, Sigma: 1.5, Q: 0.01, Params: float32Bytes([]float32{1, -2.5, 3e-7}),
		Optimizer: []byte{9}, Sampler: []byte{8}, Noise: []byte{7}, Root: []byte{6}, Tracker: json.RawMessage(`{"a":1}`), Samples: 40}
	if err := ck.Features.put(featureQuantile, quantileCheckpoint{ClipNow: 0.25, RNG: []byte{1, 2}}); err != nil {
		t.Fatal(err)
	}
	b, err := encodeCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ck) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, ck)
	}
	var f struct {
		Version    int
		SHA256     string
		Checkpoint json.RawMessage
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(ck)
	sum := sha256.Sum256(body)
	if f.Version != 2 || f.SHA256 != hex.EncodeToString(sum[:]) || !bytes.Equal(f.Checkpoint, body) {
		t.Fatalf("file version %d, checksum %s; want 2 and %x over %s", f.Version, f.SHA256, sum, body)
	}
	if q := mustFeature[quantileCheckpoint](t, got, featureQuantile); q.ClipNow != 0.25 {
		t.Fatalf("clip quantile state %+v", q)
	}
	var none emaCheckpoint
	if err := got.Features.get(featureEMA, &none); err == nil || !strings.Contains(err.Error(), "no ema state") {
		t.Fatalf("a feature the checkpoint lacks: %v", err)
	}
}

// Every one-byte change inside the checkpoint's bytes is refused: a changed
// value by the checksum, a broken one as corrupt; never accepted.
func TestCheckpointChecksumRefusesChanges(t *testing.T) {
	ck := &checkpoint{ConfigHash: "abc", Step: 4, Sigma: 1.5, Params: float32Bytes([]float32{1, 2}), Tracker: json.RawMessage(`{}`)}
	b, err := encodeCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Index(b, []byte(`"checkpoint":`)) + len(`"checkpoint":`)
	checksum := 0
	for i := body; i < len(b)-1; i++ {
		for _, c := range []byte{'0', '1', 'x', '"'} {
			if b[i] == c {
				continue
			}
			m := bytes.Clone(b)
			m[i] = c
			_, err := parseCheckpoint(m)
			if err == nil {
				t.Fatalf("byte %d changed to %q: accepted %s", i, c, m)
			}
			if strings.Contains(err.Error(), "checksum does not match") {
				checksum++
			}
		}
	}
	// "step":4 → "step":0 is valid JSON; only the checksum can catch it.
	m := bytes.Replace(b, []byte(`"step":4`), []byte(`"step":0`), 1)
	if _, err := parseCheckpoint(m); err == nil || !strings.Contains(err.Error(), "checksum does not match") || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("a changed step: %v", err)
	}
	if checksum == 0 {
		t.Fatal("no change was caught by the checksum")
	}
}

// Versions other than 1 and 2 are refused with the reason and the way out.
func TestCheckpointVersions(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{`{"step":1}`, []string{"version 0 predates", "--overwrite"}},
		{`{"version":0,"step":1}`, []string{"version 0 predates", "--overwrite"}},
		{`{"version":-3}`, []string{"version -3 predates", "--overwrite"}},
		{`{"version":3,"checkpoint":{}}`, []string{"newer dptrain", "versions 1 to 2", "--overwrite"}},
		{`{"format":"other","version":2,"sha256":"","checkpoint":{}}`, []string{"format \"other\""}},
		{`[1,2]`, []string{"not a checkpoint file", "--overwrite"}},
	} {
		_, err := parseCheckpoint([]byte(tc.file))
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", tc.file, err, w)
			}
		}
	}
}

// v1Config is the configuration of the version-1 checkpoints in testdata/,
// written by dptrain a3e7397 (the last version-1 writer) as a run of it
// interrupted after step 3 of 6 (Options.StopAfter).
func v1Config(t *testing.T, variant string) Config {
	c := Default()
	c.Seeded, c.Seed = true, 7
	c.Dataset, c.Model = "synthetic", "logreg"
	c.BatchSize, c.Steps, c.Sigma, c.Epsilon = 100, 6, 1, 0
	c.ClipNorm, c.LR = 1, 0.5
	c.EvalEvery, c.CheckpointEvery, c.Plots, c.KeepCheckpoint = 0, 0, false, true
	c.Noise = NoiseContinuous // as a3e7397's runs took it (the default then)
	switch variant {
	case "ema":
		c.EMA, c.PerInstance = 0.9, 5
	case "quantile":
		c.ClipQuantile = 0.5
	case "canaries":
		c.AuditCanaries, c.AuditKind = 4, AuditGradient
	case "subspace":
		c.Sampler, c.Q2, c.Clip, c.SubspaceRanks, c.PublicN, c.SubspaceRefresh = mechanism.Twice, 0.5, mechanism.Subspace, []int{2, 4}, 50, 2
	case "count":
		c.ClippedCountSigma = 5
	}
	c.OutDir = t.TempDir()
	return c
}

// toVersion1 rewrites a current checkpoint file in the version-1 layout:
// flat, no checksum, each feature's state in its own named field. It works
// on generic JSON, independently of checkpointV1.
func toVersion1(t *testing.T, file []byte) []byte {
	t.Helper()
	var env struct {
		Checkpoint map[string]any `json:"checkpoint"`
	}
	if err := json.Unmarshal(file, &env); err != nil {
		t.Fatal(err)
	}
	body := env.Checkpoint
	fields := map[string]map[string]string{
		"clipped_count": {"rng": "count_noise"},
		"subspace":      {"basis_at": "basis_at", "basis_from": "basis_from"},
		"per_instance":  {"norms": "instance_norms"},
		"ema":           {"state": "ema"},
		"clip_quantile": {"clip_now": "clip_now", "rng": "quantile_rng"},
		"canaries":      {"params": "canary_params", "counts": "canary_counts", "rng": "canary_rng"},
	}
	features, _ := body["features"].(map[string]any)
	for name, st := range features {
		for k, v := range st.(map[string]any) {
			flat, ok := fields[name][k]
			if !ok {
				t.Fatalf("feature %s has a field %s that version 1 did not have", name, k)
			}
			body[flat] = v
		}
	}
	delete(body, "features")
	body["version"] = 1
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A run resumed from a version-1 checkpoint (each feature's state in its
// own named field) ends bit for bit where an uninterrupted run ends:
// parameters, every feature's final state, and ε, when the file records a
// digest of the data (this build's own checkpoints rewritten in the
// version-1 layout). The version-1 files a3e7397 wrote (testdata/) have no
// digest: a resume from them is refused with the reason and the way out,
// since it could not tell changed data from the same (issue 37's rule).
func TestResumeFromVersion1(t *testing.T) {
	for _, variant := range []string{"ema", "quantile", "canaries", "subspace", "count"} {
		fc := v1Config(t, variant)
		fc.CheckpointEvery = fc.Steps // keep the final state to compare (not in the hash)
		full := run1(t, fc)
		// This build, interrupted after step 3 of 6, its checkpoint
		// rewritten as version 1.
		ic := v1Config(t, variant)
		if _, err := Run(context.Background(), ic, Options{StopAfter: 3}); !errors.Is(err, ErrInterrupted) {
			t.Fatal(err)
		}
		own := toVersion1(t, readFile(t, filepath.Join(ic.OutDir, "private", "checkpoint.json")))
		old := readFile(t, filepath.Join("testdata", "checkpoint-v1-"+variant+".json"))
		for _, src := range []struct {
			name string
			file []byte
		}{{"a3e7397", old}, {"rewritten", own}} {
			t.Run(variant+"/"+src.name, func(t *testing.T) {
				var top map[string]json.RawMessage
				if err := json.Unmarshal(src.file, &top); err != nil {
					t.Fatal(err)
				}
				if _, env := top["sha256"]; env || string(top["version"]) != "1" {
					t.Fatal("not a version-1 checkpoint")
				}
				c := v1Config(t, variant)
				c.CheckpointEvery = c.Steps
				if err := os.MkdirAll(filepath.Join(c.OutDir, "private"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(c.OutDir, "private", "checkpoint.json"), src.file, 0o600); err != nil {
					t.Fatal(err)
				}
				if src.name == "a3e7397" {
					_, err := Run(context.Background(), c, Options{Resume: true})
					if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "digest") || !strings.Contains(err.Error(), "--overwrite") {
						t.Fatalf("resume from a3e7397's checkpoint without a data digest: %v", err)
					}
					return
				}
				resumed := run1(t, c, Options{Resume: true})
				if resumed.Steps != full.Steps {
					t.Fatalf("resumed run took %d steps, want %d", resumed.Steps, full.Steps)
				}
				a := readFile(t, filepath.Join(full.OutDir, "release", "model.bin"))
				b := readFile(t, filepath.Join(c.OutDir, "release", "model.bin"))
				if !bytes.Equal(a, b) || resumed.Best.Epsilon != full.Best.Epsilon {
					t.Fatalf("resumed from version 1: ε %v; uninterrupted: ε %v; models equal %v", resumed.Best.Epsilon, full.Best.Epsilon, bytes.Equal(a, b))
				}
				ca, cb := mustCheckpoint(t, full.OutDir), mustCheckpoint(t, c.OutDir)
				if !reflect.DeepEqual(ca.Features, cb.Features) || len(ca.Features) == 0 {
					t.Fatalf("final feature states differ:\n%s\n%s", ca.Features, cb.Features)
				}
			})
		}
	}
}
