package nn

import (
	"fmt"
	"math"
	"testing"

	fastgemm "github.com/dptrain/dptrain/internal/gemm"
	"github.com/dptrain/dptrain/rng"
)

// With the bf16 GEMM, each sample's contribution that AccumulateScaled adds
// at scale s has norm at most s·ρ times the norm PerSampleNormsSq reported
// (ρ = BF16NormFactor): the bound the margin rests on, on every test
// architecture, with and without Conv2d's cache (direct and Gram norms).
// The Linear layers show why the margin is there: their norms come from
// the float32 factors and their sums from the bf16-rounded ones, so some
// contributions exceed s times the reported norm. And bf16's per-sample
// gradients stay within a loose 2⁻⁵ of float32's (a sanity check: the
// rigorous bound is the GEMM's, internal/gemm).
func TestBF16NormOnlyWithinMargin(t *testing.T) {
	restore, err := WithGEMMBackend("bf16")
	if err != nil {
		t.Skipf("no bf16 GEMM here: %v", err)
	}
	restore()
	old, oldMode := CacheLimit, normMode
	defer func() { CacheLimit, normMode = old, oldMode }()
	var worst float64 // largest contribution / (s · reported norm)
	for _, name := range []string{"linear-ce", "mlp-tanh", "residual-mlp", "conv", "conv-pool", "groupnorm", "resblock-gn", "conv-flip-ws"} {
		for _, mode := range []struct{ cache, norm int }{{old, 0}, {0, 1}, {0, 2}} {
			t.Run(fmt.Sprintf("%s/cache=%d/norm=%d", name, mode.cache, mode.norm), func(t *testing.T) {
				CacheLimit, normMode = mode.cache, mode.norm
				const n = 6
				net := build[float32](t, name, n, 1)
				s := rng.New(2)
				x := make([]float32, n*net.InputShape().Size())
				s.FillNormal(x, 1)
				tg := Target[float32]{Y: labels(s, n, net.OutputShape().Size())}
				d, k := net.NumParams(), len(net.Groups())
				want := make([]float32, n*d)
				if err := net.PerSampleGrads(x, tg, n, want, make([]float32, n)); err != nil {
					t.Fatal(err)
				}
				restore, err := WithGEMMBackend("bf16")
				if err != nil {
					t.Fatal(err)
				}
				defer restore()
				got := make([]float32, n*d)
				if err := net.PerSampleGrads(x, tg, n, got, make([]float32, n)); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					var diff, norm float64
					for j := range d {
						e := float64(got[i*d+j]) - float64(want[i*d+j])
						diff += e * e
						norm += float64(want[i*d+j]) * float64(want[i*d+j])
					}
					if math.Sqrt(diff) > 0x1p-5*math.Sqrt(norm) {
						t.Errorf("sample %d: bf16 gradient %.3g from float32's (norm %.3g)", i, math.Sqrt(diff), math.Sqrt(norm))
					}
				}
				normsSq := make([]float64, n*k)
				if err := net.PerSampleNormsSq(x, tg, n, normsSq, make([]float32, n)); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					var ss float64
					for _, v := range normsSq[i*k : (i+1)*k] {
						ss += v
					}
					const sc = 0.75
					scales := make([]float32, n*k)
					for j := i * k; j < (i+1)*k; j++ {
						scales[j] = sc
					}
					sum := make([]float32, d)
					if err := net.AccumulateScaled(scales, sum); err != nil {
						t.Fatal(err)
					}
					var cs float64
					for _, v := range sum {
						cs += float64(v) * float64(v)
					}
					r := math.Sqrt(cs) / (sc * math.Sqrt(ss))
					worst = max(worst, r)
					if !(r <= BF16NormFactor) {
						t.Errorf("sample %d: contribution %.9g, %.9g times s·‖g‖ = %.9g, beyond the margin %.9g", i, math.Sqrt(cs), r, sc*math.Sqrt(ss), BF16NormFactor)
					}
				}
			})
		}
	}
	t.Logf("largest contribution / (s · reported norm): 1 + %.3g (margin 1 + %.3g)", worst-1, BF16NormFactor-1)
	if !(worst > 1+0x1p-16) {
		t.Errorf("no contribution exceeded s·‖g‖ by 2⁻¹⁶ (worst 1 + %.3g): the test no longer shows what the margin is for", worst-1)
	}
}

// The bf16 backend is offered exactly where internal/gemm has the kernel,
// and refused elsewhere with the reason.
func TestBF16BackendAvailability(t *testing.T) {
	restore, err := WithGEMMBackend("bf16")
	if fastgemm.HasBF16() != (err == nil) {
		t.Fatalf("HasBF16 %v, WithGEMMBackend(bf16) error %v", fastgemm.HasBF16(), err)
	}
	if err != nil {
		if err != ErrNoBF16 {
			t.Fatalf("refusal %v, want ErrNoBF16", err)
		}
		return
	}
	want := "bf16:" + fastgemm.BF16KernelName()
	if got := GEMMBackend(); got != want {
		t.Errorf("GEMMBackend() = %q, want %q", got, want)
	}
	restore()
	if got := GEMMBackend(); got == want {
		t.Error("restore left the bf16 backend on")
	}
}
