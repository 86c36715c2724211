package objpert

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A bad training row is refused naming the feature, never its value or the
// row (issue 37, finding 8).
func TestCheckDataNamesNoValueNorRow(t *testing.T) {
	const n, d, at = 5000, 3, 4321
	for _, tc := range []struct {
		name string
		x    float64 // planted at (at, 1)
		y    float64 // label of row at
		loss GLM
		want string
	}{
		{"feature", math.Inf(1), 1, Logistic{}, "feature 1"},
		{"label not finite", 0.5, math.NaN(), Logistic{}, "label"},
		{"logistic label", 0.5, 31415.926, Logistic{}, "-1 or +1"},
	} {
		X := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := range y {
			y[i] = 1
		}
		X.Set(at, 1, tc.x)
		y[at] = tc.y
		err := checkData(X, y, tc.loss)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to name %q", tc.name, err, tc.want)
			continue
		}
		for _, s := range []string{"4321", "4322", "Inf", "NaN", "31415", "3.14"} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q gives away %q", tc.name, err, s)
			}
		}
	}
}
