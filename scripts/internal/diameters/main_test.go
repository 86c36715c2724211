package main

import (
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/preprocess"
)

// The quick run on the embedded Fashion-MNIST subset agrees with the O(n²d)
// reference (preprocess.Concentration) and lands near the paper's Table 2.
func TestQuickRunMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("O(n²d) reference on 1,000 images in -short mode")
	}
	out := t.TempDir()
	stats, err := run(config{quick: true, out: out, quickN: 1000}, io.Discard) // 1,000 images keep the O(n²d) reference fast
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || !stats[0].available {
		t.Fatalf("quick run: %+v", stats)
	}
	s := stats[0]
	if s.n != 1000 || s.d != 784 {
		t.Errorf("n=%d d=%d, want 1000×784", s.n, s.d)
	}
	if math.Abs(s.diam-s.refDiam) > 1e-12 || math.Abs(s.gramDiam-s.refDiam) > 1e-12 {
		t.Errorf("diam %.15f (Gram %.15f) vs Concentration %.15f", s.diam, s.gramDiam, s.refDiam)
	}
	if math.Abs(s.maxDist-s.refMax) > 1e-12 || math.Abs(s.meanDist-s.refMean) > 1e-12 {
		t.Errorf("max %.15f mean %.15f vs Concentration %.15f %.15f", s.maxDist, s.meanDist, s.refMax, s.refMean)
	}
	// Non-negative unit vectors: diam ≤ √2. The paper's full-set values are
	// diam 1.41 and mean distance 0.62; a 1,000-image subset is close.
	if s.diam > math.Sqrt2+1e-12 || s.diam < 1.3 {
		t.Errorf("diam %.6f outside [1.3, √2]", s.diam)
	}
	if math.Abs(s.meanDist-0.62) > 0.02 {
		t.Errorf("mean distance to the mean %.4f, paper 0.62 (full set)", s.meanDist)
	}
	for _, f := range []string{"diameters.md", "table2_diameters.csv", "table2_dist_to_mean.png", "table2_dist_to_mean.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("output %s missing or empty: %v", f, err)
		}
	}
}

func bruteDiameter(X *mat.Dense) float64 {
	n, _ := X.Dims()
	best := 0.0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var v mat.VecDense
			v.SubVec(X.RowView(i), X.RowView(j))
			best = math.Max(best, mat.Norm(&v, 2))
		}
	}
	return best
}

// The pruned and the full blocked-Gram diameters equal brute force on
// signed and on sparse non-negative data, with blocks that do not divide n.
func TestDiameterMethodsAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name     string
		n, d     int
		sparsity float64 // fraction of zero coordinates; 0 = signed Gaussian
	}{{"gaussian", 157, 9, 0}, {"sparse non-negative", 203, 30, 0.8}, {"dense non-negative", 120, 12, 0.1}} {
		X := mat.NewDense(tc.n, tc.d, nil)
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.d; j++ {
				switch {
				case tc.sparsity == 0:
					X.Set(i, j, r.NormFloat64())
				case r.Float64() >= tc.sparsity:
					X.Set(i, j, r.Float64())
				}
			}
			if tc.sparsity > 0 {
				X.Set(i, r.IntN(tc.d), 1) // no zero rows
			}
		}
		X = (&preprocess.Normalize{C: 1}).Transform(X)
		want := bruteDiameter(X)
		_, _, dists := distToMean(X)
		lo, li, lj := farthestPair(X, 3)
		if lo > want+1e-12 {
			t.Errorf("%s: lower bound %v above the diameter %v", tc.name, lo, want)
		}
		if got, i, j, _ := prunedDiameter(X, dists, lo, li, lj, 16); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: pruned %.15f (pair %d,%d), brute force %.15f", tc.name, got, i, j, want)
		}
		if got, _, _ := gramDiameter(X, 16); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: Gram %.15f, brute force %.15f", tc.name, got, want)
		}
		if i, j, ok := disjointPair(X, tc.n); ok {
			var ip float64
			for k := 0; k < tc.d; k++ {
				ip += X.At(i, k) * X.At(j, k)
			}
			if ip != 0 || math.Abs(want-math.Sqrt2) > 1e-12 {
				t.Errorf("%s: witness (%d,%d) has ⟨x_i,x_j⟩ = %v, diameter %v", tc.name, i, j, ip, want)
			}
		} else if tc.sparsity == 0.8 {
			t.Errorf("%s: expected a disjoint pair among sparse rows", tc.name)
		}
	}
}
