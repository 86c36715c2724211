package gemm

import (
	"math"
	"sync"
	"unsafe"
)

// SgemmBF16 computes C = alpha·op(A)·op(B) + beta·C as Sgemm does, but with
// every element of A and B first rounded to bfloat16 (8 significant bits,
// to nearest, ties to even) and the products accumulated in float32: the
// arithmetic of the AVX-512 BF16 instruction VDPBF16PS. Element (i, j) of C
// is a sum over k in order, two products at a time (k = 2q+1, then 2q, as
// VDPBF16PS adds them), then alpha·sum + beta·C, each step rounded to
// float32. It depends only on row i of op(A), column j of op(B) and k, not
// on the shape of the product or how it is split, so a row computed alone
// equals the same row computed in a batch, bit for bit.
//
// Against the exact product of the float32 inputs, each element is off by
// at most (2u + u² + k·2⁻²⁴(1+u)²)·|alpha|·Σ_p |a_ip|·|b_pj| plus the
// float32 roundings of the final alpha·sum + beta·C, with u = 2⁻⁸ (see
// docs/precision.md). With the hardware (HasBF16) the AVX-512 BF16 kernel
// runs, which also treats subnormal inputs and results as zero; elsewhere a
// portable Go kernel computes the same sums without that flush, much more
// slowly. Where the CPU also has AMX-BF16 (and Linux grants the tile
// state), every product runs on AMX tiles instead: the same rounded
// operands and the same bound, but the tiles add each step's products
// with their own internal rounding, so the sums are not bit for bit the
// VDPBF16PS order's; they still depend only on row i, column j and k.
// Panics and BLAS conventions are Sgemm's.
func SgemmBF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkMatrix("A", transA, m, k, a, lda)
	checkMatrix("B", transB, k, n, b, ldb)
	checkMatrix("C", false, m, n, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleBlock(c, ldc, 0, m, 0, n, beta)
		return
	}
	if amxKernels.plain[1][1] != nil {
		amxProduct(&amxKernels, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0)
		return
	}
	if bf16Kernel != nil {
		bf16Product(bf16Kernel, bf16AsmPack, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0)
		return
	}
	bf16Product(kernelBF16Go, false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0)
}

// HasBF16 reports whether SgemmBF16 runs on the AVX-512 BF16 kernel here:
// the CPU has the instructions (avx512_bf16 in Linux's /proc/cpuinfo), the
// OS saves the AVX-512 registers, and the build is amd64 without the purego
// tag.
func HasBF16() bool { return bf16Kernel != nil }

// BF16KernelName names the kernel SgemmBF16 runs here, for benchmark and
// report output: "amx-bf16-32x32" (AMX tiles), "avx512bf16-12x32"
// (VDPBF16PS) or "go" (the portable kernel).
func BF16KernelName() string {
	switch {
	case amxKernels.plain[1][1] != nil:
		return "amx-bf16-32x32"
	case bf16Kernel != nil:
		return "avx512bf16-12x32"
	}
	return "go"
}

// bf16Func is a bf16 micro-kernel: see kernelBF16 (kernel_bf16_amd64.s).
// kp pairs of k; ap holds kp×bf16MR and bp kp×bf16NR packed pairs.
type bf16Func func(kp int, ap, bp *uint32, c *float32, ldc int, alpha, beta float32, mode int)

const (
	bf16MR, bf16NR = 12, 32 // the register tile
	// bf16MC rows of packed A (eight strips: 24 KiB per 256 pairs of k)
	// make a block one worker computes against all of packed B.
	bf16MC = 8 * bf16MR
)

// toBF16 rounds f to the nearest bfloat16, ties to even, as the upper half
// of a float32; a NaN stays a (quiet) NaN, and values beyond bfloat16's
// largest finite one round to ±Inf.
func toBF16(f float32) uint32 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return b>>16 | 0x40
	}
	return (b + 0x7fff + (b>>16)&1) >> 16
}

// lowBits is a mask of the n low bits.
func lowBits(n int) uint64 { return 1<<uint(n) - 1 }

// fromBF16 is the float32 whose upper half is h.
func fromBF16(h uint32) float32 { return math.Float32frombits(h << 16) }

// bf16Arena holds one product's packed operands; arenas are reused through
// bf16Arenas so steady-state calls allocate nothing.
type bf16Arena struct {
	a []uint32 // one block of op(A): bf16MC rows × kp pairs
	b []uint32 // all of op(B): ⌈n/NR⌉ strips × kp pairs × NR
	t [bf16MR * bf16NR]float32

	at  [amxMR * amxNR]float32 // the AMX kernels' scratch tile
	tmp []uint32               // transposed A on its way to the AMX layout
}

var bf16Arenas struct {
	mu   sync.Mutex
	free []*bf16Arena
}

func getBF16Arena() *bf16Arena {
	bf16Arenas.mu.Lock()
	defer bf16Arenas.mu.Unlock()
	if n := len(bf16Arenas.free); n > 0 {
		ar := bf16Arenas.free[n-1]
		bf16Arenas.free = bf16Arenas.free[:n-1]
		return ar
	}
	return new(bf16Arena)
}

func putBF16Arena(ar *bf16Arena) {
	bf16Arenas.mu.Lock()
	bf16Arenas.free = append(bf16Arenas.free, ar)
	bf16Arenas.mu.Unlock()
}

func grow(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	return s[:n]
}

// bf16Product packs all of op(B) once (with the vector packers if vec) and
// then computes blocks of bf16MC rows of C on workers goroutines (0:
// GOMAXPROCS for products of at least parallelWork multiply-adds, else 1).
// Every element's sum is the same whatever the blocking and the number of
// workers.
func bf16Product(kern bf16Func, vec bool, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, workers int) {
	kp := (k + 1) / 2
	nStrips := ceilDiv(n, bf16NR)
	ar0 := getBF16Arena()
	defer putBF16Arena(ar0)
	ar0.b = grow(ar0.b, nStrips*kp*bf16NR)
	for s := range nStrips {
		packBF16B(vec, ar0.b[s*kp*bf16NR:(s+1)*kp*bf16NR], b, ldb, transB, k, s*bf16NR, min(bf16NR, n-s*bf16NR))
	}
	blocks := ceilDiv(m, bf16MC)
	if workers <= 0 {
		workers = 1
		if m*n*k >= parallelWork {
			workers = numWorkers()
		}
	}
	workers = min(workers, blocks)
	block := func(ar *bf16Arena, blk int) {
		i0 := blk * bf16MC
		i1 := min(m, i0+bf16MC)
		ar.a = grow(ar.a, bf16MC*kp)
		for ir := i0; ir < i1; ir += bf16MR {
			packBF16A(vec, ar.a[(ir-i0)*kp:(ir-i0+bf16MR)*kp], a, lda, transA, k, ir, min(bf16MR, i1-ir))
		}
		for s := range nStrips {
			jr := s * bf16NR
			nv := min(bf16NR, n-jr)
			bp := &ar0.b[s*kp*bf16NR]
			for ir := i0; ir < i1; ir += bf16MR {
				mv := min(bf16MR, i1-ir)
				ap := &ar.a[(ir-i0)*kp]
				if mv == bf16MR && nv == bf16NR {
					mode := 1
					if beta == 0 {
						mode = 0
					}
					kern(kp, ap, bp, &c[ir*ldc+jr], ldc, alpha, beta, mode)
					continue
				}
				// An edge tile: the kernel's sums into the scratch tile,
				// then the same alpha·sum + beta·C the kernel stores (the
				// conversions keep Go from fusing it into one rounding).
				kern(kp, ap, bp, &ar.t[0], bf16NR, 1, 0, 0)
				for i := range mv {
					row := c[(ir+i)*ldc+jr : (ir+i)*ldc+jr+nv]
					t := ar.t[i*bf16NR : i*bf16NR+nv]
					if beta == 0 {
						for j, v := range t {
							row[j] = alpha * v
						}
						continue
					}
					for j, v := range t {
						row[j] = float32(alpha*v) + float32(beta*row[j])
					}
				}
			}
		}
	}
	runBlocks(ar0, blocks, workers, block)
}

// runBlocks runs block(ar, i) for i < blocks on workers goroutines (the
// caller, with ar0, among them), each with its own arena.
func runBlocks(ar0 *bf16Arena, blocks, workers int, block func(ar *bf16Arena, blk int)) {
	if workers <= 1 {
		for blk := range blocks {
			block(ar0, blk)
		}
		return
	}
	var (
		next sync.Mutex
		nb   int
		wg   sync.WaitGroup
	)
	claim := func() int {
		next.Lock()
		defer next.Unlock()
		nb++
		return nb - 1
	}
	work := func(ar *bf16Arena) {
		for blk := claim(); blk < blocks; blk = claim() {
			block(ar, blk)
		}
	}
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ar := getBF16Arena()
			work(ar)
			putBF16Arena(ar)
		}()
	}
	work(ar0)
	wg.Wait()
}

// packBF16A writes rows [i0, i0+mv) of op(A) (m×k) as bf16 pairs into dst:
// for each pair q, bf16MR words, row i's element 2q in the low half and
// 2q+1 in the high half; rows past mv and the element past an odd k are 0.
// vec selects the vector packers (the same words, but subnormal inputs
// become 0 as the hardware kernel reads them anyway).
func packBF16A(vec bool, dst []uint32, a []float32, lda int, trans bool, k, i0, mv int) {
	switch {
	case !trans && vec:
		packAdjVec(dst, a, lda, k, i0, mv, bf16MR)
	case !trans:
		packBF16Adj(dst, a, lda, k, i0, mv, bf16MR)
	case vec:
		packRowsVec(dst, a, lda, k, i0, mv, bf16MR)
	default:
		packBF16Rows(dst, a, lda, k, i0, mv, bf16MR)
	}
}

// packBF16B writes columns [j0, j0+nv) of op(B) (k×n) as bf16 pairs into
// dst: for each pair q, bf16NR words, column j's element 2q low and 2q+1
// high; columns past nv and the element past an odd k are 0.
func packBF16B(vec bool, dst []uint32, b []float32, ldb int, trans bool, k, j0, nv int) {
	switch {
	case trans && vec:
		packAdjVec(dst, b, ldb, k, j0, nv, bf16NR)
	case trans:
		packBF16Adj(dst, b, ldb, k, j0, nv, bf16NR)
	case vec:
		packRowsVec(dst, b, ldb, k, j0, nv, bf16NR)
	default:
		packBF16Rows(dst, b, ldb, k, j0, nv, bf16NR)
	}
}

// packBF16Rows packs a strip whose pairs are consecutive rows of x (row
// stride ld): pair q of strip column c is x[2q][c0+c] and x[2q+1][c0+c],
// for c < nv; the strip is nr words wide, zero past nv.
func packBF16Rows(dst []uint32, x []float32, ld, k, c0, nv, nr int) {
	kp := (k + 1) / 2
	dst = dst[:kp*nr]
	clear(dst)
	for p := range k {
		sh := 16 * (p & 1)
		d := dst[(p/2)*nr : (p/2)*nr+nv]
		for c, v := range x[p*ld+c0 : p*ld+c0+nv] {
			d[c] |= toBF16(v) << sh
		}
	}
}

// packBF16Adj packs a strip whose pairs are adjacent elements of x's rows:
// pair q of strip column c is x[r0+c][2q] and x[r0+c][2q+1], for c < nv;
// the strip is nr words wide, zero past nv.
func packBF16Adj(dst []uint32, x []float32, ld, k, r0, nv, nr int) {
	kp := (k + 1) / 2
	dst = dst[:kp*nr]
	clear(dst)
	for c := range nv {
		for p, v := range x[(r0+c)*ld : (r0+c)*ld+k] {
			dst[(p/2)*nr+c] |= toBF16(v) << (16 * (p & 1))
		}
	}
}

// kernelBF16Go is the portable form of kernelBF16: each product of two
// bfloat16 values is exact in float32 (8 + 8 significant bits), and each
// lane adds its pair's high product, then its low one, rounding each sum.
func kernelBF16Go(kp int, ap, bp *uint32, cp *float32, ldc int, alpha, beta float32, mode int) {
	a := unsafe.Slice(ap, kp*bf16MR)
	b := unsafe.Slice(bp, kp*bf16NR)
	var acc [bf16MR][bf16NR]float32
	for q := range kp {
		aq := a[q*bf16MR : (q+1)*bf16MR]
		bq := b[q*bf16NR : (q+1)*bf16NR]
		for i, x := range aq {
			xh, xl := fromBF16(x>>16), fromBF16(x&0xffff)
			r := &acc[i]
			for j, y := range bq {
				s := r[j] + float32(xh*fromBF16(y>>16))
				r[j] = s + float32(xl*fromBF16(y&0xffff))
			}
		}
	}
	c := unsafe.Slice(cp, (bf16MR-1)*ldc+bf16NR)
	for i := range acc {
		row := c[i*ldc : i*ldc+bf16NR]
		for j, v := range acc[i] {
			if mode == 0 {
				row[j] = alpha * v
			} else {
				row[j] = float32(alpha*v) + float32(beta*row[j])
			}
		}
	}
}
