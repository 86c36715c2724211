package trainer

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/internal/plotkit"
)

// instanceNorms returns, before step t's update, the gradient norms of the
// first PerInstance training examples at the current parameters, whether or
// not they are sampled: per-instance RDP charges every step
// (docs/per-instance.md#gaussian-mechanism-and-dp-sgd). It runs before the
// step's own chunks so their retained state is untouched.
func (s *state) instanceNorms(normsSq []float64) ([]float64, error) {
	n := s.cfg.PerInstance
	mb, k := s.model.MaxBatch(), len(s.model.Groups())
	row := make([]float64, n)
	// In a distributed run each rank computes the norms of the examples it
	// owns and the rows (zero elsewhere) are summed over ranks, exactly:
	// every rank holds one process's row, and rank 0 alone writes it.
	own := seq(n)
	if s.dist.Size() > 1 {
		own = own[:0]
		for i := range n {
			if i%s.dist.Size() == s.dist.Rank() {
				own = append(own, i)
			}
		}
	}
	for off := 0; off < len(own); off += mb {
		b := min(mb, len(own)-off)
		idx := own[off : off+b]
		batch := s.batches.gather(s.data.train, idx)
		if err := s.model.PerSampleNormsSq(batch, normsSq[:b*k], s.batches.losses[:b]); err != nil {
			return nil, fmt.Errorf("per-instance norms: %w", err)
		}
		for i := 0; i < b; i++ {
			var sq float64
			for _, v := range normsSq[i*k : (i+1)*k] {
				sq += v
			}
			row[idx[i]] = math.Sqrt(sq)
		}
	}
	if err := s.dist.SumFloat64(row); err != nil {
		return nil, fmt.Errorf("all-reduce of the per-instance norms: %w", err)
	}
	return row, nil
}

// instanceEpsilons is each tracked example's per-instance ε at delta: at
// step t its sensitivity is c = min(‖g_ti‖, C), so the step is a Poisson-
// subsampled Gaussian of multiplier σ·C/c, composed on the run's own RDP
// orders and converted as the run's bound is. c is rounded UP to a multiple
// of C/1024 (a conservative rounding that lets the RDP curves be cached), so
// an example clipped at every step gets exactly the run's ε.
func instanceEpsilons(norms [][]float64, q, sigma, clip, delta float64) ([]float64, error) {
	const grid = 1024
	orders := accountant.DefaultOrders()
	curves := map[int][]float64{}
	curve := func(k int) ([]float64, error) {
		if c, ok := curves[k]; ok {
			return c, nil
		}
		c, err := accountant.PoissonGaussianRDP(nil, orders, q, sigma*grid/float64(k), accountant.AbsSeries)
		if err != nil {
			return nil, fmt.Errorf("per-instance RDP: %w", err)
		}
		curves[k] = c
		return c, nil
	}
	n := len(norms[0])
	eps := make([]float64, n)
	total := make([]float64, len(orders))
	for i := 0; i < n; i++ {
		clear(total)
		for _, row := range norms {
			c := min(row[i], clip)
			k := int(math.Ceil(c / clip * grid))
			if k == 0 {
				continue // a zero gradient costs nothing
			}
			// Keep σ·C/c within the accountant's stable range (σ ≤ 100) by
			// rounding c further up: conservative.
			k = max(k, int(math.Ceil(sigma*grid/100)))
			rdp, err := curve(k)
			if err != nil {
				return nil, err
			}
			for j, v := range rdp {
				total[j] += v
			}
		}
		e, _, err := accountant.EpsilonFromRDP(orders, total, delta)
		if err != nil {
			return nil, fmt.Errorf("per-instance ε of example %d: %w", i, err)
		}
		eps[i] = e
	}
	return eps, nil
}

// instanceReport computes the tracked examples' per-instance ε at the run's
// δ, writes per_instance.csv and a histogram, and returns summary notes.
func (s *state) instanceReport(norms [][]float64) ([]string, error) {
	if len(norms) == 0 {
		return nil, nil
	}
	eps, err := instanceEpsilons(norms, s.acct.q, s.sigma, s.cfg.ClipNorm, s.cfg.Delta)
	if err != nil {
		return nil, err
	}
	sorted := append([]float64(nil), eps...)
	sort.Float64s(sorted)
	q := func(p float64) float64 { return sorted[int(p*float64(len(sorted)-1))] }
	notes := []string{
		fmt.Sprintf("per-instance ε of the first %d training examples at δ = %g: min %.4f, median %.4f, 90%% %.4f, max %.4f (run's ε: %.4f)",
			len(eps), s.cfg.Delta, sorted[0], q(0.5), q(0.9), sorted[len(sorted)-1], s.bestEpsilon()),
		"per-instance: " + accountant.PerInstanceCaveat,
	}
	if s.out == nil {
		return notes, nil
	}
	var b strings.Builder
	b.WriteString("example,label,epsilon\n")
	for i, e := range eps {
		fmt.Fprintf(&b, "%d,%d,%.6g\n", i, s.data.train.Y[i], e)
	}
	// Each record's index, label and data-dependent ε: curator only.
	if err := s.out.writePrivate("per_instance.csv", []byte(b.String())); err != nil {
		return nil, err
	}
	p, _, err := instanceHistogram(eps, s.cfg.Delta)
	if err != nil {
		return nil, err
	}
	for _, ext := range []string{"png", "svg"} {
		if err := saveFigure(s.out.private("per_instance."+ext), 7*vg.Inch, 4*vg.Inch, p); err != nil {
			return nil, fmt.Errorf("per-instance histogram: %w", err)
		}
	}
	return notes, nil
}

// instanceHistogram is the curator's histogram of per-instance ε, every
// bar inside the frame.
func instanceHistogram(eps []float64, delta float64) (*plotkit.Panel, *plotter.Histogram, error) {
	p := plotkit.New(fmt.Sprintf("per-instance ε (diagnostic, curator-only), %d examples, δ = %g", len(eps), delta), "ε_i", "examples")
	h, err := plotter.NewHist(plotter.Values(eps), 30)
	if err != nil {
		return nil, nil, fmt.Errorf("per-instance histogram: %w", err)
	}
	p.Plot.Add(h)
	plotkit.FitBars(p.Plot, h)
	return p, h, nil
}

func (s *state) bestEpsilon() float64 {
	b, _ := s.best()
	return b.Epsilon
}
