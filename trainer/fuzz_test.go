package trainer

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Config files come from users: parsing never panics, and what parses
// either validates or names what is wrong.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"model":"logreg","epsilon":1}`,
		`{"dataset":"cifar10","features":"scatternet","feature_norm":"private"}`,
		`{"clip":"subspace","subspace_ranks":[4,8],"public_n":50}`,
		`{"delta":2,"sigma":-1,"hidden":[0]}`,
		`{"ema":0.99,"final_only":true}`,
		`{"model":"cnn"} {"x":1}`,
		`[]`, `{"steps":1e309}`,
		`{"optimizer":"lbfgs"}`, `{"distributed":"mpi","sampler":"twice"}`,
		`{"audit_kind":"","feature_norm":"","accountant":"pld"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data, Default())
		if err != nil {
			if errors.Is(err, ErrUnknownChoice) && !strings.Contains(err.Error(), "is not one of") {
				t.Fatalf("a bad choice does not list the valid values: %v", err)
			}
			return
		}
		// What parses marshals and parses back to the same settings: the
		// choices' text forms are their values.
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := ParseConfig(b, Config{})
		if err != nil {
			t.Fatalf("%s does not parse back: %v", b, err)
		}
		if back.Hash() != c.Hash() {
			t.Fatalf("round trip changed the config: %s", b)
		}
		if err := c.Validate(); err != nil && !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("Validate's error does not wrap ErrInvalidConfig: %v", err)
		}
	})
}

// A truncated or corrupt metrics file is an error with its line, never a panic.
func FuzzReadMetrics(f *testing.F) {
	a, _ := json.Marshal(&Record{Step: 1, Loss: 2.3, Epsilon: map[string]float64{"rdp": 0.5}})
	f.Add(append(append(a, '\n'), a...))
	f.Add([]byte("{\"step\":1}\n{\"step\""))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := readMetrics(bytes.NewReader(data), "fuzz")
		if err == nil && bytes.Count(data, []byte{'\n'})+1 < len(recs) {
			t.Fatalf("%d records from %d lines", len(recs), bytes.Count(data, []byte{'\n'})+1)
		}
	})
}

// A corrupt checkpoint is refused, never half-restored or a panic.
func FuzzParseCheckpoint(f *testing.F) {
	ck, _ := encodeCheckpoint(&checkpoint{Step: 3, Params: []byte{1, 2, 3, 4}, Tracker: json.RawMessage(`{}`), Features: featureStates{featureEMA: json.RawMessage(`{"state":"AQ=="}`)}})
	f.Add(ck)
	f.Add([]byte(`{"version":1,"step":-1}`))
	f.Add([]byte(`{"version":1,"params":"AQID"}`))
	f.Add([]byte(`{"version":1,"step":2,"params":"AQIDBA==","ema":"AQ==","clip_now":0.5,"instance_norms":[[1,2]]}`))
	f.Add([]byte(`{"format":"dptrain checkpoint","version":2,"sha256":"00","checkpoint":{"step":1}}`))
	f.Add([]byte(`{"version":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCheckpoint(data)
		if err != nil {
			return
		}
		if c.Step < 0 || len(c.Params)%4 != 0 {
			t.Fatalf("accepted %+v", c)
		}
		params := make([]float32, len(c.Params)/4)
		if err := setFloat32s(params, c.Params); err != nil {
			t.Fatal(err)
		}
	})
}
