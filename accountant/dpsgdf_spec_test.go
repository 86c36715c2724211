package accountant

import (
	"fmt"
	"math"
	"testing"
)

// docs/dpsgdf.md#test-vectors, test 2: the TF-Privacy anchor (q = 256/60000, σ
// = 1.1, T = 14063, δ = 1e-5, integer orders 2..128): classic conversion
// ε = 3.0092 at α = 9, improved (Balle et al.) ε = 2.5971 at α = 8.
func TestDPSGDFSpecAnchor(t *testing.T) {
	var orders []float64
	for a := 2; a <= 128; a++ {
		orders = append(orders, float64(a))
	}
	const q, sigma, steps, delta = 256.0 / 60000, 1.1, 14063, 1e-5
	rdp, err := PoissonGaussianRDP(nil, orders, q, sigma, AbsSeries)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rdp {
		rdp[i] *= steps
	}
	classic, classicOrder := math.Inf(1), 0.0
	for i, a := range orders {
		if e := rdp[i] + math.Log(1/delta)/(a-1); e < classic {
			classic, classicOrder = e, a
		}
	}
	if math.Abs(classic-3.0092) > 1e-3 || classicOrder != 9 {
		t.Errorf("classic conversion: ε = %.5f at α = %v, want 3.0092 at 9", classic, classicOrder)
	}
	eps, order, err := EpsilonFromRDP(orders, rdp, delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(eps-2.5971) > 1e-3 || order != 8 {
		t.Errorf("improved conversion: ε = %.5f at α = %v, want 2.5971 at 8", eps, order)
	}
}

// docs/dpsgdf.md#accounting and test 3 of docs/dpsgdf.md#test-vectors: the
// noise multiplier of the DP-SGD phase for a total ε when DPSGD-F's Gaussian
// mean (σ_F from the analytic Gaussian for ε_F, test 1) is composed before it;
// RDP, improved conversion, integer orders 2..256 ∪ {320, 384, 448, 512}, δ =
// 1e-5, 2e-3 relative.
func TestDPSGDFSpecCalibrationTable(t *testing.T) {
	var orders []float64
	for a := 2; a <= 256; a++ {
		orders = append(orders, float64(a))
	}
	orders = append(orders, 320, 384, 448, 512)
	// Analytic-Gaussian multipliers for ε_F ∈ {0.02, 0.05, 0.2} at δ = 1e-5
	// (docs/dpsgdf.md#test-vectors, test 1); 0 stands for no preprocessing.
	sigmaF := []float64{0, 131.796978, 57.770695, 16.304133}
	rows := []struct {
		n, batch int
		epochs   float64
		eps      float64
		want     [4]float64
	}{
		{60000, 1024, 40, 1, [4]float64{3.4560, 3.4576, 3.4640, 3.5605}},
		{60000, 1024, 40, 2, [4]float64{1.9449, 1.9451, 1.9460, 1.9592}},
		{60000, 4096, 80, 1, [4]float64{9.5345, 9.5389, 9.5575, 9.8372}},
		{60000, 4096, 80, 2, [4]float64{5.1237, 5.1243, 5.1271, 5.1671}},
		{60000, 16384, 160, 1, [4]float64{26.8090, 26.8216, 26.8746, 27.6701}},
		{60000, 16384, 160, 2, [4]float64{14.2820, 14.2838, 14.2918, 14.4065}},
		{50000, 4096, 80, 1, [4]float64{10.4405, 10.4454, 10.4658, 10.7723}},
		{50000, 4096, 80, 2, [4]float64{5.6038, 5.6045, 5.6076, 5.6514}},
	}
	if testing.Short() {
		rows = rows[:2]
	}
	for _, r := range rows {
		q := float64(r.batch) / float64(r.n)
		steps := int(math.Round(r.epochs / q))
		var got [4]float64
		for j, sf := range sigmaF {
			name := fmt.Sprintf("n=%d B=%d T=%d ε=%g σ_F=%g", r.n, r.batch, steps, r.eps, sf)
			eps := func(sigma float64) (float64, error) {
				acc, err := NewRDP(WithOrders(orders))
				if err != nil {
					return 0, err
				}
				if sf > 0 {
					if err := acc.Compose(Gaussian{Sigma: sf}, 1); err != nil {
						return 0, err
					}
				}
				if err := acc.Compose(PoissonSampled{Q: q, Event: Gaussian{Sigma: sigma}}, steps); err != nil {
					return 0, err
				}
				b, err := acc.Epsilon(1e-5)
				return b.Epsilon, err
			}
			s, err := Calibrate(eps, r.eps, WithTolerance(1e-6))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got[j] = s
			if math.Abs(s/r.want[j]-1) > 2e-3 {
				t.Errorf("%s: σ = %.4f, want %.4f", name, s, r.want[j])
			}
		}
		// σ grows with ε_F, and ε_F = 0.02 costs the DP-SGD phase < 0.1%.
		for j := 1; j < 4; j++ {
			if !(got[j] >= got[j-1]) {
				t.Errorf("n=%d B=%d ε=%g: σ not monotone in ε_F: %v", r.n, r.batch, r.eps, got)
			}
		}
		if r.batch == 1024 && got[1]/got[0]-1 >= 1e-3 {
			t.Errorf("ε_F = 0.02 raised σ by %.4f%%", 100*(got[1]/got[0]-1))
		}
	}
}
