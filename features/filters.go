package features

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The filter bank reproduces Kymatio's scattering2d/filter_bank.py
// (Tramèr & Boneh's features are Kymatio's Scattering2D with J=2 on 32×32
// inputs), constant for constant. Releases differ only in where the FFT
// normalisation sits (early ones divide the filters by the grid size and
// use unnormalised inverse FFTs); the coefficients are the same, and ours
// use normalised inverse transforms with undivided filters, as current
// Kymatio does:
//
//	ψ_{j,θ} = morlet_2d(M, N, σ = 0.8·2^j, angle = (⌊L − L/2 − 1⌋ − θ)·π/L,
//	                    ξ = 3π/4 / 2^j, slant = 4/L)
//	φ_J     = gabor_2d(M, N, σ = 0.8·2^(J−1), angle 0, ξ = 0, slant 1)
//
// both built in space on the (padded) M×N grid, periodised over 5×5 copies
// of the grid, Fourier transformed, and kept as the real part of the
// spectrum (their imaginary parts vanish: the filters are Hermitian-symmetric
// in space). Note σ_φ = 0.8·2^(J−1), not 0.8·2^J: that is Kymatio's choice.
const (
	sigma0 = 0.8             // σ of the finest wavelet (filter_bank.py: 0.8 * 2**j)
	xi0    = 3 * math.Pi / 4 // centre frequency of the finest wavelet (3.0 / 4.0 * np.pi / 2**j)
	// kymatioPi is the π Kymatio's gabor_2d uses in its normalisation
	// 2·3.1415·σ²/slant. It scales every filter by π/3.1415 ≈ 1 + 3e-5; kept
	// so that our coefficients match Kymatio's to float32 precision.
	kymatioPi = 3.1415
	// periodCopies: gabor_2d sums the Gaussian over shifts ex, ey ∈ {−2..2}
	// grid periods, i.e. 5×5 copies.
	periodCopies = 2
)

// slant returns Kymatio's wavelet slant 4/L: the Gaussian envelope is σ
// wide along the oscillation and σ/slant across it.
func slant(L int) float64 { return 4 / float64(L) }

// waveletAngle returns the orientation of wavelet θ ∈ [0, L): Kymatio's
// (int(L − L/2 − 1) − θ)·π/L.
func waveletAngle(theta, L int) float64 {
	return float64(int(float64(L)-float64(L)/2-1)-theta) * math.Pi / float64(L)
}

// gabor2D returns Kymatio's gabor_2d on an m×n grid, row-major, with the
// first coordinate along rows: the periodised, normalised function
//
//	g(u) = Σ_{e∈{−2..2}²} exp(−(u+eM)ᵀ A (u+eM) + i ξ·(cos θ, sin θ)·(u+eM)) / (2·3.1415·σ²/slant)
//
// with A = R_θ diag(1, slant²) R_θᵀ / (2σ²).
func gabor2D(m, n int, sigma, theta, xi, sl float64) []complex128 {
	c, s := math.Cos(theta), math.Sin(theta)
	// A = R D R^{-1} / (2σ²), R = [[c, −s], [s, c]], D = diag(1, sl²).
	d := sl * sl
	a00 := (c*c + d*s*s) / (2 * sigma * sigma)
	a01 := (c*s - d*s*c) / (2 * sigma * sigma) // = a10
	a11 := (s*s + d*c*c) / (2 * sigma * sigma)
	norm := 2 * kymatioPi * sigma * sigma / sl
	g := make([]complex128, m*n)
	for ex := -periodCopies; ex <= periodCopies; ex++ {
		for ey := -periodCopies; ey <= periodCopies; ey++ {
			for r := range m {
				u := float64(r + ex*m)
				for q := range n {
					v := float64(q + ey*n)
					arg := complex(-(a00*u*u + 2*a01*u*v + a11*v*v), xi*(u*c+v*s))
					g[r*n+q] += cmplx.Exp(arg)
				}
			}
		}
	}
	for i := range g {
		g[i] /= complex(norm, 0)
	}
	return g
}

// morlet2D returns Kymatio's morlet_2d: the Gabor minus the envelope
// (ξ = 0) scaled so that the sum over the grid — the zero frequency — is
// exactly zero.
func morlet2D(m, n int, sigma, theta, xi, sl float64) []complex128 {
	wv := gabor2D(m, n, sigma, theta, xi, sl)
	env := gabor2D(m, n, sigma, theta, 0, sl)
	var sw, se complex128
	for i := range wv {
		sw += wv[i]
		se += env[i]
	}
	k := sw / se
	for i := range wv {
		wv[i] -= k * env[i]
	}
	return wv
}

// realSpectrum returns the real part of the 2-D DFT of an m×n filter.
func realSpectrum(f []complex128, m, n int) []float64 {
	buf := append([]complex128(nil), f...)
	fft2(buf, m, n, fourier.NewCmplxFFT(m), fourier.NewCmplxFFT(n), make([]complex128, m), false)
	out := make([]float64, m*n)
	for i, v := range buf {
		out[i] = real(v)
	}
	return out
}

// periodizeFilter is Kymatio's periodize_filter_fft(x, res): zero the
// frequencies a 2^res-fold subsampled grid cannot hold, then fold the
// spectrum onto the (m/2^res)×(n/2^res) grid by summing aliases.
func periodizeFilter(x []float64, m, n, res int) []float64 {
	k := 1 << res
	mm, nn := m/k, n/k
	lenX := int(float64(m) * (1 - math.Pow(2, -float64(res))))
	startX := int(float64(m) * math.Pow(2, -float64(res)-1))
	lenY := int(float64(n) * (1 - math.Pow(2, -float64(res))))
	startY := int(float64(n) * math.Pow(2, -float64(res)-1))
	out := make([]float64, mm*nn)
	for r := range m {
		if r >= startX && r < startX+lenX {
			continue
		}
		for q := range n {
			if q >= startY && q < startY+lenY {
				continue
			}
			out[(r%mm)*nn+q%nn] += x[r*n+q]
		}
	}
	return out
}

// filterBank holds the Fourier-domain filters on the padded m×n grid.
type filterBank struct {
	m, n int
	// psi[j*L+θ].levels[res] is ψ_{j,θ} periodised to (m/2^res)×(n/2^res),
	// for res ≤ j.
	psi []waveletFilter
	// phi[res] is φ_J periodised to (m/2^res)×(n/2^res), res < J.
	phi [][]float64
}

type waveletFilter struct {
	j, theta int
	levels   [][]float64
}

func newFilterBank(m, n, J, L int) *filterBank {
	fb := &filterBank{m: m, n: n}
	for j := range J {
		for theta := range L {
			sp := morlet2D(m, n, sigma0*math.Pow(2, float64(j)), waveletAngle(theta, L),
				xi0/math.Pow(2, float64(j)), slant(L))
			f := realSpectrum(sp, m, n)
			w := waveletFilter{j: j, theta: theta}
			for res := 0; res <= j; res++ {
				w.levels = append(w.levels, periodizeFilter(f, m, n, res))
			}
			fb.psi = append(fb.psi, w)
		}
	}
	phi := realSpectrum(gabor2D(m, n, sigma0*math.Pow(2, float64(J-1)), 0, 0, 1), m, n)
	for res := range J {
		fb.phi = append(fb.phi, periodizeFilter(phi, m, n, res))
	}
	return fb
}

// fft2 transforms the m×n row-major array a in place (forward, or the
// unnormalised inverse), rows with pr (length n) and columns with pc
// (length m); col is scratch of length m.
func fft2(a []complex128, m, n int, pc, pr *fourier.CmplxFFT, col []complex128, inverse bool) {
	for r := range m {
		row := a[r*n : (r+1)*n]
		if inverse {
			pr.Sequence(row, row)
		} else {
			pr.Coefficients(row, row)
		}
	}
	for q := range n {
		for r := range m {
			col[r] = a[r*n+q]
		}
		if inverse {
			pc.Sequence(col, col)
		} else {
			pc.Coefficients(col, col)
		}
		for r := range m {
			a[r*n+q] = col[r]
		}
	}
}
