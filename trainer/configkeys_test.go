package trainer

import (
	"encoding/json"
	"strings"
	"testing"
)

// encoding/json alone accepts every one of the refused cases below (the last
// duplicate wins, keys match case-insensitively); ParseConfig must not.
func TestParseConfigRefusesDuplicateAndMiscasedKeys(t *testing.T) {
	cases := []struct {
		name, in, want string // want == "" means accepted
	}{
		{"plain", `{"epsilon": 2}`, ""},
		{"duplicate", `{"epsilon": 2, "epsilon": 8}`, `"epsilon" given twice`},
		{"miscased", `{"Epsilon": 2}`, `"Epsilon": did you mean "epsilon"`},
		{"upper", `{"EPSILON": 2}`, `did you mean "epsilon"`},
		{"duplicate after miscase", `{"delta": 1e-6, "Delta": 1e-5}`, `"Delta"`},
		{"unknown still refused", `{"epsilonn": 2}`, "epsilonn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var plain Config
			if c.want != "" && c.name != "unknown still refused" {
				if err := json.Unmarshal([]byte(c.in), &plain); err != nil {
					t.Fatalf("encoding/json itself refuses %s: %v (the test would prove nothing)", c.in, err)
				}
			}
			cfg, err := ParseConfig([]byte(c.in), Default())
			if c.want == "" {
				if err != nil {
					t.Fatalf("ParseConfig(%s): %v", c.in, err)
				}
				if cfg.Epsilon != 2 {
					t.Fatalf("epsilon = %v, want 2", cfg.Epsilon)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseConfig(%s) = %v, want an error containing %q", c.in, err, c.want)
			}
		})
	}
}

func FuzzCheckConfigKeys(f *testing.F) {
	for _, s := range []string{`{"epsilon":2}`, `{"a":{"b":1,"b":2}}`, `[{"x":1}]`, `{"Epsilon":1}`, `{`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkConfigKeys(data)
		// Whatever the key check accepts and plain json decodes must have
		// no key twice at the top level: decoding into a map then keeps
		// exactly as many keys as the object has.
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			return
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			return
		}
		n := 0
		for dec.More() {
			if _, err := dec.Token(); err != nil {
				return
			}
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return
			}
			n++
		}
		if n != len(m) {
			t.Fatalf("%q: accepted with %d keys but only %d distinct", data, n, len(m))
		}
	})
}
