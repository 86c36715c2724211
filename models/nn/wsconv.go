package nn

import (
	"math"

	"github.com/dptrain/dptrain/rng"
)

// WSConv2d is a bias-free Conv2d with weight standardisation (Qiao et al.
// 2019; with GroupNorm, one of De et al. 2022's DP recipes): each output
// channel's kernel row w (Cin·K·K values) is used as ŵ = (w − μ)/s, μ its
// mean, s = √(v + Eps), v its (biased) variance. The raw weights W are the
// parameters.
//
// Per-sample rule: ŵ is a function of the parameters only, so sample i's
// gradient is J_ŵᵀ ĝ_i, ĝ_i the inner convolution's per-sample gradient
// with respect to Ŵ, and row by row (the layer-norm backward)
//
//	g_i = (ĝ_i − mean(ĝ_i) − ŵ·mean(ĝ_i ⊙ ŵ)) / s.
//
// The map is linear in ĝ_i: AccumulateScaled transforms the inner sum
// once; norms need the transformed per-sample gradients, computed into a
// scratch of MaxBatch·NumParams values.
type WSConv2d[T Float] struct {
	*Conv2d[T]
	Eps float64

	raw, std []T       // the bound parameters and the standardised copy (the inner conv's)
	inv      []float64 // 1/s per output channel
	scratch  []T       // per-sample gradients for the norms
	acc      []T       // the inner AccumulateScaled sum
}

// DefaultWSEps is WSConv2d's default Eps.
const DefaultWSEps = 1e-4

// NewWSConv2d returns a weight-standardised convolution (no bias).
func NewWSConv2d[T Float](cin, cout, k, stride, pad int) *WSConv2d[T] {
	return &WSConv2d[T]{Conv2d: NewConv2d[T](cin, cout, k, stride, pad, false), Eps: DefaultWSEps}
}

func (l *WSConv2d[T]) Kind() string { return "wsconv2d" }

func (l *WSConv2d[T]) Build(in Shape, maxBatch int) (Shape, error) {
	out, err := l.Conv2d.Build(in, maxBatch)
	if err != nil {
		return out, err
	}
	np := l.Conv2d.NumParams()
	l.std, l.inv = make([]T, np), make([]float64, l.Cout)
	l.scratch, l.acc = make([]T, maxBatch*np), make([]T, np)
	return out, nil
}

func (l *WSConv2d[T]) Bind(p []T) {
	l.raw = p[:l.Conv2d.NumParams()]
	l.Conv2d.Bind(l.std)
}

// Init draws the raw weights by the inner convolution's scheme.
func (l *WSConv2d[T]) Init(s *rng.Stream) {
	l.Conv2d.Bind(l.raw)
	l.Conv2d.Init(s)
	l.Conv2d.Bind(l.std)
}

// standardise recomputes Ŵ and 1/s from the raw weights.
func (l *WSConv2d[T]) standardise() {
	m := l.ckk
	for o := range l.Cout {
		w, dst := l.raw[o*m:(o+1)*m], l.std[o*m:(o+1)*m]
		var mu float64
		for _, v := range w {
			mu += float64(v)
		}
		mu /= float64(m)
		var v2 float64
		for _, v := range w {
			d := float64(v) - mu
			v2 += d * d
		}
		inv := 1 / math.Sqrt(v2/float64(m)+l.Eps)
		l.inv[o] = inv
		for j, v := range w {
			dst[j] = T((float64(v) - mu) * inv)
		}
	}
}

func (l *WSConv2d[T]) Forward(x []T, n int, train bool) []T {
	l.standardise()
	return l.Conv2d.Forward(x, n, train)
}

// pullBack maps a gradient with respect to Ŵ (one sample's, or a sum) to
// the raw weights, in place.
func (l *WSConv2d[T]) pullBack(g []T) {
	m := l.ckk
	for o := range l.Cout {
		row, w := g[o*m:(o+1)*m], l.std[o*m:(o+1)*m]
		var mg, mgw float64
		for j, v := range row {
			mg += float64(v)
			mgw += float64(v) * float64(w[j])
		}
		mg /= float64(m)
		mgw /= float64(m)
		inv := l.inv[o]
		for j, v := range row {
			row[j] = T((float64(v) - mg - float64(w[j])*mgw) * inv)
		}
	}
}

func (l *WSConv2d[T]) PerSampleGrads(n int, dst []T, stride int) {
	l.Conv2d.PerSampleGrads(n, dst, stride)
	np := l.Conv2d.NumParams()
	for i := range n {
		l.pullBack(dst[i*stride : i*stride+np])
	}
}

func (l *WSConv2d[T]) PerSampleNormsSq(n int, dst []float64, stride int) {
	np := l.Conv2d.NumParams()
	l.PerSampleGrads(n, l.scratch, np)
	for i := range n {
		var s float64
		for _, v := range l.scratch[i*np : (i+1)*np] {
			s += float64(v) * float64(v)
		}
		dst[i*stride] = s
	}
}

func (l *WSConv2d[T]) AccumulateScaled(n int, scales []T, stride int, sum []T) {
	clear(l.acc)
	l.Conv2d.AccumulateScaled(n, scales, stride, l.acc)
	l.pullBack(l.acc)
	for j, v := range l.acc {
		sum[j] += v
	}
}
