package nn

import (
	"fmt"

	"github.com/dptrain/dptrain/rng"
)

// Conv2d is a 2-D convolution of a Cin×H×W sample with Cout square K×K
// kernels, stride S and zero padding P, plus a bias per output channel when
// Bias. Parameters: W (Cout × Cin·K·K, row-major) then b.
//
// Computation is per sample through im2col: U_i (Cin·K·K × P_out) holds the
// receptive fields of sample i, so Z_i = W·U_i and the per-sample weight
// gradient is g_i = dZ_i·U_iᵀ. U_i is rebuilt from the retained input
// whenever needed instead of stored, so memory stays at one U per worker.
// Samples are split over the workers (see parallel.go), each with its own
// workspace.
//
// Input gradient: with stride 1 (and P < K) it is itself a convolution,
// dX_i = W̃·Ũ_i, where Ũ_i is the im2col of dZ_i padded by K−1−P and W̃
// (Cin × Cout·K·K) holds W with channels swapped and kernels rotated by
// 180°: a GEMM with k = Cout·K·K and no scatter. Otherwise dU_i = Wᵀ·dZ_i
// and col2im scatters it back.
//
// Per-sample gradients: when MaxBatch·NumParams ≤ CacheLimit, Backward
// computes every sample's gradient (a per-sample GEMM, the cost of the
// forward pass) into a cache; on the flip path from Ũ_i, with no second
// im2col. The norms are then sums of squares, PerSampleGrads a copy and
// AccumulateScaled an ordered axpy per sample (the batch gradient too): a DP
// step costs what a non-private step costs.
// Without the cache, ‖g_i‖² is computed either directly (g_i into a scratch,
// cost Cout·Cin·K²·P_out) or by the ghost-norm identity
// ‖dZ_i U_iᵀ‖² = ⟨U_iᵀU_i, dZ_iᵀdZ_i⟩ (two Gram matrices, cost
// P_out²·(Cin·K² + Cout)), whichever the cost estimate says is cheaper
// (useGram). Off the flip path every weight gradient needs U_i, so a layer
// under UCacheLimit keeps it from the training forward pass instead of a
// second im2col. In the zoo the direct product always wins (P_out ≥ Cout where
// the cost is), and the cache is on.
type Conv2d[T Float] struct {
	Cin, Cout, K, Stride, Pad int
	Bias                      bool
	Scheme                    InitScheme

	in, outShape Shape
	ckk, p       int // Cin·K·K, output positions
	uld, duld    int // row strides of U_i (≥ p) and of the flip path's dU (≥ H·W); see rowStride
	fwd, bwd     geom
	flip         bool // input gradient by the rotated-kernel convolution
	w, b         []T
	wt           []T // W̃ᵀ (Cout·K·K × Cin) for the flip path
	wT           []T // Wᵀ (Cin·K·K × Cout) for the forward products, rebuilt by each Forward
	x, dz        []T
	out, dx      []T
	ws           []convWork[T]
	cache        []T  // per-sample gradients from PerSampleNormsSq, or nil
	cached       int  // samples in cache for the current chunk; −1 none
	partial      []T  // accBlocks partial sums for AccumulateScaled without cache
	gram         bool // norms without cache by the ghost-norm identity
	fromCache    bool // accRange reads the cache (else the block sums)
	permuted     bool // cached weight gradients are in the flip layout
	needDx       bool // the current Backward computes dX
	batchSum     bool // non-private mode: Backward sums the gradient, no cache
	summed       int  // samples whose block sums Backward left in partial; −1 none
	sumPermuted  bool // those block sums are in the flip layout
	ucache       []T  // U_i of the chunk's training forward, for sampleGrad (nil until keepU)
	ucacheLen    int  // its size, MaxBatch·Cin·K²·uld, or 0 over UCacheLimit
	keepU        bool // Backward takes weight gradients from U_i: training forwards keep it
	uKept        bool // ucache holds the current x's U_i

	// Arguments of the current parallel call, and the method values
	// (bound once in Build, so calls do not allocate).
	n                      int
	scales                 []T
	stride                 int
	dst                    []T
	norms                  []float64
	sum                    []T
	fwdFn, bwdFn, gradFn   rangeFunc
	normFn, accFn, blockFn rangeFunc
	bwdSumFn               rangeFunc
}

// convWork is one worker's scratch.
type convWork[T Float] struct {
	u, du, g []T // im2col, its gradient (or Ũ), a weight-gradient scratch
	gu, gz   []T // Gram matrices of the ghost-norm path
	xp       []T // the zero-padded input (or its gradient) of strided im2col and col2im
}

// CacheLimit bounds the per-layer per-sample gradient cache of Conv2d
// (MaxBatch·NumParams values); larger layers recompute in AccumulateScaled.
var CacheLimit = 1 << 24

// UCacheLimit bounds the im2col cache of Conv2d (MaxBatch·Cin·K²·P_out
// values): a layer under it keeps each sample's U_i from the training
// forward pass for the weight gradient, instead of building it again.
var UCacheLimit = 1 << 22

// normMode forces Conv2d's norm path without cache in tests: 0 by cost,
// 1 direct, 2 Gram.
var normMode int

// accBlocks is the number of fixed sample blocks AccumulateScaled sums
// separately (in parallel) before adding the block sums in order: the split
// depends on the chunk size only, never on the number of workers.
const accBlocks = 8

// NewConv2d returns a convolution from cin to cout channels with k×k kernels.
func NewConv2d[T Float](cin, cout, k, stride, pad int, bias bool) *Conv2d[T] {
	return &Conv2d[T]{Cin: cin, Cout: cout, K: k, Stride: stride, Pad: pad, Bias: bias}
}

func (l *Conv2d[T]) Kind() string { return "conv2d" }

func (l *Conv2d[T]) Build(in Shape, maxBatch int) (Shape, error) {
	if l.Cin <= 0 || l.Cout <= 0 || l.K <= 0 || l.Stride <= 0 || l.Pad < 0 {
		return Shape{}, fmt.Errorf("conv2d: bad configuration %d→%d k=%d s=%d p=%d", l.Cin, l.Cout, l.K, l.Stride, l.Pad)
	}
	if in.C != l.Cin {
		return Shape{}, fmt.Errorf("conv2d: input has %d channels, layer expects %d", in.C, l.Cin)
	}
	oh := (in.H+2*l.Pad-l.K)/l.Stride + 1
	ow := (in.W+2*l.Pad-l.K)/l.Stride + 1
	if in.H+2*l.Pad < l.K || in.W+2*l.Pad < l.K {
		return Shape{}, fmt.Errorf("conv2d: %d×%d kernel larger than padded input %v", l.K, l.K, in)
	}
	l.in, l.outShape = in, Shape{C: l.Cout, H: oh, W: ow}
	l.ckk, l.p = l.Cin*l.K*l.K, oh*ow
	l.uld, l.duld = rowStride(l.p), rowStride(in.H*in.W)
	l.fwd = newGeom(l.Cin, in.H, in.W, l.K, l.Stride, l.Pad)
	l.flip = l.Stride == 1 && l.Pad < l.K
	l.bwd = newGeom(l.Cout, oh, ow, l.K, 1, l.K-1-l.Pad)
	l.out = make([]T, maxBatch*l.outShape.Size())
	l.dx = make([]T, maxBatch*in.Size())
	if l.flip {
		l.wt = make([]T, l.Cin*l.Cout*l.K*l.K)
	}
	l.wT = make([]T, l.Cout*l.ckk)
	nw := min(numWorkers(), maxBatch)
	l.ws = make([]convWork[T], nw)
	for w := range l.ws {
		ws := &l.ws[w]
		ws.u = make([]T, l.ckk*l.uld)
		if l.flip {
			ws.du = make([]T, l.Cout*l.K*l.K*l.duld)
		} else {
			ws.du = make([]T, l.ckk*l.p)
		}
		ws.g = make([]T, l.Cout*l.ckk)
		ws.xp = make([]T, l.fwd.padSize())
	}
	l.ucache, l.ucacheLen, l.keepU, l.uKept = nil, 0, false, false
	if maxBatch*l.ckk*l.p <= UCacheLimit {
		l.ucacheLen = maxBatch * l.ckk * l.uld
	}
	l.cache, l.cached = nil, -1
	if maxBatch*l.NumParams() <= CacheLimit {
		l.cache = make([]T, maxBatch*l.NumParams())
	}
	l.partial = make([]T, min(maxBatch, accBlocks)*l.NumParams())
	direct, gram := l.Cout*l.ckk*l.p, l.p*l.p*(l.ckk+l.Cout+1)
	l.gram = l.cache == nil && (normMode == 2 || normMode == 0 && gram < direct)
	if l.gram {
		for w := range l.ws {
			l.ws[w].gu = make([]T, l.p*l.p)
			l.ws[w].gz = make([]T, l.p*l.p)
		}
	}
	l.fwdFn, l.bwdFn, l.gradFn = l.forwardRange, l.backwardRange, l.gradRange
	l.normFn, l.accFn, l.blockFn = l.normRange, l.accRange, l.blockRange
	l.bwdSumFn, l.summed = l.backwardSumRange, -1
	return l.outShape, nil
}

func (l *Conv2d[T]) NumParams() int {
	if l.Bias {
		return l.Cout*l.ckk + l.Cout
	}
	return l.Cout * l.ckk
}

func (l *Conv2d[T]) Bind(p []T) {
	n := l.Cout * l.Cin * l.K * l.K
	l.w, l.b = p[:n], p[n:l.NumParams()]
}

func (l *Conv2d[T]) Init(s *rng.Stream) {
	initWeights(l.Scheme, l.w, l.b, l.ckk, l.Cout*l.K*l.K, s)
}

// perSample is the rough multiply-add count of one sample's GEMM.
func (l *Conv2d[T]) perSample() int { return l.Cout * l.ckk * l.p }

func (l *Conv2d[T]) Forward(x []T, n int, train bool) []T {
	l.x, l.cached = x[:n*l.in.Size()], -1
	l.uKept = train && l.keepU
	// Wᵀ, so that every sample's product reads whole strips of it in
	// place instead of packing (transposing) W again.
	for co := range l.Cout {
		for q, v := range l.w[co*l.ckk : (co+1)*l.ckk] {
			l.wT[q*l.Cout+co] = v
		}
	}
	parallelFor(n, len(l.ws), n*l.perSample(), l.fwdFn)
	return l.out[:n*l.outShape.Size()]
}

func (l *Conv2d[T]) forwardRange(w, lo, hi int) {
	isz, osz := l.in.Size(), l.outShape.Size()
	u := l.ws[w].u
	for i := lo; i < hi; i++ {
		if l.uKept {
			u = l.ucache[i*l.ckk*l.uld : (i+1)*l.ckk*l.uld]
		}
		im2col(&l.fwd, l.x[i*isz:(i+1)*isz], u, l.uld, l.ws[w].xp)
		oi := l.out[i*osz : (i+1)*osz]
		gemm(true, false, l.Cout, l.p, l.ckk, 1, l.wT, l.Cout, u, l.uld, 0, oi, l.p)
		if l.Bias {
			for c, b := range l.b {
				row := oi[c*l.p : (c+1)*l.p]
				for j := range row {
					row[j] += b
				}
			}
		}
	}
}

func (l *Conv2d[T]) Backward(dy []T, n int, needDx bool) []T {
	l.dz, l.cached, l.needDx, l.summed = dy[:n*l.outShape.Size()], -1, needDx, -1
	// Off the flip path, weight gradients are built from U_i: keep it
	// from the next training forward on (allocated then, so that layers
	// on the flip path never hold it).
	l.keepU = !(l.flip && needDx) && l.ucacheLen > 0
	if l.keepU && l.ucache == nil {
		l.ucache = make([]T, l.ucacheLen)
	}
	if !needDx && l.cache == nil && !l.batchSum {
		return nil
	}
	if l.flip && needDx {
		// W̃[ci, (co, kh, kw)] = W[co, (ci, K−1−kh, K−1−kw)], stored
		// transposed ((co, kh, kw) rows of Cin) so that the product reads
		// whole strips of it in place instead of packing it per sample.
		kk := l.K * l.K
		for co := range l.Cout {
			for ci := range l.Cin {
				src := l.w[(co*l.Cin+ci)*kk : (co*l.Cin+ci+1)*kk]
				for t, v := range src {
					l.wt[(co*kk+kk-1-t)*l.Cin+ci] = v
				}
			}
		}
	}
	if l.batchSum {
		// One gradient for the batch: each fixed block of samples sums its
		// gradients into partial as Backward produces them (on the flip
		// path from Ũ_i, as the cache would), with no per-sample cache to
		// write and read back; AccumulateScaled adds the block sums.
		l.n, l.sumPermuted = n, l.flip && needDx
		parallelFor(min(n, accBlocks), len(l.ws), n*l.perSample(), l.bwdSumFn)
		l.summed = n
	} else {
		l.permuted = l.flip && needDx && l.cache != nil
		parallelFor(n, len(l.ws), n*l.perSample(), l.bwdFn)
		if l.cache != nil {
			l.cached = n
		}
	}
	if !needDx {
		return nil
	}
	return l.dx[:n*l.in.Size()]
}

// backwardRange computes dX for samples [lo, hi) when needDx, and with the
// cache on, their per-sample gradients into the cache: every caller of
// Backward (DP or not) needs them or their sum, and on the flip path they
// come from Ũ_i, already built for dX, instead of a second im2col of X_i:
// g_i[co, (ci, t)] = (X_i·Ũ_iᵀ)[ci, (co, K²−1−t)] (stride 1, same
// rotation as W̃). The cache keeps X_i·Ũ_iᵀ as it comes (permuted), since
// a norm does not depend on the order and a sum can be reordered once.
func (l *Conv2d[T]) backwardRange(w, lo, hi int) {
	np := l.NumParams()
	for i := lo; i < hi; i++ {
		var g []T
		if l.cache != nil {
			g = l.cache[i*np : (i+1)*np]
		}
		l.backwardSample(w, i, g, 0)
	}
}

// backwardSumRange sums the gradients of the fixed sample blocks [lo, hi)
// into partial (batchSum mode), computing dX on the way.
func (l *Conv2d[T]) backwardSumRange(w, lo, hi int) {
	np, nb := l.NumParams(), min(l.n, accBlocks)
	for b := lo; b < hi; b++ {
		g := l.partial[b*np : (b+1)*np]
		beta := T(0)
		for i := b * l.n / nb; i < (b+1)*l.n/nb; i++ {
			l.backwardSample(w, i, g, beta)
			beta = 1
		}
	}
}

// backwardSample computes sample i's dX when needDx and, when g is not nil,
// writes its gradient into g (beta = 0) or adds it (beta = 1): in the flip
// layout when needDx on the flip path, else in the parameter layout.
func (l *Conv2d[T]) backwardSample(w, i int, g []T, beta T) {
	isz, osz := l.in.Size(), l.outShape.Size()
	hw, kk := l.in.H*l.in.W, l.K*l.K
	ws := &l.ws[w]
	dz, dx := l.dz[i*osz:(i+1)*osz], l.dx[i*isz:(i+1)*isz]
	switch {
	case l.flip && l.needDx:
		im2col(&l.bwd, dz, ws.du, l.duld, nil)
		gemm(true, false, l.Cin, hw, l.Cout*kk, 1, l.wt, l.Cin, ws.du, l.duld, 0, dx, hw)
		if g == nil {
			return
		}
		// Kept in the flip layout (see unpermute): norms do not
		// care, sums and copies convert once.
		gemm(false, true, l.Cin, l.Cout*kk, hw, 1, l.x[i*isz:(i+1)*isz], hw, ws.du, l.duld, beta, g, l.Cout*kk)
		if gb := l.biasOf(g); gb != nil {
			for c := range l.Cout {
				var s T
				for _, v := range dz[c*l.p : (c+1)*l.p] {
					s += v
				}
				gb[c] = beta*gb[c] + s
			}
		}
		return
	case l.needDx:
		gemm(true, false, l.ckk, l.p, l.Cout, 1, l.w, l.ckk, dz, l.p, 0, ws.du, l.p)
		col2im(&l.fwd, ws.du, l.p, dx, ws.xp)
	}
	if g != nil {
		l.sampleGrad(w, i, 1, beta, g[:l.Cout*l.ckk], l.biasOf(g))
	}
}

// setBatchSum switches the non-private mode of Network.BatchGrad on or off.
func (l *Conv2d[T]) setBatchSum(on bool) { l.batchSum, l.summed = on, -1 }

// sampleGrad writes sample i's gradient, scaled by alpha and added to beta
// times the destination, into gw (Cout×Cin·K·K) and gb (Cout, may be nil),
// using worker w's im2col buffer.
func (l *Conv2d[T]) sampleGrad(w, i int, alpha, beta T, gw, gb []T) {
	osz := l.outShape.Size()
	u := l.sampleU(w, i)
	dz := l.dz[i*osz : (i+1)*osz]
	gemm(false, true, l.Cout, l.ckk, l.p, alpha, dz, l.p, u, l.uld, beta, gw, l.ckk)
	if gb != nil {
		for c := range l.Cout {
			var s T
			for _, v := range dz[c*l.p : (c+1)*l.p] {
				s += v
			}
			gb[c] = beta*gb[c] + alpha*s
		}
	}
}

// rowStride is the row stride for an im2col matrix with n columns: n, or
// n+16 when n is a multiple of 64. At such strides the rows of a 16-column
// strip the GEMM kernel reads (kc of them) fall in a quarter or less of L1's
// sets and cannot stay there between the kernel calls that reuse it; 16
// floats (one cache line) of padding spread them over all sets. ResNet's
// 32×32, 16×16 and 8×8 maps: the forward products ran 1.5×, 1× and 1.15× as
// fast in BenchmarkSgemm-like runs of their shapes. The padding is never
// read, and only the layout changes, so results do not.
func rowStride(n int) int {
	if n%64 == 0 {
		return n + 16
	}
	return n
}

// sampleU returns sample i's im2col U_i: kept from the forward pass, or
// built in worker w's buffer.
func (l *Conv2d[T]) sampleU(w, i int) []T {
	if l.uKept {
		return l.ucache[i*l.ckk*l.uld : (i+1)*l.ckk*l.uld]
	}
	isz := l.in.Size()
	im2col(&l.fwd, l.x[i*isz:(i+1)*isz], l.ws[w].u, l.uld, l.ws[w].xp)
	return l.ws[w].u
}

func (l *Conv2d[T]) biasOf(g []T) []T {
	if !l.Bias {
		return nil
	}
	return g[l.Cout*l.ckk : l.NumParams()]
}

func (l *Conv2d[T]) PerSampleGrads(n int, dst []T, stride int) {
	l.dst, l.stride = dst, stride
	parallelFor(n, len(l.ws), n*l.perSample(), l.gradFn)
}

func (l *Conv2d[T]) gradRange(w, lo, hi int) {
	np := l.NumParams()
	for i := lo; i < hi; i++ {
		g := l.dst[i*l.stride : i*l.stride+np]
		if l.cached >= 0 {
			c := l.cache[i*np : (i+1)*np]
			if l.permuted {
				l.unpermute(c, g, 0)
				copy(g[l.Cout*l.ckk:], c[l.Cout*l.ckk:])
				continue
			}
			copy(g, c)
			continue
		}
		l.sampleGrad(w, i, 1, 0, g[:l.Cout*l.ckk], l.biasOf(g))
	}
}

func (l *Conv2d[T]) PerSampleNormsSq(n int, dst []float64, stride int) {
	l.norms, l.stride = dst, stride
	parallelFor(n, len(l.ws), n*l.perSample(), l.normFn)
	if l.cache != nil {
		l.cached = n
	}
}

func (l *Conv2d[T]) normRange(w, lo, hi int) {
	np := l.NumParams()
	if c32, ok := any(l.cache).([]float32); ok && l.cached >= 0 {
		// Gradients already cached: four samples' norms at a time (one
		// sample's sum is a chain of dependent additions; four run side
		// by side), each equal to sumSq's bit for bit.
		var out [4]float64
		for ; hi-lo >= 4 && sumSq4(c32[lo*np:(lo+4)*np], np, np, &out); lo += 4 {
			for r, v := range out {
				l.norms[(lo+r)*l.stride] = v
			}
		}
	}
	for i := lo; i < hi; i++ {
		if l.cache != nil {
			g := l.cache[i*np : (i+1)*np]
			if l.cached < 0 {
				l.sampleGrad(w, i, 1, 0, g[:l.Cout*l.ckk], l.biasOf(g))
			}
			l.norms[i*l.stride] = sumSq(g)
			continue
		}
		var v float64
		if l.gram {
			v = l.gramNormSq(w, i)
		} else {
			l.sampleGrad(w, i, 1, 0, l.ws[w].g, nil)
			v = sumSq(l.ws[w].g)
		}
		if l.Bias {
			osz := l.outShape.Size()
			dz := l.dz[i*osz : (i+1)*osz]
			for c := range l.Cout {
				s := sum(dz[c*l.p : (c+1)*l.p])
				v += s * s
			}
		}
		l.norms[i*l.stride] = v
	}
}

// gramNormSq is ‖dZ_i U_iᵀ‖_F² = ⟨U_iᵀU_i, dZ_iᵀdZ_i⟩ (the ghost norm):
// two P_out×P_out Gram matrices instead of the Cout×Cin·K² gradient.
func (l *Conv2d[T]) gramNormSq(w, i int) float64 {
	osz := l.outShape.Size()
	ws := &l.ws[w]
	u := l.sampleU(w, i)
	dz := l.dz[i*osz : (i+1)*osz]
	gemm(true, false, l.p, l.p, l.ckk, 1, u, l.uld, u, l.uld, 0, ws.gu, l.p)
	gemm(true, false, l.p, l.p, l.Cout, 1, dz, l.p, dz, l.p, 0, ws.gz, l.p)
	var v float64
	for j, a := range ws.gu {
		v += float64(a) * float64(ws.gz[j])
	}
	return v
}

func (l *Conv2d[T]) scaleOf(i int) T {
	if l.scales == nil {
		return 1
	}
	return l.scales[i*l.stride]
}

// AccumulateScaled adds Σ_i s_i g_i. From the cache, each parameter's sum
// runs over the samples in order (workers split the parameters). Without the
// cache, the chunk is cut into at most accBlocks fixed blocks of samples,
// each block's sum is computed by one worker (per-sample GEMMs accumulating
// in sample order), and the block sums are added in block order: the result
// does not depend on the number of workers.
func (l *Conv2d[T]) AccumulateScaled(n int, scales []T, stride int, sum []T) {
	np := l.NumParams()
	if scales == nil && l.summed == n {
		// Backward left the block sums (batchSum mode): add them in
		// block order, converting the flip layout once.
		acc := l.partial[:np]
		for b := 1; b < min(n, accBlocks); b++ {
			axpy(1, l.partial[b*np:(b+1)*np], acc)
		}
		if l.sumPermuted {
			nw := l.Cout * l.ckk
			l.unpermute(acc, sum[:nw], 1)
			axpy(1, acc[nw:], sum[nw:np])
		} else {
			axpy(1, acc, sum[:np])
		}
		l.summed = -1
		return
	}
	l.n, l.scales, l.stride, l.sum = n, scales, stride, sum[:np]
	l.fromCache = l.cached == n
	if !l.fromCache {
		parallelFor(min(n, accBlocks), len(l.ws), n*l.perSample(), l.blockFn)
	}
	if l.fromCache && l.permuted {
		// Sum in the cache's layout into partial, then reorder once.
		acc := l.partial[:np]
		clear(acc)
		l.sum = acc
		parallelFor(np, len(l.ws), n*np, l.accFn)
		nw := l.Cout * l.ckk
		l.unpermute(acc, sum[:nw], 1)
		axpy(1, acc[nw:], sum[nw:np])
	} else {
		parallelFor(np, len(l.ws), n*np, l.accFn)
	}
	l.scales, l.sum = nil, nil
}

// unpermute sets (beta = 0) or adds to (beta = 1) the weight gradient g
// (Cout × Cin·K², the parameter layout) the matrix src in the flip layout
// (Cin × Cout·K², kernels rotated): g[co, (ci, t)] = src[ci, (co, K²−1−t)].
// The loop walks g in order, so the writes are sequential; with beta = 0,
// g is not read.
func (l *Conv2d[T]) unpermute(src, g []T, beta int) {
	kk := l.K * l.K
	for co := range l.Cout {
		for ci := range l.Cin {
			s := src[(ci*l.Cout+co)*kk : (ci*l.Cout+co+1)*kk]
			d := g[(co*l.Cin+ci)*kk : (co*l.Cin+ci+1)*kk]
			s = s[:len(d)]
			if beta == 0 {
				for t := range d {
					d[t] = s[kk-1-t]
				}
				continue
			}
			for t := range d {
				d[t] += s[kk-1-t]
			}
		}
	}
}

// blockRange computes the sums of sample blocks [lo, hi) into partial.
func (l *Conv2d[T]) blockRange(w, lo, hi int) {
	np, nb := l.NumParams(), min(l.n, accBlocks)
	for b := lo; b < hi; b++ {
		g := l.partial[b*np : (b+1)*np]
		beta := T(0)
		for i := b * l.n / nb; i < (b+1)*l.n/nb; i++ {
			// A dropped example (scale 0) may hold ±Inf or NaN; it is
			// skipped, never multiplied by zero (0·Inf = NaN).
			s := l.scaleOf(i)
			if s == 0 {
				continue
			}
			l.sampleGrad(w, i, s, beta, g[:l.Cout*l.ckk], l.biasOf(g))
			beta = 1
		}
		if beta == 0 {
			clear(g) // every example of the block was dropped
		}
	}
}

// accRange adds parameters [lo, hi) of the cached per-sample gradients
// (scaled), or of the block sums, to sum, in sample or block order.
func (l *Conv2d[T]) accRange(_, lo, hi int) {
	np, dst := l.NumParams(), l.sum[lo:hi]
	if l.fromCache {
		for i := range l.n {
			if s := l.scaleOf(i); s != 0 { // dropped examples add nothing
				axpy(s, l.cache[i*np+lo:i*np+hi], dst)
			}
		}
		return
	}
	for b := range min(l.n, accBlocks) {
		axpy(1, l.partial[b*np+lo:b*np+hi], dst)
	}
}
