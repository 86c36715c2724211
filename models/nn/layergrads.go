package nn

// LayerGrads is one parametric layer's per-sample gradients for the
// network's retained chunk, in the parameter layout, read where the layer
// keeps them: Conv2d's per-sample cache in place (no copy into a num×D
// buffer), other layers computed into a buffer the network keeps.
type LayerGrads[T Float] struct {
	Offset, Len int // the layer's slice of the flat parameter vector
	data        []T // num × Len; nil when Linear is set
	// Linear, from LayerGradsAsKept, is a Linear layer's rank-one
	// factors instead of its gradients: sample i's gradient is the outer
	// product DZ_i ⊗ A_i (Out rows of In weights), then DZ_i (the bias).
	Linear *LinearFactors[T]
	// flip, from LayerGradsAsKept, is the Conv2d whose cache data is in its
	// flip layout (weights Cin × Cout·K², kernels rotated; the bias after
	// them as usual): the same values, permuted (UnflipAdd maps them back).
	flip *Conv2d[T]
}

// Flipped reports whether Sample(i) is in a Conv2d's flip layout rather
// than the parameter layout: the same multiset of values, so norms and
// per-coordinate bounds are unchanged, but a coordinate's position is not
// its parameter's.
func (g LayerGrads[T]) Flipped() bool { return g.flip != nil }

// UnflipAdd adds src, a vector of g.Len integers in Sample's layout, to dst
// in the parameter layout (for the lattice sum, accumulated in the layout
// the engine keeps and mapped back once per chunk).
func (g LayerGrads[T]) UnflipAdd(src, dst []int64) {
	l := g.flip
	if l == nil {
		for j, v := range src[:g.Len] {
			dst[j] += v
		}
		return
	}
	kk := l.K * l.K
	for co := range l.Cout {
		for ci := range l.Cin {
			s := src[(ci*l.Cout+co)*kk : (ci*l.Cout+co+1)*kk]
			d := dst[(co*l.Cin+ci)*kk : (co*l.Cin+ci+1)*kk]
			for t := range d {
				d[t] += s[kk-1-t]
			}
		}
	}
	w := l.Cout * l.ckk
	for j, v := range src[w:g.Len] {
		dst[w+j] += v
	}
}

// Sample returns sample i's gradient (length Len): the values
// PerSampleGrads writes, bit for bit. It is a view; do not write it.
func (g LayerGrads[T]) Sample(i int) []T { return g.data[i*g.Len : (i+1)*g.Len] }

// LayerGrads runs the chunk forward and backward, as PerSampleGrads does,
// and returns every parametric layer's per-sample gradients without
// assembling them into one num×D buffer: Conv2d layers whose cache holds
// them are read in place; the others are computed into per-layer buffers
// the network keeps (allocated on first use). The views are valid until
// the network's next call.
func (n *Network[T]) LayerGrads(x []T, tg Target[T], num int, losses []T) ([]LayerGrads[T], error) {
	return n.layerGradsOf(x, tg, num, losses, false)
}

// LayerGradsAsKept is LayerGrads as the engine keeps them: every Linear
// layer handed out as its factors (LayerGrads.Linear) rather than computed,
// and a Conv2d cache in the flip layout left in it (LayerGrads.Flipped)
// rather than converted per sample: for consumers that can use an
// example's gradient in those forms (the lattice noise's truncation), which
// saves a Linear layer's b × Len buffer and its pass, and a conv layer's
// per-sample permutation.
func (n *Network[T]) LayerGradsAsKept(x []T, tg Target[T], num int, losses []T) ([]LayerGrads[T], error) {
	return n.layerGradsOf(x, tg, num, losses, true)
}

func (n *Network[T]) layerGradsOf(x []T, tg Target[T], num int, losses []T, asKept bool) ([]LayerGrads[T], error) {
	if err := n.forwardBackward(x, tg, num, losses); err != nil {
		return nil, err
	}
	if n.layerBufs == nil {
		n.layerBufs = make([][]T, len(n.leaves))
		n.layerGrads = make([]LayerGrads[T], len(n.leaves))
		n.layerFactors = make([]LinearFactors[T], len(n.leaves))
	}
	for k, l := range n.leaves {
		g := n.groups[k]
		lg := LayerGrads[T]{Offset: g.Offset, Len: g.Len}
		if lin, ok := l.(*Linear[T]); ok && asKept {
			n.layerFactors[k] = LinearFactors[T]{A: lin.x[:num*lin.In], DZ: lin.dz[:num*lin.Out], In: lin.In, Out: lin.Out,
				Bias: lin.Bias, Offset: g.Offset}
			lg.Linear = &n.layerFactors[k]
			n.layerGrads[k] = lg
			continue
		}
		if c, ok := l.(*Conv2d[T]); ok {
			if asKept && c.cache != nil && c.cached == num && c.permuted {
				lg.data, lg.flip = c.cache[:num*c.NumParams()], c
				n.layerGrads[k] = lg
				continue
			}
			if data, ok := c.cachedGrads(num); ok {
				lg.data = data
				n.layerGrads[k] = lg
				continue
			}
		}
		if n.layerBufs[k] == nil {
			n.layerBufs[k] = make([]T, n.maxBatch*g.Len)
		}
		lg.data = n.layerBufs[k][:num*g.Len]
		l.PerSampleGrads(num, lg.data, g.Len)
		n.layerGrads[k] = lg
	}
	return n.layerGrads[:len(n.leaves)], nil
}

// Workers is the number of workers Parallel splits a range over.
func Workers() int { return numWorkers() }

// Parallel runs fn over [0, n) on the engine's workers (see parallelFor):
// fn(w, lo, hi) processes items [lo, hi) as worker w < Workers(); work is
// the rough cost in multiply-adds (small ranges run serially). Results must
// not depend on the split.
func Parallel(n, work int, fn func(w, lo, hi int)) {
	parallelFor(n, maxWorkers, work, fn)
}

// AddSumSquares adds to out[i] the float64 sum of squares of sample i's
// gradient (Sample(i), vec.SumSquares' order), for lo ≤ i < hi; float32
// samples go four side by side where the CPU has AVX-512 (the same sums,
// bit for bit). A Linear layer handed out as factors is not covered: its
// sums come from the factors.
func (g LayerGrads[T]) AddSumSquares(lo, hi int, out []float64) {
	i := lo
	if d32, ok := any(g.data).([]float32); ok {
		var four [4]float64
		for ; hi-i >= 4 && sumSq4(d32[i*g.Len:(i+4)*g.Len], g.Len, g.Len, &four); i += 4 {
			for r, v := range four {
				out[i+r] += v
			}
		}
	}
	for ; i < hi; i++ {
		out[i] += sumSq(g.Sample(i))
	}
}
