package models

import (
	"testing"

	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/optim"
	"github.com/dptrain/dptrain/rng"
)

// benchModel builds a float32 model with MaxBatch = batch and a random batch.
func benchModel(b *testing.B, name string, batch int) (*Net, Batch) {
	b.Helper()
	o := Options{MaxBatch: batch, Seed: 1}
	var m *Net
	var err error
	switch name {
	case "logreg":
		m, err = NewLogisticRegression(784, 10, o)
	case "mlp":
		m, err = NewMLP(784, []int{256}, 10, "relu", o)
	case "cnn":
		m, err = NewMNISTCNN(o)
	case "resnet20":
		m, err = NewResNet20GN(10, o)
	case "resnet8":
		// ResNetGNNet with one block per stage: the ResNet-8 (GroupNorm,
		// 32×32×3) of the Opacus row in
		// docs/architecture.md#measured-speed, for a like-for-like ratio.
		var net *nn.Network[float32]
		if net, err = ResNetGNNet[float32](CIFAR, [3]int{1, 1, 1}, 10, batch); err == nil {
			initNet(net, o.Seed)
			m = newNet("resnet8gn(10)", net, true)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	return m, randomBatch(batch, m.InputSize(), 10, 2)
}

// benchDPStep times one whole DP-SGD training step as the anchors
// (scripts/anchors.sh: PyTorch and Opacus) time theirs: forward, backward,
// per-sample gradient norms, flat clipping to C = 1 and the clipped sum,
// Gaussian noise of standard deviation σC = 1 on every coordinate (the
// trainer's rng.Stream.AddNormal) and a plain SGD update (lr 0.1) of the live
// parameters. Only sampling is left out: the batch is fixed. B/op and
// allocs/op are the steady state: one untimed step runs first.
func benchDPStep(b *testing.B, name string, batch int) float64 {
	m, x := benchModel(b, name, batch)
	ch := NewChunker(m)
	sum := make([]float32, m.NumParams())
	losses := make([]float32, batch)
	rule := FlatClip(1)
	noise, opt := rng.New(1), benchSGD(b)
	step := func() {
		clear(sum)
		if err := ch.ClippedSum(x, rule, sum, losses); err != nil {
			b.Fatal(err)
		}
		noise.AddNormal(sum, 1)
		if err := opt.Step(m.Params(), sum, float64(batch)); err != nil {
			b.Fatal(err)
		}
	}
	step() // warm-up: GEMM packing arenas and worker goroutines start on first use
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for range b.N {
		step()
	}
	return report(b, batch, cpu)
}

// benchNonDPStep times the ordinary training step of the same model: the
// batch gradient and the same SGD update, with no clipping and no noise.
func benchNonDPStep(b *testing.B, name string, batch int) float64 {
	m, x := benchModel(b, name, batch)
	sum := make([]float32, m.NumParams())
	losses := make([]float32, batch)
	opt := benchSGD(b)
	step := func() {
		clear(sum)
		if err := m.BatchGrad(x, sum, losses); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(m.Params(), sum, float64(batch)); err != nil {
			b.Fatal(err)
		}
	}
	step() // warm-up, as in benchDPStep
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for range b.N {
		step()
	}
	return report(b, batch, cpu)
}

// benchSGD is the anchors' optimizer: plain SGD, lr 0.1, on the mean
// gradient.
func benchSGD(b *testing.B) *optim.SGD {
	o, err := optim.NewSGD(optim.SGDConfig{LR: optim.Constant(0.1)})
	if err != nil {
		b.Fatal(err)
	}
	return o
}

// Each benchmark runs on every float32 GEMM backend of the build
// (sub-benchmarks gemm=asm, the default, gemm=gonum, the pure-Go baseline,
// and gemm=openblas under -tags openblas), so speed-ups are ratios measured
// in one run.
func backends(b *testing.B, fn func(b *testing.B)) {
	for _, be := range nn.GEMMBackends() {
		b.Run("gemm="+be, func(b *testing.B) {
			if err := nn.SetGEMMBackend(be); err != nil {
				b.Fatal(err)
			}
			defer nn.SetGEMMBackend("asm")
			fn(b)
		})
	}
}

func BenchmarkDPStepLogreg(b *testing.B) {
	backends(b, func(b *testing.B) { benchDPStep(b, "logreg", 256) })
}
func BenchmarkNonDPStepLogreg(b *testing.B) {
	backends(b, func(b *testing.B) { benchNonDPStep(b, "logreg", 256) })
}
func BenchmarkDPStepMLP(b *testing.B) { backends(b, func(b *testing.B) { benchDPStep(b, "mlp", 256) }) }
func BenchmarkNonDPStepMLP(b *testing.B) {
	backends(b, func(b *testing.B) { benchNonDPStep(b, "mlp", 256) })
}
func BenchmarkDPStepCNN(b *testing.B) { backends(b, func(b *testing.B) { benchDPStep(b, "cnn", 64) }) }
func BenchmarkNonDPStepCNN(b *testing.B) {
	backends(b, func(b *testing.B) { benchNonDPStep(b, "cnn", 64) })
}
func BenchmarkDPStepResNet20(b *testing.B) {
	backends(b, func(b *testing.B) { benchDPStep(b, "resnet20", 64) })
}
func BenchmarkNonDPStepResNet20(b *testing.B) {
	backends(b, func(b *testing.B) { benchNonDPStep(b, "resnet20", 64) })
}

// BenchmarkDPStepResNet8 is the ResNet-8-GN of the Opacus row in
// docs/architecture.md#measured-speed
// (ResNet-20 has about 3.3× its convolution multiply-adds: 41M against
// 12.5M per sample).
func BenchmarkDPStepResNet8(b *testing.B) {
	backends(b, func(b *testing.B) { benchDPStep(b, "resnet8", 64) })
}
func BenchmarkNonDPStepResNet8(b *testing.B) {
	backends(b, func(b *testing.B) { benchNonDPStep(b, "resnet8", 64) })
}

// report adds samples/s (wall clock) and samples/cpu-s (process CPU time:
// all cores' work, undistorted by other processes on a shared machine), and
// returns the CPU seconds of the timed steps.
func report(b *testing.B, batch int, cpu0 float64) float64 {
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
	cpu := cputime.Process() - cpu0
	if cpu > 0 {
		b.ReportMetric(float64(batch*b.N)/cpu, "samples/cpu-s")
	}
	return cpu
}
