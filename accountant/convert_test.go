package accountant

import (
	"errors"
	"math"
	"testing"
)

func stdNormalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// gaussianExactDelta is the exact privacy profile of the Gaussian mechanism
// with noise multiplier sigma (Balle & Wang 2018, Thm 8):
// δ(ε) = Φ(−εσ + 1/(2σ)) − e^ε Φ(−εσ − 1/(2σ)).
func gaussianExactDelta(sigma, eps float64) float64 {
	return stdNormalCDF(-eps*sigma+0.5/sigma) - math.Exp(eps)*stdNormalCDF(-eps*sigma-0.5/sigma)
}

func gaussianExactEpsilon(sigma, delta float64) float64 {
	lo, hi := 0.0, 1000.0
	for range 200 {
		mid := (lo + hi) / 2
		if gaussianExactDelta(sigma, mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// TestConversionVsExactGaussian: the RDP conversion of a Gaussian's curve is
// a valid (never smaller) and reasonably tight ε, and δ(ε) likewise.
func TestConversionVsExactGaussian(t *testing.T) {
	orders := DefaultOrders()
	for _, sigma := range []float64{0.5, 1, 2, 5, 20} {
		rdp := make([]float64, len(orders))
		for i, a := range orders {
			rdp[i] = a / (2 * sigma * sigma)
		}
		for _, delta := range []float64{1e-3, 1e-5, 1e-9} {
			eps, order, err := EpsilonFromRDP(orders, rdp, delta)
			if err != nil {
				t.Fatal(err)
			}
			exact := gaussianExactEpsilon(sigma, delta)
			t.Logf("sigma=%v delta=%v: rdp eps %.5g (order %v), exact %.5g", sigma, delta, eps, order, exact)
			if eps < exact || eps > 1.5*exact {
				t.Errorf("sigma=%v delta=%v: rdp eps %v, exact %v", sigma, delta, eps, exact)
			}
			d, _, err := DeltaFromRDP(orders, rdp, exact)
			if err != nil {
				t.Fatal(err)
			}
			if d < delta*(1-1e-9) {
				t.Errorf("sigma=%v: rdp delta(%v) = %v below the exact %v", sigma, exact, d, delta)
			}
		}
	}
}

func TestConversionValues(t *testing.T) {
	// Worked by hand: 1 + log(1/2) − log(2·1e−5) = 1 − 0.693147 + 10.819778.
	eps, order, err := EpsilonFromRDP([]float64{2}, []float64{1}, 1e-5)
	if err != nil || math.Abs(eps-11.126631) > 1e-6 || order != 2 {
		t.Errorf("got %v at %v (%v), want 11.126631 at 2", eps, order, err)
	}
	// δ² ≥ 1 − e^{−r}: the KL route gives ε = 0.
	if eps, _, _ := EpsilonFromRDP([]float64{2, 3}, []float64{1e-12, 2e-12}, 1e-5); eps != 0 {
		t.Errorf("tiny rdp: eps %v, want 0", eps)
	}
	// Inverse: δ at the returned ε gives back δ, at the same order.
	orders := []float64{1.5, 2, 4, 8, 16, 32}
	rdp := []float64{0.1, 0.15, 0.3, 0.7, 1.6, 3.5}
	for _, delta := range []float64{1e-2, 1e-5, 1e-10} {
		eps, o1, err := EpsilonFromRDP(orders, rdp, delta)
		if err != nil {
			t.Fatal(err)
		}
		d, o2, err := DeltaFromRDP(orders, rdp, eps)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d-delta) > 1e-9*delta || o1 != o2 {
			t.Errorf("delta %v -> eps %v (order %v) -> delta %v (order %v)", delta, eps, o1, d, o2)
		}
	}
	// +Inf orders are skipped, not fatal.
	if eps, o, err := EpsilonFromRDP([]float64{2, 3}, []float64{math.Inf(1), 1}, 1e-5); err != nil || o != 3 || math.IsInf(eps, 0) {
		t.Errorf("inf order: %v %v %v", eps, o, err)
	}
	if eps, _, _ := EpsilonFromRDP([]float64{2}, []float64{math.Inf(1)}, 1e-5); !math.IsInf(eps, 1) {
		t.Errorf("all inf: eps %v", eps)
	}
	if d, _, _ := DeltaFromRDP([]float64{2}, []float64{math.Inf(1)}, 1); d != 1 {
		t.Errorf("all inf: delta %v", d)
	}
}

func TestConversionErrors(t *testing.T) {
	tests := []struct {
		orders, rdp []float64
		delta       float64
	}{
		{[]float64{2}, []float64{1, 2}, 1e-5},
		{nil, nil, 1e-5},
		{[]float64{1}, []float64{1}, 1e-5},
		{[]float64{2}, []float64{-1}, 1e-5},
		{[]float64{2}, []float64{math.NaN()}, 1e-5},
		{[]float64{2}, []float64{1}, 0},
		{[]float64{2}, []float64{1}, 1},
		{[]float64{2}, []float64{1}, math.NaN()},
	}
	for _, tc := range tests {
		if _, _, err := EpsilonFromRDP(tc.orders, tc.rdp, tc.delta); err == nil {
			t.Errorf("EpsilonFromRDP(%v, %v, %v) accepted", tc.orders, tc.rdp, tc.delta)
		}
	}
	if _, _, err := DeltaFromRDP([]float64{2}, []float64{1}, -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative epsilon: %v", err)
	}
}
