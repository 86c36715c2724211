package models

import (
	"bytes"
	"errors"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

func randomBatch(n, inSize, classes int, seed uint64) Batch {
	s := rng.New(seed)
	b := Batch{X: make([]float32, n*inSize), Y: make([]int, n), T: make([]float32, n), N: n}
	s.FillNormal(b.X, 1)
	for i := range n {
		b.Y[i] = s.IntN(classes)
		b.T[i] = float32(s.NormFloat64())
	}
	return b
}

// TestChunkedEqualsOneBatch runs a logical batch of 10 through models with
// MaxBatch 4 (chunks 4, 4, 2) and MaxBatch 10 (one chunk), and checks both
// against the clipped sum computed from materialised gradients.
func TestChunkedEqualsOneBatch(t *testing.T) {
	build := map[string]func(mb int) (*Net, error){
		"mlp":      func(mb int) (*Net, error) { return NewMLP(20, []int{16}, 5, "tanh", Options{MaxBatch: mb, Seed: 3}) },
		"mnistcnn": func(mb int) (*Net, error) { return NewMNISTCNN(Options{MaxBatch: mb, Seed: 3}) },
	}
	for name, mk := range build {
		t.Run(name, func(t *testing.T) {
			small, err := mk(4)
			if err != nil {
				t.Fatal(err)
			}
			big, _ := mk(10)
			b := randomBatch(10, small.InputSize(), 5, 9)
			d, k := small.NumParams(), len(small.Groups())
			// Reference: materialised grads, clipped by hand.
			grads := make([]float32, 10*d)
			if err := big.PerSampleGrads(b, grads, make([]float32, 10)); err != nil {
				t.Fatal(err)
			}
			// Clip at the median norm, so that about half the samples clip.
			norms := make([]float64, 10)
			for i := range 10 {
				for _, v := range grads[i*d : (i+1)*d] {
					norms[i] += float64(v) * float64(v)
				}
				norms[i] = math.Sqrt(norms[i])
			}
			sorted := append([]float64(nil), norms...)
			slices.Sort(sorted)
			c := (sorted[4] + sorted[5]) / 2
			want := make([]float64, d)
			clipped := 0
			for i := range 10 {
				var n2 float64
				for _, v := range grads[i*d : (i+1)*d] {
					n2 += float64(v) * float64(v)
				}
				f := min(1, c/math.Sqrt(n2))
				if f < 1 {
					clipped++
				}
				for j, v := range grads[i*d : (i+1)*d] {
					want[j] += f * float64(v)
				}
			}
			if clipped == 0 || clipped == 10 {
				t.Fatalf("%d of 10 samples clipped: the test needs a mix", clipped)
			}
			for _, m := range []*Net{small, big} {
				sum := make([]float32, d)
				losses := make([]float32, 10)
				if err := NewChunker(m).ClippedSum(b, FlatClip(c), sum, losses); err != nil {
					t.Fatal(err)
				}
				var diff, norm float64
				for j := range d {
					diff += (float64(sum[j]) - want[j]) * (float64(sum[j]) - want[j])
					norm += want[j] * want[j]
				}
				if math.Sqrt(diff/norm) > 1e-5 {
					t.Errorf("MaxBatch %d: clipped sum differs by %.3g relative", m.MaxBatch(), math.Sqrt(diff/norm))
				}
				// Each visits the same gradients in chunks.
				got := make([]float32, 10*d)
				calls := 0
				err := NewChunker(m).Each(b, func(off int, ch Batch, g, _ []float32) error {
					calls++
					copy(got[off*d:], g)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if wantCalls := (10 + m.MaxBatch() - 1) / m.MaxBatch(); calls != wantCalls {
					t.Errorf("Each made %d calls, want %d", calls, wantCalls)
				}
				for j := range got {
					if math.Abs(float64(got[j]-grads[j])) > 1e-6*(1+math.Abs(float64(grads[j]))) {
						t.Fatalf("MaxBatch %d: chunked gradient %d = %v, want %v", m.MaxBatch(), j, got[j], grads[j])
					}
				}
			}
			// Per-layer clipping with the per-group norms.
			cs := make([]float64, k)
			for j := range cs {
				cs[j] = c / 2
			}
			sum := make([]float32, d)
			if err := NewChunker(small).ClippedSum(b, PerLayerClip(cs), sum, nil); err != nil {
				t.Fatal(err)
			}
			for kk, g := range small.Groups() {
				var want2 float64
				for j := g.Offset; j < g.Offset+g.Len; j++ {
					var w float64
					for i := range 10 {
						var n2 float64
						for _, v := range grads[i*d+g.Offset : i*d+g.Offset+g.Len] {
							n2 += float64(v) * float64(v)
						}
						w += min(1, cs[kk]/math.Sqrt(n2)) * float64(grads[i*d+j])
					}
					want2 += (float64(sum[j]) - w) * (float64(sum[j]) - w)
				}
				if math.Sqrt(want2) > 1e-6 {
					t.Errorf("per-layer clip, group %s: error %.3g", g.Name, math.Sqrt(want2))
				}
			}
		})
	}
}

func TestChunkerEdgeCases(t *testing.T) {
	m, _ := NewMLP(4, []int{3}, 2, "relu", Options{MaxBatch: 2, Seed: 1})
	sum := make([]float32, m.NumParams())
	if err := NewChunker(m).ClippedSum(Batch{}, FlatClip(1), sum, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	for _, v := range sum {
		if v != 0 {
			t.Fatal("empty batch changed the sum")
		}
	}
	bad := []struct {
		name string
		b    Batch
		want string
	}{
		{"short X", Batch{X: make([]float32, 7), Y: make([]int, 2), N: 2}, "input values"},
		{"short Y", Batch{X: make([]float32, 12), Y: make([]int, 2), N: 3}, "labels"},
		{"bad label", Batch{X: make([]float32, 12), Y: []int{0, 1, 2}, N: 3}, "label 2"},
	}
	for _, tc := range bad {
		err := NewChunker(m).ClippedSum(tc.b, FlatClip(1), sum, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestEvaluate checks Evaluate against per-sample losses, across chunks.
func TestEvaluate(t *testing.T) {
	m, _ := NewMLP(6, []int{5}, 3, "tanh", Options{MaxBatch: 4, Seed: 2})
	b := randomBatch(4, 6, 3, 1)
	losses := make([]float32, 4)
	grads := make([]float32, 4*m.NumParams())
	if err := m.PerSampleGrads(b, grads, losses); err != nil {
		t.Fatal(err)
	}
	// The prediction is the argmax of the logits.
	out, _ := m.Network().Forward(b.X, 4)
	correct := 0
	var want float64
	for i := range 4 {
		z := out[i*3 : (i+1)*3]
		best := 0
		for j := range z {
			if z[j] > z[best] {
				best = j
			}
		}
		if best == b.Y[i] {
			correct++
		}
		want += float64(losses[i])
	}
	l, c, err := m.Evaluate(b)
	if err != nil || math.Abs(l-want) > 1e-5 || c != correct {
		t.Errorf("Evaluate = %v, %d, %v; want %v, %d", l, c, err, want, correct)
	}
	// Nine samples in chunks of 4: the sum of the parts.
	b9 := randomBatch(9, 6, 3, 2)
	l9, c9, err := m.Evaluate(b9)
	if err != nil {
		t.Fatal(err)
	}
	var lp float64
	cp := 0
	for lo := 0; lo < 9; lo += 4 {
		l, c, _ := m.Evaluate(chunkOf(b9, 6, lo, min(9, lo+4)))
		lp += l
		cp += c
	}
	if math.Abs(l9-lp) > 1e-9 || c9 != cp {
		t.Errorf("Evaluate over chunks = %v, %d; parts %v, %d", l9, c9, lp, cp)
	}
}

// TestSteadyStateAllocs checks that a DP step (norms, then the scaled sum)
// allocates nothing once the model and chunker exist, for every layer type
// of the zoo (Linear, Conv2d, pools, GroupNorm, residual sums).
func TestSteadyStateAllocs(t *testing.T) {
	logreg, _ := NewLogisticRegression(784, 10, Options{MaxBatch: 16})
	mlp, _ := NewMLP(30, []int{20}, 4, "relu", Options{MaxBatch: 8, Seed: 1})
	cnn, _ := NewMNISTCNN(Options{MaxBatch: 4, Seed: 1})
	resnet, _ := NewResNet20GN(10, Options{MaxBatch: 2, Seed: 1})
	for _, m := range []*Net{logreg, mlp, cnn, resnet} {
		b := randomBatch(m.MaxBatch(), m.InputSize(), 4, 3)
		ch := NewChunker(m)
		sum := make([]float32, m.NumParams())
		rule := FlatClip(1)
		allocs := testing.AllocsPerRun(5, func() {
			if err := ch.ClippedSum(b, rule, sum, nil); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 0 {
			t.Errorf("%s: %v allocations per step", m.Arch(), allocs)
		}
		// Buffers survive garbage collections (a training run collects
		// between steps; pooled buffers would be dropped and re-allocated).
		allocs = testing.AllocsPerRun(2, func() {
			runtime.GC()
			runtime.GC()
			if err := ch.ClippedSum(b, rule, sum, nil); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 0 {
			t.Errorf("%s: %v allocations per step after a GC", m.Arch(), allocs)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	a, _ := NewMLP(5, []int{4}, 3, "relu", Options{Seed: 1})
	b, _ := NewMLP(5, []int{4}, 3, "relu", Options{Seed: 2})
	var buf bytes.Buffer
	if err := a.Save(&buf); err != nil {
		t.Fatal(err)
	}
	saved := buf.Bytes()
	if err := b.Load(bytes.NewReader(saved)); err != nil {
		t.Fatal(err)
	}
	for j := range a.Params() {
		if a.Params()[j] != b.Params()[j] {
			t.Fatalf("param %d: %v after load, want %v", j, b.Params()[j], a.Params()[j])
		}
	}
	// Another architecture, even with the same parameter count, is refused.
	other, _ := NewMLP(5, []int{4}, 3, "tanh", Options{})
	if err := other.Load(bytes.NewReader(saved)); !errors.Is(err, ErrArchMismatch) {
		t.Errorf("loading relu MLP into tanh MLP: %v", err)
	}
	bigger, _ := NewMLP(5, []int{6}, 3, "relu", Options{})
	if err := bigger.Load(bytes.NewReader(saved)); !errors.Is(err, ErrArchMismatch) {
		t.Errorf("loading into a wider MLP: %v", err)
	}
	// Corruption anywhere is detected.
	for _, pos := range []int{0, 9, 20, len(saved) / 2, len(saved) - 5, len(saved) - 1} {
		bad := append([]byte(nil), saved...)
		bad[pos] ^= 0x10
		if err := b.Load(bytes.NewReader(bad)); err == nil {
			t.Errorf("flipped byte %d: loaded", pos)
		}
	}
	if err := b.Load(bytes.NewReader(saved[:len(saved)-3])); err == nil {
		t.Error("truncated file loaded")
	}
	path := t.TempDir() + "/p.bin"
	if err := a.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	if err := b.LoadFile(path); err != nil {
		t.Fatal(err)
	}
}

func FuzzReadParams(f *testing.F) {
	m, _ := NewLogisticRegression(3, 3, Options{})
	var buf bytes.Buffer
	_ = m.Save(&buf)
	f.Add(buf.Bytes())
	if v1, err := os.ReadFile("testdata/v1_logreg_4_3.bin"); err == nil {
		f.Add(v1)
	}
	f.Add([]byte("DPTRAINP"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := ReadParams(bytes.NewReader(data), 1<<20)
		if err != nil {
			return
		}
		// A file that parses writes back (as version 2) to a file that
		// reads back to the same content.
		var out bytes.Buffer
		if err := WriteParams(&out, pf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadParams(bytes.NewReader(out.Bytes()), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		same := back.Arch == pf.Arch && slices.Equal(back.Groups, pf.Groups) && reflect.DeepEqual(back.Meta, pf.Meta) &&
			len(back.Params) == len(pf.Params)
		for i := range pf.Params {
			same = same && math.Float32bits(back.Params[i]) == math.Float32bits(pf.Params[i])
		}
		if !same {
			t.Fatal("round trip changed the file's content")
		}
	})
}

// A sample whose gradient is not finite (its clip scale is 0) adds exactly
// nothing: the chunk's clipped sum with it equals the sum without it, and is
// finite (before the fix, 0·NaN = NaN went into the sum).
func TestChunkerDropsNonFiniteSamples(t *testing.T) {
	m, err := NewMLP(6, []int{5}, 3, "relu", Options{MaxBatch: 4, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	b := randomBatch(7, m.InputSize(), 3, 5)
	in := m.InputSize()
	withX := Batch{X: append(append([]float32(nil), b.X[:3*in]...), b.X[3*in:]...), Y: append([]int(nil), b.Y...), N: b.N}
	// Insert an extreme sample at position 3 (in the first chunk of 4).
	ex := []float32{3e38, 3e38, 3e38, 3e38, 3e38, 3e38} // ReLU passes the overflow on: a non-finite norm
	norms := make([]float64, len(m.Groups()))
	if err := m.PerSampleNormsSq(Batch{X: ex, Y: []int{0}, N: 1}, norms, make([]float32, 1)); err != nil {
		t.Fatal(err)
	}
	if ss := norms[0] + norms[1]; !math.IsNaN(ss) && !math.IsInf(ss, 0) {
		t.Fatalf("the extreme sample's norm² is %v: the test needs a non-finite one", ss)
	}
	withX.X = append(append(append([]float32(nil), b.X[:3*in]...), ex...), b.X[3*in:]...)
	withX.Y = append(append(append([]int(nil), b.Y[:3]...), 0), b.Y[3:]...)
	withX.N = b.N + 1
	want := make([]float32, m.NumParams())
	if err := NewChunker(m).ClippedSum(b, FlatClip(1), want, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, m.NumParams())
	if err := NewChunker(m).ClippedSum(withX, FlatClip(1), got, nil); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.IsNaN(float64(got[i])) || math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("coordinate %d: %v with the extreme sample, %v without", i, got[i], want[i])
		}
	}
}

// Dropped drops an example when any of its group scales is 0 (a non-finite
// norm under FlatClip or PerLayerClip) or NaN, and keeps it otherwise.
func TestDropped(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		scales []float32
		want   bool
	}{
		{nil, false},
		{[]float32{1}, false},
		{[]float32{0.25, 1, 1e-30}, false},
		{[]float32{0}, true},
		{[]float32{1, 0.5, 0}, true},
		{[]float32{float32(math.Copysign(0, -1))}, true},
		{[]float32{1, nan}, true},
	} {
		if got := Dropped(tc.scales); got != tc.want {
			t.Errorf("Dropped(%v) = %v, want %v", tc.scales, got, tc.want)
		}
	}
	// The scale rules give a non-finite norm a scale that Dropped drops.
	for _, rule := range []ScaleRule{FlatClip(1), PerLayerClip([]float64{1, 1})} {
		s := make([]float32, 2)
		rule([]float64{0.5, math.Inf(1)}, s)
		if !Dropped(s) {
			t.Errorf("a group with an infinite norm gets scales %v, which Dropped keeps", s)
		}
		rule([]float64{0.5, 4}, s)
		if Dropped(s) {
			t.Errorf("finite norms get scales %v, which Dropped drops", s)
		}
	}
}
