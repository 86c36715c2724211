package lattice

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"
)

// FuzzQuantizeNormBound feeds arbitrary float32 vectors (any bit patterns:
// NaN, ±Inf, subnormals, float32 max) and lattice exponents to Quantize and
// checks the exact bound Σq² ≤ 2²ᵏ, that no coordinate grows or flips sign,
// and that a non-finite input adds nothing; and feeds them to Truncate,
// which must equal trunc(x/γ) in exact rationals or refuse a vector out of
// its range.
func FuzzQuantizeNormBound(f *testing.F) {
	enc := func(k uint8, xs ...float32) []byte {
		b := []byte{k}
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	f.Add(enc(40, 0.5, 0.5, 0.5, 0.5))
	f.Add(enc(52, 1, 0x1p-27, 0x1p-27, 0x1p-27))
	f.Add(enc(12, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32))
	f.Add(enc(1, float32(math.NaN()), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		k := 1 + int(data[0])%52
		x := make([]float32, (len(data)-1)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[1+4*i:]))
		}
		nz, err := New(1.5, 1, 1, k)
		if err != nil {
			t.Fatal(err)
		}
		acc := make([]int64, len(x))
		out := nz.Quantize(x, acc)
		if bigSumSquares(acc).Cmp(new(big.Int).Lsh(big.NewInt(1), uint(2*k))) > 0 {
			t.Fatalf("k=%d x=%v: Σq² = %v > 2^%d", k, x, bigSumSquares(acc), 2*k)
		}
		finite := true
		for j, q := range acc {
			v := float64(x[j])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				finite = false
			}
			if q != 0 && (math.Signbit(v) != (q < 0) || math.Abs(float64(q))*nz.Gamma() > math.Abs(v)*(1+1e-15)) {
				t.Fatalf("k=%d: coordinate %d: %v became %d steps", k, j, v, q)
			}
		}
		tr := make([]int64, len(x))
		if nz.Truncate(x, tr) {
			g := new(big.Rat).SetFloat64(nz.Gamma())
			for j, v := range x {
				r := new(big.Rat).Quo(new(big.Rat).SetFloat64(float64(v)), g)
				if want := new(big.Int).Quo(r.Num(), r.Denom()); !want.IsInt64() || want.Int64() != tr[j] {
					t.Fatalf("k=%d: Truncate(%v) = %d, want %v", k, v, tr[j], want)
				}
			}
		} else if finite && len(x) > 0 {
			var m float64
			for _, v := range x {
				m = math.Max(m, math.Abs(float64(v)))
			}
			if m/nz.Gamma() < 0x1p52 {
				t.Fatalf("k=%d: Truncate refused %v, max |x|/γ = %v", k, x, m/nz.Gamma())
			}
		}
		if !finite {
			if out != NonFinite {
				t.Fatalf("non-finite input: outcome %v", out)
			}
			for _, q := range acc {
				if q != 0 {
					t.Fatal("non-finite input contributed")
				}
			}
		}
	})
}
