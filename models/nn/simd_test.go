package nn

import (
	"fmt"
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// atEachLevel runs f once per vector kernel set (AVX2, AVX-512) with
// vecLevel set to it, as subtests; a set this CPU or build lacks is skipped
// with the reason. Each f compares the vector passes with the Go loops, so
// every set is checked bit for bit against the portable code, and hence
// against the other sets.
func atEachLevel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, l := range []struct {
		level int
		name  string
	}{{vecAVX2, "avx2"}, {vecAVX512, "avx512"}} {
		t.Run(l.name, func(t *testing.T) {
			if l.level > cpuVec {
				t.Skipf("no %s kernels here: this CPU lacks the instructions, or the build is not amd64 or has the purego tag (widest set %d)", l.name, cpuVec)
			}
			defer func(old int) { vecLevel = old }(vecLevel)
			vecLevel = l.level
			f(t)
		})
	}
}

// TestMaxPool2S1Vector checks the vector 2×2 stride-1 pooling row without
// argmax against Go's max of the four window values, bit for bit (NaN as
// NaN), for every width up to 56 and on ties, signed zeros, NaNs and
// infinities.
func TestMaxPool2S1Vector(t *testing.T) {
	atEachLevel(t, func(t *testing.T) {
		if maxPool2S1Vec == nil {
			t.Fatal("no vector pooling although the CPU has the instructions")
		}
		s := rng.New(13)
		vals := []float32{-1, 0, float32(math.Copysign(0, -1)), 1, 2, float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1))}
		for m := 1; m <= 56; m++ {
			for rep := range 10 {
				r0, r1 := make([]float32, m+1), make([]float32, m+1)
				for i := range r0 {
					if rep%2 == 0 {
						r0[i] = vals[int(s.Float64()*float64(len(vals)))]
						r1[i] = vals[int(s.Float64()*float64(len(vals)))]
					} else {
						r0[i], r1[i] = float32(s.NormFloat64()), float32(s.NormFloat64())
					}
				}
				y, want := make([]float32, m), make([]float32, m)
				for j := maxPool2S1Vec(y, r0, r1); j < m; j++ {
					y[j] = max(max(r0[j], r0[j+1]), max(r1[j], r1[j+1]))
				}
				for j := range want {
					want[j] = max(max(r0[j], r0[j+1]), max(r1[j], r1[j+1]))
				}
				sameBits(t, fmt.Sprintf("pool s1 m=%d", m), y, want)
			}
		}
	})
}

// BenchmarkVectorKernels times the elementwise, pooling and tanh passes on
// 64 Ki floats at each vector kernel set this CPU has (sub-benchmarks
// avx2/… and avx512/…), to compare the sets in one quiet sitting:
// go test ./models/nn -run '^$' -bench VectorKernels.
func BenchmarkVectorKernels(b *testing.B) {
	const n = 1 << 16
	s := rng.New(1)
	x, y, dy := make([]float32, n+1), make([]float32, n+1), make([]float32, n)
	s.FillNormal(x, 1)
	s.FillNormal(y, 1)
	s.FillNormal(dy, 1)
	out, out2 := make([]float32, n), make([]float32, n)
	arg := make([]int32, n)
	for _, l := range []struct {
		level int
		name  string
	}{{vecAVX2, "avx2"}, {vecAVX512, "avx512"}} {
		if l.level > cpuVec {
			continue
		}
		run := func(name string, f func()) {
			b.Run(l.name+"/"+name, func(b *testing.B) {
				defer func(old int) { vecLevel = old }(vecLevel)
				vecLevel = l.level
				b.SetBytes(4 * n)
				for b.Loop() {
					f()
				}
			})
		}
		run("relu", func() { reluFwdVec(out, x[:n]) })
		run("reluBack", func() { reluBackVec(out, x[:n], dy) })
		run("gnNorm", func() { gnNormVec(out, out2, x[:n], 0.1, 1.3, 0.9, 0.2) })
		run("gnBack", func() { gnBackVec(out, dy, x[:n], 0.9, 0.1, 0.2) })
		run("axpy", func() { axpyVec(0.3, x[:n], out) })
		run("tanh", func() { tanhSlice32(out, x[:n]) })
		run("pool2s1", func() { maxPool2S1Vec(out, x, y) })
		run("pool2arg", func() { maxPool2ArgVec(out, arg, x, y, n, 0) })
	}
}

// TestMaxPool2PlaneVector checks the one-call-per-channel 2×2 stride-1
// pools (with and without argmax) against the Go loops row by row, bit
// for bit (NaN as NaN) and argmax for argmax, for every width up to 40
// (full vectors and masked tails) and heights 2 to 5, on ties, signed
// zeros, NaNs and infinities.
func TestMaxPool2PlaneVector(t *testing.T) {
	atEachLevel(t, func(t *testing.T) {
		s := rng.New(15)
		vals := []float32{-1, 0, float32(math.Copysign(0, -1)), 1, 2, float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1))}
		ran := false
		for w := 2; w <= 40; w++ {
			for h := 2; h <= 5; h++ {
				n, rows := w-1, h-1
				x := make([]float32, h*w)
				for i := range x {
					if h%2 == 0 {
						x[i] = vals[int(s.Float64()*float64(len(vals)))]
					} else {
						x[i] = float32(s.NormFloat64())
					}
				}
				r0 := int32(s.Float64() * 1000)
				y, a := make([]float32, rows*n), make([]int32, rows*n)
				y2 := make([]float32, rows*n)
				if !maxPool2ArgPlane(y, a, x, n, w, rows, r0) || !maxPool2S1Plane(y2, x, n, w, rows) {
					continue
				}
				ran = true
				wy, wa := make([]float32, rows*n), make([]int32, rows*n)
				vec := maxPool2ArgVec
				maxPool2ArgVec = nil
				for r := range rows {
					maxPool2Row32(x[r*w:(r+2)*w], w, 1, wy[r*n:(r+1)*n], wa[r*n:(r+1)*n], r0+int32(r*w))
				}
				maxPool2ArgVec = vec
				sameBits(t, fmt.Sprintf("plane w=%d h=%d", w, h), y, wy)
				for j := range wa {
					if a[j] != wa[j] {
						t.Fatalf("w=%d h=%d: argmax[%d] = %d, Go loop gives %d", w, h, j, a[j], wa[j])
					}
				}
				want := make([]float32, rows*n)
				for r := range rows {
					for j := range n {
						p, q := x[r*w:], x[(r+1)*w:]
						want[r*n+j] = max(max(p[j], p[j+1]), max(q[j], q[j+1]))
					}
				}
				sameBits(t, fmt.Sprintf("plane s1 w=%d h=%d", w, h), y2, want)
			}
		}
		if !ran {
			if vecLevel >= vecAVX512 {
				t.Fatal("the plane kernels never ran at the AVX-512 level")
			}
			t.Skip("no plane kernels at this level")
		}
	})
}
