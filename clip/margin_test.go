package clip

import (
	"math"
	"testing"
)

// WithNormMargin clips to C/rho: each scale is the wrapped clipper's scale
// for the norm times rho (exactly min(1, C/(rho·‖g‖)) up to its rounding
// toward zero), the Sensitivity is unchanged, and non-finite norms are
// still dropped.
func TestWithNormMargin(t *testing.T) {
	const c, rho = 2.0, 1.0078125
	l2, err := NewL2(c, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	nc := WithNormMargin(l2, rho)
	if got := nc.Sensitivity().L2; got != c {
		t.Fatalf("Sensitivity().L2 = %v, want the wrapped %v", got, c)
	}
	norms := []float64{1, c / rho * 0.999, c / rho * 1.001, c, 100, math.NaN(), math.Inf(1)}
	sq := make([]float64, len(norms))
	for i, v := range norms {
		sq[i] = v * v
	}
	scales := make([]float32, len(norms))
	st := nc.Scales(sq, len(norms), scales)
	for i, v := range norms {
		want := 1.0
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			want = 0
		case rho*v > c:
			want = c / (rho * v)
		}
		got := float64(scales[i])
		if got > want || got < want*(1-1e-6) {
			t.Errorf("norm %v: scale %v, want min(1, C/(rho·norm)) = %v", v, got, want)
		}
		if s := got * v; !math.IsNaN(v) && !math.IsInf(v, 0) && s > c/rho*(1+1e-12) {
			t.Errorf("norm %v: scaled norm %v exceeds C/rho = %v", v, s, c/rho)
		}
	}
	if st.Clipped != 3 || st.NonFinite != 2 {
		t.Errorf("stats %+v, want 3 clipped and 2 non-finite", st)
	}
	if sq[2] != norms[2]*norms[2] {
		t.Error("Scales changed the caller's norms")
	}
}
