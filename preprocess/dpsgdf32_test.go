package preprocess

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
)

// The in-place float32 fit is the same mechanism as Fit: same noise draws,
// same mean, same transformed features (to float32 rounding), same event.
func TestFitInPlace32MatchesFit(t *testing.T) {
	const n, d = 300, 17
	s := rng.New(5)
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(3 * s.NormFloat64())
	}
	x[5*d] = 0 // a zero-free row is not required; one zero entry is fine
	test := append([]float32(nil), x[:40*d]...)
	cfg := DPSGDF{Variant: Practical, EpsF: 0.1, CF: 2, Delta: 1e-5}

	ref, err := cfg.Fit(FromFloat32(x, n, d), rng.New(9))
	if err != nil {
		t.Fatal(err)
	}
	got := append([]float32(nil), x...)
	cen, evs, err := cfg.FitInPlace32(got, n, d, rng.New(9))
	if err != nil {
		t.Fatal(err)
	}
	for j := range cen.Mu {
		if math.Abs(cen.Mu[j]-ref.Centering.Mu[j]) > 1e-6*(1+math.Abs(ref.Centering.Mu[j])) {
			t.Fatalf("μ[%d] = %v, Fit gives %v", j, cen.Mu[j], ref.Centering.Mu[j])
		}
	}
	want := ToFloat32(ref.X)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-5 {
			t.Fatalf("feature %d: %v, Fit gives %v", i, got[i], want[i])
		}
	}
	if len(evs) != 1 || evs[0] != ref.Events[0] {
		t.Fatalf("events %v, Fit gives %v", evs, ref.Events)
	}
	if g, ok := evs[0].(accountant.Gaussian); !ok || !(g.Sigma > 0) {
		t.Fatalf("event %v", evs[0])
	}
	wantTest := ToFloat32(ref.Centering.Transform(FromFloat32(test, 40, d)))
	if err := cen.ApplyInPlace32(test, 40, d); err != nil {
		t.Fatal(err)
	}
	for i := range wantTest {
		if math.Abs(float64(test[i]-wantTest[i])) > 1e-5 {
			t.Fatalf("test feature %d: %v, Transform gives %v", i, test[i], wantTest[i])
		}
	}
	if _, _, err := (DPSGDF{Variant: Theory}).FitInPlace32(got, n, d, s); err == nil {
		t.Fatal("theory variant accepted")
	}
	bad := append([]float32(nil), x...)
	bad[7] = float32(math.NaN())
	if _, _, err := cfg.FitInPlace32(bad, n, d, s); err == nil {
		t.Fatal("NaN feature accepted")
	}
}

func TestNormalizeApplyInPlace32(t *testing.T) {
	x := []float32{3, 4, 0, 0, 1, 0}
	Normalize{C: 10}.ApplyInPlace32(x, 3, 2)
	want := []float32{6, 8, 0, 0, 10, 0}
	for i := range want {
		if math.Abs(float64(x[i]-want[i])) > 1e-6 {
			t.Fatalf("got %v, want %v", x, want)
		}
	}
}
