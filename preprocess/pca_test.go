package preprocess

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/rng"
)

// pcaGaussian returns n rows of independent N(0, scale_j²) features with
// geometrically decreasing scales (distinct population eigenvalues), shifted
// by a common offset so that centring matters.
func pcaGaussian(s *rng.Stream, n, d int) *mat.Dense {
	X := mat.NewDense(n, d, nil)
	for i := range n {
		row := X.RawRowView(i)
		for j := range row {
			row[j] = 0.3 + math.Pow(0.97, float64(j))*s.NormFloat64()
		}
	}
	return X
}

// pcaLowRank returns n rows mean + F·B with F n×r and B r×d Gaussian: the
// centred data have rank r (for n > r).
func pcaLowRank(s *rng.Stream, n, d, r int) *mat.Dense {
	F, B := mat.NewDense(n, r, nil), mat.NewDense(r, d, nil)
	for i := range n {
		for j := range r {
			F.Set(i, j, float64(r-j)*s.NormFloat64())
		}
	}
	for i := range r {
		for j := range d {
			B.Set(i, j, s.NormFloat64()/math.Sqrt(float64(d)))
		}
	}
	var X mat.Dense
	X.Mul(F, B)
	for i := range n {
		for j, v := range X.RawRowView(i) {
			X.Set(i, j, v+0.5+0.01*float64(j))
		}
	}
	return &X
}

// pcaDuplicated returns 2·u rows: u Gaussian rows, each twice, interleaved.
func pcaDuplicated(s *rng.Stream, u, d int) *mat.Dense {
	U := pcaGaussian(s, u, d)
	X := mat.NewDense(2*u, d, nil)
	for i := range u {
		X.SetRow(2*i, U.RawRowView(i))
		X.SetRow(2*i+1, U.RawRowView(i))
	}
	return X
}

func projector(A [][]float64, d int) *mat.Dense {
	P := mat.NewDense(d, d, nil)
	for _, v := range A {
		for i := range d {
			for j := range d {
				P.Set(i, j, P.At(i, j)+v[i]*v[j])
			}
		}
	}
	return P
}

// orthoErr is max |A·Aᵀ − I|.
func orthoErr(A [][]float64) float64 {
	worst := 0.0
	for i := range A {
		for j := range A {
			dot := 0.0
			for l := range A[i] {
				dot += A[i][l] * A[j][l]
			}
			if i == j {
				dot--
			}
			worst = math.Max(worst, math.Abs(dot))
		}
	}
	return worst
}

func maxAbsDiff(a, b *mat.Dense) float64 {
	var D mat.Dense
	D.Sub(a, b)
	return mat.Norm(&D, math.Inf(1)) // max row sum ≥ max entry
}

// TestPCAGramMatchesCovariance fits both paths on the same data and compares
// everything the step reports.
func TestPCAGramMatchesCovariance(t *testing.T) {
	removed30 := make([]bool, 30)
	for _, i := range []int{0, 7, 8, 19, 25, 29} {
		removed30[i] = true
	}
	cases := []struct {
		name    string
		X       *mat.Dense
		removed []bool
		k, rank int // rank of the centred kept rows
		auto    bool
	}{
		{"d<n", pcaGaussian(rng.New(1), 40, 12), nil, 3, 12, false},
		{"d<n k=d-1", pcaGaussian(rng.New(2), 30, 8), nil, 7, 8, false},
		{"d=n+1", pcaGaussian(rng.New(3), 20, 21), nil, 5, 19, true},
		{"d>n", pcaGaussian(rng.New(4), 20, 60), nil, 5, 19, true},
		{"d>>n", pcaGaussian(rng.New(5), 16, 300), nil, 4, 15, true},
		{"k=rank-1", pcaGaussian(rng.New(6), 12, 40), nil, 10, 11, true},
		{"k=rank", pcaGaussian(rng.New(6), 12, 40), nil, 11, 11, true},
		{"k>rank", pcaGaussian(rng.New(6), 12, 40), nil, 14, 11, true},
		{"k>n", pcaGaussian(rng.New(7), 6, 30), nil, 9, 5, true},
		{"rank 5 k=3", pcaLowRank(rng.New(8), 30, 50, 5), nil, 3, 5, true},
		{"rank 5 k=5", pcaLowRank(rng.New(8), 30, 50, 5), nil, 5, 5, true},
		{"rank 5 k=8", pcaLowRank(rng.New(8), 30, 50, 5), nil, 8, 5, true},
		{"rank 4 d<n", pcaLowRank(rng.New(9), 40, 10, 4), nil, 4, 4, false},
		{"duplicate rows", pcaDuplicated(rng.New(10), 12, 40), nil, 4, 11, true},
		{"duplicate rows k=rank", pcaDuplicated(rng.New(10), 12, 40), nil, 11, 11, true},
		{"removed rows", pcaGaussian(rng.New(11), 30, 45), removed30, 3, 23, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, d := c.X.Dims()
			vc, ac, gc, err := pcaTop(c.X, c.removed, c.k, true, pcaCovariance)
			if err != nil || gc {
				t.Fatalf("covariance path: %v (gram %v)", err, gc)
			}
			vg, ag, gg, err := pcaTop(c.X, c.removed, c.k, true, pcaGram)
			if err != nil || !gg {
				t.Fatalf("Gram path: %v (gram %v)", err, gg)
			}
			if _, _, g, _ := pcaTop(c.X, c.removed, c.k, false, pcaAuto); g != c.auto {
				t.Errorf("auto path Gram = %v, want %v", g, c.auto)
			}
			if len(vc) != d || len(vg) != d || len(ac) != c.k || len(ag) != c.k {
				t.Fatalf("lengths: %d, %d values, %d, %d vectors", len(vc), len(vg), len(ac), len(ag))
			}

			// Eigenvalues: 1e-9 relative within the rank, numerically zero beyond.
			l1 := vc[0]
			relVal := 0.0
			for i := range d {
				if i < c.rank {
					relVal = math.Max(relVal, math.Abs(vg[i]-vc[i])/vc[i])
					if math.Abs(vg[i]-vc[i]) > 1e-9*vc[i] {
						t.Errorf("λ_%d: Gram %.17g, covariance %.17g", i+1, vg[i], vc[i])
					}
				} else if math.Abs(vg[i]) > 1e-12*l1 || math.Abs(vc[i]) > 1e-12*l1 {
					t.Errorf("λ_%d beyond rank %d: Gram %g, covariance %g (λ_1 %g)", i+1, c.rank, vg[i], vc[i], l1)
				}
			}
			if vc[c.rank-1] < 1e-6*l1 {
				t.Fatalf("test data: λ_rank = %g is not clearly nonzero", vc[c.rank-1])
			}

			// Eigengaps as EigenGaps reports them (auto path), vs both paths.
			gk, g1, err := EigenGaps(c.X, c.removed, c.k)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range [][]float64{vc, vg} {
				wantK, want1 := v[c.k-1]-v[c.k], v[0]-v[1]
				if math.Abs(g1-want1) > 1e-9*want1 {
					t.Errorf("δ^1 = %g, path %g", g1, want1)
				}
				if c.k <= c.rank {
					if math.Abs(gk-wantK) > 1e-9*wantK {
						t.Errorf("δ^k = %g, path %g", gk, wantK)
					}
				} else if math.Abs(gk) > 1e-12*l1 || math.Abs(wantK) > 1e-12*l1 {
					t.Errorf("k > rank: δ^k = %g, path %g, want ≈ 0", gk, wantK)
				}
			}

			// Directions: orthonormal on both paths; within the rank equal
			// entrywise (canonical signs) and as a projector.
			for name, A := range map[string][][]float64{"covariance": ac, "Gram": ag} {
				if e := orthoErr(A); e > 1e-12 {
					t.Errorf("%s components: |AAᵀ − I| = %g", name, e)
				}
			}
			kk := min(c.k, c.rank)
			worst := 0.0
			for r := range kk {
				for j := range d {
					worst = math.Max(worst, math.Abs(ag[r][j]-ac[r][j]))
				}
			}
			if worst > 1e-8 {
				t.Errorf("top-%d components differ by %g", kk, worst)
			}
			var dP mat.Dense
			dP.Sub(projector(ag[:kk], d), projector(ac[:kk], d))
			projErr := mat.Norm(&dP, 2)
			if projErr > 1e-9 {
				t.Errorf("‖P_gram − P_cov‖₂ = %g", projErr)
			}
			t.Logf("λ max relative difference %.2g, components %.2g, ‖P_gram − P_cov‖₂ %.2g, Gram |AAᵀ − I| %.2g", relVal, worst, projErr, orthoErr(ag))
			if c.k > c.rank {
				// Completed directions lie in the null space of the centred data.
				Xc, _ := pcaCentred(c.X, c.removed)
				scale := mat.Norm(Xc, 2)
				for name, A := range map[string][][]float64{"covariance": ac, "Gram": ag} {
					for r := c.rank; r < c.k; r++ {
						var y mat.VecDense
						y.MulVec(Xc, mat.NewVecDense(d, A[r]))
						if e := y.Norm(2); e > 1e-10*scale {
							t.Errorf("%s direction %d: ‖Xc·v‖ = %g, want ≈ 0", name, r+1, e)
						}
					}
				}
			}

			// Transformed data (rank and dimension reduction) and removed rows.
			if c.k > c.rank {
				return // beyond the rank the raw records' projection depends on the arbitrary null-space basis
			}
			for _, dim := range []bool{false, true} {
				st := PCA{K: c.k, Dim: dim}
				fc, rc, err := st.fit(c.X, c.removed, pcaCovariance)
				if err != nil {
					t.Fatal(err)
				}
				fg, rg, err := st.fit(c.X, c.removed, pcaGram)
				if err != nil {
					t.Fatal(err)
				}
				if e := maxAbsDiff(rg.X, rc.X); e > 1e-9 {
					t.Errorf("%s: transformed rows differ by %g", st.Name(), e)
				}
				if r, cols := rg.X.Dims(); r != n || cols != fc.OutDim(d) || fg.OutDim(d) != fc.OutDim(d) {
					t.Errorf("%s: output %d×%d, covariance path %d wide", st.Name(), r, cols, fc.OutDim(d))
				}
				for i := range n {
					if c.removed != nil && c.removed[i] {
						if mat.Norm(rg.X.RowView(i), 2) != 0 || !rg.Removed[i] {
							t.Errorf("%s: removed row %d not left zero and removed", st.Name(), i)
						}
					}
				}
				if e := maxAbsDiff(fg.Transform(c.X), fc.Transform(c.X)); e > 1e-9 {
					t.Errorf("%s: Transform differs by %g", st.Name(), e)
				}
			}
		})
	}
}

// TestPCAPathChoice pins the flop rule: covariance for d ≤ n, Gram once d
// exceeds n (by a margin growing with k).
func TestPCAPathChoice(t *testing.T) {
	cases := []struct {
		m, d, k int
		gram    bool
	}{
		{1000, 6000, 10, true},
		{500, 3000, 10, true},
		{500, 3000, 499, true},
		{16, 300, 4, true},
		{1000, 1001, 10, true},
		{1000, 1200, 1000, false}, // k = m: the recovery costs d·m² more
		{1000, 1300, 1000, true},
		{1000, 1000, 1, false},
		{2000, 100, 10, false},
		{40, 12, 3, false},
		{2, 1000, 1, true},
	}
	for _, c := range cases {
		if got := pcaUseGram(c.m, c.d, c.k); got != c.gram {
			t.Errorf("pcaUseGram(m=%d, d=%d, k=%d) = %v, want %v", c.m, c.d, c.k, got, c.gram)
		}
	}
	for d := 1; d <= 60; d++ {
		for k := 1; k < d; k++ {
			if pcaUseGram(60, d, k) {
				t.Fatalf("Gram chosen for d=%d ≤ m=60", d)
			}
		}
	}
}

// The fitted pipeline serialises identically in form on the Gram path and
// round-trips; its components match the covariance path.
func TestPCAGramPipelineJSON(t *testing.T) {
	X := pcaGaussian(rng.New(12), 15, 120)
	fp, res, err := Pipeline{Steps: []Step{PCA{K: 3, Dim: true}}}.Fit(X)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(fp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), `{"version":1,"steps":[{"kind":"pca","params":{"d":120,"rank":false,"components":[[`) {
		t.Errorf("serialised form changed: %.120s", raw)
	}
	back, err := ParseFittedPipeline(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, err := back.Transform(X)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(out, res.X) {
		t.Error("round-tripped pipeline transforms differently")
	}
	fc, _, err := PCA{K: 3, Dim: true}.fit(X, nil, pcaCovariance)
	if err != nil {
		t.Fatal(err)
	}
	want := fc.(*pcaFitted).Components
	for r, v := range back.Steps[0].(*pcaFitted).Components {
		for j := range v {
			if math.Abs(v[j]-want[r][j]) > 1e-9 {
				t.Fatalf("component %d entry %d: %v, covariance path %v", r, j, v[j], want[r][j])
			}
		}
	}
}

// Check refuses k at or beyond the rank on the Gram path (λ_{k+1} = 0 and,
// beyond the rank, δ^k = 0), and accepts k = rank with a declared gap ≤ λ_k.
func TestPCAGramCheckAtRank(t *testing.T) {
	X := pcaLowRank(rng.New(13), 10, 80, 4)
	big := 0.0
	for i := range 10 {
		big = math.Max(big, mat.Norm(X.RowView(i), 2))
	}
	X.Scale(1/(1.01*big), X) // Check wants records in the unit ball
	vals, _, gram, err := pcaTop(X, nil, 4, false, pcaAuto)
	if err != nil || !gram {
		t.Fatalf("%v, Gram %v", err, gram)
	}
	if err := Check(PCA{K: 4}, X, Bounds{EigenGapMin: 0.99 * vals[3], TopGapMin: 1e-9}); err != nil {
		t.Errorf("k = rank: %v", err)
	}
	if err := Check(PCA{K: 5}, X, Bounds{EigenGapMin: 1e-9 * vals[0], TopGapMin: 1e-9}); !errors.Is(err, ErrOutsideCollection) {
		t.Errorf("k > rank accepted: %v", err)
	}
}

// Identical records: the covariance is 0, every eigenvalue is 0 and the
// Gram path completes an orthonormal basis from e_1, e_2, … without NaNs.
func TestPCAGramConstantData(t *testing.T) {
	X := mat.NewDense(5, 12, nil)
	for i := range 5 {
		for j := range 12 {
			X.Set(i, j, 0.25+0.01*float64(j))
		}
	}
	vals, A, gram, err := pcaTop(X, nil, 3, true, pcaAuto)
	if err != nil || !gram {
		t.Fatalf("%v, Gram %v", err, gram)
	}
	for i, v := range vals {
		if v != 0 {
			t.Errorf("λ_%d = %g, want 0", i+1, v)
		}
	}
	if e := orthoErr(A); e > 1e-15 {
		t.Errorf("|AAᵀ − I| = %g", e)
	}
	for r, v := range A {
		for j, x := range v {
			want := 0.0
			if j == r {
				want = 1
			}
			if x != want {
				t.Errorf("component %d entry %d = %g, want %g", r, j, x, want)
			}
		}
	}
}
