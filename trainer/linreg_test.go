package trainer

import (
	"bytes"
	"encoding/csv"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/mechanism"
)

// The batch builder gives a regression model one target per example, the
// label as a number, and a classifier none; reusing its buffer for a shorter
// chunk keeps the lengths right.
func TestBatchBuilder(t *testing.T) {
	for _, tc := range []struct {
		regression bool
		ys         [][]int
	}{
		{false, [][]int{{3, 1, 4}, {1}}},
		{true, [][]int{{3, 1, 4, 1, 5}, {9, 2}, {}}},
	} {
		bb := batchBuilder{regression: tc.regression}
		for _, y := range tc.ys {
			x := make([]float32, 2*len(y))
			b := bb.batch(x, y)
			if b.N != len(y) || len(b.Y) != len(y) || len(b.X) != len(x) {
				t.Fatalf("regression %v, labels %v: N %d, |Y| %d, |X| %d", tc.regression, y, b.N, len(b.Y), len(b.X))
			}
			if !tc.regression {
				if b.T != nil {
					t.Fatalf("classifier batch has targets %v", b.T)
				}
				continue
			}
			if len(b.T) != len(y) {
				t.Fatalf("labels %v: %d targets", y, len(b.T))
			}
			for i, v := range y {
				if b.T[i] != float32(v) {
					t.Fatalf("labels %v: targets %v", y, b.T)
				}
			}
		}
	}
}

// Two linear-regression configurations that Validate accepts train: the
// per-instance diagnostic (whose norms are computed outside the step's
// chunks) and subspace clipping (whose public gradients are computed at
// setup). Both once failed with "0 targets".
func TestLinRegConfigurations(t *testing.T) {
	base := func(t *testing.T) Config {
		c := small(t)
		c.Model, c.Hidden = ModelLinReg, nil
		c.Sigma, c.Steps, c.BatchSize = 1, 3, 64
		return c
	}
	t.Run("per-instance", func(t *testing.T) {
		c := base(t)
		c.PerInstance = 10
		sum := run1(t, c)
		// Squared loss ½(z − t)² on labels 0..9 with z near 0 over three
		// small steps: an example labelled 2 or more has a gradient norm
		// |z − t|·‖(x, 1)‖ > C = 1 at every step, so its ε is the
		// Poisson-subsampled Gaussian's RDP ε for the whole run
		// (docs/per-instance.md); one labelled 0 has a smaller gradient and
		// a smaller ε; none exceeds the run's.
		want, err := accountant.PoissonEpsilon(sum.Q, c.Sigma, c.Steps, c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(readFile(t, filepath.Join(c.OutDir, "private", "per_instance.csv")))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != c.PerInstance+1 {
			t.Fatalf("per_instance.csv has %d rows, want %d", len(rows), c.PerInstance+1)
		}
		const tol = 1e-5 // the CSV keeps 6 significant digits
		var big, zero int
		for _, r := range rows[1:] {
			label, err1 := strconv.Atoi(r[1])
			eps, err2 := strconv.ParseFloat(r[2], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("row %v: %v %v", r, err1, err2)
			}
			switch {
			case eps > want.Epsilon*(1+tol):
				t.Errorf("example %s: per-instance ε %v above the run's RDP ε %v", r[0], eps, want.Epsilon)
			case label >= 2:
				big++
				if math.Abs(eps-want.Epsilon) > tol*want.Epsilon {
					t.Errorf("example %s (label %d): per-instance ε %v, want the run's RDP ε %v", r[0], label, eps, want.Epsilon)
				}
			case label == 0:
				zero++
				if !(eps < want.Epsilon*(1-tol)) {
					t.Errorf("example %s (label 0): per-instance ε %v, want below the run's %v", r[0], eps, want.Epsilon)
				}
			}
		}
		if big == 0 || zero == 0 {
			t.Fatalf("the tracked examples' labels do not exercise both cases (%d labelled ≥ 2, %d labelled 0)", big, zero)
		}
	})
	t.Run("subspace", func(t *testing.T) {
		c := base(t)
		c.Sampler, c.Q2 = mechanism.Twice, 0.5
		c.Clip, c.SubspaceRanks, c.PublicN = mechanism.Subspace, []int{2, 4}, 50
		sum := run1(t, c)
		if sum.CoveredN != sum.TrainN-c.PublicN {
			t.Fatalf("covered %d of %d with %d public", sum.CoveredN, sum.TrainN, c.PublicN)
		}
		if sum.Steps != c.Steps || math.IsNaN(sum.TestLoss) || math.IsInf(sum.TestLoss, 0) {
			t.Fatalf("steps %d, test loss %v", sum.Steps, sum.TestLoss)
		}
	})
}
