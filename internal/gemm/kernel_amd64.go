//go:build amd64 && !purego

package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:generate go run gen_amd64.go

//go:noescape
func kernelAVX2(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

// kernelAVX2r1 … kernelAVX2r5 are kernelAVX2 for 1 … 5 rows of A and C.
//
//go:noescape
func kernelAVX2r1(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func kernelAVX2r2(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func kernelAVX2r3(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func kernelAVX2r4(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func kernelAVX2r5(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func kernelAVX512(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func dotAVX512(k int, a0, a1, a2, a3, b0, b1, b2, b3 *float32, tail uint64, out *float32)

func dot4x4AVX512(k int, a, b *[4]*float32, out *[16]float32) {
	dotAVX512(k, a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], 1<<(k%16)-1, &out[0])
}

//go:noescape
func dotAVX2(k int, a0, a1, a2, b0, b1, b2, b3 *float32, out *float32, ldo int, alpha, beta float32, mode int)

// dot3x4AVX2 runs dotAVX2 on k rounded down to 8 and adds the last k%8
// products here.
func dot3x4AVX2(k int, a, b *[4]*float32, out *[16]float32) {
	k8 := k &^ 7
	dotAVX2(k8, a[0], a[1], a[2], b[0], b[1], b[2], b[3], &out[0], 4, 1, 0, 0)
	if k8 == k {
		return
	}
	for i := range 3 {
		ai := unsafe.Slice(a[i], k)[k8:]
		for j := range 4 {
			bj := unsafe.Slice(b[j], k)[k8 : len(ai)+k8]
			s := out[4*i+j]
			for p, v := range ai {
				s += v * bj[p]
			}
			out[4*i+j] = s
		}
	}
}

var (
	// dot512Kernel and dot2Kernel serve only C = A·Bᵀ with A not
	// transposed, where both operands are contiguous along k and need no
	// packing (see dotTile).
	dot512Kernel = &kernel{name: "avx512-dot4x4", mr: 4, nr: 4, mc: 64, nc: 128, dot: dot4x4AVX512}
	dot2Kernel   = &kernel{name: "avx2-dot3x4", mr: 3, nr: 4, mc: 63, nc: 128, dot: dot3x4AVX2, dotC: dotAVX2}

	avx2Kernel = &kernel{name: "avx2-6x16", mr: 6, nr: 16, kc: 256, mc: 192, nc: 512, fn: kernelAVX2,
		rowsFn: []kernelFunc{1: kernelAVX2r1, 2: kernelAVX2r2, 3: kernelAVX2r3, 4: kernelAVX2r4, 5: kernelAVX2r5}}
	// rate 2: BenchmarkSgemm serial, GFLOP per CPU-second against the
	// 6×16 kernel's, 2.8× on 1024³, 2.2× on ResNet's 16×1024×144 even
	// with its 12-row tiles a third padding, 1.2× on the MNIST CNN's
	// 16×169×64 (2026-11-25).
	avx512Kernel = &kernel{name: "avx512-12x32", mr: 12, nr: 32, kc: 256, mc: 192, nc: 512, fn: kernelAVX512, rate: 2}

	// dotKernel is the dot kernel Sgemm uses, nil if the CPU has none.
	dotKernel = func() *kernel {
		for _, k := range kernels() {
			if k.dot != nil {
				return k
			}
		}
		return nil
	}()
)

// kernels lists the kernels this CPU can run: the dot kernels fastest first,
// then the packed kernels fastest first; the portable kernel is always last.
// x/sys/cpu reports AVX-512 and AVX only when the OS also saves their
// register state.
func kernels() []*kernel {
	var ks []*kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, dot512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, dot2Kernel)
	}
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, goKernel)
}

//go:generate go run gen_bf16_amd64.go

//go:noescape
func kernelBF16(kp int, a, b *uint32, c *float32, ldc int, alpha, beta float32, mode int)

//go:noescape
func packRowsBF16(dst *uint32, src *float32, ld, kp, odd int, lm1, lm2, sm1, sm2 uint64, nrBytes int, idx *[32]uint16)

//go:noescape
func packAdjBF16(dst *uint32, src *float32, ld, rows, chunks int, tm1, tm2, ts uint64, nrBytes int, off *[16]int32)

// bf16Kernel is SgemmBF16's AVX-512 BF16 kernel, nil if the CPU lacks it
// (its packing needs AVX512BW's VPERMW too, which every such CPU has).
var bf16Kernel = func() bf16Func {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512BF16 {
		return kernelBF16
	}
	return nil
}()

//go:noescape
func amxBF16r1c1(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func amxBF16r2c1(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func amxBF16r1c2(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func amxBF16r2c2(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func amxBF16r1c1T(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func amxBF16r2c1T(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func amxBF16r1c2T(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func amxBF16r2c2T(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

//go:noescape
func cvtRowBF16(dst *uint32, src *float32, chunks int, tm1, tm2, ts uint64)

// amxKernels are SgemmBF16's AMX kernels, nil unless the CPU has AMX-BF16
// beside AVX-512 BF16 (whose packing they share) and the OS grants this
// process the tile state (requestAMX).
var amxKernels = func() (k amxSet) {
	if bf16Kernel != nil && cpu.X86.HasAMXTile && cpu.X86.HasAMXBF16 && requestAMX() {
		k.plain = amxGrid{1: {1: amxBF16r1c1, 2: amxBF16r1c2}, 2: {1: amxBF16r2c1, 2: amxBF16r2c2}}
		k.trans = amxGrid{1: {1: amxBF16r1c1T, 2: amxBF16r1c2T}, 2: {1: amxBF16r2c1T, 2: amxBF16r2c2T}}
	}
	return k
}()

// bf16AsmPack is whether packBF16's vector forms run here.
var bf16AsmPack = bf16Kernel != nil

// pairIdx interleaves two rows' 16 words each (VPERMW): word 2t from the
// first row's t, word 2t+1 from the second's.
var pairIdx = func() (x [32]uint16) {
	for t := range 16 {
		x[2*t], x[2*t+1] = uint16(t), uint16(16+t)
	}
	return x
}()

// pairOff[nr] are the byte offsets of 16 consecutive pairs' words in a
// packed strip nr words wide.
var pairOff = func() (o [bf16NR + 1][16]int32) {
	for _, nr := range []int{bf16MR, bf16NR} {
		for t := range 16 {
			o[nr][t] = int32(4 * nr * t)
		}
	}
	return o
}()

// packRowsVec is packBF16Rows with VCVTNE2PS2BF16: see packRowsBF16.
func packRowsVec(dst []uint32, src []float32, ld, k, c0, nv, nr int) {
	kp := (k + 1) / 2
	_ = dst[kp*nr-1]
	packRowsBF16(&dst[0], &src[c0], ld, kp, k&1, lowBits(min(nv, 16)), lowBits(max(nv-16, 0)),
		lowBits(min(nr, 16)), lowBits(max(nr-16, 0)), 4*nr, &pairIdx)
}

//go:noescape
func packAdjT16(dst *uint32, src *float32, ld, rows, chunks, nrBytes int, tm1, tm2 uint64, tail int)

//go:noescape
func transposeWords16(dst *uint32, dstBytes int, src *uint32, srcBytes int)

// packAMXATrans is packAMXA's vector form for A stored transposed: pairs
// of rows of the stored A as packed for B (packRowsVec, 32 words a pair),
// then 16×16 blocks of words transposed in registers into rows of dst
// (row stride ld words). tmp is scratch.
func packAMXATrans(dst []uint32, ld int, a []float32, lda, k, i0, mv int, tmp *[]uint32) {
	kp := (k + 1) / 2
	kpad := roundUp(kp, amxKP)
	*tmp = grow(*tmp, kpad*amxMR)
	t := *tmp
	packRowsVec(t[:kp*amxMR], a, lda, k, i0, mv, amxMR)
	clear(t[kp*amxMR:])
	rows := roundUp(mv, 16)
	_ = dst[(rows-1)*ld+kpad-1]
	for c := 0; c < rows; c += 16 {
		for q := 0; q < kpad; q += 16 {
			transposeWords16(&dst[c*ld+q], 4*ld, &t[q*amxMR+c], 4*amxMR)
		}
	}
	if ld > kpad {
		for r := range rows {
			clear(dst[r*ld+kpad : (r+1)*ld])
		}
	}
}

// packAdjVec is packBF16Adj with VCVTNE2PS2BF16: see packAdjBF16. In
// strips at least 16 words wide, groups of up to 16 rows go through
// packAdjT16's transpose in registers, about ten times faster than
// packAdjBF16's scatter per row.
func packAdjVec(dst []uint32, src []float32, ld, k, r0, nv, nr int) {
	kp := (k + 1) / 2
	dst = dst[:kp*nr]
	clear(dst)
	chunks, rem := k/32, k%32
	tm1, tm2 := lowBits(min(rem, 16)), lowBits(max(rem-16, 0))
	if nr < 16 {
		packAdjBF16(&dst[0], &src[r0*ld], ld, nv, chunks, tm1, tm2, lowBits((rem+1)/2), 4*nr, &pairOff[nr])
		return
	}
	for g := 0; g < nv; g += 16 {
		rows := min(16, nv-g)
		_ = src[(r0+g+rows-1)*ld+k-1]
		packAdjT16(&dst[g], &src[(r0+g)*ld], ld, rows, chunks, 4*nr, tm1, tm2, (rem+1)/2)
	}
}

// packRowVec writes the k floats of src as (k+1)/2 pair words into dst,
// element 2q in word q's low half: one row of packAMXA's layout.
func packRowVec(dst []uint32, src []float32, k int) {
	_ = dst[(k+1)/2-1]
	_ = src[k-1]
	rem := k % 32
	cvtRowBF16(&dst[0], &src[0], k/32, lowBits(min(rem, 16)), lowBits(max(rem-16, 0)), lowBits((rem+1)/2))
}
