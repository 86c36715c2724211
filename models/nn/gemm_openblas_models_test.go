//go:build openblas && cgo && unix

package nn_test

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/internal/gemm/openblas"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
)

// dpStep runs the per-sample entry points of a DP-SGD step on one chunk
// (per-sample gradients, squared norms, the clipped sum with flat clipping
// to 1, the batch gradient) and returns their results and the losses.
func dpStep(t *testing.T, net *nn.Network[float32], x []float32, tg nn.Target[float32], n int) [][]float32 {
	t.Helper()
	d, k := net.NumParams(), len(net.Groups())
	grads, losses := make([]float32, n*d), make([]float32, n)
	if err := net.PerSampleGrads(x, tg, n, grads, losses); err != nil {
		t.Fatal(err)
	}
	norms := make([]float64, n*k)
	if err := net.PerSampleNormsSq(x, tg, n, norms, losses); err != nil {
		t.Fatal(err)
	}
	scales := make([]float32, n*k)
	nf := make([]float32, n*k)
	for i := range n {
		var sq float64
		for g := range k {
			sq += norms[i*k+g]
		}
		for g := range k {
			scales[i*k+g] = float32(1 / math.Max(1, math.Sqrt(sq)))
			nf[i*k+g] = float32(norms[i*k+g])
		}
	}
	clipped := make([]float32, d)
	if err := net.AccumulateScaled(scales, clipped); err != nil {
		t.Fatal(err)
	}
	batch := make([]float32, d)
	if err := net.BatchGrad(x, tg, n, batch, losses); err != nil {
		t.Fatal(err)
	}
	return [][]float32{grads, nf, clipped, batch, losses}
}

// TestOpenBLASModelsDPStep checks that a DP step of the MNIST CNN and of a
// small GroupNorm ResNet (the engine's real conv and linear products) gives
// the same per-sample gradients, norms and sums with the openblas backend
// as with asm, to float32 rounding.
func TestOpenBLASModelsDPStep(t *testing.T) {
	defer nn.SetGEMMBackend("asm")
	build := map[string]func(n int) (*nn.Network[float32], error){
		"mnistcnn": models.MNISTCNNNet[float32],
		"resnet8gn": func(n int) (*nn.Network[float32], error) {
			return models.ResNetGNNet[float32](models.CIFAR, [3]int{1, 1, 1}, 10, n)
		},
	}
	const n = 6
	for name, mk := range build {
		net, err := mk(n)
		if err != nil {
			t.Fatal(err)
		}
		s := rng.New(5)
		net.Init(s)
		x := make([]float32, n*net.InputShape().Size())
		s.FillNormal(x, 1)
		tg := nn.Target[float32]{Y: make([]int, n)}
		for i := range tg.Y {
			tg.Y[i] = s.IntN(10)
		}
		var out [2][][]float32
		for i, be := range []string{"asm", "openblas"} {
			if err := nn.SetGEMMBackend(be); err != nil {
				t.Fatal(err)
			}
			out[i] = dpStep(t, net, x, tg, n)
		}
		want, got := out[0], out[1]
		for o := range want {
			scale := 0.0
			for _, v := range want[o] {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			for j := range want[o] {
				if d := math.Abs(float64(got[o][j] - want[o][j])); !(d <= 1e-4*scale+1e-7) {
					t.Fatalf("%s: output %d[%d]: openblas %g, asm %g (max |asm| %g)", name, o, j, got[o][j], want[o][j], scale)
				}
			}
		}
	}
}

// BenchmarkOpenBLASDPStep times one DP-SGD step (forward, backward,
// per-sample norms, flat clipping to 1, the clipped sum; as models'
// BenchmarkDPStep*) of the MNIST CNN and ResNet-20 at batch 64 with the asm
// and openblas backends in one run. OpenBLAS uses OPENBLAS_NUM_THREADS
// threads (default: one per core). samples/cpu-s counts all threads' CPU
// time, OpenBLAS's spinning idle threads included.
func BenchmarkOpenBLASDPStep(b *testing.B) {
	b.Logf("OpenBLAS %s, %d threads", openblas.Config(), openblas.NumThreads())
	for _, model := range []string{"cnn", "resnet20"} {
		for _, be := range []string{"asm", "openblas"} {
			b.Run(model+"/gemm="+be, func(b *testing.B) {
				if err := nn.SetGEMMBackend(be); err != nil {
					b.Fatal(err)
				}
				defer nn.SetGEMMBackend("asm")
				benchDPStep(b, model, 64)
			})
		}
	}
}

func benchDPStep(b *testing.B, name string, batch int) {
	o := models.Options{MaxBatch: batch, Seed: 1}
	var m *models.Net
	var err error
	switch name {
	case "cnn":
		m, err = models.NewMNISTCNN(o)
	case "resnet20":
		m, err = models.NewResNet20GN(10, o)
	}
	if err != nil {
		b.Fatal(err)
	}
	s := rng.New(2)
	x := models.Batch{X: make([]float32, batch*m.InputSize()), Y: make([]int, batch), T: make([]float32, batch), N: batch}
	s.FillNormal(x.X, 1)
	for i := range x.Y {
		x.Y[i] = s.IntN(10)
	}
	ch := models.NewChunker(m)
	sum := make([]float32, m.NumParams())
	losses := make([]float32, batch)
	rule := models.FlatClip(1)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for range b.N {
		clear(sum)
		if err := ch.ClippedSum(x, rule, sum, losses); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(batch*b.N)/cpu, "samples/cpu-s")
	}
}
