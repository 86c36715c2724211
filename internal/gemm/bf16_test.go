package gemm

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bf16Kernels are the bf16 kernels to test: the portable one always, the
// AVX-512 BF16 one and the AMX ones where the CPU runs them (skipped with
// the reason if not).
func bf16Kernels(t *testing.T, f func(t *testing.T, kern bf16Impl)) {
	for _, k := range []struct {
		name string
		impl bf16Impl
		skip string
	}{
		{"go", bf16Impl{kern: kernelBF16Go}, ""},
		{"avx512bf16", bf16Impl{kern: bf16Kernel, vec: bf16AsmPack}, noBF16},
		{"amx", bf16Impl{kern: amxKernelsOrNil(), vec: true, amx: &amxKernels}, noAMX},
	} {
		t.Run(k.name, func(t *testing.T) {
			if k.impl.kern == nil {
				t.Skip(k.skip)
			}
			f(t, k.impl)
		})
	}
}

const (
	noBF16 = "no AVX-512 BF16 kernel here: the CPU lacks avx512_bf16 (or AVX-512 register saving), or the build is not amd64 or has the purego tag"
	noAMX  = "no AMX kernel here: the CPU lacks amx_bf16 or avx512_bf16, the OS did not grant the tile state (Linux 5.16+), or the build is not linux/amd64 or has the purego tag"
)

// amxKernelsOrNil stands for the AMX kernels in bf16Impl.kern's nil check:
// a non-nil bf16Func only when they exist (it is not called).
func amxKernelsOrNil() bf16Func {
	if amxKernels.plain[1][1] == nil {
		return nil
	}
	return kernelBF16Go
}

// bf16Impl is a kernel and whether its packing is the vector one; amx, if
// set, selects amxProduct with those kernels instead.
type bf16Impl struct {
	kern bf16Func
	vec  bool
	amx  *amxSet
}

// toBF16 against math/big's rounding to 8 significant bits, ties to even,
// on random bit patterns, the halfway cases and the edges.
func TestToBF16RoundsToNearestEven(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	xs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.00390625 /* 1+2⁻⁸, a tie to even: 1 */, 1.01171875 /* 1+3·2⁻⁸, a tie to 1+2⁻⁶ */, math.MaxFloat32, -math.MaxFloat32, 3.3895314e38 /* largest bf16 */, math.SmallestNonzeroFloat32, 1e-40, float32(math.Inf(1)), float32(math.Inf(-1))}
	for range 200000 {
		xs = append(xs, math.Float32frombits(rnd.Uint32()))
	}
	for _, x := range xs {
		got := fromBF16(toBF16(x))
		if x != x {
			if got == got {
				t.Fatalf("toBF16(NaN %#x) = %v, want a NaN", math.Float32bits(x), got)
			}
			continue
		}
		f := new(big.Float).SetPrec(8).SetMode(big.ToNearestEven)
		f.Set(new(big.Float).SetFloat64(float64(x)))
		w, _ := f.Float64()
		if math.Abs(float64(x)) < 0x1p-126 {
			// Subnormal: bfloat16's are the multiples of 2⁻¹³³.
			w = math.Copysign(math.RoundToEven(float64(x)*0x1p133)*0x1p-133, float64(x))
		}
		// bfloat16 has float32's exponent range: a rounded value past
		// MaxFloat32's bf16 neighbourhood is ±Inf.
		if math.Abs(w) > math.MaxFloat32 {
			w = math.Inf(int(math.Copysign(1, w)))
		}
		if float64(got) != w || math.Signbit(float64(got)) != math.Signbit(w) {
			t.Fatalf("toBF16(%v = %#x) = %v, want %v", x, math.Float32bits(x), got, w)
		}
	}
}

// bf16Case is one product shape for the bf16 tests.
type bf16Case struct {
	m, n, k        int
	transA, transB bool
	alpha, beta    float32
	workers        int
}

func bf16Cases() []bf16Case {
	var cs []bf16Case
	// Whole and partial register tiles of both kernels (12×32, and AMX
	// blocks of 16 or 32 rows by 16 or 32 columns), k odd and even, below,
	// at and past one AMX step of 32, and k = 127 and 256, whose packed AMX
	// rows get a padded stride.
	for _, s := range [][3]int{{1, 1, 1}, {12, 32, 2}, {12, 32, 7}, {13, 33, 64}, {5, 70, 129}, {100, 40, 300}, {16, 1024 / 8, 144}, {200, 65, 33},
		{16, 32, 32}, {32, 64, 31}, {33, 31, 33}, {17, 15, 600}, {40, 50, 256}, {33, 17, 127}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			cs = append(cs, bf16Case{s[0], s[1], s[2], tr[0], tr[1], 1, 0, 1})
		}
	}
	return append(cs,
		bf16Case{37, 45, 50, false, false, -0.75, 1, 1},
		bf16Case{37, 45, 51, true, false, 2, 0.5, 1},
		bf16Case{200, 100, 90, false, true, 1, -1.5, 2},
		bf16Case{300, 64, 64, true, true, 0.5, 0, 3},
	)
}

// runBF16 runs the case through kern on the stored matrices, with C
// starting as c0 (nil: NaN, which beta = 0 must overwrite).
func runBF16(kern bf16Impl, tc bf16Case, a, b matrix, c0 []float32) []float32 {
	as, lda := a.store(tc.transA, 3)
	bs, ldb := b.store(tc.transB, 1)
	c := make([]float32, tc.m*tc.n)
	for i := range c {
		c[i] = float32(math.NaN())
		if c0 != nil {
			c[i] = c0[i]
		}
	}
	if kern.amx != nil {
		amxProduct(kern.amx, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, as, lda, bs, ldb, tc.beta, c, tc.n, tc.workers)
		return c
	}
	bf16Product(kern.kern, kern.vec, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, as, lda, bs, ldb, tc.beta, c, tc.n, tc.workers)
	return c
}

// roundedBF16 is m with every element rounded to bfloat16.
func roundedBF16(m matrix) matrix {
	r := matrix{m.r, m.c, make([]float64, len(m.v))}
	for i, v := range m.v {
		r.v[i] = float64(fromBF16(toBF16(float32(v))))
	}
	return r
}

// SgemmBF16's kernels against float64 references: within bf16's bound of
// the exact product of the float32 inputs, (2u + u² + (k+3)·2⁻²⁴·(1+u)²)·
// |alpha|·Σ|a||b| with u = 2⁻⁸ (docs/precision.md), and within float32
// accumulation error, (k+3)·2⁻²⁴·(1+u)²·|alpha|·Σ|a||b|, of the exact
// product of the bf16-rounded inputs, which bf16's rounding error (about
// 2⁻⁹ of each input) would exceed: so the inputs were rounded to bf16, no
// more and no less.
func TestSgemmBF16AgainstFloat64(t *testing.T) {
	bf16Kernels(t, func(t *testing.T, kern bf16Impl) {
		rnd := rand.New(rand.NewPCG(3, 4))
		const u = 1.0 / 256
		for _, tc := range bf16Cases() {
			a, b := randMatrix(rnd, tc.m, tc.k), randMatrix(rnd, tc.k, tc.n)
			c0 := make([]float32, tc.m*tc.n)
			for i := range c0 {
				c0[i] = float32(rnd.NormFloat64())
			}
			if tc.beta == 0 {
				c0 = nil
			}
			c := runBF16(kern, tc, a, b, c0)
			exact, mag := reference(a, b)
			rounded, _ := reference(roundedBF16(a), roundedBF16(b))
			acc := float64(tc.k+3) * 0x1p-24 * (1 + u) * (1 + u)
			for i, got := range c {
				var cb float64
				if c0 != nil {
					cb = float64(tc.beta) * float64(c0[i])
				}
				al := math.Abs(float64(tc.alpha))
				want := float64(tc.alpha)*exact[i] + cb
				slack := 0x1p-22 * (math.Abs(cb) + math.Abs(want))
				if d := math.Abs(float64(got) - want); !(d <= (2*u+u*u+acc)*al*mag[i]+slack) {
					t.Fatalf("%+v: C[%d] = %v, exact %v: off by %.3g, bound %.3g", tc, i, got, want, d, (2*u+u*u+acc)*al*mag[i]+slack)
				}
				wantR := float64(tc.alpha)*rounded[i] + cb
				if d := math.Abs(float64(got) - wantR); !(d <= acc*al*mag[i]+0x1p-22*(math.Abs(cb)+math.Abs(wantR))) {
					t.Fatalf("%+v: C[%d] = %v, product of the bf16-rounded inputs %v: off by %.3g, more than float32 accumulation allows (%.3g)", tc, i, got, wantR, d, acc*al*mag[i])
				}
			}
		}
	})
}

// With small integers every bf16 rounding, product and float32 sum is
// exact, so each kernel must give the float64 product exactly, whatever
// the transposes, edges and workers: a check of the packing and indexing
// that no rounding can hide.
func TestSgemmBF16ExactOnIntegers(t *testing.T) {
	bf16Kernels(t, func(t *testing.T, kern bf16Impl) {
		rnd := rand.New(rand.NewPCG(5, 6))
		for _, tc := range bf16Cases() {
			ints := func(r, c int) matrix {
				m := matrix{r, c, make([]float64, r*c)}
				for i := range m.v {
					m.v[i] = float64(rnd.IntN(17) - 8)
				}
				return m
			}
			a, b := ints(tc.m, tc.k), ints(tc.k, tc.n)
			tc.alpha = float32(rnd.IntN(5) - 2)
			if tc.alpha == 0 {
				tc.alpha = 3
			}
			var c0 []float32
			if tc.beta != 0 {
				tc.beta = 2
				c0 = make([]float32, tc.m*tc.n)
				for i := range c0 {
					c0[i] = float32(rnd.IntN(100) - 50)
				}
			}
			c := runBF16(kern, tc, a, b, c0)
			want, _ := reference(a, b)
			for i, got := range c {
				w := float64(tc.alpha) * want[i]
				if c0 != nil {
					w += float64(tc.beta) * float64(c0[i])
				}
				if float64(got) != w {
					t.Fatalf("%+v: C[%d] = %v, want %v", tc, i, got, w)
				}
			}
		}
	})
}

// Each element depends only on its row, column and k: a row or a column
// computed alone and the product split over 1 or 3 workers give the whole
// product's bits.
// The bf16 clipping argument rests on this (docs/precision.md): a sample's
// gradient computed for its norm and again for the sum is the same vector.
func TestSgemmBF16RowsIndependent(t *testing.T) {
	bf16Kernels(t, func(t *testing.T, kern bf16Impl) {
		rnd := rand.New(rand.NewPCG(7, 8))
		m, n, k := 50, 70, 97
		a, b := randMatrix(rnd, m, k), randMatrix(rnd, k, n)
		whole := runBF16(kern, bf16Case{m, n, k, false, true, 1, 0, 1}, a, b, nil)
		split := runBF16(kern, bf16Case{m, n, k, false, true, 1, 0, 3}, a, b, nil)
		for j := range n {
			col := matrix{k, 1, make([]float64, k)}
			for p := range k {
				col.v[p] = b.v[p*n+j]
			}
			alone := runBF16(kern, bf16Case{m, 1, k, false, true, 1, 0, 1}, a, col, nil)
			for i := range m {
				if math.Float32bits(alone[i]) != math.Float32bits(whole[i*n+j]) {
					t.Fatalf("C[%d,%d]: %v with column %d alone, %v in the whole product", i, j, alone[i], j, whole[i*n+j])
				}
			}
		}
		for i := range m {
			row := matrix{1, k, a.v[i*k : (i+1)*k]}
			alone := runBF16(kern, bf16Case{1, n, k, false, true, 1, 0, 1}, row, b, nil)
			for j := range n {
				for _, got := range []float32{alone[j], split[i*n+j]} {
					if math.Float32bits(got) != math.Float32bits(whole[i*n+j]) {
						t.Fatalf("C[%d,%d]: %v alone or split, %v in the whole product", i, j, got, whole[i*n+j])
					}
				}
			}
		}
	})
}

// The AVX-512 BF16 kernel against the portable one, bit for bit, on normal
// values (the hardware flushes subnormals, the portable kernel does not):
// VDPBF16PS adds each pair's two exact products one after the other.
func TestKernelBF16MatchesPortable(t *testing.T) {
	if bf16Kernel == nil {
		t.Skip(noBF16)
	}
	rnd := rand.New(rand.NewPCG(9, 10))
	for _, tc := range bf16Cases() {
		a, b := randMatrix(rnd, tc.m, tc.k), randMatrix(rnd, tc.k, tc.n)
		var c0 []float32
		if tc.beta != 0 {
			c0 = make([]float32, tc.m*tc.n)
			for i := range c0 {
				c0[i] = float32(rnd.NormFloat64())
			}
		}
		hw := runBF16(bf16Impl{kern: bf16Kernel, vec: bf16AsmPack}, tc, a, b, c0)
		sw := runBF16(bf16Impl{kern: kernelBF16Go}, tc, a, b, c0)
		for i := range hw {
			if math.Float32bits(hw[i]) != math.Float32bits(sw[i]) {
				t.Fatalf("%+v: C[%d]: AVX-512 BF16 %v (%#x), portable %v (%#x)", tc, i, hw[i], math.Float32bits(hw[i]), sw[i], math.Float32bits(sw[i]))
			}
		}
	}
}

// The vector packers against the Go ones, word for word, in both layouts
// (pairs along rows and pairs within a row), both strip widths, every
// tail of columns and of k, odd and even k; subnormal inputs, which the
// vector packers (VCVTNE2PS2BF16) read as zero, are left out.
func TestPackBF16Vector(t *testing.T) {
	if !bf16AsmPack {
		t.Skip(noBF16)
	}
	rnd := rand.New(rand.NewPCG(11, 12))
	for _, nr := range []int{bf16MR, bf16NR} {
		for nv := 1; nv <= nr; nv++ {
			for _, k := range []int{1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100} {
				ld := max(k, nv+3) + 2
				rows := max(k, nv) + 1
				x := make([]float32, rows*ld)
				for i := range x {
					x[i] = float32(rnd.NormFloat64() * math.Exp(4*rnd.NormFloat64()))
					switch i % 97 {
					case 0:
						x[i] = float32(math.Inf(1))
					case 1:
						x[i] = math.Float32frombits(0x7fa00001) // a signalling NaN
					}
				}
				kp := (k + 1) / 2
				for _, layout := range []string{"rows", "adj"} {
					got, want := make([]uint32, kp*nr), make([]uint32, kp*nr)
					for i := range got {
						got[i], want[i] = 0xdeadbeef, 0xdeadbeef
					}
					if layout == "rows" {
						packRowsVec(got, x, ld, k, 1, nv, nr)
						packBF16Rows(want, x, ld, k, 1, nv, nr)
					} else {
						packAdjVec(got, x, ld, k, 1, nv, nr)
						packBF16Adj(want, x, ld, k, 1, nv, nr)
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%s nr=%d nv=%d k=%d: word %d = %#08x, Go packs %#08x", layout, nr, nv, k, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// The AMX product computed as C and as Cᵀ stored transposed (the two
// orientations amxSwap chooses between) agree bit for bit on every
// transpose, edge and beta, and neither writes between the rows of C: each
// element is the same tile steps wherever it falls.
func TestAMXOrientationsAgree(t *testing.T) {
	if amxKernels.plain[1][1] == nil {
		t.Skip(noAMX)
	}
	rnd := rand.New(rand.NewPCG(15, 16))
	for _, tc := range bf16Cases() {
		a, b := randMatrix(rnd, tc.m, tc.k), randMatrix(rnd, tc.k, tc.n)
		as, lda := a.store(tc.transA, 3)
		bs, ldb := b.store(tc.transB, 1)
		ldc := tc.n + 2
		c0 := make([]float32, tc.m*ldc)
		for i := range c0 {
			c0[i] = float32(rnd.NormFloat64())
		}
		plain, swapped := append([]float32(nil), c0...), append([]float32(nil), c0...)
		amxRun(&amxKernels.plain, false, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, as, lda, bs, ldb, tc.beta, plain, ldc, tc.workers)
		amxRun(&amxKernels.trans, true, !tc.transB, !tc.transA, tc.n, tc.m, tc.k, tc.alpha, bs, ldb, as, lda, tc.beta, swapped, ldc, tc.workers)
		for i := range plain {
			if math.Float32bits(plain[i]) != math.Float32bits(swapped[i]) {
				t.Fatalf("%+v: C[%d]: %v as C, %v as Cᵀ", tc, i, plain[i], swapped[i])
			}
			if i%ldc >= tc.n && plain[i] != c0[i] {
				t.Fatalf("%+v: the gap at %d between rows of C was written", tc, i)
			}
		}
	}
}

// The AMX packing of A against its portable form, word for word: rows of
// op(A) as pair words, from A stored as is (pairs within a row) and
// transposed (pairs across rows), every row count up to a block, k odd and
// even, below, at and past one vector step of 32; the padding words and
// rows must be zero. Subnormal inputs, which the vector packers read as
// zero, are left out.
func TestPackAMXAVector(t *testing.T) {
	if !bf16AsmPack {
		t.Skip(noBF16)
	}
	rnd := rand.New(rand.NewPCG(13, 14))
	for mv := 1; mv <= amxMR; mv++ {
		for _, k := range []int{1, 2, 3, 31, 32, 33, 64, 65, 100} {
			// The row stride: whole steps of k, and one line more.
			kpad := roundUp((k+1)/2, amxKP) + 16*(k%2)
			for _, trans := range []bool{false, true} {
				rows, cols := mv+3, k
				if trans {
					rows, cols = k, mv+3
				}
				ld := cols + 5
				x := make([]float32, rows*ld)
				for i := range x {
					x[i] = float32(rnd.NormFloat64() * math.Exp(4*rnd.NormFloat64()))
					switch i % 89 {
					case 0:
						x[i] = float32(math.Inf(-1))
					case 1:
						x[i] = math.Float32frombits(0x7fa00001) // a signalling NaN
					}
				}
				got, want := make([]uint32, amxMR*kpad), make([]uint32, amxMR*kpad)
				for i := range got {
					got[i], want[i] = 0xdeadbeef, 0xdeadbeef
				}
				var tmp []uint32
				packAMXA(true, got, kpad, x, ld, trans, k, 2, mv, &tmp)
				packAMXA(false, want, kpad, x, ld, trans, k, 2, mv, &tmp)
				// The portable form, from the definition.
				for r := range roundUp(mv, 16) {
					for q := range kpad {
						var w uint32
						for h := range 2 {
							p := 2*q + h
							if r >= mv || p >= k {
								continue
							}
							var v float32
							if trans {
								v = x[p*ld+2+r]
							} else {
								v = x[(2+r)*ld+p]
							}
							w |= toBF16(v) << (16 * h)
						}
						if want[r*kpad+q] != w {
							t.Fatalf("portable packAMXA trans=%v mv=%d k=%d: row %d word %d = %#08x, want %#08x", trans, mv, k, r, q, want[r*kpad+q], w)
						}
					}
				}
				for i := range want[:roundUp(mv, 16)*kpad] {
					if got[i] != want[i] {
						t.Fatalf("trans=%v mv=%d k=%d: word %d = %#08x, Go packs %#08x", trans, mv, k, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// A per-sample-sized AMX product allocates nothing once its arena exists:
// the engine makes thousands per step.
func TestAMXProductAllocatesNothing(t *testing.T) {
	if amxKernels.plain[1][1] == nil {
		t.Skip(noAMX)
	}
	m, n, k := 16, 169, 64
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	f := func() { amxProduct(&amxKernels, true, false, m, n, k, 1, a, m, b, n, 0, c, n, 1) }
	f()
	if allocs := testing.AllocsPerRun(20, f); allocs != 0 {
		t.Errorf("%v allocations per product, want 0", allocs)
	}
}

// SgemmBF16 keeps BLAS's conventions: alpha = 0 or k = 0 scales C by beta
// (beta = 0 overwriting NaN), and empty products leave C alone.
func TestSgemmBF16Conventions(t *testing.T) {
	c := []float32{float32(math.NaN()), 2}
	SgemmBF16(false, false, 1, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
	if c[0] != 0 || c[1] != 0 {
		t.Errorf("k = 0, beta = 0: C = %v, want zeros", c)
	}
	c = []float32{1, 2}
	SgemmBF16(false, false, 1, 2, 1, 0, []float32{5}, 1, []float32{1, 1}, 2, 3, c, 2)
	if c[0] != 3 || c[1] != 6 {
		t.Errorf("alpha = 0, beta = 3: C = %v, want [3 6]", c)
	}
	c = []float32{1, 2}
	SgemmBF16(false, false, 1, 2, 3, 1, []float32{1, 1, 1}, 3, []float32{1, 0, 2, 0, 4, 0}, 2, 1, c, 2)
	if c[0] != 8 || c[1] != 2 {
		t.Errorf("C = %v, want [8 2]", c)
	}
}

// BenchmarkSgemmBF16 times SgemmBF16 beside Sgemm on 1024³ and the
// engine's per-sample conv shapes with the transposes models/nn uses
// (forward Wᵀ stored: TN; weight gradient dZ·Uᵀ: NT), for one quiet
// sitting: go test ./internal/gemm -run '^$' -bench 'SgemmBF16' -cpu 1,2.
func BenchmarkSgemmBF16(b *testing.B) {
	for _, s := range []struct {
		m, n, k int
		tA, tB  bool
	}{{1024, 1024, 1024, false, false}, {16, 1024, 144, true, false}, {16, 144, 1024, false, true}, {32, 256, 288, true, false}, {32, 288, 256, false, true}, {64, 64, 576, true, false}, {64, 576, 64, false, true}, {16, 169, 64, true, false}, {16, 64, 169, false, true}} {
		m, n, k, tA, tB := s.m, s.n, s.k, s.tA, s.tB
		rnd := rand.New(rand.NewPCG(1, 1))
		x, y, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range x {
			x[i] = float32(rnd.NormFloat64())
		}
		for i := range y {
			y[i] = float32(rnd.NormFloat64())
		}
		lda, ldb := k, n
		if tA {
			lda = m
		}
		if tB {
			ldb = k
		}
		name := fmt.Sprintf("%dx%dx%d", m, n, k)
		if tA || tB {
			name += map[[2]bool]string{{true, false}: "-TN", {false, true}: "-NT", {true, true}: "-TT"}[[2]bool{tA, tB}]
		}
		for _, v := range []struct {
			name string
			f    func()
		}{
			{"f32", func() { Sgemm(tA, tB, m, n, k, 1, x, lda, y, ldb, 0, c, n) }},
			{"bf16", func() { SgemmBF16(tA, tB, m, n, k, 1, x, lda, y, ldb, 0, c, n) }},
		} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				for b.Loop() {
					v.f()
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
