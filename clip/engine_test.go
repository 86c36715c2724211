package clip

import (
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
)

// With the real engine (an MLP from the model zoo), the norm-only path —
// PerSampleNormsSq, Scales, AccumulateScaled — agrees with clipping the
// materialised gradients to float rounding (the engine computes Linear norms
// as ‖a‖²‖dz‖², so bit equality is not expected).
func TestNormOnlyWithEngineMLP(t *testing.T) {
	m, err := models.NewMLP(12, []int{16}, 5, "relu", models.Options{MaxBatch: 32, Seed: 3})
	if err != nil {
		t.Skipf("model zoo unavailable: %v", err)
	}
	const n = 32
	s := rng.New(4)
	b := models.Batch{N: n, X: make([]float32, n*12), Y: make([]int, n)}
	s.FillNormal(b.X, 2)
	for i := range b.Y {
		b.Y[i] = s.IntN(5)
	}
	d, k := m.NumParams(), len(m.Groups())
	grads := make([]float32, n*d)
	losses := make([]float32, n)
	if err := m.PerSampleGrads(b, grads, losses); err != nil {
		t.Fatal(err)
	}
	ns := make([]float64, n)
	for i := range ns {
		ns[i] = norm(grads[i*d : (i+1)*d])
	}
	sorted := slices.Sorted(slices.Values(ns))
	c := sorted[n/2]
	l2, _ := NewL2(c, d, m.Groups())
	pl, _ := NewPerLayer(c, d, m.Groups(), GroupSizeWeights(m.Groups()))
	for name, nc := range map[string]NormClipper{"L2": l2, "PerLayer": pl} {
		want := make([]float32, d)
		nc.ClipSum(slices.Clone(grads), n, nil, want)
		normsSq := make([]float64, n*k)
		if err := m.PerSampleNormsSq(b, normsSq, losses); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			var tot float64
			for _, v := range normsSq[i*k : (i+1)*k] {
				tot += v
			}
			if math.Abs(math.Sqrt(tot)-ns[i]) > 1e-5*ns[i] {
				t.Fatalf("engine norm of example %d: %v, materialised %v", i, math.Sqrt(tot), ns[i])
			}
		}
		scales := make([]float32, n*k)
		nc.Scales(normsSq, n, scales)
		got := make([]float32, d)
		if err := m.AccumulateScaled(scales, got); err != nil {
			t.Fatal(err)
		}
		var diff, ref float64
		for j := range got {
			diff += math.Pow(float64(got[j]-want[j]), 2)
			ref += float64(want[j]) * float64(want[j])
		}
		t.Logf("%s: relative L2 difference norm-only vs materialised %.2e", name, math.Sqrt(diff/ref))
		if math.Sqrt(diff/ref) > 1e-5 {
			t.Errorf("%s: norm-only sum differs from materialised by %.2e (relative)", name, math.Sqrt(diff/ref))
		}
	}
}
