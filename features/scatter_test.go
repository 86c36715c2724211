package features

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// bruteIDFT returns the spatial p×q filter whose DFT is spec, by the
// O(p²q²) inverse DFT sum (with tables of the p-th and q-th roots of unity:
// e^{2πi(ku/p + lv/q)} = ωp^{ku mod p}·ωq^{lv mod q}; no FFT).
func bruteIDFT(spec []float64, p, q int) []complex128 {
	wp, wq := make([]complex128, p), make([]complex128, q)
	for k := range p {
		wp[k] = cmplx.Rect(1, 2*math.Pi*float64(k)/float64(p))
	}
	for l := range q {
		wq[l] = cmplx.Rect(1, 2*math.Pi*float64(l)/float64(q))
	}
	out := make([]complex128, p*q)
	for u := range p {
		for v := range q {
			var s complex128
			for k := range p {
				var row complex128
				for l := range q {
					row += complex(spec[k*q+l], 0) * wq[(l*v)%q]
				}
				s += row * wp[(k*u)%p]
			}
			out[u*q+v] = s / complex(float64(p*q), 0)
		}
	}
	return out
}

// convAt is the circular convolution (x ⋆ f)(a, b) on a p×q grid, summed
// directly in space.
func convAt(x []complex128, f []complex128, p, q, a, b int) complex128 {
	var s complex128
	for u := range p {
		for v := range q {
			s += x[((a-u+p)%p)*q+(b-v+q)%q] * f[u*q+v]
		}
	}
	return s
}

// convSub returns (x ⋆ f) sampled every k pixels: a (p/k)×(q/k) grid.
func convSub(x, f []complex128, p, q, k int) []complex128 {
	out := make([]complex128, (p/k)*(q/k))
	for a := 0; a < p/k; a++ {
		for b := 0; b < q/k; b++ {
			out[a*(q/k)+b] = convAt(x, f, p, q, a*k, b*k)
		}
	}
	return out
}

func absAll(z []complex128) []complex128 {
	out := make([]complex128, len(z))
	for i, v := range z {
		out[i] = complex(cmplx.Abs(v), 0)
	}
	return out
}

// bruteScatter computes the scattering of one plane the slow way, in space:
// direct circular convolutions with the filters' spatial forms, modulus,
// and subsampling by taking every 2^k-th pixel. It shares the filter bank
// (tested against the analytic transform separately) and nothing else.
func bruteScatter(s *Scattering, plane []float64) []float64 {
	m, n, J := s.m, s.n, s.cfg.J
	x := make([]complex128, m*n)
	for r := range m {
		for c := range n {
			// Mirror padding written out: index −i ↦ i, H−1+i ↦ H−1−i.
			rr, cc := r-s.pad, c-s.pad
			if rr < 0 {
				rr = -rr
			} else if rr >= s.h {
				rr = 2*(s.h-1) - rr
			}
			if cc < 0 {
				cc = -cc
			} else if cc >= s.w {
				cc = 2*(s.w-1) - cc
			}
			x[r*n+c] = complex(plane[rr*s.w+cc], 0)
		}
	}
	phi := make([][]complex128, J)
	for res := range J {
		phi[res] = bruteIDFT(s.fb.phi[res], m>>res, n>>res)
	}
	var out []float64
	emit := func(z []complex128, p, q int) {
		crop := 0
		if !s.cfg.Periodic {
			crop = 1
		}
		for a := range s.oh {
			for b := range s.ow {
				out = append(out, real(z[(a+crop)*q+b+crop]))
			}
		}
	}
	emit(convSub(x, phi[0], m, n, 1<<J), m>>J, n>>J)
	type u1 struct {
		z  []complex128
		j1 int
	}
	var u1s []u1
	for _, w := range s.fb.psi {
		f := bruteIDFT(w.levels[0], m, n)
		u := absAll(convSub(x, f, m, n, 1<<w.j))
		emit(convSub(u, phi[w.j], m>>w.j, n>>w.j, 1<<(J-w.j)), m>>J, n>>J)
		u1s = append(u1s, u1{u, w.j})
	}
	// Spatial forms of the order-2 filters, each computed once: ψ_{n2} at
	// the resolution of scale j1.
	spatial := map[[2]int][]complex128{}
	for _, a := range u1s {
		for k, w := range s.fb.psi {
			if w.j <= a.j1 {
				continue
			}
			p, q := m>>a.j1, n>>a.j1
			f, ok := spatial[[2]int{k, a.j1}]
			if !ok {
				f = bruteIDFT(w.levels[a.j1], p, q)
				spatial[[2]int{k, a.j1}] = f
			}
			u := absAll(convSub(a.z, f, p, q, 1<<(w.j-a.j1)))
			emit(convSub(u, phi[w.j], m>>w.j, n>>w.j, 1<<(J-w.j)), m>>J, n>>J)
		}
	}
	return out
}

func randomPlanes(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()
	}
	return x
}

func TestTransformMatchesBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute-force convolutions take a few seconds")
	}
	for _, tc := range []struct {
		name string
		h, w int
		cfg  Config
	}{
		{"cifar J=2 L=8 reflect", 32, 32, Config{J: 2, L: 8}},
		{"J=2 L=8 periodic", 32, 32, Config{J: 2, L: 8, Periodic: true}},
		{"J=3 L=3 periodic 16×24", 16, 24, Config{J: 3, L: 3, Periodic: true}},
		{"J=3 L=2 reflect 16×16", 16, 16, Config{J: 3, L: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewScattering(tc.h, tc.w, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			const c = 2
			x := randomPlanes(3, c*tc.h*tc.w)
			shape := s.OutputShape(c)
			got := make([]float32, shape[0]*shape[1]*shape[2])
			s.Transform(got, x, 1, c, 1)
			per := tc.cfg.Coefficients() * shape[1] * shape[2]
			// Brute force on the second channel only (it is the slower half).
			plane := make([]float64, tc.h*tc.w)
			for i := range plane {
				plane[i] = float64(x[tc.h*tc.w+i])
			}
			want := bruteScatter(s, plane)
			if len(want) != per {
				t.Fatalf("brute force gave %d coefficients, transform %d", len(want), per)
			}
			var worst float64
			for i, v := range want {
				d := math.Abs(float64(got[per+i]) - v)
				worst = max(worst, d/(1e-3+math.Abs(v)))
			}
			t.Logf("max relative difference to brute force: %.2e over %d coefficients", worst, per)
			if worst > 1e-4 {
				t.Errorf("transform differs from brute force by %g (relative)", worst)
			}
		})
	}
}

// With circular convolution, shifting the image by multiples of 2^J shifts
// every coefficient map by the shift / 2^J, exactly (subsampling commutes
// with such shifts); the spatial sums are therefore invariant.
func TestCircularShiftEquivariance(t *testing.T) {
	s, err := NewScattering(32, 32, Config{J: 2, L: 8, Periodic: true})
	if err != nil {
		t.Fatal(err)
	}
	const c = 3
	x := randomPlanes(5, c*32*32)
	for _, sh := range [][2]int{{4, 0}, {0, 12}, {8, 28}} {
		y := make([]float32, len(x))
		for ch := range c {
			for r := range 32 {
				for q := range 32 {
					y[ch*1024+((r+sh[0])%32)*32+(q+sh[1])%32] = x[ch*1024+r*32+q]
				}
			}
		}
		both := append(append([]float32{}, x...), y...)
		out := make([]float32, 2*c*81*64)
		s.Transform(out, both, 2, c, 2)
		fx, fy := out[:c*81*64], out[c*81*64:]
		var worst float64
		var sumX, sumY [c * 81]float64
		for k := range c * 81 {
			for r := range 8 {
				for q := range 8 {
					a := fx[k*64+r*8+q]
					b := fy[k*64+((r+sh[0]/4)%8)*8+(q+sh[1]/4)%8]
					worst = max(worst, math.Abs(float64(a-b))/(1e-3+math.Abs(float64(a))))
					sumX[k] += float64(a)
					sumY[k] += float64(fy[k*64+r*8+q])
				}
			}
		}
		if worst > 1e-4 {
			t.Errorf("shift %v: coefficients not shifted by %v (max rel diff %g)", sh, [2]int{sh[0] / 4, sh[1] / 4}, worst)
		}
		for k := range sumX {
			if math.Abs(sumX[k]-sumY[k]) > 1e-4*(1e-3+math.Abs(sumX[k])) {
				t.Errorf("shift %v: channel %d spatial sum %g vs %g", sh, k, sumX[k], sumY[k])
				break
			}
		}
	}
}

func TestScatterNetShapeAndConstants(t *testing.T) {
	const n = 3
	x := randomPlanes(9, n*3*32*32)
	// Image 0 is constant 0.5: order 0 is 0.5·φ̂(0) = 0.5·π/3.1415 everywhere
	// (the low-pass of a constant), and orders 1–2 vanish (Morlets have zero
	// mean).
	for i := range 3 * 1024 {
		x[i] = 0.5
	}
	out, shape, err := ScatterNet(x, n, [3]int{3, 32, 32})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{243, 8, 8}; shape[0] != want[0] || shape[1] != want[1] || shape[2] != want[2] {
		t.Fatalf("shape %v, want %v", shape, want)
	}
	if len(out) != n*15552 {
		t.Fatalf("%d features, want %d", len(out), n*15552)
	}
	for ch := range 3 {
		for k := range 81 {
			want := 0.0
			if k == 0 {
				want = 0.5 * math.Pi / kymatioPi
			}
			for p := range 64 {
				if v := out[(ch*81+k)*64+p]; math.Abs(float64(v)-want) > 1e-6 {
					t.Fatalf("constant image: channel %d coefficient %d = %g, want %g", ch, k, v, want)
				}
			}
		}
	}
	// Scattering is positively homogeneous: S(a·x) = a·S(x).
	y := append([]float32{}, x[3*1024:2*3*1024]...)
	for i := range y {
		y[i] *= 2.5
	}
	oy, _, err := ScatterNet(y, 1, [3]int{3, 32, 32})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range oy {
		if w := 2.5 * out[15552+i]; math.Abs(float64(v-w)) > 1e-5*(1e-3+math.Abs(float64(w))) {
			t.Fatalf("S(2.5x)[%d] = %g, want %g", i, v, w)
		}
	}
}

func TestScatterNetErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		shape [3]int
		len   int
	}{
		{"odd size", 1, [3]int{3, 30, 32}, 3 * 30 * 32},
		{"short x", 2, [3]int{3, 32, 32}, 3 * 32 * 32},
		{"no channels", 1, [3]int{0, 32, 32}, 0},
		{"too small to pad", 1, [3]int{1, 4, 4}, 16},
	} {
		if _, _, err := ScatterNet(make([]float32, tc.len), tc.n, tc.shape); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := NewScattering(32, 32, Config{J: 0, L: 8}); err == nil {
		t.Error("J=0 accepted")
	}
}
