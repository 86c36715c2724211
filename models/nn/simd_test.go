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
