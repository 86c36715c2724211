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
				if l.K == 3 {
					l.unpermute3(c, g)
				} else {
					l.unpermute(c, g, 0)
				}
				copy(c, g)
			}
		})
		l.permuted = false
	}
	return l.cache[:n*l.NumParams()], true
}

// unpermute3 is unpermute(src, g, 0) for 3×3 kernels, unrolled: the
// conversion is a tenth of a twice-sampling step on ResNet-20 otherwise.
func (l *Conv2d[T]) unpermute3(src, g []T) {
	const kk = 9
	for co := range l.Cout {
		d := g[co*l.Cin*kk : (co+1)*l.Cin*kk]
		for ci := range l.Cin {
			s := src[(ci*l.Cout+co)*kk : (ci*l.Cout+co+1)*kk : (ci*l.Cout+co+1)*kk]
			o := d[ci*kk : (ci+1)*kk : (ci+1)*kk]
			o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8] = s[8], s[7], s[6], s[5], s[4], s[3], s[2], s[1], s[0]
		}
	}
}
