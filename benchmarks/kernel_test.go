package benchmarks

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// bruteSum clips the kernel's source rows one by one in float64 and sums
// b of them, cycling over the chunk as ClipSum does.
func bruteSum(k *ClipKernel, b int, clipRow func(g []float64) []float64) []float64 {
	sum := make([]float64, k.d)
	for i := 0; i < b; i++ {
		r := i % k.chunk
		g := make([]float64, k.d)
		for j := range g {
			g[j] = float64(k.src[r*k.d+j])
		}
		for j, v := range clipRow(g) {
			sum[j] += v
		}
	}
	return sum
}

func l2(g []float64) float64 {
	var s float64
	for _, v := range g {
		s += v * v
	}
	return math.Sqrt(s)
}

func TestClipKernelMatchesBruteForce(t *testing.T) {
	const (
		d     = 300
		chunk = 8
		b     = 2*chunk + 5 // three ClipSum calls, the last one partial
		c     = 0.8
	)
	groups := []models.Group{{Name: "a", Offset: 0, Len: 100}, {Name: "b", Offset: 100, Len: 200}}
	tests := []struct {
		clip string
		row  func(g []float64) []float64
	}{
		{"flat", func(g []float64) []float64 {
			s := math.Min(1, c/l2(g))
			for j := range g {
				g[j] *= s
			}
			return g
		}},
		{"per-layer", func(g []float64) []float64 {
			// Budgets proportional to group size: C_k² = C²·n_k/D.
			for _, gr := range groups {
				part := g[gr.Offset : gr.Offset+gr.Len]
				ck := c * math.Sqrt(float64(gr.Len)/d)
				s := math.Min(1, ck/l2(part))
				for j := range part {
					part[j] *= s
				}
			}
			return g
		}},
		{"linf", func(g []float64) []float64 {
			ci := c / math.Sqrt(d)
			for j := range g {
				g[j] = math.Max(-ci, math.Min(ci, g[j]))
			}
			return g
		}},
		{"hybrid", func(g []float64) []float64 {
			s := math.Min(1, c/l2(g))
			ci := c / math.Sqrt(100)
			for j := range g {
				g[j] = math.Max(-ci, math.Min(ci, s*g[j]))
			}
			return g
		}},
	}
	for _, tc := range tests {
		k, err := NewClipKernel(KernelConfig{Clip: tc.clip, D: d, Groups: groups, Chunk: chunk, ClipNorm: c, D0: 100, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if s := k.Clipper.Sensitivity().L2; math.Abs(s-c) > 1e-12 {
			t.Errorf("%s: L2 sensitivity %v, want C = %v", tc.clip, s, c)
		}
		// Twice over: the second call must see fresh (unclipped) rows.
		for rep := 0; rep < 2; rep++ {
			k.Reset()
			st := k.ClipSum(b, nil)
			if st.Clipped == 0 {
				t.Errorf("%s: nothing clipped; the kernel's rows should exceed C", tc.clip)
			}
			want := bruteSum(k, b, tc.row)
			for j, w := range want {
				if got := float64(k.Sum()[j]); math.Abs(got-w) > 1e-5*(1+math.Abs(w)) {
					t.Errorf("%s rep %d: sum[%d] = %v, brute force %v", tc.clip, rep, j, got, w)
					break
				}
			}
		}
	}
}

// The subspace kernel releases K + D numbers with L2 sensitivity C; each
// clipped example's released vector is within C, so the sum of b of them is
// within b·C; with masks only masked coordinates move.
func TestSubspaceKernel(t *testing.T) {
	const d, c, b = 200, 0.5, 10
	k, err := NewClipKernel(KernelConfig{Clip: "subspace", D: d, Chunk: 4, ClipNorm: c, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if k.OutDim() != d+32 {
		t.Fatalf("OutDim %d, want %d", k.OutDim(), d+32)
	}
	if s := k.Clipper.Sensitivity().L2; math.Abs(s-c) > 1e-12 {
		t.Errorf("L2 sensitivity %v, want %v", s, c)
	}
	k.ClipSum(1, nil)
	var one float64
	for _, v := range k.Sum() {
		one += float64(v) * float64(v)
	}
	if math.Sqrt(one) > c*(1+1e-5) || math.Sqrt(one) < 0.5*c {
		t.Errorf("one clipped example has norm %v, want in [C/2, C] with C = %v (its raw norm is about 2C)", math.Sqrt(one), c)
	}
	tw, err := sampler.NewTwice(1000, k.OutDim(), 0.1, 0.3, rng.New(9))
	if err != nil {
		t.Fatal(err)
	}
	masks := make([]*sampler.Mask, b)
	union := make([]bool, k.OutDim())
	for i := range masks {
		masks[i] = sampler.NewMask(k.OutDim())
		tw.FillMask(masks[i])
		for j := range union {
			union[j] = union[j] || masks[i].Has(j)
		}
	}
	k.Reset()
	k.ClipSum(b, masks)
	for j, v := range k.Sum() {
		if v != 0 && !union[j] {
			t.Fatalf("coordinate %d is in no mask but the sum is %v", j, v)
		}
	}
	if _, err := NewClipKernel(KernelConfig{Clip: "subspace", D: 20}); err == nil {
		t.Error("subspace with D = 20 below the principal rank 32 was accepted")
	}
	if _, err := NewClipKernel(KernelConfig{Clip: "l1", D: 20}); err == nil {
		t.Error("unknown clip accepted")
	}
}

// The watcher sees a 64 MiB allocation that is live while it samples.
func TestWatchMemory(t *testing.T) {
	w := watchMemory(time.Millisecond)
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	heap, sys := w.Stop()
	runtime.KeepAlive(buf)
	if heap < 64 || sys < heap {
		t.Errorf("peak heap %.1f MiB, sys %.1f MiB; want heap ≥ 64 and sys ≥ heap", heap, sys)
	}
}
