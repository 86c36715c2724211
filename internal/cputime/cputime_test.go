//go:build unix

package cputime

import "testing"

// TestProcessAdvances spins until the process's CPU time moves forward: it
// must be positive and must grow with work done.
func TestProcessAdvances(t *testing.T) {
	t0 := Process()
	if t0 <= 0 {
		t.Fatalf("Process() = %v, want > 0 after the test binary started", t0)
	}
	x := 1.0
	for i := 0; Process() <= t0; i++ {
		x = x*1.0000001 + 1e-9
		if i > 1e10 {
			t.Fatal("CPU time did not advance")
		}
	}
	_ = x
}
