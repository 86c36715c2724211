package objpert

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
)

// RenyiFilterCaveat is printed with every per-instance RDP number
// (accountant.PerInstanceCaveat).
const RenyiFilterCaveat = accountant.PerInstanceCaveat

// InstanceRDP is the per-example per-instance RDP of a DP-SGD run: at each
// step t, example i's per-instance sensitivity is its clipped gradient norm
// c_ti = min(‖g_ti‖, C), so its step is a (Poisson-subsampled) Gaussian
// mechanism with noise multiplier σC/c_ti
// (docs/per-instance.md#gaussian-mechanism-and-dp-sgd).
type InstanceRDP struct {
	Q, Sigma, Clip float64
	Steps          int
	Orders         []float64   // RDP orders α (q < 1)
	RDP            [][]float64 // [example][order]: Σ_t RDP_t(α) (q < 1)
	Rho            []float64   // [example]: Σ_t c_ti²/(2σ²C²), the full-batch RDP slope (q = 1)
	Caveat         string
}

// DefaultOrders are the integer RDP orders used for q < 1.
func DefaultOrders() []float64 {
	var o []float64
	for a := 2; a <= 64; a++ {
		o = append(o, float64(a))
	}
	return append(o, 80, 96, 128, 192, 256, 512)
}

// PerInstanceRDP accumulates per-instance RDP from norms[t][i], the
// per-example gradient norms of step t (before clipping), for sampling rate
// q, noise multiplier sigma and clip norm C. For q = 1 (full batch) each
// step costs α·c²/(2σ²C²) exactly; for q < 1 the integer-order RDP of the
// Poisson-subsampled Gaussian (Mironov et al. 2019) is used at the effective
// multiplier σC/c. See [RenyiFilterCaveat].
func PerInstanceRDP(norms [][]float64, q, sigma, clip float64) (*InstanceRDP, error) {
	if !(q > 0 && q <= 1) {
		return nil, inputf("per-instance RDP: q must be in (0,1], got %v", q)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) || !(clip > 0) || math.IsInf(clip, 0) {
		return nil, inputf("per-instance RDP: sigma and clip must be positive and finite, got %v, %v", sigma, clip)
	}
	r := &InstanceRDP{Q: q, Sigma: sigma, Clip: clip, Steps: len(norms), Caveat: RenyiFilterCaveat}
	n := 0
	if len(norms) > 0 {
		n = len(norms[0])
	}
	r.Rho = make([]float64, n)
	var curve []float64
	if q < 1 {
		r.Orders = DefaultOrders()
		r.RDP = make([][]float64, n)
		for i := range r.RDP {
			r.RDP[i] = make([]float64, len(r.Orders))
		}
	}
	for t, row := range norms {
		if len(row) != n {
			return nil, inputf("per-instance RDP: step %d has %d examples, step 0 has %d", t, len(row), n)
		}
		for i, g := range row {
			if math.IsNaN(g) || g < 0 {
				return nil, inputf("per-instance RDP: step %d example %d has gradient norm %v", t, i, g)
			}
			c := math.Min(g, clip)
			r.Rho[i] += c * c / (2 * sigma * sigma * clip * clip)
			if q < 1 && c > 0 {
				// The accountant's Poisson-subsampled Gaussian RDP at the
				// effective multiplier: one implementation for the run's
				// account and the per-instance one.
				var err error
				if curve, err = accountant.PoissonGaussianRDP(curve, r.Orders, q, sigma*clip/c, accountant.AbsSeries); err != nil {
					return nil, fmt.Errorf("per-instance RDP: %w", err)
				}
				for k, v := range curve {
					r.RDP[i][k] += v
				}
			}
		}
	}
	return r, nil
}

// Epsilon converts example i's RDP to ε at delta by ε = min_α RDP(α) +
// log(1/δ)/(α−1). For q = 1, RDP(α) = ρα and the minimum over real α > 1 is
// ρ + 2√(ρ log(1/δ)).
func (r *InstanceRDP) Epsilon(i int, delta float64) float64 {
	if r.Q == 1 {
		rho := r.Rho[i]
		return rho + 2*math.Sqrt(rho*math.Log(1/delta))
	}
	best := math.Inf(1)
	for k, a := range r.Orders {
		best = math.Min(best, r.RDP[i][k]+math.Log(1/delta)/(a-1))
	}
	return best
}

// Epsilons returns every example's ε at delta.
func (r *InstanceRDP) Epsilons(delta float64) []float64 {
	out := make([]float64, len(r.Rho))
	for i := range out {
		out[i] = r.Epsilon(i, delta)
	}
	return out
}
