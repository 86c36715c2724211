package nn

// cachedGrads returns the per-sample gradients the cache holds for the
// current chunk of n samples in the parameter layout, converting a cache in
// the flip layout once, in place (see Conv2d.unpermute; every later reader
// of the chunk's cache goes by l.permuted); ok is false when the cache does
// not hold them.
func (l *Conv2d[T]) cachedGrads(n int) (data []T, ok bool) {
	if l.cache == nil || l.cached != n {
		return nil, false
	}
	if l.permuted {
		np := l.NumParams()
		parallelFor(n, len(l.ws), n*np, func(w, lo, hi int) {
			g := l.ws[w].g[:l.Cout*l.ckk]
			for i := lo; i < hi; i++ {
				c := l.cache[i*np : i*np+len(g)]
				l.unpermute(c, g, 0)
				copy(c, g)
			}
		})
		l.permuted = false
	}
	return l.cache[:n*l.NumParams()], true
}
