package trainer

import (
	"errors"
	"strings"
	"testing"
)

// TestEpochSteps: ceil(epochs·n/batch) against integer ceiling division for
// whole epochs, and a refusal (never a negative count) where the count
// would overflow: --epochs 1e300 once gave -9223372036854775808 steps.
func TestEpochSteps(t *testing.T) {
	for _, c := range []struct{ epochs, n, batch int }{
		{1, 5000, 256}, {15, 5000, 256}, {3, 60000, 1}, {1, 7, 7}, {2, 7, 3}, {1000, 50000, 4096},
	} {
		want := (c.epochs*c.n + c.batch - 1) / c.batch
		got, err := epochSteps(float64(c.epochs), c.n, c.batch)
		if err != nil || got != want {
			t.Errorf("%+v: got %d, %v; want %d", c, got, err, want)
		}
	}
	for _, epochs := range []float64{1e300, 1e30, 1e12 * 4096} {
		got, err := epochSteps(epochs, 5000, 256)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "epochs") {
			t.Errorf("epochs %v: got %d steps, %v; want a refusal naming epochs", epochs, got, err)
		}
	}
}

// TestValidateRefusesUnderflowingSigma: a positive σ whose variance
// underflows is refused as typed, not passed on as 0; σ just above the
// bound is accepted.
func TestValidateRefusesUnderflowingSigma(t *testing.T) {
	for _, c := range []struct {
		sigma, clip float64
		ok          bool
	}{
		{1e-300, 1, false},
		{1e-160, 1, false},
		{1e-150, 1, true},
		{1e-100, 1e-60, false}, // (σC)² = 1e-320
		{1e-100, 1, true},
		{1, 1, true},
	} {
		cfg := Default()
		cfg.Sigma, cfg.ClipNorm = c.sigma, c.clip
		err := cfg.Validate()
		if c.ok && err != nil && strings.Contains(err.Error(), "underflows") {
			t.Errorf("σ=%v C=%v refused: %v", c.sigma, c.clip, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "underflows") || !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("σ=%v C=%v: got %v, want a refusal", c.sigma, c.clip, err)
		}
	}
}
