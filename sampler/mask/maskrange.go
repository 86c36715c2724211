package mask

import "math/bits"

// AddClampedMaskedRange adds clamp(float32(s·v[t]), −c, c) to acc[off+t]
// for the coordinates off+t (t < len(v)) in the mask: AddClampedMaskedTo
// restricted to the slice [off, off+len(v)) of a gradient held in pieces,
// with the same rounding, so a sum built range by range equals
// AddClampedMaskedTo's bit for bit. With AVX2, whole mask words go
// through a vector kernel (a branch-free scalar pass measured twice as
// slow as the sparse loop at q2 = ½).
func (m *Mask) AddClampedMaskedRange(acc []float32, off int, v []float32, s, c float32) {
	n := len(v)
	if off < 0 || off+n > m.n || len(acc) != m.n {
		panic("mask: Mask.AddClampedMaskedRange range outside the mask")
	}
	t0 := 0
	if f := addClampedMaskedWords; f != nil {
		// The head up to a word boundary sparsely, whole words in the
		// vector kernel, the tail sparsely.
		head := min(n, (64-off&63)&63)
		m.addClampedSparse(acc, off, v[:head], s, c)
		t0 = head
		if nw := (n - head) / 64; nw > 0 {
			i := off + head
			f(acc[i:i+64*nw], v[head:head+64*nw], m.words[i>>6:i>>6+nw], s, c)
			t0 += 64 * nw
		}
	}
	m.addClampedSparse(acc, off+t0, v[t0:], s, c)
}

// addClampedSparse is AddClampedMaskedRange one set bit at a time.
func (m *Mask) addClampedSparse(acc []float32, off int, v []float32, s, c float32) {
	n := len(v)
	for t0 := 0; t0 < n; {
		i := off + t0
		wi, bit := i>>6, uint(i&63)
		w := m.words[wi] >> bit // bits of coordinates i, i+1, … in this word
		span := min(64-int(bit), n-t0)
		if span < 64 {
			w &= 1<<uint(span) - 1
		}
		dst, src := acc[i:i+span], v[t0:t0+span]
		for w != 0 {
			t := bits.TrailingZeros64(w)
			dst[t] += min(max(float32(s*src[t]), -c), c)
			w &= w - 1
		}
		t0 += span
	}
}
