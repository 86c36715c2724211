//go:build openblas && cgo

package nn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// openblasShapes are the products the engine runs (m, n, k and the
// transposes of linear.go and conv.go, at batch 256 and per sample; the same
// list as internal/gemm's benchmarks), odd sizes around kernel tiles, and
// square products large enough for OpenBLAS and internal/gemm to go
// parallel.
var openblasShapes = []struct {
	m, n, k int
	tA, tB  bool
}{
	{256, 10, 784, false, true},   // logreg forward, X·Wᵀ
	{256, 784, 10, false, false},  // logreg dX, dZ·W
	{10, 784, 256, true, false},   // logreg dW, dZᵀ·X
	{256, 256, 784, false, true},  // MLP forward
	{256, 784, 256, false, false}, // MLP dX
	{256, 784, 256, true, false},  // MLP dW
	{16, 169, 64, false, false},   // MNIST CNN conv1 forward, per sample
	{64, 169, 16, true, false},    // conv1 dX (col = Wᵀ·dY)
	{16, 64, 169, false, true},    // conv1 per-sample dW = dY·colᵀ
	{32, 25, 256, false, false},   // conv2 forward
	{32, 256, 25, false, true},    // conv2 dW
	{16, 1024, 144, false, false}, // ResNet 3×3 conv, 16 channels, 32×32
	{16, 144, 1024, false, true},  // ResNet dW
	{144, 1024, 16, true, false},  // ResNet dX
	{1, 1, 1, false, false},
	{13, 7, 5, true, true},
	{33, 65, 17, true, true},
	{130, 70, 9, false, true},
	{300, 300, 300, false, false}, // parallel in both
	{300, 300, 300, true, true},
}

// TestOpenBLASAgreesWithASM runs every shape, transpose combination, alpha
// and beta through the engine's gemm with the asm and openblas backends and
// checks both against a float64 product to within float32 rounding of
// Σ|a||b| (the scale of the rounding error of any summation order).
func TestOpenBLASAgreesWithASM(t *testing.T) {
	defer SetGEMMBackend("asm")
	if err := SetGEMMBackend("openblas"); err != nil {
		t.Fatal(err)
	}
	if got := GEMMBackend(); !strings.HasPrefix(got, "openblas:") {
		t.Fatalf("GEMMBackend() = %q with openblas selected", got)
	}
	s := rng.New(7)
	scalings := [][2]float32{{1, 0}, {0.5, 2}, {-1.5, 1}} // alpha, beta
	for i, sh := range openblasShapes {
		// Every transpose combination of the shape, not only the engine's;
		// the engine's own (tr = 0) is always alpha = 1, beta = 0.
		for tr := range 4 {
			tA, tB := sh.tA != (tr&1 != 0), sh.tB != (tr&2 != 0)
			ab := scalings[(i*tr)%3]
			name := fmt.Sprintf("%dx%dx%d tA=%v tB=%v alpha=%g beta=%g", sh.m, sh.n, sh.k, tA, tB, ab[0], ab[1])
			checkOpenBLAS(t, s, name, sh.m, sh.n, sh.k, tA, tB, ab[0], ab[1], tr == 3)
		}
	}
}

func checkOpenBLAS(t *testing.T, s *rng.Stream, name string, m, n, k int, tA, tB bool, alpha, beta float32, pad bool) {
	t.Helper()
	// A is m×k (k×m when tA), B is k×n (n×k when tB), row-major with a
	// stride one wider than a row when pad.
	ar, ac, br, bc := m, k, k, n
	if tA {
		ar, ac = k, m
	}
	if tB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac, bc, n
	if pad {
		lda, ldb, ldc = ac+3, bc+1, n+2
	}
	a := make([]float32, (ar-1)*lda+ac)
	b := make([]float32, (br-1)*ldb+bc)
	c0 := make([]float32, (m-1)*ldc+n)
	for _, x := range [][]float32{a, b, c0} {
		for i := range x {
			x[i] = float32(s.NormFloat64())
		}
	}
	if beta == 0 {
		// BLAS semantics: C is not read when beta is zero.
		for i := range c0 {
			c0[i] = float32(math.NaN())
		}
	}
	// op(A) and op(B)ᵀ in float64, row-major, for the reference.
	opA, opBt := make([]float64, m*k), make([]float64, n*k)
	for p := range k {
		for i := range m {
			if tA {
				opA[i*k+p] = float64(a[p*lda+i])
			} else {
				opA[i*k+p] = float64(a[i*lda+p])
			}
		}
		for j := range n {
			if tB {
				opBt[j*k+p] = float64(b[j*ldb+p])
			} else {
				opBt[j*k+p] = float64(b[p*ldb+j])
			}
		}
	}
	got := map[string][]float32{}
	for _, be := range []string{"asm", "openblas"} {
		if err := SetGEMMBackend(be); err != nil {
			t.Fatal(err)
		}
		c := append([]float32(nil), c0...)
		gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		got[be] = c
	}
	for i := range m {
		for j := range n {
			var want, mag float64
			ai, bj := opA[i*k:i*k+k], opBt[j*k:j*k+k]
			for p, av := range ai {
				want += av * bj[p]
				mag += math.Abs(av * bj[p])
			}
			want *= float64(alpha)
			mag *= math.Abs(float64(alpha))
			if beta != 0 {
				cij := float64(c0[i*ldc+j])
				want += float64(beta) * cij
				mag += math.Abs(float64(beta) * cij)
			}
			tol := 1e-5 * (mag + 1e-30)
			a32, o32 := float64(got["asm"][i*ldc+j]), float64(got["openblas"][i*ldc+j])
			if !(math.Abs(a32-want) <= tol) || !(math.Abs(o32-want) <= tol) || !(math.Abs(a32-o32) <= tol) {
				t.Fatalf("%s: C[%d,%d]: asm %g, openblas %g, float64 %g (tolerance %g)", name, i, j, a32, o32, want, tol)
			}
		}
	}
	// Padding between the rows of C is not written.
	for i := range m - 1 {
		for j := n; j < ldc; j++ {
			for be, c := range got {
				if math.Float32bits(c[i*ldc+j]) != math.Float32bits(c0[i*ldc+j]) {
					t.Fatalf("%s: %s wrote C's padding at [%d,%d]", name, be, i, j)
				}
			}
		}
	}
}

// TestOpenBLASStep runs every per-sample entry point of the small test
// architectures (stepOutputs: per-sample gradients, norms, the clipped sum,
// the batch gradient, losses) with both backends; they agree to float32
// rounding. models/nn/gemm_openblas_models_test.go does the same for the
// MNIST CNN and a ResNet.
func TestOpenBLASStep(t *testing.T) {
	defer SetGEMMBackend("asm")
	// Split every step over 3 workers, so that OpenBLAS is called from
	// several threads at once.
	oldMin, oldLimit := minParallel, workerLimit
	defer func() { minParallel, workerLimit = oldMin, oldLimit }()
	minParallel, workerLimit = 0, 3
	for _, name := range []string{"mlp-tanh", "conv", "conv-pool", "groupnorm", "resblock-gn", "residual-mlp"} {
		if err := SetGEMMBackend("asm"); err != nil {
			t.Fatal(err)
		}
		want := stepOutputs(t, name, 7)
		if err := SetGEMMBackend("openblas"); err != nil {
			t.Fatal(err)
		}
		got := stepOutputs(t, name, 7)
		for o := range want {
			scale := 0.0
			for _, v := range want[o] {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			for j := range want[o] {
				if d := math.Abs(float64(got[o][j] - want[o][j])); !(d <= 1e-5*(1+scale)) {
					t.Fatalf("%s: output %d[%d]: openblas %g, asm %g", name, o, j, got[o][j], want[o][j])
				}
			}
		}
	}
}
