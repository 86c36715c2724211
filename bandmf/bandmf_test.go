package bandmf

import (
	"math"
	"math/rand/v2"
	"testing"
)

// denseInvLower inverts a lower-triangular row-major n×n matrix by forward
// substitution, column by column.
func denseInvLower(c []float64, n int) []float64 {
	inv := make([]float64, n*n)
	for j := 0; j < n; j++ {
		for i := j; i < n; i++ {
			acc := 0.0
			if i == j {
				acc = 1
			}
			for k := j; k < i; k++ {
				acc -= c[i*n+k] * inv[k*n+j]
			}
			inv[i*n+j] = acc / c[i*n+i]
		}
	}
	return inv
}

func matmul(a, b []float64, n int) []float64 {
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			for j := 0; j < n; j++ {
				out[i*n+j] += a[i*n+k] * b[k*n+j]
			}
		}
	}
	return out
}

// bruteError is ‖C‖²_col·‖A·C⁻¹‖²_F from dense matrices.
func bruteError(w Workload, s Strategy) float64 {
	n := w.N()
	c := s.Dense(n)
	b := matmul(w.Dense(), denseInvLower(c, n), n)
	f := 0.0
	for _, v := range b {
		f += v * v
	}
	maxCol := 0.0
	for j := 0; j < n; j++ {
		ss := 0.0
		for i := 0; i < n; i++ {
			ss += c[i*n+j] * c[i*n+j]
		}
		maxCol = math.Max(maxCol, ss)
	}
	return maxCol * f
}

func randomCase(r *rand.Rand, n, b int) (Workload, Strategy) {
	lr := make([]float64, n)
	for i := range lr {
		lr[i] = 0.1 + r.Float64()
	}
	w, err := Momentum(n, 0.9*r.Float64(), lr)
	if err != nil {
		panic(err)
	}
	c := make([]float64, b)
	c[0] = 1
	for k := 1; k < b; k++ {
		c[k] = r.Float64() - 0.3
	}
	s, err := NewStrategy(c)
	if err != nil {
		panic(err)
	}
	return w, s
}

func TestWorkloadDense(t *testing.T) {
	w, err := Momentum(3, 0.5, []float64{1, 2, 4})
	if err != nil {
		t.Fatal(err)
	}
	// A[i][j] = Σ_{u=j}^{i} lr_u·β^{u−j}.
	want := []float64{
		1, 0, 0,
		1 + 2*0.5, 2, 0,
		1 + 2*0.5 + 4*0.25, 2 + 4*0.5, 4,
	}
	got := w.Dense()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("A = %v, want %v", got, want)
		}
	}
	for _, bad := range []struct {
		n    int
		beta float64
		lr   []float64
	}{{0, 0, nil}, {2, 1, nil}, {2, -0.1, nil}, {2, 0, []float64{1}}, {2, 0, []float64{1, 0}}, {2, 0, []float64{1, math.NaN()}}} {
		if _, err := Momentum(bad.n, bad.beta, bad.lr); err == nil {
			t.Errorf("Momentum(%d, %v, %v) accepted", bad.n, bad.beta, bad.lr)
		}
	}
}

func TestErrorMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, b int }{{1, 1}, {5, 1}, {6, 2}, {9, 4}, {12, 12}, {20, 7}} {
		w, s := randomCase(r, tc.n, tc.b)
		got, want := s.Error(w), bruteError(w, s)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("n=%d b=%d: Error = %.15g, dense %.15g", tc.n, tc.b, got, want)
		}
	}
	// The identity's error is ‖A‖²_F; for prefix sums n(n+1)/2.
	w, _ := PrefixSum(100)
	if got := Identity().Error(w); got != 5050 {
		t.Errorf("identity on prefix sums: %v, want 5050", got)
	}
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, b int }{{8, 2}, {15, 5}, {30, 9}} {
		w, s := randomCase(r, tc.n, tc.b)
		x := s.Coef()[1:]
		g := make([]float64, len(x))
		objective(w, x, g)
		for k := range x {
			h := 1e-6 * math.Max(1, math.Abs(x[k]))
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[k] += h
			xm[k] -= h
			fd := (objective(w, xp, nil) - objective(w, xm, nil)) / (2 * h)
			if math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Errorf("n=%d b=%d: ∂/∂c%d = %.10g, finite difference %.10g", tc.n, tc.b, k+1, g[k], fd)
			}
		}
	}
}

func TestOptimizeImprovesWithBands(t *testing.T) {
	for _, wl := range []struct {
		name string
		beta float64
		lr   func(i int) float64
	}{
		{"prefix", 0, func(int) float64 { return 1 }},
		{"momentum+cooldown", 0.9, func(i int) float64 { return math.Min(1, float64(64-i)/16) }},
	} {
		n := 64
		lr := make([]float64, n)
		for i := range lr {
			lr[i] = wl.lr(i)
		}
		w, err := Momentum(n, wl.beta, lr)
		if err != nil {
			t.Fatal(err)
		}
		prev := math.Inf(1)
		for _, b := range []int{1, 2, 4, 8, 16, 64} {
			s, rep, err := Optimize(w, b)
			if err != nil {
				t.Fatal(err)
			}
			if s.Bands() != b || rep.Bands != b {
				t.Fatalf("%s b=%d: got %d bands", wl.name, b, s.Bands())
			}
			if got := bruteError(w, s); math.Abs(got-rep.Error) > 1e-9*got {
				t.Errorf("%s b=%d: report %v, dense %v", wl.name, b, rep.Error, got)
			}
			if rep.Error > prev*(1+1e-9) {
				t.Errorf("%s: b=%d error %v above b/2's %v", wl.name, b, rep.Error, prev)
			}
			if b > 1 && !(rep.Error < 0.9*rep.DPSGDError) {
				t.Errorf("%s b=%d: error %v not below DP-SGD's %v", wl.name, b, rep.Error, rep.DPSGDError)
			}
			t.Logf("%s b=%2d: error %.4g (DP-SGD %.4g), %d evaluations", wl.name, b, rep.Error, rep.DPSGDError, rep.Evaluations)
			prev = rep.Error
		}
	}
	if _, _, err := Optimize(Workload{lr: []float64{1}}, 0); err == nil {
		t.Error("0 bands accepted")
	}
}

func TestCorrelatorMatchesDenseInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, d, b = 11, 3, 4
	_, s := randomCase(r, n, b)
	z := make([][]float64, n)
	for i := range z {
		z[i] = []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	}
	inv := denseInvLower(s.Dense(n), n)
	c, err := NewCorrelator(s, d)
	if err != nil {
		t.Fatal(err)
	}
	var saved []byte
	for t0 := 0; t0 < n; t0++ {
		if t0 == 6 {
			// A restored correlator continues the same sequence.
			if saved, err = c.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
			c2, _ := NewCorrelator(s, d)
			if err := c2.UnmarshalBinary(saved); err != nil {
				t.Fatal(err)
			}
			c = c2
		}
		got := append([]float64(nil), z[t0]...)
		if err := c.Next(got); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < d; i++ {
			want := 0.0
			for k := 0; k <= t0; k++ {
				want += inv[t0*n+k] * z[k][i]
			}
			if math.Abs(got[i]-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("step %d coord %d: %v, dense C⁻¹Z %v", t0, i, got[i], want)
			}
		}
	}
	other, _ := NewStrategy([]float64{1, 0.5, 0.25, 0.1})
	c3, _ := NewCorrelator(other, d)
	if err := c3.UnmarshalBinary(saved); err == nil {
		t.Error("state of another strategy accepted")
	}
	if err := c3.UnmarshalBinary(saved[:len(saved)-1]); err == nil {
		t.Error("truncated state accepted")
	}
}

func TestSensitivity(t *testing.T) {
	s, _ := NewStrategy([]float64{1, 0.5, 0.25})
	const n = 12
	norm2 := 1 + 0.25 + 0.0625
	for _, tc := range []struct {
		steps []int
		sep   bool
		want  float64 // squared
	}{
		{[]int{0}, true, norm2},
		{[]int{0, 3, 6}, true, 3 * norm2},
		{[]int{2, 5, 8, 11}, true, 3*norm2 + 1}, // the last column has only c₀ below row n
		{[]int{10}, true, 1 + 0.25},
		// Two steps one apart share rows: ⟨C_0, C_1⟩ = c1·c0 + c2·c1 = 0.625.
		{[]int{0, 1}, false, 2*norm2 + 2*0.625},
	} {
		got, err := s.Sensitivity(n, tc.steps)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got*got-tc.want) > 1e-12 {
			t.Errorf("steps %v: sensitivity² %v, want %v", tc.steps, got*got, tc.want)
		}
		if s.Separated(tc.steps) != tc.sep {
			t.Errorf("steps %v: Separated = %v, want %v", tc.steps, !tc.sep, tc.sep)
		}
	}
	// Brute force: the sensitivity is the largest ‖Σ_j C_j·g_j‖ over unit
	// scalars g_j ∈ {−1, 1} for nonnegative C (the worst gradients align).
	for _, steps := range [][]int{{0, 1, 2}, {1, 4}, {0, 2, 5, 7}} {
		c := s.Dense(n)
		best := 0.0
		for mask := 0; mask < 1<<len(steps); mask++ {
			ss := 0.0
			for i := 0; i < n; i++ {
				v := 0.0
				for k, j := range steps {
					sign := 1.0
					if mask>>k&1 == 1 {
						sign = -1
					}
					v += sign * c[i*n+j]
				}
				ss += v * v
			}
			best = math.Max(best, ss)
		}
		got, _ := s.Sensitivity(n, steps)
		if math.Abs(got*got-best) > 1e-12 {
			t.Errorf("steps %v: sensitivity² %v, brute force %v", steps, got*got, best)
		}
	}
	for _, bad := range [][]int{{-1}, {n}, {3, 3}} {
		if _, err := s.Sensitivity(n, bad); err == nil {
			t.Errorf("steps %v accepted", bad)
		}
	}
}

func TestNewStrategyRefuses(t *testing.T) {
	for _, c := range [][]float64{nil, {2}, {1, math.Inf(1)}, {1, math.NaN()}} {
		if _, err := NewStrategy(c); err == nil {
			t.Errorf("NewStrategy(%v) accepted", c)
		}
	}
}
