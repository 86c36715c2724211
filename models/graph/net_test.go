package graph_test

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/models/graph"
	"github.com/dptrain/dptrain/rng"
)

func classesOf(n *graph.Net[float64]) int { return max(n.Classes(), 2) }

// TestProbeMatchesOracle checks the probe engine's per-sample gradients
// (one batched backward pass plus the per-layer rules) against the oracle's
// (one ordinary backward pass per example) for every architecture, to 1e-9
// relative, on a padded chunk and then on a second chunk through the same
// compiled graph.
func TestProbeMatchesOracle(t *testing.T) {
	for _, a := range archs() {
		t.Run(a.name, func(t *testing.T) {
			net, err := graph.NewNet[float64](a.spec, a.batch+1, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			or, err := graph.NewOracle(a.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer or.Close()
			d := net.NumParams()
			if or.NumParams() != d {
				t.Fatalf("oracle has %d params, net %d", or.NumParams(), d)
			}
			for round := uint64(0); round < 2; round++ {
				x, y, tg := data(a.spec, classesOf(net), a.batch, 10+round)
				got := make([]float64, a.batch*d)
				gotL := make([]float64, a.batch)
				if err := net.PerSampleGrads(x, y, tg, a.batch, got, gotL); err != nil {
					t.Fatal(err)
				}
				want := make([]float64, a.batch*d)
				wantL := make([]float64, a.batch)
				if err := or.PerSampleGrads(net.Params(), x, y, tg, a.batch, want, wantL); err != nil {
					t.Fatal(err)
				}
				if e := relErr(gotL, wantL); e > 1e-12 {
					t.Errorf("round %d: losses %v, oracle %v", round, gotL, wantL)
				}
				for i := 0; i < a.batch; i++ {
					g, w := got[i*d:(i+1)*d], want[i*d:(i+1)*d]
					if e := relErr(g, w); e > 1e-9 || math.IsNaN(e) {
						t.Errorf("round %d example %d: relative error %.3g", round, i, e)
					}
					if sumAbs(w) == 0 {
						t.Errorf("example %d: oracle gradient is all zero", i)
					}
				}
			}
		})
	}
}

func sumAbs(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += math.Abs(v)
	}
	return s
}

// TestNormsAndScaledSumMatchMaterialised checks the two non-materialising
// forms against the materialised gradients: ‖g_{i,k}‖² per group, and
// Σ_i s_{i,k} g_{i,k} for random scales.
func TestNormsAndScaledSumMatchMaterialised(t *testing.T) {
	for _, a := range archs() {
		t.Run(a.name, func(t *testing.T) {
			net, err := graph.NewNet[float64](a.spec, a.batch+2, 3)
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			d, groups := net.NumParams(), net.Groups()
			k := len(groups)
			x, y, tg := data(a.spec, classesOf(net), a.batch, 7)
			grads := make([]float64, a.batch*d)
			losses := make([]float64, a.batch)
			if err := net.PerSampleGrads(x, y, tg, a.batch, grads, losses); err != nil {
				t.Fatal(err)
			}
			norms := make([]float64, a.batch*k)
			if err := net.PerSampleNormsSq(x, y, tg, a.batch, norms, losses); err != nil {
				t.Fatal(err)
			}
			s := rng.New(5)
			scales := make([]float64, a.batch*k)
			wantSum := make([]float64, d)
			for i := 0; i < a.batch; i++ {
				for gi, g := range groups {
					var n2 float64
					scales[i*k+gi] = s.Float64()
					for j := g.Offset; j < g.Offset+g.Len; j++ {
						v := grads[i*d+j]
						n2 += v * v
						wantSum[j] += scales[i*k+gi] * v
					}
					if got := norms[i*k+gi]; math.Abs(got-n2) > 1e-9*n2 || n2 == 0 {
						t.Errorf("example %d group %s: norm² %.17g, materialised %.17g", i, g.Name, got, n2)
					}
				}
			}
			sum := make([]float64, d)
			if err := net.AccumulateScaled(scales, sum); err != nil {
				t.Fatal(err)
			}
			if e := relErr(sum, wantSum); e > 1e-12 {
				t.Errorf("scaled sum relative error %.3g", e)
			}
		})
	}
}

// TestPerSampleIndependence perturbs example j and checks example i's
// gradient does not move (bit for bit: nothing mixes examples).
func TestPerSampleIndependence(t *testing.T) {
	for _, a := range archs() {
		t.Run(a.name, func(t *testing.T) {
			net, err := graph.NewNet[float64](a.spec, a.batch, 4)
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			d := net.NumParams()
			x, y, tg := data(a.spec, classesOf(net), a.batch, 8)
			before := make([]float64, a.batch*d)
			losses := make([]float64, a.batch)
			if err := net.PerSampleGrads(x, y, tg, a.batch, before, losses); err != nil {
				t.Fatal(err)
			}
			in := len(x) / a.batch
			j := a.batch - 1
			for p := j * in; p < (j+1)*in; p++ {
				x[p] = 3 * x[p]
			}
			tg[j] += 1
			after := make([]float64, a.batch*d)
			if err := net.PerSampleGrads(x, y, tg, a.batch, after, losses); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < j; i++ {
				for p := i * d; p < (i+1)*d; p++ {
					if before[p] != after[p] {
						t.Fatalf("example %d's gradient moved when example %d changed (coordinate %d)", i, j, p-i*d)
					}
				}
			}
			if relErr(after[j*d:], before[j*d:]) == 0 {
				t.Errorf("example %d's own gradient did not change", j)
			}
		})
	}
}

// TestOracleFiniteDifferences validates the oracle itself: its gradient
// equals central finite differences of its own per-example loss.
func TestOracleFiniteDifferences(t *testing.T) {
	for _, a := range archs() {
		t.Run(a.name, func(t *testing.T) {
			or, err := graph.NewOracle(a.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer or.Close()
			net, err := graph.NewNet[float64](a.spec, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			d := or.NumParams()
			params := append([]float64(nil), net.Params()...)
			x, y, tg := data(a.spec, classesOf(net), 1, 9)
			grad := make([]float64, d)
			loss := make([]float64, 1)
			if err := or.PerSampleGrads(params, x, y, tg, 1, grad, loss); err != nil {
				t.Fatal(err)
			}
			lossAt := func(p []float64) float64 {
				g := make([]float64, d)
				l := make([]float64, 1)
				if err := or.PerSampleGrads(p, x, y, tg, 1, g, l); err != nil {
					t.Fatal(err)
				}
				return l[0]
			}
			s := rng.New(11)
			const h = 1e-5
			for trial := 0; trial < 12; trial++ {
				j := s.IntN(d)
				p := append([]float64(nil), params...)
				p[j] = params[j] + h
				up := lossAt(p)
				p[j] = params[j] - h
				down := lossAt(p)
				fd := (up - down) / (2 * h)
				if math.Abs(fd-grad[j]) > 1e-6*math.Max(1, math.Abs(grad[j])) {
					t.Errorf("coordinate %d: oracle %.10g, finite difference %.10g", j, grad[j], fd)
				}
			}
		})
	}
}
