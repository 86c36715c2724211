package trainer

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models/nn"
)

// precision bf16 is accepted exactly where the CPU has AVX-512 BF16, and
// refused elsewhere with the reason (go test -tags purego ./trainer takes
// the refusal branch on any machine); f32 and unset are one setting, with
// the hash of runs that predate it.
func TestPrecisionValidation(t *testing.T) {
	c := small(t)
	base := c.Hash()
	c.Precision = PrecisionF32
	if err := c.Validate(); err != nil {
		t.Fatalf("precision f32: %v", err)
	}
	if c.Hash() != base {
		t.Error("precision f32 changed the config hash of a run without the setting")
	}
	c.Precision = "fp8"
	if err := c.Validate(); !errors.Is(err, ErrUnknownChoice) || !strings.Contains(err.Error(), `"fp8"`) {
		t.Errorf("precision fp8: %v, want an unknown choice naming it", err)
	}
	c.Precision = PrecisionBF16
	err := c.Validate()
	if nn.HasBF16() {
		if err != nil {
			t.Fatalf("precision bf16 on a CPU with AVX-512 BF16: %v", err)
		}
		if c.Hash() == base {
			t.Error("precision bf16 left the config hash unchanged: a resume could switch precision")
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "avx512_bf16") || !strings.Contains(err.Error(), "precision bf16") {
		t.Fatalf("precision bf16 without the instructions: %v, want a refusal naming avx512_bf16", err)
	}
}

// A seeded bf16 run against the same run in float32, on the norm-only path
// (an MLP, flat clipping): the same account, accuracy within 5 points, a
// different model (the products really were bf16), the engine back on
// float32 afterwards, and the norm-only clipper with its margin: a norm of
// exactly C is clipped to C/ρ, while the sensitivity (the noise's scale and
// the account) stays C.
func TestPrecisionBF16AgainstFloat32(t *testing.T) {
	if !nn.HasBF16() {
		t.Skipf("no bf16 run here: %v", nn.ErrNoBF16)
	}
	c32 := small(t)
	c32.Steps = 12
	c16 := c32
	c16.OutDir = t.TempDir()
	c16.Precision = PrecisionBF16
	s32, s16 := run(t, c32, Options{}), run(t, c16, Options{})
	if got := nn.GEMMBackend(); strings.HasPrefix(got, "bf16") {
		t.Fatalf("the engine stayed on %s after the bf16 run", got)
	}
	if s16.Best.Epsilon != s32.Best.Epsilon || s16.Steps != s32.Steps {
		t.Errorf("bf16 run: ε %v after %d steps, float32 %v after %d", s16.Best.Epsilon, s16.Steps, s32.Best.Epsilon, s32.Steps)
	}
	if d := math.Abs(s16.TestAcc - s32.TestAcc); !(d <= 0.05) {
		t.Errorf("bf16 test accuracy %.4f, float32 %.4f", s16.TestAcc, s32.TestAcc)
	}
	t.Logf("test accuracy: bf16 %.4f, float32 %.4f", s16.TestAcc, s32.TestAcc)

	for _, tc := range []struct {
		p    Precision
		want float64 // the scale of a norm exactly C
	}{{PrecisionF32, 1}, {PrecisionBF16, 1 / nn.BF16NormFactor}} {
		c := small(t)
		// The norm-only path is the continuous noise's (lattice noise
		// materialises the gradients).
		c.OutDir, c.Precision, c.Noise = "", tc.p, NoiseContinuous
		restore, err := usePrecision(c.Precision)
		if err != nil {
			t.Fatal(err)
		}
		s := &state{cfg: c}
		if err := s.initRoot(nil); err != nil {
			t.Fatal(err)
		}
		if err := s.setup(); err != nil {
			t.Fatal(err)
		}
		g, ok := s.grad.(*normOnlyGradients)
		if !ok {
			t.Fatalf("%s: the MLP took the %T path, not the norm-only one", tc.p, s.grad)
		}
		k := len(s.model.Groups())
		sq := make([]float64, k)
		sq[0] = c.ClipNorm * c.ClipNorm
		sc := make([]float32, k)
		g.norm.Scales(sq, 1, sc)
		if got := float64(sc[0]); got > tc.want || got < tc.want*(1-1e-6) {
			t.Errorf("%s: a norm of exactly C gets scale %v, want %v", tc.p, got, tc.want)
		}
		if a, b := g.norm.Sensitivity().L2, s.clipper.Sensitivity().L2; a != c.ClipNorm || b != c.ClipNorm {
			t.Errorf("%s: sensitivity %v (norm-only clipper) and %v (the run's clipper, which the mechanism noises), want C = %v", tc.p, a, b, c.ClipNorm)
		}
		restore()
	}
}
