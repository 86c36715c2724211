package optim

import (
	"math"
	"strings"
	"testing"
)

// The average against a hand computation of a_t = d_t·a_{t−1} + (1−d_t)·θ_t,
// d_t = min(d, (1+t)/(10+t)), a₀ = θ₀.
func TestEMAByHand(t *testing.T) {
	init := []float32{1, -2}
	iterates := [][]float32{{3, 0}, {0, 4}, {1, 1}}
	for _, tc := range []struct {
		name   string
		d      float64
		decays []float64
		want   [][]float64
	}{
		// d₁ = 2/11: a₁ = (2·1 + 9·3)/11 = 29/11, (2·−2)/11 = −4/11.
		// d₂ = 3/12: a₂ = 29/44, −1/11 + 3 = 32/11.
		// d₃ = 4/13: a₃ = 29/143 + 9/13 = 128/143, 128/143 + 9/13 = 227/143.
		{"warm-up", 0.99, []float64{2. / 11, 3. / 12, 4. / 13},
			[][]float64{{29. / 11, -4. / 11}, {29. / 44, 32. / 11}, {128. / 143, 227. / 143}}},
		// d = 0.1 is below every warm-up decay: a₁ = 0.1 + 2.7 = 2.8, −0.2;
		// a₂ = 0.28, −0.02 + 3.6 = 3.58; a₃ = 0.028 + 0.9 = 0.928, 0.358 + 0.9 = 1.258.
		{"below warm-up", 0.1, []float64{0.1, 0.1, 0.1},
			[][]float64{{2.8, -0.2}, {0.28, 3.58}, {0.928, 1.258}}},
		// d = 0.25 takes over at t = (10d−1)/(1−d) = 2: d₁ = 2/11, then 0.25.
		// a₁ = 29/11, −4/11; a₂ = 29/44, 32/11; a₃ = 29/176 + 3/4 = 161/176, 8/11 + 3/4 = 65/44.
		{"switch at t=2", 0.25, []float64{2. / 11, 0.25, 0.25},
			[][]float64{{29. / 11, -4. / 11}, {29. / 44, 32. / 11}, {161. / 176, 65. / 44}}},
	} {
		e, err := NewEMA(tc.d, init)
		if err != nil {
			t.Fatal(err)
		}
		for s, theta := range iterates {
			if got := e.Decay(s + 1); math.Abs(got-tc.decays[s]) > 1e-15 {
				t.Errorf("%s: d_%d = %v, want %v", tc.name, s+1, got, tc.decays[s])
			}
			if err := e.Update(theta); err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want[s] {
				if got := e.Average()[i]; math.Abs(got-w) > 1e-14 {
					t.Errorf("%s: a_%d[%d] = %.17g, want %.17g", tc.name, s+1, i, got, w)
				}
			}
		}
		if e.Steps() != 3 {
			t.Errorf("%s: Steps() = %d", tc.name, e.Steps())
		}
		p := make([]float32, 2)
		if err := e.Params(p); err != nil || p[0] != float32(e.Average()[0]) || p[1] != float32(e.Average()[1]) {
			t.Errorf("%s: Params %v (%v), average %v", tc.name, p, err, e.Average())
		}
	}
}

// A restored average continues exactly where the saved one was.
func TestEMAStateRoundTrip(t *testing.T) {
	a, _ := NewEMA(0.9, []float32{0.5, -1, 2})
	b, _ := NewEMA(0.9, []float32{0, 0, 0})
	a.Update([]float32{0.1, 0.2, 0.3})
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	for _, x := range [][]float32{{1, 1, 1}, {-3, 0.25, 7}} {
		a.Update(x)
		b.Update(x)
	}
	for i := range a.Average() {
		if math.Float64bits(a.Average()[i]) != math.Float64bits(b.Average()[i]) || a.Steps() != b.Steps() {
			t.Fatalf("restored average differs: %v (t=%d) vs %v (t=%d)", a.Average(), a.Steps(), b.Average(), b.Steps())
		}
	}
}

func TestEMARefuses(t *testing.T) {
	for _, d := range []float64{0, 1, -0.5, math.NaN()} {
		if _, err := NewEMA(d, []float32{1}); err == nil || !strings.Contains(err.Error(), "decay must be in (0,1)") {
			t.Errorf("decay %v: %v", d, err)
		}
	}
	e, _ := NewEMA(0.5, []float32{1, 2})
	if err := e.Update([]float32{1}); err == nil {
		t.Error("update of the wrong length accepted")
	}
	other, _ := NewEMA(0.5, []float32{1, 2, 3})
	st, _ := other.MarshalBinary()
	if err := e.UnmarshalBinary(st); err == nil || !strings.Contains(err.Error(), "3 parameters, want 2") {
		t.Errorf("state of another size: %v", err)
	}
	sgd, _ := NewSGD(SGDConfig{LR: Constant(1)})
	st, _ = sgd.MarshalBinary()
	if err := e.UnmarshalBinary(st); err == nil || !strings.Contains(err.Error(), `"sgd", not "ema"`) {
		t.Errorf("optimizer state accepted as an EMA: %v", err)
	}
}
