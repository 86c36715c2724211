package nn

import (
	"math"

	"github.com/dptrain/dptrain/rng"
)

// Layer is one step of a network. A layer owns its output and input-gradient
// buffers (allocated by Build for maxBatch samples); Forward and Backward
// return slices of them, valid until the layer's next call. A layer keeps
// references to its last input and output gradient: parametric layers need
// them for their per-sample rules.
type Layer[T Float] interface {
	// Kind is a short lower-case name ("linear", "conv2d") used in group names.
	Kind() string
	// Build checks the per-sample input shape, allocates buffers for up to
	// maxBatch samples and returns the per-sample output shape.
	Build(in Shape, maxBatch int) (Shape, error)
	// Forward computes the outputs of n samples. train switches on
	// training-only behaviour (dropout).
	Forward(x []T, n int, train bool) []T
	// Backward takes dL/d(output) of the last Forward and returns dL/d(input),
	// or nil when needDx is false (the first layer: no one needs it).
	// Parametric layers retain dy for their per-sample rules.
	Backward(dy []T, n int, needDx bool) []T
}

// ParamLayer is a layer with parameters and its per-sample gradient rule. The
// per-sample methods refer to the n samples of the last Forward/Backward.
// Sample i's gradient is the gradient of sample i's own loss.
type ParamLayer[T Float] interface {
	Layer[T]
	// NumParams is the length of the layer's slice of the flat vector; a
	// layer with 0 parameters is not a group.
	NumParams() int
	// Bind makes p (length NumParams) the layer's live parameters.
	Bind(p []T)
	// Init draws initial parameters into the bound slice.
	Init(s *rng.Stream)
	// PerSampleGrads writes sample i's gradient into dst[i*stride:][:NumParams].
	PerSampleGrads(n int, dst []T, stride int)
	// PerSampleNormsSq writes ‖g_i‖² into dst[i*stride].
	PerSampleNormsSq(n int, dst []float64, stride int)
	// AccumulateScaled adds Σ_i scales[i*stride]·g_i to sum (length
	// NumParams); nil scales mean all ones (the ordinary batch gradient).
	AccumulateScaled(n int, scales []T, stride int, sum []T)
}

// Container is a layer made of other layers (Sequential, Residual). The
// engine walks containers to find the parametric layers and name them.
type Container[T Float] interface {
	Layer[T]
	Children() []Layer[T]
}

// InitScheme selects how a weight matrix with fan-in f and fan-out g is drawn.
type InitScheme int

const (
	// InitUniformFanIn draws weights and biases from U(−1/√f, 1/√f), PyTorch's
	// default for Linear and Conv2d.
	InitUniformFanIn InitScheme = iota
	// InitHe draws weights from N(0, 2/f) (He et al. 2015, for ReLU nets);
	// biases start at 0.
	InitHe
	// InitGlorot draws weights from U(−a, a), a = √(6/(f+g)) (Glorot and
	// Bengio 2010, for tanh nets); biases start at 0.
	InitGlorot
)

// initWeights fills w (and b) by scheme.
func initWeights[T Float](scheme InitScheme, w, b []T, fanIn, fanOut int, s *rng.Stream) {
	switch scheme {
	case InitHe:
		std := math.Sqrt(2 / float64(fanIn))
		for i := range w {
			w[i] = T(std * s.NormFloat64())
		}
		clear(b)
	case InitGlorot:
		a := math.Sqrt(6 / float64(fanIn+fanOut))
		for i := range w {
			w[i] = T(a * (2*s.Float64() - 1))
		}
		clear(b)
	default:
		a := 1 / math.Sqrt(float64(fanIn))
		for i := range w {
			w[i] = T(a * (2*s.Float64() - 1))
		}
		for i := range b {
			b[i] = T(a * (2*s.Float64() - 1))
		}
	}
}
