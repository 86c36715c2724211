package clip

import (
	"math"

	"github.com/dptrain/dptrain/sampler/mask"
)

// LInf clamps every coordinate to [−c∞, c∞]. Its L2 sensitivity is √D·c∞.
type LInf struct {
	cinf float64
	d    int
}

// NewLInf clamps D-dimensional gradients to c∞.
func NewLInf(cinf float64, d int) (*LInf, error) {
	if err := checkPositive("L-infinity clip bound", cinf); err != nil {
		return nil, err
	}
	if _, err := groupsOrWhole(nil, d); err != nil {
		return nil, err
	}
	return &LInf{cinf: cinf, d: d}, nil
}

func (l *LInf) InDim() int  { return l.d }
func (l *LInf) OutDim() int { return l.d }

// Sensitivity: L2 = √D·c∞, L∞ = c∞.
func (l *LInf) Sensitivity() Sensitivity {
	c2 := math.Sqrt(float64(l.d)) * l.cinf
	return Sensitivity{L2: c2, LInf: l.cinf, Blocks: []Block{{Name: "all", Dim: l.d, C2: c2, CInf: l.cinf, D0: float64(l.d)}}}
}

// clampInto writes g clamped to [−c, c] into out and reports whether any
// coordinate was clamped. out may alias g.
func clampInto(out, g []float32, c float32) bool {
	hit := false
	for j, v := range g {
		switch {
		case v > c:
			out[j], hit = c, true
		case v < -c:
			out[j], hit = -c, true
		default:
			out[j] = v
		}
	}
	return hit
}

// clampBound is c as a float32 rounded toward zero, so clamped values never
// exceed c.
func clampBound(c float64) float32 {
	f := float32(c)
	if float64(f) > c {
		f = math.Nextafter32(f, 0)
	}
	return f
}

// Clip clamps g into out (a non-finite g yields zeros).
func (l *LInf) Clip(out, g []float32) {
	if len(out) != len(g) || len(g) != l.d {
		panic("clip: Clip length mismatch")
	}
	if !allFinite(g) {
		clear(out)
		return
	}
	clampInto(out, g, clampBound(l.cinf))
}

// ClipSum clamps and sums b rows; see Clipper. Rows are not written.
func (l *LInf) ClipSum(grads []float32, b int, masks []*mask.Mask, sum []float32) Stats {
	checkRows(grads, b, l.d, masks, sum, l.d)
	var st Stats
	c := clampBound(l.cinf)
	for i := 0; i < b; i++ {
		row := grads[i*l.d : (i+1)*l.d]
		if !allFinite(row) {
			st.NonFinite++
			continue
		}
		if clampAdd(sum, row, 1, c, maskAt(masks, i)) {
			st.Clipped++
		}
	}
	return st
}

// clampAdd scales row by s, clamps it to [−c, c] and adds it to sum in one
// pass (with a mask, only the masked coordinates; row is not written). It
// reports whether any coordinate, masked or not, was clamped: rounding is
// monotone, so that is float32(s·max|row|) > c, found by a read-only pass.
func clampAdd(sum, row []float32, s, c float32, m *mask.Mask) bool {
	hit := false
	if m != nil {
		m.AddClampedMaskedTo(sum, row, s, c)
		return float32(s*maxAbs(row)) > c
	}
	sum = sum[:len(row)]
	for j, v := range row {
		v = float32(s * v)
		if v > c {
			v, hit = c, true
		} else if v < -c {
			v, hit = -c, true
		}
		sum[j] += v
	}
	return hit
}

func addRow(sum, row []float32, m *mask.Mask) {
	if m != nil {
		m.AddMaskedTo(sum, row)
		return
	}
	for j, v := range row {
		sum[j] += v
	}
}

// L2LInf is hybrid clipping (docs/twice-sampling.md#hybrid-clipping): L2 clip
// to c2, then clamp every coordinate to c∞ = c2/√d0. Both bounds hold
// afterwards (the clamp only shrinks the norm).
type L2LInf struct {
	c2, cinf, d0 float64
	d            int

	factScratch  []float32 // ClipSumFactored's GEMM factors, reused across calls
	layerScratch layerScratch
}

// NewL2LInf clips to L2 norm c2 and then to c∞ = c2/√d0 (d0 ≥ 1).
func NewL2LInf(c2, d0 float64, d int) (*L2LInf, error) {
	if err := checkPositive("L2 clip norm", c2); err != nil {
		return nil, err
	}
	if !(d0 >= 1) || math.IsInf(d0, 0) {
		return nil, clipErrorf("hybrid clipping d0 must be >= 1 and finite, got %v", d0)
	}
	if _, err := groupsOrWhole(nil, d); err != nil {
		return nil, err
	}
	return &L2LInf{c2: c2, cinf: c2 / math.Sqrt(d0), d0: d0, d: d}, nil
}

// CInf is the L∞ bound c2/√d0.
func (h *L2LInf) CInf() float64 { return h.cinf }

func (h *L2LInf) InDim() int  { return h.d }
func (h *L2LInf) OutDim() int { return h.d }

// Sensitivity: L2 = min(c2, √D·c∞), L∞ = c∞; one block (D, c2, c∞).
func (h *L2LInf) Sensitivity() Sensitivity {
	l2 := math.Min(h.c2, math.Sqrt(float64(h.d))*h.cinf)
	return Sensitivity{L2: l2, LInf: h.cinf, Blocks: []Block{{Name: "all", Dim: h.d, C2: h.c2, CInf: h.cinf, D0: h.d0}}}
}

// Clip writes the L2-then-L∞ clipped g into out.
func (h *L2LInf) Clip(out, g []float32) {
	if len(out) != len(g) || len(g) != h.d {
		panic("clip: Clip length mismatch")
	}
	scaleInto(out, g, l2Scale(SumSquares(g), h.c2))
	clampInto(out, out, clampBound(h.cinf))
}

// ClipSum clips and sums b rows; see Clipper. Rows are not written. With
// masks (twice sampling) each row is read once for its norm and largest
// coordinate and once, at its masked coordinates, to scale, clamp and add.
func (h *L2LInf) ClipSum(grads []float32, b int, masks []*mask.Mask, sum []float32) Stats {
	checkRows(grads, b, h.d, masks, sum, h.d)
	var st Stats
	c := clampBound(h.cinf)
	for i := 0; i < b; i++ {
		row := grads[i*h.d : (i+1)*h.d]
		m := maskAt(masks, i)
		var hit bool
		if m != nil {
			ss, top := sumSquaresMaxAbs(row)
			s := l2Scale(ss, h.c2)
			if s == 0 {
				st.NonFinite++
				continue
			}
			m.AddClampedMaskedTo(sum, row, s, c)
			if hit = float32(s*top) > c; s < 1 || hit {
				st.Clipped++
			}
			continue
		}
		s := l2Scale(SumSquares(row), h.c2)
		if s == 0 {
			st.NonFinite++
			continue
		}
		hit = clampAdd(sum, row, s, c, nil)
		if s < 1 || hit {
			st.Clipped++
		}
	}
	return st
}

// sumSquaresMaxAbs is SumSquares(row) (the same lanes and order, so the
// same bits) and maxAbs(row) in one pass.
func sumSquaresMaxAbs(row []float32) (float64, float32) {
	const mag = 1<<31 - 1
	var s0, s1, s2, s3 float64
	var t0, t1, t2, t3 uint32
	n := len(row) &^ 3
	for j := 0; j < n; j += 4 {
		v := row[j : j+4 : j+4]
		a, b, c, d := float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
		t0 = max(t0, math.Float32bits(v[0])&mag)
		t1 = max(t1, math.Float32bits(v[1])&mag)
		t2 = max(t2, math.Float32bits(v[2])&mag)
		t3 = max(t3, math.Float32bits(v[3])&mag)
	}
	for _, v := range row[n:] {
		s0 += float64(v) * float64(v)
		t0 = max(t0, math.Float32bits(v)&mag)
	}
	return (s0 + s1) + (s2 + s3), math.Float32frombits(max(t0, t1, t2, t3))
}

// maxAbs is max |v| over a finite row. For finite floats the order of |v|
// is the order of their bits with the sign cleared, so the scan compares
// integers (four lanes; a float max with NaN handling is ~3× slower here).
func maxAbs(row []float32) float32 {
	const mag = 1<<31 - 1
	var t0, t1, t2, t3 uint32
	n := len(row) &^ 3
	for j := 0; j < n; j += 4 {
		v := row[j : j+4 : j+4]
		t0 = max(t0, math.Float32bits(v[0])&mag)
		t1 = max(t1, math.Float32bits(v[1])&mag)
		t2 = max(t2, math.Float32bits(v[2])&mag)
		t3 = max(t3, math.Float32bits(v[3])&mag)
	}
	for _, v := range row[n:] {
		t0 = max(t0, math.Float32bits(v)&mag)
	}
	return math.Float32frombits(max(t0, t1, t2, t3))
}
