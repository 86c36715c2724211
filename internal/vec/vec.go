package vec

// Float is the element type of the reductions.
type Float interface{ ~float32 | ~float64 }

// SumSquares is Σ x_j² accumulated in float64 in four interleaved partial
// sums, (s0 + s1) + (s2 + s3) at the end, the remainder into s0: one chain
// would wait on the adder at every element, and the fixed order keeps the
// result independent of the caller.
func SumSquares[T Float](x []T) float64 {
	var s0, s1, s2, s3 float64
	n := len(x) &^ 3
	for i := 0; i < n; i += 4 {
		q := x[i : i+4 : i+4]
		a, b, c, d := float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for _, v := range x[n:] {
		f := float64(v)
		s0 += f * f
	}
	return (s0 + s1) + (s2 + s3)
}
