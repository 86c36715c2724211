package clip

// WithNormMargin returns nc clipping every example to C/rho instead of C on
// the norm-only path: its Scales sees each squared norm multiplied by
// rho², so an example's scaled contribution stays within C when the sum is
// computed from operands whose rounding can make its norm up to rho times
// the norm the scale was computed from (bfloat16 GEMMs: docs/precision.md).
// The Sensitivity, and so the noise and the account, stay nc's. rho must
// be at least 1.
func WithNormMargin(nc NormClipper, rho float64) NormClipper {
	if !(rho >= 1) {
		panic("clip: WithNormMargin needs rho >= 1")
	}
	return &normMargin{NormClipper: nc, rho2: rho * rho}
}

type normMargin struct {
	NormClipper
	rho2 float64
	buf  []float64 // the inflated squared norms, reused across calls
}

func (m *normMargin) Scales(normsSq []float64, b int, scales []float32) Stats {
	if cap(m.buf) < len(normsSq) {
		m.buf = make([]float64, len(normsSq))
	}
	in := m.buf[:len(normsSq)]
	for i, v := range normsSq {
		in[i] = v * m.rho2 // NaN and ±Inf stay non-finite: dropped as before
	}
	return m.NormClipper.Scales(in, b, scales)
}
