package mask

import "math/bits"

// Mask is a set of coordinates of a length-n vector, stored as a bitset
// (n/8 bytes): one example's coordinate mask under twice sampling
// (sampler.Twice draws it; the clippers apply it).
type Mask struct {
	n     int
	words []uint64
}

// New returns an empty mask over n coordinates.
func New(n int) *Mask {
	return &Mask{n: n, words: make([]uint64, (n+63)/64)}
}

// Len is the number of coordinates the mask ranges over.
func (m *Mask) Len() int { return m.n }

// Has reports whether coordinate i is in the mask.
func (m *Mask) Has(i int) bool { return m.words[i>>6]&(1<<(uint(i)&63)) != 0 }

// Count is the number of coordinates in the mask.
func (m *Mask) Count() int {
	c := 0
	for _, w := range m.words {
		c += bits.OnesCount64(w)
	}
	return c
}

// Words is the bitset itself (coordinate i is bit i&63 of word i>>6), for
// the sampler that draws it; call Trim after writing whole words.
func (m *Mask) Words() []uint64 { return m.words }

// Clear empties the mask.
func (m *Mask) Clear() { clear(m.words) }

// Set adds coordinate i.
func (m *Mask) Set(i int) {
	m.words[i>>6] |= 1 << (uint(i) & 63)
}

// Fill sets every coordinate.
func (m *Mask) Fill() {
	for i := range m.words {
		m.words[i] = ^uint64(0)
	}
	m.Trim()
}

// Trim clears the bits past n in the last word.
func (m *Mask) Trim() {
	if r := m.n & 63; r != 0 {
		m.words[len(m.words)-1] &= (1 << uint(r)) - 1
	}
}

// AddMaskedTo adds m ⊙ v to acc: acc[i] += v[i] for i in the mask. It
// panics if the lengths differ from Len.
func (m *Mask) AddMaskedTo(acc, v []float32) {
	if len(acc) != m.n || len(v) != m.n {
		panic("mask: Mask.AddMaskedTo length mismatch")
	}
	for wi, w := range m.words {
		base := wi << 6
		for w != 0 {
			t := bits.TrailingZeros64(w)
			acc[base+t] += v[base+t]
			w &= w - 1
		}
	}
}

// AddScaledMaskedTo adds s·(m ⊙ v) to acc: acc[i] += float32(s·v[i]) for
// i in the mask, in one pass over the mask's words (what scaling v in place
// and then AddMaskedTo compute, bit for bit, without writing v). It panics
// if the lengths differ from Len.
func (m *Mask) AddScaledMaskedTo(acc, v []float32, s float32) {
	if len(acc) != m.n || len(v) != m.n {
		panic("mask: Mask.AddScaledMaskedTo length mismatch")
	}
	for wi, w := range m.words {
		base := wi << 6
		for w != 0 {
			t := bits.TrailingZeros64(w)
			acc[base+t] += float32(s * v[base+t])
			w &= w - 1
		}
	}
}

// AddClampedMaskedTo adds clamp(float32(s·v[i]), −c, c) to acc[i] for i in
// the mask, in one pass: hybrid clipping's scale, L∞ clamp and masked sum
// without writing v.
func (m *Mask) AddClampedMaskedTo(acc, v []float32, s, c float32) {
	if len(acc) != m.n || len(v) != m.n {
		panic("mask: Mask.AddClampedMaskedTo length mismatch")
	}
	for wi, w := range m.words {
		base := wi << 6
		for w != 0 {
			t := bits.TrailingZeros64(w)
			acc[base+t] += min(max(float32(s*v[base+t]), -c), c)
			w &= w - 1
		}
	}
}

// ApplyTo zeroes the coordinates of v that are not in the mask.
func (m *Mask) ApplyTo(v []float32) {
	if len(v) != m.n {
		panic("mask: Mask.ApplyTo length mismatch")
	}
	for wi, w := range m.words {
		base := wi << 6
		end := min(base+64, m.n)
		for i := base; i < end; i++ {
			if w&(1<<uint(i-base)) == 0 {
				v[i] = 0
			}
		}
	}
}

// AddOuterMasked adds clamp(float32(s·float32(d·a[c])), −c∞, c∞) to
// acc[off+c] for the coordinates off+c (c < len(a)) in the mask: one row
// of a rank-one gradient d·aᵀ, scaled, clamped (cinf ≤ 0: no clamp) and
// masked without being materialised. The products round as a materialised
// d·a[c] does, so the result equals AddScaledMaskedTo (or
// AddClampedMaskedTo) of the materialised row bit for bit.
func (m *Mask) AddOuterMasked(acc []float32, off int, d float32, a []float32, s, cinf float32) {
	n := len(a)
	if off < 0 || off+n > m.n || len(acc) != m.n {
		panic("mask: Mask.AddOuterMasked range outside the mask")
	}
	for c := 0; c < n; {
		i := off + c
		wi, bit := i>>6, uint(i&63)
		w := m.words[wi] >> bit // bits of coordinates i, i+1, … in this word
		span := min(64-int(bit), n-c)
		if span < 64 {
			w &= 1<<uint(span) - 1
		}
		for w != 0 {
			t := bits.TrailingZeros64(w)
			v := float32(s * float32(d*a[c+t]))
			if cinf > 0 {
				v = min(max(v, -cinf), cinf)
			}
			acc[i+t] += v
			w &= w - 1
		}
		c += span
	}
}
