package gemm

// AMX: SgemmBF16 on Intel's Advanced Matrix Extensions (docs/precision.md).
// TDPBF16PS multiplies a 16×16-pair tile of A by a 16×16-pair tile of B
// into a 16×16 float32 tile, 8192 bf16 multiply-adds in one instruction.
// Where the CPU has AMX-BF16 and the OS grants the tile state, SgemmBF16
// runs every product on these kernels; otherwise on kernelBF16.

const (
	amxMR = 32 // rows of C per block: two 16-row tiles
	amxNR = 32 // columns of C per strip: two 16-column tiles
	amxKP = 16 // pairs of k per tile step
)

// amxFunc is an AMX kernel: see amxBF16r1c1 (kernel_bf16_amd64.s).
type amxFunc func(cfg *byte, chunks int, a *uint32, lda int, b *uint32, strips int, t *float32, c *float32, ldc int, alpha, beta float32, mode, mv int, m1, m2 uint64)

// amxConfig is the tile configuration the kernels load: palette 1, all
// eight tiles 16 rows of 64 bytes (TMM0…3 the sums, 4 and 5 A, 6 and 7 B).
var amxConfig = func() (cfg [64]byte) {
	cfg[0] = 1
	for t := range 8 {
		cfg[16+2*t] = 64
		cfg[48+t] = 16
	}
	return cfg
}()

// amxGrid is the AMX kernels by row tiles and column tiles: [r][c]
// computes 16·r rows by 16·c columns per strip (r, c in 1, 2).
type amxGrid [3][3]amxFunc

// amxSet is the AMX kernels storing the product as is (plain) or
// transposed into C (trans).
type amxSet struct{ plain, trans amxGrid }

// amxProduct is bf16Product on the AMX kernels ks. An AMX tile step needs
// op(A) as rows of pair words and op(B) as pairs of rows; each packer reads
// its operand in place order when it is stored that way, and otherwise
// transposes 16×16 blocks of words in registers, which reads 16 rows at a
// time and costs more on long rows. When computing Cᵀ = op(B)ᵀ·op(A)ᵀ and
// storing it transposed costs less (amxSwap), that is what runs: the
// per-sample weight gradients dZ·Uᵀ then stream the rows of the im2col
// matrix U instead of transposing them.
func amxProduct(ks *amxSet, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, workers int) {
	if amxSwap(transA, transB, m, n, k) && ldc < 1<<25 {
		amxRun(&ks.trans, true, !transB, !transA, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc, workers)
		return
	}
	amxRun(&ks.plain, false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workers)
}

// amxSwap reports whether computing Cᵀ costs less, in rough units of one
// element converted in place order: A stored transposed (pairs of rows,
// then a transpose in registers) 2, B stored transposed (16 rows at once
// through the transpose) 3, and an element of C stored transposed (gathers
// and scatters) 8.
func amxSwap(transA, transB bool, m, n, k int) bool {
	w := func(slow bool, cost int) int {
		if slow {
			return cost
		}
		return 1
	}
	plain := m*k*w(transA, 2) + k*n*w(transB, 3)
	swapped := n*k*w(!transB, 2) + m*k*w(!transA, 3) + 8*m*n
	return swapped < plain
}

// amxRun computes C = alpha·op(A)·op(B) + beta·C, or with cT stores the
// product op(A)·op(B) transposed (C is then its n×m transpose, row stride
// ldc): op(B) is packed once in strips of amxNR columns, k padded with
// zeros to a multiple of amxKP pairs, then each block of amxMR rows of
// op(A) is packed (rows of pair words) and run against every strip, the
// blocks shared among workers as in bf16Product. Every element of C is the
// same sequence of TDPBF16PS steps over k from zero, whatever the shape of
// the product, the orientation, the block, strip and tile position it
// falls in and the workers.
func amxRun(kerns *amxGrid, cT bool, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, workers int) {
	kp := (k + 1) / 2
	kpad := roundUp(kp, amxKP)
	// Packed A's row stride in words: kpad, plus a cache line when rows
	// 256 bytes apart or a multiple of it would crowd a few L1 sets (a
	// tile load reads 16 rows).
	lda4 := kpad
	if kpad%64 == 0 {
		lda4 += 16
	}
	nStrips := ceilDiv(n, amxNR)
	ar0 := getBF16Arena()
	defer putBF16Arena(ar0)
	ar0.b = grow(ar0.b, nStrips*kpad*amxNR)
	for s := range nStrips {
		dst := ar0.b[s*kpad*amxNR : (s+1)*kpad*amxNR]
		packBF16B(true, dst[:kp*amxNR], b, ldb, transB, k, s*amxNR, min(amxNR, n-s*amxNR))
		clear(dst[kp*amxNR:])
	}
	j := amxJob{kerns: kerns, cT: cT, transA: transA, m: m, k: k, alpha: alpha, beta: beta, a: a, lda: lda, c: c, ldc: ldc,
		bp: ar0.b, kpad: kpad, lda4: lda4, whole: n / amxNR, lastNV: n % amxNR}
	if beta != 0 {
		j.mode = 1
	}
	blocks := ceilDiv(m, amxMR)
	if workers <= 0 {
		workers = 1
		if m*n*k >= parallelWork {
			workers = numWorkers()
		}
	}
	if workers = min(workers, blocks); workers <= 1 {
		// Serially j stays on the stack: per-sample products allocate
		// nothing.
		for blk := range blocks {
			j.block(ar0, blk)
		}
		return
	}
	jp := new(amxJob) // shared with the workers: on the heap
	*jp = j
	runBlocks(ar0, blocks, workers, jp.block)
}

// amxJob is one amxRun after op(B) is packed (bp).
type amxJob struct {
	kerns         *amxGrid
	cT            bool // store the product transposed
	transA        bool
	m, k          int
	alpha, beta   float32
	a, c          []float32
	lda, ldc      int
	bp            []uint32
	kpad, lda4    int
	whole, lastNV int // whole strips of B, columns in the last partial one
	mode          int
}

// block packs rows [32·blk, 32·blk+32) of op(A) and computes those rows of
// C against every strip: the whole strips, then the last one under column
// masks.
func (j *amxJob) block(ar *bf16Arena, blk int) {
	i0 := blk * amxMR
	mv := min(amxMR, j.m-i0)
	rt := ceilDiv(mv, 16)
	ar.a = grow(ar.a, rt*16*j.lda4)
	packAMXA(true, ar.a, j.lda4, j.a, j.lda, j.transA, j.k, i0, mv, &ar.tmp)
	chunks := j.kpad / amxKP
	if j.whole > 0 {
		mode := j.mode
		if mode == 0 && j.alpha == 1 && mv == 16*rt && !j.cT {
			mode = 2 // whole tiles, 1·sum: stored straight from the tiles
		}
		j.kerns[rt][2](&amxConfig[0], chunks, &ar.a[0], 4*j.lda4, &j.bp[0], j.whole, &ar.at[0], j.at(i0, 0), j.ldc, j.alpha, j.beta, mode, mv, 0xffff, 0xffff)
	}
	if nv := j.lastNV; nv > 0 {
		// A last strip of at most 16 columns needs one column tile.
		j.kerns[rt][ceilDiv(nv, 16)](&amxConfig[0], chunks, &ar.a[0], 4*j.lda4, &j.bp[j.whole*j.kpad*amxNR], 1, &ar.at[0], j.at(i0, j.whole*amxNR), j.ldc, j.alpha, j.beta, j.mode, mv,
			lowBits(min(nv, 16)), lowBits(max(nv-16, 0)))
	}
}

// at is where element (i, j) of the product goes in C.
func (j *amxJob) at(r, col int) *float32 {
	if j.cT {
		return &j.c[col*j.ldc+r]
	}
	return &j.c[r*j.ldc+col]
}

// packAMXA writes rows [i0, i0+mv) of op(A) (m×k) into dst as rows of
// pair words ld apart (element 2q of the row in word q's low half, 2q+1 in
// its high half), the layout of an AMX A tile; ld is at least (k+1)/2
// rounded up to amxKP, and words past k and rows from mv up to the next
// multiple of 16 are zero. vec selects the vector packers (the same words,
// but subnormal inputs become 0, as the hardware reads them anyway): rows
// converted in place order, or for A stored transposed packAMXATrans; tmp
// is its scratch.
func packAMXA(vec bool, dst []uint32, ld int, a []float32, lda int, trans bool, k, i0, mv int, tmp *[]uint32) {
	rows := roundUp(mv, 16)
	dst = dst[:rows*ld]
	kp := (k + 1) / 2
	if !trans && vec {
		// Each row's words are written whole: clear only the padding.
		for r := range mv {
			packRowVec(dst[r*ld:r*ld+kp], a[(i0+r)*lda:(i0+r)*lda+k], k)
			clear(dst[r*ld+kp : (r+1)*ld])
		}
		clear(dst[mv*ld:])
		return
	}
	if vec {
		packAMXATrans(dst, ld, a, lda, k, i0, mv, tmp)
		return
	}
	clear(dst)
	switch {
	case !trans:
		for r := range mv {
			d := dst[r*ld : r*ld+kp]
			for p, v := range a[(i0+r)*lda : (i0+r)*lda+k] {
				d[p/2] |= toBF16(v) << (16 * (p & 1))
			}
		}
	default:
		for p := range k {
			sh := 16 * (p & 1)
			for r, v := range a[p*lda+i0 : p*lda+i0+mv] {
				dst[r*ld+p/2] |= toBF16(v) << sh
			}
		}
	}
}
