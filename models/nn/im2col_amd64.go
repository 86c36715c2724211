//go:build amd64 && !purego

package nn

//go:noescape
func gatherS2AVX512(u, x *float32, k, rows, ld, ow, wp int, m0, m1, mo uint64)

//go:noescape
func scatterAddS2AVX512(acc, du *float32, k, rows, ld, ow, wp int, m0, m1, ev uint64)

// s2Masks are the lane masks of the stride-2 kernels for rows of ow
// outputs: the 2·ow−1 inputs' low and high 16 lanes, and the outputs.
func s2Masks(ow int) (m0, m1, mo uint64) {
	in := 2*ow - 1
	return 1<<min(in, 16) - 1, 1<<max(in-16, 0) - 1, 1<<ow - 1
}

// s2Gather reports whether gatherS2 runs on rows of ow outputs: AVX-512
// and 1 ≤ ow ≤ 16.
func s2Gather(ow int) bool { return vecLevel >= vecAVX512 && ow >= 1 && ow <= 16 }

// s2Scatter reports whether scatterAddS2 runs on rows of ow outputs with
// k×k kernels: as s2Gather, and one (kh, oh) segment of 2·ow−1+k−1
// entries fits two vectors.
func s2Scatter(ow, k int) bool { return s2Gather(ow) && 2*ow+k-2 <= 32 }

// gatherS2 writes the K² stride-2 taps of one channel: tap t = kh·K+kw
// sets u[t·ld + oh·ow + j] = x[kh·wp + kw + oh·2wp + 2j] for oh < rows and
// j < ow, x being the channel's (padded) plane of row length wp. Only when
// s2Gather(ow).
func gatherS2(u, x []float32, k, rows, ld, ow, wp int) {
	_ = u[(k*k-1)*ld+rows*ow-1]
	_ = x[(k-1)*(wp+1)+(rows-1)*2*wp+2*ow-2]
	m0, m1, mo := s2Masks(ow)
	gatherS2AVX512(&u[0], &x[0], k, rows, ld, ow, wp, m0, m1, mo)
}

// scatterAddS2 is gatherS2's transpose: acc[kh·wp + kw + oh·2wp + 2j] +=
// du[t·ld + oh·ow + j], each entry's terms in tap order. Only when
// s2Scatter(ow, k).
func scatterAddS2(acc, du []float32, k, rows, ld, ow, wp int) {
	_ = du[(k*k-1)*ld+(rows-1)*ow+ow-1]
	_ = acc[(k-1)*wp+(rows-1)*2*wp+2*ow+k-3]
	seg := 2*ow - 1 + k - 1 // entries of one (kh, oh) segment
	m0, m1 := uint64(1)<<min(seg, 16)-1, uint64(1)<<max(seg-16, 0)-1
	ev := uint64(0x55555555) & (1<<(2*ow-1) - 1)
	scatterAddS2AVX512(&acc[0], &du[0], k, rows, ld, ow, wp, m0, m1, ev)
}
