package nn

// tanh32 is tanh for float32 activations without a float64 round trip: a
// [13/6] odd rational minimax approximation on [−7.9053, 7.9053] (the
// coefficients XLA and Eigen publish for float32), saturated outside, where
// float32's tanh is ±1 to within an ulp. TestTanh32 bounds its error
// against math.Tanh over a dense grid: a few float32 ulps.
func tanh32(x float32) float32 {
	if x > -tanhTiny && x < tanhTiny {
		return x
	}
	x = min(max(x, -tanhClamp), tanhClamp)
	x2 := x * x
	p := float32(tanhA13)
	p = p*x2 + tanhA11
	p = p*x2 + tanhA9
	p = p*x2 + tanhA7
	p = p*x2 + tanhA5
	p = p*x2 + tanhA3
	p = p*x2 + tanhA1
	p *= x
	q := float32(tanhB6)
	q = q*x2 + tanhB4
	q = q*x2 + tanhB2
	q = q*x2 + tanhB0
	return p / q
}

const (
	tanhClamp = 7.90531110763549805
	tanhTiny  = 0.0004 // below it, tanh(x) = x in float32
	tanhA1    = 4.89352455891786e-03
	tanhA3    = 6.37261928875436e-04
	tanhA5    = 1.48572235717979e-05
	tanhA7    = 5.12229709037114e-08
	tanhA9    = -8.60467152213735e-11
	tanhA11   = 2.00018790482477e-13
	tanhA13   = -2.76076847742355e-16
	tanhB0    = 4.89352518554385e-03
	tanhB2    = 2.26843463243900e-03
	tanhB4    = 1.18534705686654e-04
	tanhB6    = 1.19825839466702e-06
)

// tanhConsts lists tanh32's constants as float32, in the order the vector
// kernel reads them.
func tanhConsts() [15]float32 {
	return [15]float32{tanhClamp, -tanhClamp, tanhTiny, -tanhTiny,
		tanhA13, tanhA11, tanhA9, tanhA7, tanhA5, tanhA3, tanhA1, tanhB6, tanhB4, tanhB2, tanhB0}
}

// tanhSlice32 writes tanh32(x[i]) to out[i], eight at a time where the CPU
// has AVX2 (bit for bit the same values).
func tanhSlice32(out, x []float32) {
	x = x[:len(out)]
	if tanhVec != nil {
		n := tanhVec(out, x)
		out, x = out[n:], x[n:]
	}
	for i, v := range x {
		out[i] = tanh32(v)
	}
}
