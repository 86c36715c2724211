package gemm

import (
	"sync"
	"unsafe"
)

// kernel is a micro-kernel and the cache blocking that suits it.
type kernel struct {
	name   string
	mr, nr int // register tile: C[0:mr, 0:nr] += Ap·Bp
	// kc is the depth of a packed panel; an mr×kc strip of A and a kc×nr strip
	// of B are what one kernel call reads. mc and nc bound a tile of C: the
	// packed mc×kc block of A and kc×nc block of B together stay in L2.
	kc, mc, nc int
	// rate is the kernel's multiply-add throughput relative to the AVX2
	// kernel's on the same padded work (0 counts as 1): plan weighs padding
	// by it, so a faster kernel wins shapes it pads more.
	rate float64
	// fn computes the product of an mr×k strip of A and a k×nr strip of B
	// into the row-major mr×nr block at c (row stride ldc): mode 0 stores
	// it without reading C, mode 1 adds it to C, mode 2 adds it to beta·C.
	// Step p of the sum reads mr contiguous floats of A at a+p·sa and nr of
	// B at b+p·sb: packed strips have sa = mr and sb = nr, operands read in
	// place their row stride.
	fn kernelFunc
	// rowsFn[r], where set, is fn for the first r < mr rows only: tile
	// runs the last rows of C with it instead of padding them to mr. Each
	// element's sum is the same as fn's.
	rowsFn []kernelFunc
	// dot, set instead of fn in a dot kernel, sets out[4i+j] to the dot
	// product of the k-vectors a[i] and b[j] for i < mr ≤ 4, j < nr ≤ 4. It
	// computes C = A·Bᵀ straight from the rows of A and B, without packing.
	dot func(k int, a, b *[4]*float32, out *[16]float32)
	// dotC, if set, is dot's 3×4 kernel over k rounded down to 8, storing
	// alpha·sum (mode 0) or alpha·sum + beta·C (mode 1) straight into C
	// (row i at c+i·ldc), each product rounded before the add as dotEdge
	// computes it in Go. dotTile calls it for whole tiles, skipping dot's
	// scratch tile and its store loop in Go.
	dotC func(k int, a0, a1, a2, b0, b1, b2, b3 *float32, c *float32, ldc int, alpha, beta float32, mode int)

	arenas arenaList // free arenas sized for this kernel
}

// kernelFunc is a packed micro-kernel: see kernel.fn.
type kernelFunc func(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

// arenaList holds a kernel's free arenas. Unlike a sync.Pool it keeps them
// across garbage collections and shares them between Ps (a sync.Pool's
// per-P private slot cannot be taken by a goroutine that moved to another
// P), so steady-state calls allocate nothing: a DP step used to re-allocate
// a 720 KB packing arena about once per step. It never holds more arenas
// than products of this kernel have run at once.
type arenaList struct {
	mu   sync.Mutex
	free []*arena
}

// goKernel is the portable kernel: a 4×4 register tile in plain Go, used
// where no assembly kernel applies.
var goKernel = &kernel{name: "go4x4", mr: 4, nr: 4, kc: 256, mc: 128, nc: 512, fn: kernelGo}

func kernelGo(k int, ap *float32, sa int, bp *float32, sb int, cp *float32, ldc int, mode int, beta float32) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	var c20, c21, c22, c23, c30, c31, c32, c33 float32
	if k > 0 {
		a := unsafe.Slice(ap, (k-1)*sa+4)
		b := unsafe.Slice(bp, (k-1)*sb+4)
		for p := 0; p < k; p++ {
			as := a[p*sa : p*sa+4 : p*sa+4]
			bs := b[p*sb : p*sb+4 : p*sb+4]
			b0, b1, b2, b3 := bs[0], bs[1], bs[2], bs[3]
			a0 := as[0]
			c00 += a0 * b0
			c01 += a0 * b1
			c02 += a0 * b2
			c03 += a0 * b3
			a1 := as[1]
			c10 += a1 * b0
			c11 += a1 * b1
			c12 += a1 * b2
			c13 += a1 * b3
			a2 := as[2]
			c20 += a2 * b0
			c21 += a2 * b1
			c22 += a2 * b2
			c23 += a2 * b3
			a3 := as[3]
			c30 += a3 * b0
			c31 += a3 * b1
			c32 += a3 * b2
			c33 += a3 * b3
		}
	}
	c := unsafe.Slice(cp, 3*ldc+4)
	storeRow(c[0:4:4], c00, c01, c02, c03, mode, beta)
	storeRow(c[ldc:ldc+4:ldc+4], c10, c11, c12, c13, mode, beta)
	storeRow(c[2*ldc:2*ldc+4:2*ldc+4], c20, c21, c22, c23, mode, beta)
	storeRow(c[3*ldc:3*ldc+4:3*ldc+4], c30, c31, c32, c33, mode, beta)
}

func storeRow(r []float32, v0, v1, v2, v3 float32, mode int, beta float32) {
	switch mode {
	case 0:
		r[0], r[1], r[2], r[3] = v0, v1, v2, v3
	case 1:
		r[0], r[1], r[2], r[3] = r[0]+v0, r[1]+v1, r[2]+v2, r[3]+v3
	default:
		r[0], r[1], r[2], r[3] = beta*r[0]+v0, beta*r[1]+v1, beta*r[2]+v2, beta*r[3]+v3
	}
}

// fastKernels are the kernels Sgemm chooses from: the assembly ones this CPU
// supports, or else the portable one.
var fastKernels = func() []*kernel {
	var ks []*kernel
	for _, k := range kernels() {
		if k.dot == nil && k != goKernel {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		ks = append(ks, goKernel)
	}
	return ks
}()

// KernelName names the micro-kernels Sgemm chooses from on this machine,
// e.g. "avx512-dot4x4+avx512-12x32+avx2-6x16", or "go4x4" where there is no
// assembly kernel, for benchmark and report output.
func KernelName() string {
	ks := fastKernels
	if dotKernel != nil {
		ks = append([]*kernel{dotKernel}, ks...)
	}
	var s string
	for i, k := range ks {
		if i > 0 {
			s += "+"
		}
		s += k.name
	}
	return s
}
