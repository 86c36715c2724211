package nn

import (
	"slices"
	"strings"
	"testing"
)

// TestSetGEMMBackend checks the backend names, that a failed selection
// leaves the backend unchanged, and that "openblas" without -tags openblas
// says how to get it.
func TestSetGEMMBackend(t *testing.T) {
	defer SetGEMMBackend("asm")
	for _, be := range GEMMBackends() {
		if err := SetGEMMBackend(be); err != nil {
			t.Fatalf("SetGEMMBackend(%q): %v", be, err)
		}
		if got := GEMMBackend(); !strings.HasPrefix(got, be) {
			t.Fatalf("after SetGEMMBackend(%q), GEMMBackend() = %q", be, got)
		}
	}
	if err := SetGEMMBackend("gonum"); err != nil {
		t.Fatal(err)
	}
	if err := SetGEMMBackend("mkl"); err == nil || !strings.Contains(err.Error(), `"mkl"`) {
		t.Fatalf("SetGEMMBackend(mkl) = %v", err)
	}
	if got := GEMMBackend(); got != "gonum" {
		t.Fatalf("a refused backend changed GEMMBackend() to %q", got)
	}
	if slices.Contains(GEMMBackends(), "openblas") {
		return // built with -tags openblas: gemm_openblas_test.go covers it
	}
	err := SetGEMMBackend("openblas")
	if err == nil {
		t.Fatal(`SetGEMMBackend("openblas") succeeded in a build without -tags openblas`)
	}
	for _, want := range []string{"-tags openblas", "libopenblas-dev"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("SetGEMMBackend(openblas) error %q does not mention %q", err, want)
		}
	}
	if got := GEMMBackend(); got != "gonum" {
		t.Fatalf("a refused backend changed GEMMBackend() to %q", got)
	}
}
