package clip

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
)

// linearModel is a tiny multi-output linear regression z = W x + b with loss
// ½‖z − t‖², written for this test: per-sample gradients gW = (z−t) xᵀ,
// gb = z − t. Groups: W, then b.
type linearModel struct {
	in, out  int
	params   []float32
	grads    []float32 // retained chunk, materialised internally
	dz, a    []float64 // retained chunk, factored: dz_i, x_i
	n        int
	factored bool // norms as ‖x‖²‖dz‖² (an engine's shortcut) instead of SumSquares
}

func newLinear(in, out int, seed uint64) *linearModel {
	m := &linearModel{in: in, out: out, params: make([]float32, out*in+out)}
	s := rng.New(seed)
	for i := range m.params {
		m.params[i] = float32(s.NormFloat64())
	}
	return m
}

func (m *linearModel) NumParams() int    { return len(m.params) }
func (m *linearModel) Params() []float32 { return m.params }
func (m *linearModel) Groups() []models.Group {
	return []models.Group{{Name: "W", Offset: 0, Len: m.out * m.in}, {Name: "b", Offset: m.out * m.in, Len: m.out}}
}
func (m *linearModel) InputSize() int   { return m.in }
func (m *linearModel) MaxBatch() int    { return 1 << 20 }
func (m *linearModel) SetTraining(bool) {}
func (m *linearModel) Evaluate(models.Batch) (float64, int, error) {
	return 0, 0, fmt.Errorf("not needed")
}

func (m *linearModel) PerSampleGrads(b models.Batch, grads []float32, losses []float32) error {
	d := m.NumParams()
	for i := 0; i < b.N; i++ {
		x := b.X[i*m.in : (i+1)*m.in]
		g := grads[i*d : (i+1)*d]
		var loss float64
		for o := 0; o < m.out; o++ {
			z := float64(m.params[m.out*m.in+o])
			for j, xv := range x {
				z += float64(m.params[o*m.in+j]) * float64(xv)
			}
			r := z - float64(b.T[i*m.out+o])
			loss += r * r / 2
			for j, xv := range x {
				g[o*m.in+j] = float32(r * float64(xv))
			}
			g[m.out*m.in+o] = float32(r)
		}
		losses[i] = float32(loss)
	}
	return nil
}

func (m *linearModel) PerSampleNormsSq(b models.Batch, normsSq []float64, losses []float32) error {
	d := m.NumParams()
	m.n = b.N
	m.grads = slices.Grow(m.grads[:0], b.N*d)[:b.N*d]
	if err := m.PerSampleGrads(b, m.grads, losses); err != nil {
		return err
	}
	for i := 0; i < b.N; i++ {
		g := m.grads[i*d : (i+1)*d]
		w, bias := g[:m.out*m.in], g[m.out*m.in:]
		if m.factored {
			// ‖x‖²·‖dz‖² + ‖dz‖², the Linear-layer shortcut.
			dz2 := SumSquares(bias)
			x2 := SumSquares(b.X[i*m.in : (i+1)*m.in])
			normsSq[2*i] = x2 * dz2
		} else {
			normsSq[2*i] = SumSquares(w)
		}
		normsSq[2*i+1] = SumSquares(bias)
	}
	return nil
}

func (m *linearModel) AccumulateScaled(scales []float32, sum []float32) error {
	d := m.NumParams()
	for i := 0; i < m.n; i++ {
		g := m.grads[i*d : (i+1)*d]
		for k, gr := range m.Groups() {
			s := scales[2*i+k]
			for j := gr.Offset; j < gr.Offset+gr.Len; j++ {
				sum[j] += float32(s * g[j])
			}
		}
	}
	return nil
}

var _ models.PerSampleModel = (*linearModel)(nil)

func linearBatch(n, in, out int, seed uint64) models.Batch {
	s := rng.New(seed)
	b := models.Batch{N: n, X: make([]float32, n*in), T: make([]float32, n*out)}
	for i := range b.X {
		b.X[i] = float32(s.NormFloat64() * math.Exp(s.Float64()*2-1))
	}
	for i := range b.T {
		b.T[i] = float32(3 * s.NormFloat64())
	}
	return b
}

// TestNormOnlyMatchesMaterialised: Scales + AccumulateScaled gives the
// materialised ClipSum bit for bit when the model's norms use SumSquares per
// group, and to float rounding with the factored ‖x‖²‖dz‖² norm.
func TestNormOnlyMatchesMaterialised(t *testing.T) {
	const in, out, n = 23, 4, 64
	for _, factored := range []bool{false, true} {
		m := newLinear(in, out, 1)
		m.factored = factored
		d := m.NumParams()
		batch := linearBatch(n, in, out, 2)
		grads := make([]float32, n*d)
		losses := make([]float32, n)
		if err := m.PerSampleGrads(batch, grads, losses); err != nil {
			t.Fatal(err)
		}
		// Clip at the median norm, so about half the examples are clipped.
		ns := make([]float64, n)
		for i := range ns {
			ns[i] = norm(grads[i*d : (i+1)*d])
		}
		slices.Sort(ns)
		c := ns[n/2]
		l2, _ := NewL2(c, d, m.Groups())
		pl, _ := NewPerLayer(c, d, m.Groups(), []float64{3, 1})
		for name, c := range map[string]NormClipper{"L2": l2, "PerLayer": pl} {
			want := make([]float32, d)
			stM := c.ClipSum(slices.Clone(grads), n, nil, want)

			normsSq := make([]float64, n*2)
			if err := m.PerSampleNormsSq(batch, normsSq, losses); err != nil {
				t.Fatal(err)
			}
			scales := make([]float32, n*2)
			stN := c.Scales(normsSq, n, scales)
			got := make([]float32, d)
			if err := m.AccumulateScaled(scales, got); err != nil {
				t.Fatal(err)
			}
			if stM.Clipped == 0 || stM.Clipped >= 2*n {
				t.Fatalf("%s: %d clipped of %d; the test needs both cases", name, stM.Clipped, n)
			}
			if !factored {
				if !slices.Equal(got, want) || stN != stM {
					t.Errorf("%s: norm-only sum differs from the materialised one (stats %+v vs %+v)", name, stN, stM)
				}
				continue
			}
			for j := range got {
				if e := math.Abs(float64(got[j] - want[j])); e > 1e-5*(1+math.Abs(float64(want[j]))) {
					t.Errorf("%s factored: sum[%d] = %v, materialised %v", name, j, got[j], want[j])
					break
				}
			}
		}
	}
}
