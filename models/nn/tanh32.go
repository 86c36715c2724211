package nn

// tanh32 is tanh for float32 activations without a float64 round trip: a
// [13/6] odd rational minimax approximation on [−7.9053, 7.9053] (the
// coefficients XLA and Eigen publish for float32), saturated outside, where
// float32's tanh is ±1 to within an ulp. TestTanh32 bounds its error
// against math.Tanh over a dense grid: a few float32 ulps.
func tanh32(x float32) float32 {
	const (
		clamp = 7.90531110763549805
		tiny  = 0.0004 // below it, tanh(x) = x in float32
		a1    = 4.89352455891786e-03
		a3    = 6.37261928875436e-04
		a5    = 1.48572235717979e-05
		a7    = 5.12229709037114e-08
		a9    = -8.60467152213735e-11
		a11   = 2.00018790482477e-13
		a13   = -2.76076847742355e-16
		b0    = 4.89352518554385e-03
		b2    = 2.26843463243900e-03
		b4    = 1.18534705686654e-04
		b6    = 1.19825839466702e-06
	)
	if x > -tiny && x < tiny {
		return x
	}
	x = min(max(x, -clamp), clamp)
	x2 := x * x
	p := float32(a13)
	p = p*x2 + a11
	p = p*x2 + a9
	p = p*x2 + a7
	p = p*x2 + a5
	p = p*x2 + a3
	p = p*x2 + a1
	p *= x
	q := float32(b6)
	q = q*x2 + b4
	q = q*x2 + b2
	q = q*x2 + b0
	return p / q
}

// tanhSlice32 writes tanh32(x[i]) to out[i].
func tanhSlice32(out, x []float32) {
	x = x[:len(out)]
	for i, v := range x {
		out[i] = tanh32(v)
	}
}
