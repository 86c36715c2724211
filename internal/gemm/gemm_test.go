package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// matrix is a logical r×c matrix held in float64 for the reference product.
type matrix struct {
	r, c int
	v    []float64
}

func randMatrix(rnd *rand.Rand, r, c int) matrix {
	m := matrix{r, c, make([]float64, r*c)}
	for i := range m.v {
		// float32-representable values, so storage does not round them.
		m.v[i] = float64(float32(rnd.NormFloat64()))
	}
	return m
}

// store lays m out row-major with stride ld, transposed when trans, padding
// the gaps between rows with NaN so that reading outside the matrix shows.
func (m matrix) store(trans bool, pad int) ([]float32, int) {
	rows, cols := m.r, m.c
	if trans {
		rows, cols = cols, rows
	}
	ld := max(1, cols+pad)
	x := make([]float32, max(0, (rows-1)*ld+cols))
	for i := range x {
		x[i] = float32(math.NaN())
	}
	for i := range m.r {
		for j := range m.c {
			if trans {
				x[j*ld+i] = float32(m.v[i*m.c+j])
			} else {
				x[i*ld+j] = float32(m.v[i*m.c+j])
			}
		}
	}
	return x, ld
}

// reference returns A·B and Σ|a||b| for each entry of C, in float64 by the
// textbook triple loop.
func reference(a, b matrix) (prod, mag []float64) {
	prod = make([]float64, a.r*b.c)
	mag = make([]float64, a.r*b.c)
	for i := range a.r {
		for p := range a.c {
			av := a.v[i*a.c+p]
			for j := range b.c {
				bv := b.v[p*b.c+j]
				prod[i*b.c+j] += av * bv
				mag[i*b.c+j] += math.Abs(av * bv)
			}
		}
	}
	return prod, mag
}

type shape struct{ m, n, k int }

// testShapes are edge cases, primes (no size a multiple of any tile), thin
// and wide products, and the products the models/nn engine runs: logistic
// regression and MLP on MNIST (B=256), and the MNIST CNN and ResNet convs
// (C_out × positions × C_in·k·k, forward and both backward products).
var testShapes = []shape{
	{1, 1, 1}, {1, 1, 7}, {2, 3, 1}, {4, 8, 8}, {7, 13, 17}, {13, 7, 17}, {17, 13, 7},
	{1, 97, 33}, {97, 1, 33}, {5, 5, 300}, {12, 32, 256}, {12, 32, 257},
	{6, 16, 4}, {25, 47, 3}, {300, 3, 5}, {3, 300, 5}, {61, 67, 71},
	{193, 515, 259},                                // just past mc, nc and kc
	{256, 10, 784}, {784, 10, 256}, {256, 784, 10}, // logistic regression 784→10
	{256, 256, 784}, {784, 256, 256}, {256, 784, 256}, // MLP 784→256
	{16, 169, 64}, {64, 169, 16}, {16, 64, 169}, // CNN conv1: 16 filters 8×8, 13×13 out
	{32, 25, 256}, {256, 25, 32}, {32, 256, 25}, // CNN conv2: 32 filters 4×4 over 16
	{16, 1024, 144}, {144, 1024, 16}, // ResNet 3×3 conv, 16 channels, 32×32
	{64, 1024, 169}, // a batch of im2col columns
}

type scaling struct{ alpha, beta float32 }

var scalings = []scaling{{1, 0}, {1, 1}, {-0.5, 2.5}, {0.75, -1}}

func TestSgemmAgainstNaive(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, sh := range testShapes {
		if testing.Short() && sh.m*sh.n*sh.k > 1<<22 {
			continue
		}
		a, b := randMatrix(rnd, sh.m, sh.k), randMatrix(rnd, sh.k, sh.n)
		c0 := randMatrix(rnd, sh.m, sh.n)
		prod, mag := reference(a, b)
		// Big products (the engine's) are slow with the portable kernel:
		// fewer variants, the small shapes cover the rest.
		big := sh.m*sh.n*sh.k > 1<<21
		scs, workerCounts := scalings, []int{0, 1, 3}
		if big {
			scs, workerCounts = []scaling{scalings[0], scalings[2]}, []int{0}
		}
		for ti, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			pad := ti % 3 // strides longer than a row in some cases
			as, lda := a.store(tr[0], pad)
			bs, ldb := b.store(tr[1], pad)
			for si, sc := range scs {
				for _, kern := range append(kernels(), nil) {
					for _, workers := range workerCounts {
						cs, ldc := c0.store(false, si%2)
						if sc.beta == 0 {
							for i := range cs {
								cs[i] = float32(math.NaN())
							}
						}
						sgemm(kern, workers, tr[0], tr[1], sh.m, sh.n, sh.k, sc.alpha, as, lda, bs, ldb, sc.beta, cs, ldc)
						name := fmt.Sprintf("%d×%d×%d tA=%v tB=%v α=%g β=%g %s workers=%d",
							sh.m, sh.n, sh.k, tr[0], tr[1], sc.alpha, sc.beta, kernName(kern), workers)
						checkC(t, name, cs, ldc, c0, prod, mag, sc)
						if t.Failed() {
							return
						}
					}
				}
			}
		}
	}
}

// checkC compares C with alpha·prod + beta·c0 entry by entry, to 1e-5 of the
// magnitude of the terms summed, and checks that the stride gaps are untouched.
func checkC(t *testing.T, name string, cs []float32, ldc int, c0 matrix, prod, mag []float64, sc scaling) {
	t.Helper()
	alpha, beta := float64(sc.alpha), float64(sc.beta)
	bad := 0
	for i := range c0.r {
		for j := range c0.c {
			want := alpha * prod[i*c0.c+j]
			scale := math.Abs(alpha) * mag[i*c0.c+j]
			if beta != 0 {
				want += beta * c0.v[i*c0.c+j]
				scale += math.Abs(beta * c0.v[i*c0.c+j])
			}
			got := float64(cs[i*ldc+j])
			if !(math.Abs(got-want) <= 1e-5*scale+1e-30) {
				if bad < 3 {
					t.Errorf("%s: C[%d,%d] = %g, want %g (scale %g)", name, i, j, got, want, scale)
				}
				bad++
			}
		}
		for j := c0.c; j < ldc && i < c0.r-1; j++ {
			if v := cs[i*ldc+j]; !math.IsNaN(float64(v)) {
				t.Errorf("%s: stride gap C[%d,%d] overwritten with %g", name, i, j, v)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d entries wrong", name, bad, len(prod))
	}
}

// With alpha = 0 or k = 0, BLAS does not read A and B: C = beta·C even when
// A and B hold NaN.
func TestSgemmAlphaZeroAndEmpty(t *testing.T) {
	nan := float32(math.NaN())
	a := []float32{nan, nan, nan, nan, nan, nan}
	b := []float32{nan, nan, nan, nan, nan, nan}
	for _, kern := range kernels() {
		c := []float32{1, 2, 3, 4}
		sgemm(kern, 0, false, false, 2, 2, 3, 0, a, 3, b, 2, 3, c, 2)
		if want := []float32{3, 6, 9, 12}; fmt.Sprint(c) != fmt.Sprint(want) {
			t.Errorf("%s alpha=0: C = %v, want %v", kern.name, c, want)
		}
		c = []float32{nan, 1, 2, 3}
		sgemm(kern, 0, false, false, 2, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
		if want := []float32{0, 0, 0, 0}; fmt.Sprint(c) != fmt.Sprint(want) {
			t.Errorf("%s k=0 beta=0: C = %v, want %v", kern.name, c, want)
		}
		sgemm(kern, 0, false, false, 0, 2, 3, 1, nil, 3, b, 2, 0, nil, 2) // m = 0: nothing to do
	}
}

// A small hand-computed product pins the orientation independently of the
// naive loop: [1 2; 3 4]·[5 6; 7 8] = [19 22; 43 50].
func TestSgemmHandExample(t *testing.T) {
	for _, kern := range kernels() {
		c := make([]float32, 4)
		sgemm(kern, 0, false, false, 2, 2, 2, 1, []float32{1, 2, 3, 4}, 2, []float32{5, 6, 7, 8}, 2, 0, c, 2)
		if fmt.Sprint(c) != "[19 22 43 50]" {
			t.Errorf("%s: %v, want [19 22 43 50]", kern.name, c)
		}
		// Aᵀ·Bᵀ with the same storage: [1 3; 2 4]·[5 7; 6 8] = [23 31; 34 46].
		sgemm(kern, 0, true, true, 2, 2, 2, 1, []float32{1, 2, 3, 4}, 2, []float32{5, 6, 7, 8}, 2, 0, c, 2)
		if fmt.Sprint(c) != "[23 31 34 46]" {
			t.Errorf("%s transposed: %v, want [23 31 34 46]", kern.name, c)
		}
	}
}

func TestSgemmPanicsOnBadShapes(t *testing.T) {
	buf := make([]float32, 100)
	for _, tc := range []struct {
		name string
		call func()
		msg  string
	}{
		{"negative m", func() { Sgemm(false, false, -1, 2, 2, 1, buf, 2, buf, 2, 0, buf, 2) }, "negative size"},
		{"short lda", func() { Sgemm(false, false, 2, 2, 3, 1, buf, 2, buf, 2, 0, buf, 2) }, "stride of A"},
		{"short ldb transposed", func() { Sgemm(false, true, 2, 4, 3, 1, buf, 3, buf, 2, 0, buf, 4) }, "stride of B"},
		{"short C", func() { Sgemm(false, false, 5, 5, 1, 1, buf, 1, buf, 5, 0, buf[:20], 5) }, "C has 20 elements"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.msg) {
					t.Errorf("%s: panic %v, want one containing %q", tc.name, r, tc.msg)
				}
			}()
			tc.call()
		}()
	}
}

// The tiling never exceeds the packing buffers, uses whole kernel tiles, and
// gives every worker a tile when there are enough kernel tiles.
func TestSplit(t *testing.T) {
	ks := append(kernels(), goKernel)
	for _, kern := range ks {
		if kern.mc%kern.mr != 0 || kern.nc%kern.nr != 0 {
			t.Fatalf("%s: mc=%d, nc=%d not multiples of the %d×%d tile", kern.name, kern.mc, kern.nc, kern.mr, kern.nr)
		}
		for _, m := range []int{1, 5, 12, 100, 193, 384, 1000, 4097} {
			for _, n := range []int{1, 10, 33, 512, 513, 2000} {
				for _, w := range []int{1, 2, 3, 8} {
					pr := problem{kern: kern, m: m, n: n}
					pr.split(w)
					name := fmt.Sprintf("%s m=%d n=%d workers=%d", kern.name, m, n, w)
					if pr.mStep > kern.mc || pr.nStep > kern.nc || pr.mStep%kern.mr != 0 || pr.nStep%kern.nr != 0 {
						t.Errorf("%s: tile %d×%d", name, pr.mStep, pr.nStep)
					}
					if pr.mb*pr.mStep < m || pr.nb*pr.nStep < n || (pr.mb-1)*pr.mStep >= m || (pr.nb-1)*pr.nStep >= n {
						t.Errorf("%s: %d×%d tiles of %d×%d do not cover exactly", name, pr.mb, pr.nb, pr.mStep, pr.nStep)
					}
					kt := ceilDiv(m, kern.mr) * ceilDiv(n, kern.nr)
					if pr.mb*pr.nb < min(w, kt) {
						t.Errorf("%s: only %d tiles for %d workers", name, pr.mb*pr.nb, w)
					}
				}
			}
		}
	}
}

// Steady-state calls allocate nothing, serial or split across workers.
func TestSgemmNoAllocs(t *testing.T) {
	const m, n, k = 200, 150, 300
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for _, workers := range []int{1, 2} {
		sgemm(nil, workers, false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		allocs := testing.AllocsPerRun(20, func() {
			sgemm(nil, workers, false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		})
		if allocs != 0 {
			t.Errorf("workers=%d: %v allocations per call", workers, allocs)
		}
		// Packing arenas and jobs survive garbage collections (a sync.Pool
		// would drop them and the next call would allocate again).
		allocs = testing.AllocsPerRun(3, func() {
			runtime.GC()
			runtime.GC()
			sgemm(nil, workers, false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		})
		if allocs != 0 {
			t.Errorf("workers=%d: %v allocations per call after a GC", workers, allocs)
		}
	}
}

// Sgemm's packed kernels are the supported ones, fastest first, and the
// portable kernel is always available as the last resort.
func TestKernelList(t *testing.T) {
	ks := kernels()
	if ks[len(ks)-1] != goKernel {
		t.Errorf("last kernel is %s, want the portable go4x4", ks[len(ks)-1].name)
	}
	var packed []*kernel
	for _, k := range ks {
		if k.dot == nil {
			packed = append(packed, k)
		} else if len(packed) > 0 {
			t.Errorf("dot kernel %s listed after a packed kernel", k.name)
		}
	}
	if dotKernel != nil && dotKernel != ks[0] {
		t.Errorf("Sgemm's dot kernel is %s, want the first listed %s", dotKernel.name, ks[0].name)
	}
	if fastKernels[0] != packed[0] {
		t.Errorf("Sgemm prefers %s, want the first supported %s", fastKernels[0].name, packed[0].name)
	}
	var names []string
	for _, k := range ks {
		names = append(names, k.name)
	}
	t.Logf("kernels: %v; Sgemm uses %s", names, KernelName())
}

// FuzzSgemm checks small random shapes, transposes, strides and scalings of
// every kernel against the naive loop.
func FuzzSgemm(f *testing.F) {
	f.Add(uint8(7), uint8(13), uint16(17), uint8(0), uint8(0), uint64(1))
	f.Add(uint8(1), uint8(1), uint16(1), uint8(3), uint8(2), uint64(2))
	f.Add(uint8(40), uint8(3), uint16(270), uint8(1), uint8(5), uint64(3))
	f.Fuzz(func(t *testing.T, m8, n8 uint8, k16 uint16, flags, pad8 uint8, seed uint64) {
		m, n, k := int(m8%70), int(n8%70), int(k16%300)
		tA, tB := flags&1 != 0, flags&2 != 0
		pad := int(pad8 % 4)
		sc := scalings[int(flags>>2)%len(scalings)]
		rnd := rand.New(rand.NewPCG(seed, 7))
		a, b, c0 := randMatrix(rnd, m, k), randMatrix(rnd, k, n), randMatrix(rnd, m, n)
		prod, mag := reference(a, b)
		as, lda := a.store(tA, pad)
		bs, ldb := b.store(tB, pad)
		for _, kern := range append(kernels(), nil) {
			for _, workers := range []int{1, 3} {
				cs, ldc := c0.store(false, pad)
				if sc.beta == 0 {
					for i := range cs {
						cs[i] = float32(math.NaN())
					}
				}
				sgemm(kern, workers, tA, tB, m, n, k, sc.alpha, as, lda, bs, ldb, sc.beta, cs, ldc)
				checkC(t, fmt.Sprintf("%d×%d×%d tA=%v tB=%v %s w=%d", m, n, k, tA, tB, kernName(kern), workers), cs, ldc, c0, prod, mag, sc)
			}
		}
	})
}

func kernName(k *kernel) string {
	if k == nil {
		return "auto"
	}
	return k.name
}

// plan picks, among equally fast kernels, the orientation and tile shape that
// pad least.
func TestPlan(t *testing.T) {
	k12 := &kernel{name: "12x32", mr: 12, nr: 32}
	k6 := &kernel{name: "6x16", mr: 6, nr: 16}
	old := fastKernels
	defer func() { fastKernels = old }()
	fastKernels = []*kernel{k12, k6}
	for _, tc := range []struct {
		m, n  int
		kern  *kernel
		trans bool
	}{
		{512, 512, k12, false},   // equal padding: the first kernel
		{1024, 1024, k12, false}, // 1032 vs 1026 rows: not worth switching
		{256, 10, k12, true},     // Cᵀ is 10×256: 12·256 padded vs 256·32
		{16, 169, k6, false},     // 18·176 padded vs 24·192
		{10, 256, k12, false},    // already thin along m
		{7, 7, k6, false},        // 12·16 padded vs 12·32
	} {
		kern, trans := plan(nil, false, false, tc.m, tc.n, 100)
		if kern != tc.kern || trans != tc.trans {
			t.Errorf("plan(%d, %d) = %s, transposed %v; want %s, %v", tc.m, tc.n, kern.name, trans, tc.kern.name, tc.trans)
		}
	}
	// A kernel twice as fast wins shapes it pads up to twice as much.
	k12.rate = 2
	for _, tc := range []struct {
		m, n  int
		kern  *kernel
		trans bool
	}{
		{16, 1024, k12, false}, // ResNet's 16 filters: 24·1024/2 vs 18·1024
		{16, 169, k12, false},  // 24·192/2 vs 18·176
		{4, 16, k6, false},     // 12·32/2 vs 6·16
		{256, 10, k12, true},   // Cᵀ still, as at equal rates
	} {
		kern, trans := plan(nil, false, false, tc.m, tc.n, 100)
		if kern != tc.kern || trans != tc.trans {
			t.Errorf("rates 2 and 1: plan(%d, %d) = %s, transposed %v; want %s, %v", tc.m, tc.n, kern.name, trans, tc.kern.name, tc.trans)
		}
	}
}

// Concurrent products share the worker pool and the packing-buffer pools;
// each must still get its own right answer.
func TestSgemmConcurrent(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	const m, n, k = 200, 160, 150 // above parallelWork, so each call splits into tiles
	type op struct {
		a, b   matrix
		c      []float32
		prod   []float64
		mag    []float64
		as, bs []float32
	}
	if m*n*k < parallelWork {
		t.Fatalf("%d×%d×%d is below parallelWork", m, n, k)
	}
	ops := make([]op, 6)
	for i := range ops {
		o := &ops[i]
		o.a, o.b = randMatrix(rnd, m, k), randMatrix(rnd, k, n)
		o.prod, o.mag = reference(o.a, o.b)
		o.as, _ = o.a.store(i%2 == 1, 0)
		o.bs, _ = o.b.store(i%3 == 1, 0)
		o.c = make([]float32, m*n)
	}
	done := make(chan struct{})
	for i := range ops {
		go func() {
			defer func() { done <- struct{}{} }()
			o := &ops[i]
			lda, ldb := k, n
			if i%2 == 1 {
				lda = m
			}
			if i%3 == 1 {
				ldb = k
			}
			for range 5 {
				Sgemm(i%2 == 1, i%3 == 1, m, n, k, 1, o.as, lda, o.bs, ldb, 0, o.c, n)
			}
		}()
	}
	for range ops {
		<-done
	}
	for i, o := range ops {
		checkC(t, fmt.Sprintf("goroutine %d", i), o.c, n, matrix{m, n, make([]float64, m*n)}, o.prod, o.mag, scaling{1, 0})
	}
}

// TestDotTileMatchesDotEdge checks that dotTile's direct path (dotC on whole
// tiles) gives bit for bit what the dot kernel through its scratch tile
// gives, for every alpha and beta mode and k with and without a tail.
func TestDotTileMatchesDotEdge(t *testing.T) {
	if dotKernel == nil || dotKernel.dotC == nil {
		t.Skip("no dot kernel with a direct store on this CPU")
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{8, 64, 67, 144} {
		for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.37, 0}, {0.37, 1}, {-1.3, 0.61}} {
			m, n := 10, 13
			a, b := make([]float32, m*k), make([]float32, n*k)
			for i := range a {
				a[i] = rnd.Float32()*2 - 1
			}
			for i := range b {
				b[i] = rnd.Float32()*2 - 1
			}
			c0 := make([]float32, m*n)
			for i := range c0 {
				c0[i] = rnd.Float32()
			}
			got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
			pr := problem{kern: dotKernel, m: m, n: n, k: k, alpha: ab[0], beta: ab[1], a: a, lda: k, b: b, ldb: k, c: got, ldc: n}
			ar := getArena(dotKernel)
			pr.dotTile(ar, 0, m, 0, n)
			pr.c = want
			pr.dotEdge(ar, 0, m, 0, n)
			putArena(ar)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("k=%d alpha=%g beta=%g: C[%d] = %g by dotTile, %g by dotEdge", k, ab[0], ab[1], i, got[i], want[i])
				}
			}
		}
	}
}

// TestCriticalStride checks the L1 set arithmetic: rows 1024 floats (4 KiB)
// apart share one set of 8 ways, 256 floats apart 4 sets, 64 floats apart
// 16 sets; half the ways are allowed to the strip.
func TestCriticalStride(t *testing.T) {
	for _, c := range []struct {
		ld, kc int
		want   bool
	}{
		{1024, 4, false}, {1024, 5, true}, {2048, 256, true},
		{256, 16, false}, {256, 17, true},
		{64, 64, false}, {64, 65, true}, {64, 16, false},
		{1040, 256, false}, {169, 256, false}, {144, 256, false},
	} {
		if got := criticalStride(c.ld, c.kc); got != c.want {
			t.Errorf("criticalStride(%d, %d) = %v, want %v", c.ld, c.kc, got, c.want)
		}
	}
}
