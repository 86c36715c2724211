package features

import (
	"math"
	"math/cmplx"
	"testing"
)

// analyticGabor is the DFT of Kymatio's periodised Gabor on an m×n grid by
// Poisson summation: the continuous Fourier transform of
// exp(−uᵀAu + iξ·u)/(2·3.1415·σ²/slant) is (π/3.1415)·exp(−¼(ω−ξ)ᵀA⁻¹(ω−ξ)),
// summed over the aliases ω + 2π·(a, b). It shares no code with gabor2D,
// which sums the Gaussian in space and uses the FFT.
func analyticGabor(m, n int, sigma, theta, xi, sl float64, kr, kc int) float64 {
	c, s := math.Cos(theta), math.Sin(theta)
	var sum float64
	for a := -3; a <= 3; a++ {
		for b := -3; b <= 3; b++ {
			w0 := 2*math.Pi*float64(kr)/float64(m) + 2*math.Pi*float64(a) - xi*c
			w1 := 2*math.Pi*float64(kc)/float64(n) + 2*math.Pi*float64(b) - xi*s
			// Rotate into the envelope's axes: along θ (width σ) and across
			// (width σ/slant in space, so slant/σ in frequency).
			p := c*w0 + s*w1
			q := -s*w0 + c*w1
			sum += math.Exp(-sigma * sigma / 2 * (p*p + q*q/(sl*sl)))
		}
	}
	return math.Pi / kymatioPi * sum
}

func TestFiltersMatchAnalyticFourierTransform(t *testing.T) {
	for _, tc := range []struct{ m, n, J, L int }{{40, 40, 2, 8}, {32, 32, 2, 8}, {48, 40, 3, 6}} {
		fb := newFilterBank(tc.m, tc.n, tc.J, tc.L)
		var worst float64
		for _, w := range fb.psi {
			sigma := sigma0 * math.Pow(2, float64(w.j))
			xi := xi0 / math.Pow(2, float64(w.j))
			th := waveletAngle(w.theta, tc.L)
			sl := slant(tc.L)
			// Morlet: Gabor − K·envelope with K making the DC coefficient 0.
			k := analyticGabor(tc.m, tc.n, sigma, th, xi, sl, 0, 0) / analyticGabor(tc.m, tc.n, sigma, th, 0, sl, 0, 0)
			for r := range tc.m {
				for c := range tc.n {
					want := analyticGabor(tc.m, tc.n, sigma, th, xi, sl, r, c) - k*analyticGabor(tc.m, tc.n, sigma, th, 0, sl, r, c)
					worst = max(worst, math.Abs(w.levels[0][r*tc.n+c]-want))
				}
			}
		}
		for r := range tc.m {
			for c := range tc.n {
				want := analyticGabor(tc.m, tc.n, sigma0*math.Pow(2, float64(tc.J-1)), 0, 0, 1, r, c)
				worst = max(worst, math.Abs(fb.phi[0][r*tc.n+c]-want))
			}
		}
		t.Logf("%d×%d J=%d L=%d: max |FFT filter − analytic| = %.2e", tc.m, tc.n, tc.J, tc.L, worst)
		if worst > 1e-9 {
			t.Errorf("%d×%d: filters differ from the analytic Fourier transform by %g", tc.m, tc.n, worst)
		}
	}
}

func TestFilterConstants(t *testing.T) {
	// Kymatio's orientations for L=8: (3 − θ)·π/8.
	for theta, want := range []float64{3, 2, 1, 0, -1, -2, -3, -4} {
		if got := waveletAngle(theta, 8); math.Abs(got-want*math.Pi/8) > 1e-15 {
			t.Errorf("angle(%d) = %v, want %v", theta, got, want*math.Pi/8)
		}
	}
	fb := newFilterBank(40, 40, 2, 8)
	// φ̂(0) is the Gaussian's integral divided by Kymatio's normalisation,
	// 2πσ² / (2·3.1415·σ²) = π/3.1415.
	if got, want := fb.phi[0][0], math.Pi/3.1415; math.Abs(got-want) > 1e-12 {
		t.Errorf("φ̂(0) = %.15f, want π/3.1415 = %.15f", got, want)
	}
	// Morlets have zero mean.
	for _, w := range fb.psi {
		if math.Abs(w.levels[0][0]) > 1e-12 {
			t.Errorf("ψ_{%d,%d}(0) = %g, want 0", w.j, w.theta, w.levels[0][0])
		}
	}
	// Each wavelet peaks near its centre frequency ξ_j (cos θ, sin θ): the
	// largest coefficient sits within one bin of it.
	for _, w := range fb.psi {
		xi := xi0 / math.Pow(2, float64(w.j))
		th := waveletAngle(w.theta, 8)
		best, br, bc := -1.0, 0, 0
		for r := range 40 {
			for c := range 40 {
				if v := w.levels[0][r*40+c]; v > best {
					best, br, bc = v, r, c
				}
			}
		}
		fr := freq(br, 40)
		fc := freq(bc, 40)
		if math.Abs(fr-xi*math.Cos(th)) > 2*math.Pi/40 || math.Abs(fc-xi*math.Sin(th)) > 2*math.Pi/40 {
			t.Errorf("ψ_{%d,%d} peaks at ω = (%.3f, %.3f), want near (%.3f, %.3f)", w.j, w.theta, fr, fc, xi*math.Cos(th), xi*math.Sin(th))
		}
	}
}

// freq returns the angular frequency of DFT bin k of n in (−π, π].
func freq(k, n int) float64 {
	if k > n/2 {
		k -= n
	}
	return 2 * math.Pi * float64(k) / float64(n)
}

func TestPeriodizeFilter(t *testing.T) {
	// Kymatio's periodize_filter_fft on a 8×8 grid at res 1 keeps the
	// frequencies 0..1 and 6..7 of each axis (|k| < 2, plus −2) and folds
	// them onto 4×4: crop[k] = x[k] for k < 2, x[k+4] for k ≥ 2.
	x := make([]float64, 64)
	for i := range x {
		x[i] = float64(i + 1)
	}
	got := periodizeFilter(x, 8, 8, 1)
	src := []int{0, 1, 6, 7}
	for a := range 4 {
		for b := range 4 {
			if want := x[src[a]*8+src[b]]; got[a*4+b] != want {
				t.Errorf("crop[%d,%d] = %v, want %v", a, b, got[a*4+b], want)
			}
		}
	}
}

// TestLittlewoodPaley checks that the filter bank is a stable frame on the
// 40×40 grid: A(ω) = |φ̂(ω)|² + ½Σ_{j,θ}(|ψ̂_{j,θ}(ω)|² + |ψ̂_{j,θ}(−ω)|²)
// stays within [a, b] with 0 < a ≤ b, so ‖x‖² is preserved up to these
// factors by the first layer (Mallat 2012, Prop. 2.1). The bounds asserted
// are those of Kymatio's bank at J=2, L=8 on this grid, recomputed here from
// the analytic Fourier transform rather than from our FFT filters.
func TestLittlewoodPaley(t *testing.T) {
	const m, J, L = 40, 2, 8
	fb := newFilterBank(m, m, J, L)
	lo, hi := math.Inf(1), 0.0
	loA, hiA := math.Inf(1), 0.0
	for r := range m {
		for c := range m {
			nr, nc := (m-r)%m, (m-c)%m
			a := fb.phi[0][r*m+c] * fb.phi[0][r*m+c]
			ref := analyticGabor(m, m, sigma0*2, 0, 0, 1, r, c)
			aRef := ref * ref
			for _, w := range fb.psi {
				p, q := w.levels[0][r*m+c], w.levels[0][nr*m+nc]
				a += (p*p + q*q) / 2
				sigma := sigma0 * math.Pow(2, float64(w.j))
				xi := xi0 / math.Pow(2, float64(w.j))
				th := waveletAngle(w.theta, L)
				k := analyticGabor(m, m, sigma, th, xi, slant(L), 0, 0) / analyticGabor(m, m, sigma, th, 0, slant(L), 0, 0)
				f := func(r, c int) float64 {
					return analyticGabor(m, m, sigma, th, xi, slant(L), r, c) - k*analyticGabor(m, m, sigma, th, 0, slant(L), r, c)
				}
				pr, qr := f(r, c), f(nr, nc)
				aRef += (pr*pr + qr*qr) / 2
			}
			lo, hi = min(lo, a), max(hi, a)
			loA, hiA = min(loA, aRef), max(hiA, aRef)
		}
	}
	t.Logf("Littlewood-Paley sum on 40×40: FFT filters [%.6f, %.6f], analytic [%.6f, %.6f]", lo, hi, loA, hiA)
	if math.Abs(lo-loA) > 1e-9 || math.Abs(hi-hiA) > 1e-9 {
		t.Errorf("LP bounds of the FFT bank [%g, %g] differ from the analytic [%g, %g]", lo, hi, loA, hiA)
	}
	// A frame that never amplifies: the sum peaks at ω = 0, where every ψ̂
	// vanishes and φ̂(0)² = (π/3.1415)², and no frequency is lost (a > 0;
	// the corners (±π, ±π), beyond the finest wavelet, are the weakest).
	if want := math.Pow(math.Pi/kymatioPi, 2); math.Abs(hi-want) > 1e-12 || !(lo > 0.1) {
		t.Errorf("Littlewood-Paley bounds [%g, %g], want (0.1, %g]", lo, hi, want)
	}
}

// Energy conservation of the first layer, in space: for a real image x,
// ‖x⋆φ‖² + Σ‖x⋆ψ‖² (direct circular convolutions, no FFT) equals
// (1/N²)Σ_ω |x̂(ω)|²·A(ω) (Parseval) and so lies within the
// Littlewood–Paley bounds [a, b]·‖x‖².
func TestFirstLayerEnergy(t *testing.T) {
	if testing.Short() {
		t.Skip("brute-force convolutions")
	}
	const m = 40
	fb := newFilterBank(m, m, 2, 8)
	x := make([]complex128, m*m)
	var norm2 float64
	for i, v := range randomPlanes(31, m*m) {
		x[i] = complex(float64(v)-0.5, 0)
		norm2 += (float64(v) - 0.5) * (float64(v) - 0.5)
	}
	var space float64
	filters := [][]float64{fb.phi[0]}
	for _, w := range fb.psi {
		filters = append(filters, w.levels[0])
	}
	for _, f := range filters {
		fs := bruteIDFT(f, m, m)
		for _, v := range convSub(x, fs, m, m, 1) {
			space += real(v)*real(v) + imag(v)*imag(v)
		}
	}
	// x̂ by the DFT sum, separably.
	var freq float64
	lo, hi := math.Inf(1), 0.0
	for kr := range m {
		for kc := range m {
			var xh complex128
			for r := range m {
				for c := range m {
					xh += x[r*m+c] * cmplx.Rect(1, -2*math.Pi*float64(kr*r+kc*c)/m)
				}
			}
			var a, sym float64
			nr, nc := (m-kr)%m, (m-kc)%m
			for i, f := range filters {
				v := f[kr*m+kc]
				a += v * v
				if i == 0 {
					sym += v * v
				} else {
					sym += (v*v + f[nr*m+nc]*f[nr*m+nc]) / 2
				}
			}
			lo, hi = min(lo, sym), max(hi, sym)
			freq += (real(xh)*real(xh) + imag(xh)*imag(xh)) * a / (m * m)
		}
	}
	t.Logf("first-layer energy %.6f = %.4f‖x‖² (Parseval side %.6f; LP bounds [%.4f, %.4f])", space, space/norm2, freq, lo, hi)
	if math.Abs(space-freq) > 1e-9*freq {
		t.Errorf("energy in space %g, by Parseval %g", space, freq)
	}
	if space < lo*norm2 || space > hi*norm2 {
		t.Errorf("energy %g outside [%g, %g]·‖x‖²", space, lo, hi)
	}
}
