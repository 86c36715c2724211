//go:build amd64 && !purego

package mask

import "golang.org/x/sys/cpu"

//go:noescape
func addClampedMaskedAVX2(dst, src *float32, words *uint64, nw int, s, c, negc float32)

// addClampedMaskedWords is AddClampedMaskedRange over whole mask words
// (dst, src: 64·len(words) coordinates), or nil without AVX2. An unmasked
// coordinate adds +0, which leaves any sum but −0 unchanged, and a sum
// that starts at +0 never becomes −0 (x + (−x) and +0 + (−0) are +0), so
// the result is the sparse loop's bit for bit; it runs several times
// faster at q2 = ½.
var addClampedMaskedWords = func() func(dst, src []float32, words []uint64, s, c float32) {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	return func(dst, src []float32, words []uint64, s, c float32) {
		if len(words) == 0 {
			return
		}
		_, _ = dst[64*len(words)-1], src[64*len(words)-1]
		addClampedMaskedAVX2(&dst[0], &src[0], &words[0], len(words), s, c, -c)
	}
}()
