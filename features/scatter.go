package features

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Config selects the scattering transform.
type Config struct {
	// J is the number of scales: averaging window and subsampling 2^J.
	J int
	// L is the number of wavelet orientations per scale.
	L int
	// Periodic, when true, convolves circularly on the unpadded image. The
	// default (false) is Kymatio's: reflect-pad by 2^J on each side (the
	// grid becomes (H+2^(J+1))×(W+2^(J+1))) and drop one output pixel on
	// each border after subsampling. Tramèr & Boneh used the default.
	Periodic bool
}

// DefaultConfig is Tramèr & Boneh's CIFAR-10 ScatterNet: J=2, L=8, order 2,
// Kymatio padding.
func DefaultConfig() Config { return Config{J: 2, L: 8} }

// String names the configuration; it is part of the feature cache key.
func (c Config) String() string {
	pad := "reflect"
	if c.Periodic {
		pad = "periodic"
	}
	return fmt.Sprintf("scatter2d(J=%d,L=%d,order=2,pad=%s,kymatio-filter_bank)", c.J, c.L, pad)
}

// Coefficients returns the number of output channels per input channel:
// 1 + J·L + L²·J(J−1)/2 (orders 0, 1 and 2).
func (c Config) Coefficients() int { return 1 + c.J*c.L + c.L*c.L*c.J*(c.J-1)/2 }

// Scattering is a precomputed 2-D scattering transform for H×W images. It is
// safe for concurrent use.
type Scattering struct {
	cfg    Config
	h, w   int // input size
	m, n   int // grid size (padded unless Periodic)
	pad    int // reflect padding per side (0 when Periodic)
	oh, ow int // output size
	fb     *filterBank
	off2   []int // off2[n1]: output index of the first order-2 coefficient of n1
}

// NewScattering builds the filter bank for H×W inputs. H and W must be
// multiples of 2^J, and with padding larger than 2^J.
func NewScattering(h, w int, cfg Config) (*Scattering, error) {
	if cfg.J < 1 || cfg.J > 6 {
		return nil, fmt.Errorf("scattering: J = %d, want 1..6", cfg.J)
	}
	if cfg.L < 1 || cfg.L > 32 {
		return nil, fmt.Errorf("scattering: L = %d, want 1..32", cfg.L)
	}
	k := 1 << cfg.J
	if h <= 0 || w <= 0 || h%k != 0 || w%k != 0 {
		return nil, fmt.Errorf("scattering: image %d×%d is not a positive multiple of 2^J = %d", h, w, k)
	}
	s := &Scattering{cfg: cfg, h: h, w: w, m: h, n: w, oh: h / k, ow: w / k}
	if !cfg.Periodic {
		if h <= k || w <= k {
			return nil, fmt.Errorf("scattering: image %d×%d too small to reflect-pad by %d", h, w, k)
		}
		// Kymatio's compute_padding: ((M + 2^J) // 2^J + 1)·2^J = M + 2·2^J here.
		s.pad = k
		s.m, s.n = h+2*k, w+2*k
	}
	s.fb = newFilterBank(s.m, s.n, cfg.J, cfg.L)
	next := 1 + cfg.J*cfg.L
	for _, p1 := range s.fb.psi {
		s.off2 = append(s.off2, next)
		next += (cfg.J - 1 - p1.j) * cfg.L
	}
	if next != cfg.Coefficients() {
		panic("features: coefficient count mismatch")
	}
	return s, nil
}

// Config returns the transform's configuration.
func (s *Scattering) Config() Config { return s.cfg }

// OutputShape returns the per-image output shape for c input channels:
// [c·Coefficients(), H/2^J, W/2^J]. Channel ci·Coefficients()+k holds
// coefficient k of input channel ci, in Kymatio's order: order 0; order 1
// by (j, θ); order 2 by (j1, θ1, j2, θ2) with j2 > j1.
func (s *Scattering) OutputShape(c int) []int {
	return []int{c * s.cfg.Coefficients(), s.oh, s.ow}
}

// Transform computes the scattering coefficients of n images of c channels
// (x holds n·c·H·W values, channel planes in order) into dst (n times
// OutputShape(c)), using up to workers goroutines (≤ 0: GOMAXPROCS). It
// panics if the slice lengths do not match.
func (s *Scattering) Transform(dst, x []float32, n, c, workers int) {
	in := c * s.h * s.w
	out := c * s.cfg.Coefficients() * s.oh * s.ow
	if n < 0 || len(x) != n*in || len(dst) != n*out {
		panic(fmt.Sprintf("features: Transform lengths x=%d dst=%d for n=%d c=%d", len(x), len(dst), n, c))
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := s.newWorker()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				for ch := range c {
					plane := x[i*in+ch*s.h*s.w : i*in+(ch+1)*s.h*s.w]
					k := s.cfg.Coefficients() * s.oh * s.ow
					wk.channel(dst[i*out+ch*k:i*out+(ch+1)*k], plane)
				}
			}
		}()
	}
	wg.Wait()
}

// ScatterNet computes Tramèr & Boneh's CIFAR-10 features: the default
// scattering transform (J=2, L=8, order 2, Kymatio padding) of n images of
// shape [C, H, W] (channel planes, e.g. [3, 32, 32] with pixels in [0,1]),
// in parallel over GOMAXPROCS goroutines. It returns the features (n times
// [C·81, H/4, W/4], e.g. 243×8×8 = 15,552 per CIFAR image) and that
// per-image shape. Errors report an unusable shape or a short x.
func ScatterNet(x []float32, n int, shape [3]int) ([]float32, []int, error) {
	return Compute(x, n, shape, DefaultConfig())
}

var scatterings sync.Map // key string → *Scattering

// cachedScattering reuses filter banks across calls (building one takes a
// few milliseconds of exp() calls).
func cachedScattering(h, w int, cfg Config) (*Scattering, error) {
	key := fmt.Sprintf("%d×%d %s", h, w, cfg)
	if s, ok := scatterings.Load(key); ok {
		return s.(*Scattering), nil
	}
	s, err := NewScattering(h, w, cfg)
	if err != nil {
		return nil, err
	}
	scatterings.Store(key, s)
	return s, nil
}

// worker owns the FFT plans and buffers of one goroutine.
type worker struct {
	s     *Scattering
	plans map[[2]int]*fft2Plan
	u0    []complex128    // spectrum of the padded input channel
	z     []complex128    // scratch: products, inverse transforms, pairs
	u1    [2][]complex128 // spectra of |x⋆ψ_{n1}| for a pair of n1
	u2    [2][]complex128 // spectra of ||x⋆ψ_{n1}|⋆ψ_{n2}| for a pair of n2
	mod   [2][]float64    // moduli awaiting a paired forward transform
	small []complex128    // low-pass output before the inverse transform
}

func (s *Scattering) newWorker() *worker {
	sz := s.m * s.n
	wk := &worker{s: s, plans: map[[2]int]*fft2Plan{},
		u0: make([]complex128, sz), z: make([]complex128, sz),
		small: make([]complex128, sz),
	}
	for i := range 2 {
		wk.u1[i] = make([]complex128, sz)
		wk.u2[i] = make([]complex128, sz)
		wk.mod[i] = make([]float64, sz)
	}
	return wk
}

// fft2 transforms the p×q array a in place (forward, or the unnormalised
// inverse), with a plan and scratch kept for the worker's lifetime.
func (wk *worker) fft2(a []complex128, p, q int, inverse bool) {
	pl, ok := wk.plans[[2]int{p, q}]
	if !ok {
		pl = newFFT2Plan(p, q)
		wk.plans[[2]int{p, q}] = pl
	}
	pl.transform(a[:p*q], inverse)
}

// channel computes all coefficients of one H×W plane into dst
// (Coefficients()·oh·ow values).
func (wk *worker) channel(dst []float32, plane []float32) {
	s := wk.s
	m, n := s.m, s.n
	// Pad (reflect, excluding the edge sample, like numpy 'reflect' and
	// torch ReflectionPad2d) and transform.
	for r := range m {
		sr := reflect(r-s.pad, s.h)
		for q := range n {
			wk.u0[r*n+q] = complex(float64(plane[sr*s.w+reflect(q-s.pad, s.w)]), 0)
		}
	}
	wk.fft2(wk.u0, m, n, false)
	wk.lowpass(dst, 0, wk.u0, m, n, 0)

	psi := s.fb.psi
	for a := 0; a < len(psi); {
		// Pair consecutive wavelets of the same scale: their moduli are real,
		// so one complex FFT of |·|_a + i|·|_b gives both spectra.
		b := a + 1
		if b >= len(psi) || psi[b].j != psi[a].j {
			b = a
		}
		j1 := psi[a].j
		m1, n1 := m>>j1, n>>j1
		for t, idx := range [2]int{a, b} {
			if t == 1 && b == a {
				break
			}
			wk.modulus(wk.mod[t], wk.u0, m, n, psi[idx].levels[0], j1)
		}
		wk.pairFFT(wk.u1[0], wk.u1[1], wk.mod[0], wk.mod[1], m1, n1, b != a)
		for t, idx := range [2]int{a, b} {
			if t == 1 && b == a {
				break
			}
			u1 := wk.u1[t]
			wk.lowpass(dst, 1+idx, u1, m1, n1, j1)
			wk.order2(dst, idx, u1, m1, n1)
		}
		a = b + 1
	}
}

// order2 computes the order-2 coefficients of wavelet n1 from the spectrum
// u1 (on the m1×n1 grid of scale j1) of |x⋆ψ_{n1}|.
func (wk *worker) order2(dst []float32, idx1 int, u1 []complex128, m1, n1 int) {
	s := wk.s
	psi := s.fb.psi
	j1 := psi[idx1].j
	out := s.off2[idx1]
	first := (j1 + 1) * s.cfg.L // wavelets with j2 > j1
	for a := first; a < len(psi); {
		b := a + 1
		if b >= len(psi) || psi[b].j != psi[a].j {
			b = a
		}
		j2 := psi[a].j
		m2, n2 := s.m>>j2, s.n>>j2
		for t, idx := range [2]int{a, b} {
			if t == 1 && b == a {
				break
			}
			wk.modulus(wk.mod[t], u1, m1, n1, psi[idx].levels[j1], j2-j1)
		}
		wk.pairFFT(wk.u2[0], wk.u2[1], wk.mod[0], wk.mod[1], m2, n2, b != a)
		for t := range 2 {
			if t == 1 && b == a {
				break
			}
			wk.lowpass(dst, out, wk.u2[t], m2, n2, j2)
			out++
		}
		a = b + 1
	}
}

// modulus sets mod (on the (p>>k)×(q>>k) grid) to |IDFT(fold_{2^k}(u·f))|,
// the subsampled modulus of the convolution whose spectrum is u·f.
func (wk *worker) modulus(mod []float64, u []complex128, p, q int, f []float64, k int) {
	pp, qq := p>>k, q>>k
	z := wk.z[:pp*qq]
	foldProduct(z, u, f, p, q, k)
	wk.fft2(z, pp, qq, true)
	scale := 1 / float64(p*q) // ifft normalisation of the p×q grid, see foldProduct
	for i, v := range z {
		mod[i] = math.Sqrt(real(v)*real(v)+imag(v)*imag(v)) * scale
	}
}

// pairFFT sets ua and ub to the spectra of the real p×q arrays ra and rb
// with one complex transform of ra + i·rb (rb ignored unless both).
func (wk *worker) pairFFT(ua, ub []complex128, ra, rb []float64, p, q int, both bool) {
	z := wk.z[:p*q]
	for i := range z {
		if both {
			z[i] = complex(ra[i], rb[i])
		} else {
			z[i] = complex(ra[i], 0)
		}
	}
	wk.fft2(z, p, q, false)
	if !both {
		copy(ua, z)
		return
	}
	// Z = A + iB with A, B Hermitian: A[k] = (Z[k] + conj Z[−k])/2,
	// B[k] = (Z[k] − conj Z[−k])/(2i).
	for r := range p {
		rr := (p - r) % p
		for c := range q {
			zk := z[r*q+c]
			zm := cmplxConj(z[rr*q+(q-c)%q])
			sum := zk + zm
			ua[r*q+c] = complex(real(sum)/2, imag(sum)/2)
			d := zk - zm
			ub[r*q+c] = complex(imag(d)/2, -real(d)/2)
		}
	}
}

// lowpass writes output channel k: the real part of the subsampled
// convolution of the p×q spectrum u (scale j) with φ_J, unpadded.
func (wk *worker) lowpass(dst []float32, k int, u []complex128, p, q, j int) {
	s := wk.s
	sub := s.cfg.J - j
	pp, qq := p>>sub, q>>sub
	z := wk.small[:pp*qq]
	foldProduct(z, u, s.fb.phi[j], p, q, sub)
	wk.fft2(z, pp, qq, true)
	scale := float32(1 / float64(p*q))
	crop := 0
	if !s.cfg.Periodic {
		crop = 1 // Kymatio's unpad: drop one pixel per border
	}
	o := dst[k*s.oh*s.ow : (k+1)*s.oh*s.ow]
	for r := range s.oh {
		for c := range s.ow {
			o[r*s.ow+c] = float32(real(z[(r+crop)*qq+c+crop])) * scale
		}
	}
}

// foldProduct sets dst ((p>>k)×(q>>k)) to the aliases of u·f summed onto the
// smaller grid. Subsampling by 2^k in space is this fold in frequency
// followed by an inverse DFT of the small grid, scaled by 1/(p·q) in all
// (Kymatio's subsample_fourier averages the aliases and its ifft divides by
// the small grid's size; the product is the same).
func foldProduct(dst, u []complex128, f []float64, p, q, k int) {
	pp, qq := p>>k, q>>k
	if k == 0 {
		for i, v := range u[:len(dst)] {
			dst[i] = complex(real(v)*f[i], imag(v)*f[i])
		}
		return
	}
	clear(dst)
	for r := range p {
		d := dst[(r%pp)*qq : (r%pp+1)*qq]
		for c0 := 0; c0 < q; c0 += qq {
			us, fs := u[r*q+c0:r*q+c0+qq], f[r*q+c0:r*q+c0+qq]
			for c, v := range us {
				g := fs[c]
				d[c] += complex(real(v)*g, imag(v)*g)
			}
		}
	}
}

func cmplxConj(z complex128) complex128 { return complex(real(z), -imag(z)) }

// reflect maps index i ∈ [−n+1, 2n−1) into [0, n) by mirror reflection
// without repeating the edge sample.
func reflect(i, n int) int {
	if i < 0 {
		return -i
	}
	if i >= n {
		return 2*(n-1) - i
	}
	return i
}
