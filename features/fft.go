package features

import (
	"math"
	"math/cmplx"
)

// batchFFT is a mixed-radix Stockham (self-sorting, decimation in
// frequency) FFT of length n applied to B interleaved sequences at once: the
// data is laid out [n][B], so every butterfly runs a contiguous inner loop
// over the batch. The scattering transform does thousands of small 2-D FFTs
// (40×40, 20×20, 10×10) per image; transforming all columns of a 2-D array
// in one pass is about three times faster than gonum's one-sequence-at-a-time
// fftpack here. Forward uses e^{−2πi jk/n}; inverse e^{+2πi jk/n}, unnormalised.
type batchFFT struct {
	n      int
	stages []fftStage
}

type fftStage struct {
	r, m, s int // radix, sub-length n/r, stride
	// tw[p*r+j] = w_n^{j·p} for the stage's length n_stage = r·m (forward);
	// twInv is its conjugate.
	tw, twInv []complex128
	// dft[j*r+k] = ω_r^{jk} for the generic radix (forward), dftInv conjugate.
	dft, dftInv []complex128
}

func newBatchFFT(n int) *batchFFT {
	f := &batchFFT{n: n}
	var radices []int
	rest := n
	for rest%4 == 0 {
		radices = append(radices, 4)
		rest /= 4
	}
	for _, r := range []int{2, 3, 5} {
		for rest%r == 0 {
			radices = append(radices, r)
			rest /= r
		}
	}
	for r := 7; rest > 1; r += 2 {
		for rest%r == 0 {
			radices = append(radices, r)
			rest /= r
		}
	}
	length, s := n, 1
	for _, r := range radices {
		m := length / r
		st := fftStage{r: r, m: m, s: s}
		st.tw = make([]complex128, m*r)
		st.twInv = make([]complex128, m*r)
		for p := range m {
			for j := range r {
				a := -2 * math.Pi * float64(j*p) / float64(length)
				st.tw[p*r+j] = cmplx.Rect(1, a)
				st.twInv[p*r+j] = cmplx.Rect(1, -a)
			}
		}
		if r != 2 && r != 4 && r != 5 {
			st.dft = make([]complex128, r*r)
			st.dftInv = make([]complex128, r*r)
			for j := range r {
				for k := range r {
					a := -2 * math.Pi * float64((j*k)%r) / float64(r)
					st.dft[j*r+k] = cmplx.Rect(1, a)
					st.dftInv[j*r+k] = cmplx.Rect(1, -a)
				}
			}
		}
		f.stages = append(f.stages, st)
		length, s = m, s*r
	}
	return f
}

// transform runs the FFT over x ([n][B]) using y (same length) as scratch;
// the result is left in x.
func (f *batchFFT) transform(x, y []complex128, B int, inverse bool) {
	src, dst := x, y
	for i := range f.stages {
		st := &f.stages[i]
		tw, dft := st.tw, st.dft
		if inverse {
			tw, dft = st.twInv, st.dftInv
		}
		switch st.r {
		case 2:
			radix2(dst, src, st.m, st.s, B, tw)
		case 4:
			radix4(dst, src, st.m, st.s, B, tw, inverse)
		case 5:
			radix5(dst, src, st.m, st.s, B, tw, inverse)
		default:
			radixGeneric(dst, src, st.r, st.m, st.s, B, tw, dft)
		}
		src, dst = dst, src
	}
	if &src[0] != &x[0] {
		copy(x, src)
	}
}

// Element (q + s·i) of a stage is the B-vector at offset (q + s·i)·B.

func radix2(y, x []complex128, m, s, B int, tw []complex128) {
	sb := s * B
	for p := range m {
		w := tw[p*2+1]
		for q := 0; q < sb; q++ {
			a := x[q+sb*p]
			b := x[q+sb*(p+m)]
			y[q+sb*(2*p)] = a + b
			y[q+sb*(2*p+1)] = (a - b) * w
		}
	}
}

func radix4(y, x []complex128, m, s, B int, tw []complex128, inverse bool) {
	sb := s * B
	for p := range m {
		w1, w2, w3 := tw[p*4+1], tw[p*4+2], tw[p*4+3]
		for q := 0; q < sb; q++ {
			a := x[q+sb*p]
			b := x[q+sb*(p+m)]
			c := x[q+sb*(p+2*m)]
			d := x[q+sb*(p+3*m)]
			apc, amc := a+c, a-c
			bpd, bmd := b+d, b-d
			// −i·(b − d) forward, +i·(b − d) inverse.
			jbmd := complex(imag(bmd), -real(bmd))
			if inverse {
				jbmd = -jbmd
			}
			y[q+sb*(4*p)] = apc + bpd
			y[q+sb*(4*p+1)] = (amc + jbmd) * w1
			y[q+sb*(4*p+2)] = (apc - bpd) * w2
			y[q+sb*(4*p+3)] = (amc - jbmd) * w3
		}
	}
}

// radix5 is the 5-point DFT with the symmetric/antisymmetric split:
// X1,4 = a + c1·(b+e) + c2·(c+d) ∓ i·(s1·(b−e) + s2·(c−d)),
// X2,3 = a + c2·(b+e) + c1·(c+d) ∓ i·(s2·(b−e) − s1·(c−d)),
// cₖ = cos(2πk/5), sₖ = sin(2πk/5); the inverse flips the signs of i.
func radix5(y, x []complex128, m, s, B int, tw []complex128, inverse bool) {
	c1, c2 := math.Cos(2*math.Pi/5), math.Cos(4*math.Pi/5)
	s1, s2 := math.Sin(2*math.Pi/5), math.Sin(4*math.Pi/5)
	if inverse {
		s1, s2 = -s1, -s2
	}
	sb := s * B
	for p := range m {
		w1, w2, w3, w4 := tw[p*5+1], tw[p*5+2], tw[p*5+3], tw[p*5+4]
		for q := 0; q < sb; q++ {
			a := x[q+sb*p]
			b := x[q+sb*(p+m)]
			c := x[q+sb*(p+2*m)]
			d := x[q+sb*(p+3*m)]
			e := x[q+sb*(p+4*m)]
			t1, t2, t3, t4 := b+e, c+d, b-e, c-d
			m1r := real(a) + c1*real(t1) + c2*real(t2)
			m1i := imag(a) + c1*imag(t1) + c2*imag(t2)
			m2r := real(a) + c2*real(t1) + c1*real(t2)
			m2i := imag(a) + c2*imag(t1) + c1*imag(t2)
			n1r := s1*real(t3) + s2*real(t4)
			n1i := s1*imag(t3) + s2*imag(t4)
			n2r := s2*real(t3) - s1*real(t4)
			n2i := s2*imag(t3) - s1*imag(t4)
			// −i·(n_r + i·n_i) = n_i − i·n_r.
			y[q+sb*(5*p)] = a + t1 + t2
			y[q+sb*(5*p+1)] = complex(m1r+n1i, m1i-n1r) * w1
			y[q+sb*(5*p+2)] = complex(m2r+n2i, m2i-n2r) * w2
			y[q+sb*(5*p+3)] = complex(m2r-n2i, m2i+n2r) * w3
			y[q+sb*(5*p+4)] = complex(m1r-n1i, m1i+n1r) * w4
		}
	}
}

func radixGeneric(y, x []complex128, r, m, s, B int, tw, dft []complex128) {
	sb := s * B
	in := make([]complex128, r)
	for p := range m {
		for q := 0; q < sb; q++ {
			for k := range r {
				in[k] = x[q+sb*(p+k*m)]
			}
			for j := range r {
				var acc complex128
				row := dft[j*r : (j+1)*r]
				for k := range r {
					acc += in[k] * row[k]
				}
				y[q+sb*(r*p+j)] = acc * tw[p*r+j]
			}
		}
	}
}

// fft2Plan transforms p×q row-major arrays: all columns in one batched pass,
// a transpose, all rows as columns, and a transpose back.
type fft2Plan struct {
	p, q       int
	colP, colQ *batchFFT
	y, t       []complex128
}

func newFFT2Plan(p, q int) *fft2Plan {
	return &fft2Plan{p: p, q: q, colP: newBatchFFT(p), colQ: newBatchFFT(q),
		y: make([]complex128, p*q), t: make([]complex128, p*q)}
}

func (pl *fft2Plan) transform(a []complex128, inverse bool) {
	p, q := pl.p, pl.q
	pl.colP.transform(a, pl.y, q, inverse)
	for r := range p {
		for c := range q {
			pl.t[c*p+r] = a[r*q+c]
		}
	}
	pl.colQ.transform(pl.t, pl.y, p, inverse)
	for c := range q {
		for r := range p {
			a[r*q+c] = pl.t[c*p+r]
		}
	}
}
