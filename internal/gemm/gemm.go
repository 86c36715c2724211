package gemm

import (
	"fmt"
	"unsafe"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(X) is X, or Xᵀ when the matching trans flag is set;
// op(A) is m×k, op(B) is k×n and C is m×n. lda, ldb and ldc are the row
// strides of A, B and C as stored (A is k×m when transA). As in BLAS, when
// beta is zero C is not read, so NaNs in it are overwritten, and A and B are
// not read when alpha or k is zero.
//
// Sgemm panics on negative sizes, strides shorter than a row, or slices too
// short for their shape: these are programmer errors. It is safe for
// concurrent use with distinct C.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(nil, 0, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// parallelWork is the m·n·k from which a product is split across workers:
// about 80 µs of one core's work. At 2M multiply-adds, waking a worker and
// the scheduler's spinning cost ~30% more CPU time on this 2-core machine
// for little gain in wall time once other load takes the second core.
const parallelWork = 1 << 22

// sgemm is Sgemm with an explicit kernel (nil: chosen by plan) and worker
// count (0: GOMAXPROCS for products of at least parallelWork, else 1), so
// tests can cover every kernel and the tiled path.
func sgemm(kern *kernel, workers int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
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
	if kern == nil && m*n*k <= tinyWork {
		tinyGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	kern, transC := plan(kern, transA, transB, m, n, k)
	pr := problem{kern: kern, k: k, alpha: alpha, beta: beta, c: c, ldc: ldc, transC: transC}
	if transC {
		// Cᵀ = op(B)ᵀ·op(A)ᵀ, and op(B)ᵀ(i,j) = op(B)(j,i) is B stored
		// with the opposite flag.
		pr.m, pr.n = n, m
		pr.a, pr.lda, pr.transA = b, ldb, !transB
		pr.b, pr.ldb, pr.transB = a, lda, !transA
	} else {
		pr.m, pr.n = m, n
		pr.a, pr.lda, pr.transA = a, lda, transA
		pr.b, pr.ldb, pr.transB = b, ldb, transB
	}
	if workers <= 0 {
		workers = 1
		if m*n*k >= parallelWork {
			workers = numWorkers()
		}
	}
	pr.split(workers)
	if pr.mb*pr.nb == 1 {
		ar := getArena(kern)
		pr.tile(ar, 0, pr.m, 0, pr.n)
		putArena(ar)
		return
	}
	runParallel(&pr, workers)
}

// tinyWork is the m·n·k up to which Sgemm runs tinyGemm: below it the fixed
// cost of planning and fetching packing buffers (~150 ns) exceeds the loop.
const tinyWork = 256

// tinyGemm is the textbook loop, for products too small for the kernels.
func tinyGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	// Strides of op(A) along i and p, and of op(B) along p and j.
	ai, ap, bp, bj := lda, 1, ldb, 1
	if transA {
		ai, ap = 1, lda
	}
	if transB {
		bp, bj = 1, ldb
	}
	for i := range m {
		for j := range n {
			var s float32
			for p := range k {
				s += a[i*ai+p*ap] * b[p*bp+j*bj]
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}

// plan chooses the kernel (kern, or when nil the fastest kernels of this
// CPU) and whether to compute Cᵀ instead of C.
//
// A·Bᵀ with both operands contiguous along k goes to the dot kernel when
// there is one and k is long enough to amortise its final sums across lanes:
// it reads both operands in place, where the packed kernels would have to
// transpose both while packing. A dot kernel asked for any other product is
// ignored.
//
// Otherwise plan picks the packed kernel and orientation that take the
// least time over whole mr×nr tiles, padding included: padded
// multiply-adds divided by the kernel's rate. Thin products gain most:
// n = 10 (a 784→10 layer) fills a third of a 32-wide tile, while Cᵀ has 10
// rows in 12. C = 16 rows (16 filters) pads 12×32 tiles to 24 rows and 6×16
// ones to 18, but the AVX-512 kernel runs twice as fast and still wins (it
// did not when plan counted padding alone: ResNet's 16-filter convolutions
// ran at half speed on the AVX2 kernel). Computing Cᵀ costs a transposed
// write-back of each tile, so it must save a fifth of the work more.
// Otherwise the earlier kernel wins unless another saves a tenth.
func plan(kern *kernel, transA, transB bool, m, n, k int) (*kernel, bool) {
	nt := !transA && transB
	if kern != nil && kern.dot != nil {
		if nt {
			return kern, false
		}
		kern = nil
	}
	if kern == nil && nt && dotKernel != nil && k >= minDotK {
		return dotKernel, false
	}
	cands := fastKernels
	if kern != nil {
		cands = []*kernel{kern}
	}
	var best *kernel
	bestT, bestCost := false, 0.0
	for _, kn := range cands {
		for _, t := range []bool{false, true} {
			cost := float64(padded(kn, m, n)) * 5
			if t {
				cost = float64(padded(kn, n, m)) * 6
			}
			if kn.rate > 0 {
				cost /= kn.rate
			}
			// An alternative must save a tenth of the time.
			if best == nil || cost*10 < bestCost*9 {
				best, bestT, bestCost = kn, t, cost
			}
		}
	}
	return best, bestT
}

// minDotK is the shortest k for which plan prefers the dot kernel.
const minDotK = 64

// padded is the size of the m×n product rounded up to whole kernel tiles.
func padded(kern *kernel, m, n int) int {
	return roundUp(m, kern.mr) * roundUp(n, kern.nr)
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

func checkMatrix(name string, trans bool, rows, cols int, x []float32, ld int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("gemm: negative size of op(%s): %d×%d", name, rows, cols))
	}
	if trans {
		rows, cols = cols, rows
	}
	if ld < max(1, cols) {
		panic(fmt.Sprintf("gemm: stride of %s is %d, less than its %d columns", name, ld, cols))
	}
	if rows > 0 && cols > 0 && len(x) < (rows-1)*ld+cols {
		panic(fmt.Sprintf("gemm: %s has %d elements, a %d×%d matrix with stride %d needs %d", name, len(x), rows, cols, ld, (rows-1)*ld+cols))
	}
}

// problem is one product, possibly transposed so that C' = A'·B' with C'
// being C (or Cᵀ when transC), split into mb×nb tiles of C'.
type problem struct {
	kern           *kernel
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	transA, transB bool
	transC         bool

	mb, nb       int // number of tile rows and columns
	mStep, nStep int // tile size in rows and columns of C'
}

// split chooses the tiling of C': tiles no larger than mc×nc, and at least
// workers tiles while they can be split along whole kernel tiles.
func (pr *problem) split(workers int) {
	kn := pr.kern
	mt, nt := ceilDiv(pr.m, kn.mr), ceilDiv(pr.n, kn.nr) // kernel tiles per side
	mb, nb := ceilDiv(pr.m, kn.mc), ceilDiv(pr.n, kn.nc)
	// Tiles are whole kernel tiles spread evenly, so mb bands of rows may
	// round to fewer; count the bands that actually result.
	bands := func(t, b int) int { return ceilDiv(t, ceilDiv(t, b)) }
	for bands(mt, mb)*bands(nt, nb) < workers && (mb < mt || nb < nt) {
		// Split the side whose tiles are longer relative to their kernel tile.
		if nb >= nt || (mb < mt && ceilDiv(mt, mb)*kn.mr >= ceilDiv(nt, nb)*kn.nr) {
			mb++
		} else {
			nb++
		}
	}
	pr.mStep = ceilDiv(mt, mb) * kn.mr
	pr.nStep = ceilDiv(nt, nb) * kn.nr
	pr.mb, pr.nb = ceilDiv(pr.m, pr.mStep), ceilDiv(pr.n, pr.nStep)
}

func ceilDiv(x, y int) int { return (x + y - 1) / y }

// runTile computes tile t (row-major over the mb×nb grid).
func (pr *problem) runTile(ar *arena, t int) {
	i0, j0 := (t/pr.nb)*pr.mStep, (t%pr.nb)*pr.nStep
	pr.tile(ar, i0, min(i0+pr.mStep, pr.m), j0, min(j0+pr.nStep, pr.n))
}

// Store modes of a kernel call: how the product meets what C holds.
const (
	modeSet  = 0 // C = A·B, C not read (beta = 0: NaN in C must not survive)
	modeAdd  = 1 // C += A·B
	modeBeta = 2 // C = beta·C + A·B
)

// tile computes rows [i0,i1) and columns [j0,j1) of C'.
func (pr *problem) tile(ar *arena, i0, i1, j0, j1 int) {
	kn := pr.kern
	if kn.dot != nil {
		pr.dotTile(ar, i0, i1, j0, j1)
		return
	}
	mr, nr := kn.mr, kn.nr
	// Strips that already lie in memory as the kernel reads them (mr
	// consecutive floats of A per k step when A is stored transposed, nr of B
	// when B is not) are read in place instead of packed; the kernel only
	// needs their stride. A is then read unscaled, so only when alpha is 1.
	// Partial strips at the edges are always packed, with zero padding.
	//
	// A strip reused by many kernel calls is still packed when its kc rows
	// cannot stay in L1 between the calls: rows a multiple of 64 bytes
	// apart fall in a fraction of L1's sets (see criticalStride). Packing
	// paid on 1024³ (+8% in BenchmarkSgemm) but lost a fifth on ResNet's
	// 16×1024×144, whose B strips serve three calls each.
	directA := pr.transA && pr.alpha == 1
	directB := !pr.transB
	reuseA, reuseB := j1-j0 >= minPackReuse*nr, i1-i0 >= minPackReuse*mr
	for p0 := 0; p0 < pr.k; p0 += kn.kc {
		kc := min(kn.kc, pr.k-p0)
		directA := directA && !(reuseA && criticalStride(pr.lda, kc))
		directB := directB && !(reuseB && criticalStride(pr.ldb, kc))
		// beta applies once, with the first block of k.
		mode := modeAdd
		if p0 == 0 {
			switch pr.beta {
			case 0:
				mode = modeSet
			case 1:
			default:
				mode = modeBeta
			}
		}
		for jr := j0; jr < j1; jr += nr {
			if nv := min(nr, j1-jr); !directB || nv < nr {
				packB(ar.b[(jr-j0)*kc:], pr.b, pr.ldb, pr.transB, p0, kc, jr, nv, nr)
			}
		}
		for ir := i0; ir < i1; ir += mr {
			// Edge strips are read in place too when a narrower kernel
			// will run them (it reads only their mv valid rows).
			if mv := min(mr, i1-ir); !directA || mv < mr && mv >= len(kn.rowsFn) {
				packA(ar.a[(ir-i0)*kc:], pr.a, pr.lda, pr.transA, ir, mv, mr, p0, kc, pr.alpha)
			}
		}
		// The kc×nr strip of B stays in L1 while the A block streams from
		// L2 past it.
		for jr := j0; jr < j1; jr += nr {
			nv := min(nr, j1-jr)
			bp, sb := &ar.b[(jr-j0)*kc], nr
			if directB && nv == nr {
				bp, sb = &pr.b[p0*pr.ldb+jr], pr.ldb
			}
			for ir := i0; ir < i1; ir += mr {
				mv := min(mr, i1-ir)
				ap, sa := &ar.a[(ir-i0)*kc], mr
				if directA && (mv == mr || mv < len(kn.rowsFn)) {
					ap, sa = &pr.a[p0*pr.lda+ir], pr.lda
				}
				if mv == mr && nv == nr && !pr.transC {
					kn.fn(kc, ap, sa, bp, sb, &pr.c[ir*pr.ldc+jr], pr.ldc, mode, pr.beta)
					continue
				}
				// The last rows straight into C by a narrower kernel, but
				// not with beta ∉ {0, 1}: the kernels fuse beta·C into their
				// sum, storeEdge does not.
				if mv < len(kn.rowsFn) && nv == nr && !pr.transC && mode != modeBeta {
					kn.rowsFn[mv](kc, ap, sa, bp, sb, &pr.c[ir*pr.ldc+jr], pr.ldc, mode, pr.beta)
					continue
				}
				// Edge or transposed tile: compute into a scratch tile and
				// store the valid part.
				t := ar.t[:mr*nr]
				if mv < len(kn.rowsFn) {
					kn.rowsFn[mv](kc, ap, sa, bp, sb, &t[0], nr, modeSet, 0)
				} else {
					kn.fn(kc, ap, sa, bp, sb, &t[0], nr, modeSet, 0)
				}
				pr.storeEdge(t[:mv*nr], nr, ir, jr, nv, mode)
			}
		}
	}
}

// criticalStride reports whether kc rows ld floats apart overfill the L1
// sets they map to (half of 8 ways, leaving room for the other operand):
// rows a multiple of 16 floats (one line) apart use 64/gcd(64, ld/16) of
// L1's 64 sets, a single set at a stride of 1024 floats.
func criticalStride(ld, kc int) bool {
	if ld%16 != 0 {
		return false
	}
	l, sets := ld/16, 64
	for l%2 == 0 && sets > 1 {
		l, sets = l/2, sets/2
	}
	return kc > 4*sets
}

// minPackReuse is the number of kernel calls over which a strip with a
// critical stride must be reused for tile to pack it.
const minPackReuse = 8

// storeEdge stores the scratch tile t (rows of nr floats, the first nv
// valid) at rows ir… and columns jr… of C', in the given store mode.
func (pr *problem) storeEdge(t []float32, nr, ir, jr, nv, mode int) {
	c, ldc, beta := pr.c, pr.ldc, pr.beta
	for i := 0; i*nr < len(t); i++ {
		src := t[i*nr : i*nr+nv]
		if pr.transC {
			// Row ir+i of C' is column ir+i of C.
			for j, v := range src {
				ci := (jr+j)*ldc + ir + i
				switch mode {
				case modeSet:
					c[ci] = v
				case modeAdd:
					c[ci] += v
				default:
					c[ci] = beta*c[ci] + v
				}
			}
			continue
		}
		dst := c[(ir+i)*ldc+jr : (ir+i)*ldc+jr+nv]
		switch mode {
		case modeSet:
			copy(dst, src)
		case modeAdd:
			for j, v := range src {
				dst[j] += v
			}
		default:
			for j, v := range src {
				dst[j] = beta*dst[j] + v
			}
		}
	}
}

// dotTile sets C[i0:i1, j0:j1] = alpha·A[i0:i1]·B[j0:j1]ᵀ + beta·C with the
// dot kernel, mr×nr at a time; the rows of A stay in L1 while all rows of B
// pass. At the edges the last row is repeated and the extra sums dropped.
func (pr *problem) dotTile(ar *arena, i0, i1, j0, j1 int) {
	kn := pr.kern
	// The last k%8 products are added before alpha and beta apply, so only
	// with alpha = 1 and beta = 0 may they be added to C afterwards.
	plain := pr.alpha == 1 && pr.beta == 0
	if kn.dotC == nil || !plain && pr.k%8 != 0 {
		pr.dotEdge(ar, i0, i1, j0, j1)
		return
	}
	// Whole mr×nr tiles go straight to dotC; the edges, as before, through
	// dot. Each element's sum is the same either way.
	iw := i0 + (i1-i0)/kn.mr*kn.mr
	jw := j0 + (j1-j0)/kn.nr*kn.nr
	if kn.mr != 3 || kn.nr != 4 {
		panic("gemm: dotC needs a 3×4 dot kernel")
	}
	a, b, c := pr.a, pr.b, pr.c
	lda, ldb, ldc, k := pr.lda, pr.ldb, pr.ldc, pr.k
	k8 := k &^ 7
	mode := 0
	if pr.beta != 0 {
		mode = 1
	}
	for i := i0; i < iw; i += 3 {
		a0, a1, a2 := &a[i*lda], &a[(i+1)*lda], &a[(i+2)*lda]
		for j := j0; j < jw; j += 4 {
			kn.dotC(k8, a0, a1, a2, &b[j*ldb], &b[(j+1)*ldb], &b[(j+2)*ldb], &b[(j+3)*ldb], &c[i*ldc+j], ldc, pr.alpha, pr.beta, mode)
			if k8 < k {
				// The last k%8 products, added in order as dot3x4AVX2 does.
				for r := range 3 {
					ar := a[(i+r)*lda+k8 : (i+r)*lda+k]
					for s := range 4 {
						br := b[(j+s)*ldb+k8 : (j+s)*ldb+k]
						br = br[:len(ar)]
						v := c[(i+r)*ldc+j+s]
						for p, x := range ar {
							v += x * br[p]
						}
						c[(i+r)*ldc+j+s] = v
					}
				}
			}
		}
	}
	if jw < j1 {
		pr.dotEdge(ar, i0, iw, jw, j1)
	}
	if iw < i1 {
		pr.dotEdge(ar, iw, i1, j0, j1)
	}
}

// dotEdge is dotTile through the kernel's dot function and a scratch tile.
func (pr *problem) dotEdge(ar *arena, i0, i1, j0, j1 int) {
	if i0 >= i1 || j0 >= j1 {
		return
	}
	ap, bp, out := &ar.dotA, &ar.dotB, &ar.dotOut
	mr, nr := pr.kern.mr, pr.kern.nr
	alpha, beta := pr.alpha, pr.beta
	for i := i0; i < i1; i += mr {
		mv := min(mr, i1-i)
		for r := range mr {
			ap[r] = &pr.a[(i+min(r, mv-1))*pr.lda]
		}
		for j := j0; j < j1; j += nr {
			nv := min(nr, j1-j)
			for s := range nr {
				bp[s] = &pr.b[(j+min(s, nv-1))*pr.ldb]
			}
			pr.kern.dot(pr.k, ap, bp, out)
			for r := range mv {
				crow := pr.c[(i+r)*pr.ldc+j : (i+r)*pr.ldc+j+nv]
				for s := range crow {
					if beta == 0 {
						crow[s] = alpha * out[4*r+s]
					} else {
						crow[s] = alpha*out[4*r+s] + beta*crow[s]
					}
				}
			}
		}
	}
	// The arena outlives the call in a free list: drop the caller's matrices.
	*ap, *bp = [4]*float32{}, [4]*float32{}
}

// scaleBlock sets C[r0:r1, c0:c1] = beta·C, which is the whole product when
// alpha or k is zero; beta = 0 writes zeros, so NaN in C does not survive.
func scaleBlock(c []float32, ldc, r0, r1, c0, c1 int, beta float32) {
	if beta == 1 {
		return
	}
	for i := r0; i < r1; i++ {
		row := c[i*ldc+c0 : i*ldc+c1]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packA writes rows [i0, i0+rows) and columns [p0, p0+kc) of alpha·X (X the
// m×k operand, stored transposed when trans) to dst as kc steps of mr
// floats, zero-padding rows beyond rows.
func packA(dst, x []float32, ld int, trans bool, i0, rows, mr, p0, kc int, alpha float32) {
	dst = dst[:kc*mr]
	if !trans {
		transpose(dst, mr, x[i0*ld+p0:], ld, rows, kc, alpha)
		return
	}
	for q := range kc {
		src := x[(p0+q)*ld+i0 : (p0+q)*ld+i0+rows]
		d := dst[q*mr : q*mr+mr]
		for r, v := range src {
			d[r] = alpha * v
		}
		clear(d[rows:])
	}
}

// packB writes rows [p0, p0+kc) and columns [j0, j0+cols) of Y (the k×n
// operand, stored transposed when trans) to dst as kc steps of nr floats,
// zero-padding columns beyond cols.
func packB(dst, y []float32, ld int, trans bool, p0, kc, j0, cols, nr int) {
	dst = dst[:kc*nr]
	if trans {
		transpose(dst, nr, y[j0*ld+p0:], ld, cols, kc, 1)
		return
	}
	if cols == 16 && nr == 16 {
		// A whole strip of the AVX2 kernel: fixed-size copies compile to
		// a few vector moves, where copy calls memmove per row.
		for q := range kc {
			*(*[16]float32)(dst[q*16:]) = *(*[16]float32)(y[(p0+q)*ld+j0:])
		}
		return
	}
	for q := range kc {
		d := dst[q*nr : q*nr+nr]
		copy(d, y[(p0+q)*ld+j0:(p0+q)*ld+j0+cols])
		clear(d[cols:])
	}
}

// transpose sets dst[q·w + r] = alpha·src[r·ld + q] for r < n ≤ w and q < kc,
// and zero for n ≤ r < w. Four source rows are read side by side so that
// each store writes four adjacent floats.
func transpose(dst []float32, w int, src []float32, ld, n, kc int, alpha float32) {
	if w == 6 && n == 6 && alpha == 1 {
		// A whole strip of the AVX2 kernel's A, the conv engine's weights
		// (alpha 1): one pass writing six adjacent floats per step, where
		// the general loop takes four rows and then one row at a time.
		s0 := src[:kc]
		s1 := src[ld : ld+kc]
		s2 := src[2*ld : 2*ld+kc]
		s3 := src[3*ld : 3*ld+kc]
		s4 := src[4*ld : 4*ld+kc]
		s5 := src[5*ld : 5*ld+kc]
		s1, s2, s3, s4, s5 = s1[:len(s0)], s2[:len(s0)], s3[:len(s0)], s4[:len(s0)], s5[:len(s0)]
		dst = dst[:6*len(s0)]
		for q, v := range s0 {
			d := dst[6*q : 6*q+6 : 6*q+6]
			d[0], d[1], d[2], d[3], d[4], d[5] = v, s1[q], s2[q], s3[q], s4[q], s5[q]
		}
		return
	}
	r := 0
	for ; r+4 <= n; r += 4 {
		s0 := src[r*ld : r*ld+kc]
		s1 := src[(r+1)*ld : (r+1)*ld+kc]
		s2 := src[(r+2)*ld : (r+2)*ld+kc]
		s3 := src[(r+3)*ld : (r+3)*ld+kc]
		s1, s2, s3 = s1[:len(s0)], s2[:len(s0)], s3[:len(s0)] // one bounds check, not one per q
		for q, v := range s0 {
			d := dst[q*w+r : q*w+r+4 : q*w+r+4]
			d[0], d[1], d[2], d[3] = alpha*v, alpha*s1[q], alpha*s2[q], alpha*s3[q]
		}
	}
	for ; r < n; r++ {
		for q, v := range src[r*ld : r*ld+kc] {
			dst[q*w+r] = alpha * v
		}
	}
	if n < w {
		for q := range kc {
			clear(dst[q*w+n : q*w+w])
		}
	}
}

// arena is one worker's packing space for one kernel: a packed mc×kc block
// of A, a kc×nc block of B and a scratch tile, 64-byte aligned.
type arena struct {
	kern    *kernel
	a, b, t []float32
	// The dot kernel's row pointers and 4×4 result, here rather than on
	// the stack because the kernel is called through a func value.
	dotA, dotB [4]*float32
	dotOut     [16]float32
}

func getArena(kern *kernel) *arena {
	l := &kern.arenas
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		ar := l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return ar
	}
	l.mu.Unlock()
	return &arena{
		kern: kern,
		a:    aligned(kern.mc * kern.kc),
		b:    aligned(kern.nc * kern.kc),
		t:    aligned(kern.mr * kern.nr),
	}
}

func putArena(ar *arena) {
	l := &ar.kern.arenas
	l.mu.Lock()
	l.free = append(l.free, ar)
	l.mu.Unlock()
}

// aligned returns n floats starting on a cache line.
func aligned(n int) []float32 {
	buf := make([]float32, n+16)
	off := int(uintptr(unsafe.Pointer(&buf[0]))%64) / 4
	if off != 0 {
		off = 16 - off
	}
	return buf[off : off+n : off+n]
}
