package clip

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// The factored clip-and-sum equals ClipSum on the materialised per-sample
// gradients of the same MLP (biased and unbiased layers), for flat L2 and
// hybrid L2/L∞ clipping, with and without twice sampling's masks: the same
// clipped counts, sums equal to float32 rounding of the norm.
func TestClipSumFactoredMatchesMaterialised(t *testing.T) {
	const b, in = 9, 13
	net, err := nn.NewNetwork[float32](nn.Vec(in), b, &nn.SoftmaxCrossEntropy[float32]{},
		nn.NewLinear[float32](in, 7, true), nn.NewReLU[float32](), nn.NewLinear[float32](7, 5, false),
		nn.NewTanh[float32](), nn.NewLinear[float32](5, 3, true))
	if err != nil {
		t.Fatal(err)
	}
	s := rng.New(11)
	s.FillNormal(net.Params(), 0.6)
	x := make([]float32, b*in)
	s.FillNormal(x, 2)
	y := make([]int, b)
	for i := range y {
		y[i] = s.IntN(3)
	}
	tg := nn.Target[float32]{Y: y}
	d := net.NumParams()
	grads, losses := make([]float32, b*d), make([]float32, b)
	if err := net.PerSampleGrads(x, tg, b, grads, losses); err != nil {
		t.Fatal(err)
	}
	fs, ok, err := net.Factors(x, tg, b, losses)
	if err != nil || !ok || len(fs) != 3 {
		t.Fatalf("factors: ok %v, %d layers, %v", ok, len(fs), err)
	}
	tw, err := sampler.NewTwice(100, d, 0.5, 0.5, rng.New(2))
	if err != nil {
		t.Fatal(err)
	}
	masks := make([]*sampler.Mask, b)
	for i := range masks {
		masks[i] = sampler.NewMask(d)
		tw.FillMask(masks[i])
	}
	l2, _ := NewL2(0.5, d, nil)
	hy, _ := NewL2LInf(0.5, 30, d)
	// Without masks, hybrid clipping sums the rows that cannot clamp by a
	// GEMM and the others coordinate by coordinate: both kinds must occur.
	var safe, clamped int
	for _, f := range fs {
		for i := range b {
			var ss float64
			for _, v := range grads[i*d : (i+1)*d] {
				ss += float64(v) * float64(v)
			}
			sc := math.Min(1, 0.5/math.Sqrt(ss))
			ma := float64(maxAbs(f.A[i*f.In : (i+1)*f.In]))
			for _, dz := range f.DZ[i*f.Out : (i+1)*f.Out] {
				if sc*math.Abs(float64(dz))*ma < 0.99*0.5/math.Sqrt(30) {
					safe++
				} else {
					clamped++
				}
			}
		}
	}
	if safe == 0 || clamped == 0 {
		t.Fatalf("hybrid: %d weight rows below c∞, %d that may clamp: the test must have both", safe, clamped)
	}
	for _, tc := range []struct {
		name string
		cl   interface {
			Clipper
			FactoredClipper
		}
		masks []*sampler.Mask
	}{{"flat", l2, nil}, {"flat+twice", l2, masks}, {"hybrid", hy, nil}, {"hybrid+twice", hy, masks}} {
		want, got := make([]float32, d), make([]float32, d)
		rows := append([]float32(nil), grads...)
		ws := tc.cl.ClipSum(rows, b, tc.masks, want)
		gs := tc.cl.ClipSumFactored(fs, b, tc.masks, got)
		if ws != gs {
			t.Errorf("%s: stats %+v factored, %+v materialised", tc.name, gs, ws)
		}
		scale := 0.0
		for _, v := range want {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for j := range d {
			if math.Abs(float64(got[j]-want[j])) > 1e-5*scale {
				t.Fatalf("%s: sum[%d] = %v factored, %v materialised", tc.name, j, got[j], want[j])
			}
		}
		if ws.Clipped == 0 {
			t.Errorf("%s: no example clipped: the test does not exercise clipping", tc.name)
		}
	}
}
