package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadRunValuesExitTwo: values that once crashed or misreported exit 2
// with a message echoing the value: a σ whose variance underflows (it
// reached the accountant as "got 0", exit 1), epochs whose step count
// overflows (a negative step count, exit 1), a config with a mis-cased or
// repeated key (silently applied).
func TestBadRunValuesExitTwo(t *testing.T) {
	dir := t.TempDir()
	cfgPath := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--sigma", "1e-300"}, "sigma 1e-300"},
		{[]string{"--epochs", "1e300"}, "epochs"},
		{[]string{"--config", cfgPath("case.json", `{"Epsilon":1}`)}, `"Epsilon"`},
		{[]string{"--config", cfgPath("dup.json", `{"epsilon":1,"epsilon":8}`)}, `"epsilon" given twice`},
	}
	for i, c := range cases {
		var out, errb bytes.Buffer
		args := append([]string{"train", "--quiet", "--model", "logreg", "--out", filepath.Join(dir, "run", string(rune('a'+i)))}, c.args...)
		code := run(context.Background(), args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s", c.args, code, errb.String(), c.want)
		}
	}
}
