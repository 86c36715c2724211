package preprocess

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/rng"
	"gonum.org/v1/gonum/mat"
)

// Errors about training rows name the feature (column), never a value or
// the row (issue 37, finding 8): each case plants one bad value in row
// 4321 of 5000 and checks that the message carries neither.
func TestErrorsNameNoValueNorRow(t *testing.T) {
	const n, d, at = 5000, 3, 4321
	const secret = 31415.926
	matrix := func(v float64, col int) *mat.Dense {
		X := mat.NewDense(n, d, nil)
		for i := range n {
			for j := range d {
				X.Set(i, j, 0.01*float64((i+j)%5))
			}
		}
		X.Set(at, col, v)
		return X
	}
	inf := math.Inf(1)
	never := []string{"4321", "4322", "31415", "3.14", "Inf", "NaN"}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"Check: a record outside the unit ball", func() error {
			return Check(StandardScaler{}, matrix(secret, 1), Bounds{})
		}, "outside the unit ball"},
		{"standard scaler: an infinite value", func() error {
			_, _, err := StandardScaler{}.FitTransform(matrix(inf, 2), nil)
			return err
		}, "feature 2"},
		{"impute: an infinite value", func() error {
			_, _, err := Impute{}.FitTransform(matrix(inf, 1), nil)
			return err
		}, "feature 1"},
		{"regression impute: an infinite predictor", func() error {
			_, _, err := RegressionImpute{Target: 0, Predictors: []int{2}}.FitTransform(matrix(inf, 2), nil)
			return err
		}, "predictor 2"},
		{"regression impute: an infinite target", func() error {
			_, _, err := RegressionImpute{Target: 0, Predictors: []int{2}}.FitTransform(matrix(inf, 0), nil)
			return err
		}, "target 0"},
		{"dpsgdf (float32): a non-finite value", func() error {
			x := make([]float32, n*d)
			x[at*d+1] = float32(math.NaN())
			_, _, err := DPSGDF{Variant: Practical, EpsF: 1, CF: 1, Delta: 1e-5}.FitInPlace32(x, n, d, rng.New(1))
			return err
		}, "feature 1"},
		{"dpsgdf: a non-finite value", func() error {
			_, err := DPSGDF{Variant: Practical, EpsF: 1, CF: 1, Delta: 1e-5}.Fit(matrix(inf, 1), rng.New(1))
			return err
		}, "feature 1"},
	} {
		err := tc.run()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q does not name %q", tc.name, msg, tc.want)
		}
		for _, s := range never {
			if strings.Contains(msg, s) {
				t.Errorf("%s: %q gives away %q", tc.name, msg, s)
			}
		}
	}
	if err := Check(StandardScaler{}, matrix(secret, 1), Bounds{}); !errors.Is(err, ErrOutsideCollection) {
		t.Errorf("Check: %v, want ErrOutsideCollection", err)
	}
}
