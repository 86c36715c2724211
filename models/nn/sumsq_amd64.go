//go:build amd64 && !purego

package nn

//go:noescape
func sumSq4AVX512(x *float32, stride, n int, lanes *[16]float64)

// sumSq4 sets out[r] = vec.SumSquares(x[r·stride : r·stride+n]) for
// r < 4, bit for bit, with the vector kernel (false, nothing written,
// below AVX-512).
func sumSq4(x []float32, stride, n int, out *[4]float64) bool {
	if vecLevel < vecAVX512 || n < 4 {
		return false
	}
	_ = x[3*stride+n-1]
	var lanes [16]float64
	m := n &^ 3
	sumSq4AVX512(&x[0], stride, m, &lanes)
	for r := range 4 {
		s := lanes[4*r : 4*r+4 : 4*r+4]
		s0 := s[0]
		for _, v := range x[r*stride+m : r*stride+n] {
			f := float64(v)
			s0 += f * f
		}
		out[r] = (s0 + s[1]) + (s[2] + s[3])
	}
	return true
}
