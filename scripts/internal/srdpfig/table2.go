package main

import (
	"fmt"
	"math"
)

// Paper 000's closed-form Table 2 (and Theorem 17), used only to reproduce
// the table and Fig. 2: each cell is Theorem 2 at c = 2 with the paper's
// relaxations. The accountant computes the bound itself
// (accountant.SRDPBound); these cells are the paper's own numbers.

// sgdIterSRDP is A_SGD-iter (Theorem 15) with κ_τ = Kappa: RDP αε²/2 and the
// reconstructed SRDP ατ²μ²ε²·n·log(n−κ+2)/(2(n−κ+1)L²·log n) (the printed one
// lacks ε², docs/srdp.md#mechanism-curves). Its assumption that differing
// points are consecutive rarely holds after preprocessing, so it serves Table
// 2 only and is not part of the accountant.
type sgdIterSRDP struct {
	N, Kappa   int
	L, Mu, Eps float64
}

// RDP is αε²/2.
func (s sgdIterSRDP) RDP(alpha float64) float64 { return alpha * s.Eps * s.Eps / 2 }

// SRDP is the reconstructed Theorem 15 curve.
func (s sgdIterSRDP) SRDP(alpha, tau float64) float64 {
	n, k := float64(s.N), float64(s.Kappa)
	return alpha * tau * tau * s.Mu * s.Mu * s.Eps * s.Eps * n * math.Log(n-k+2) / (2 * (n - k + 1) * s.L * s.L * math.Log(n))
}

// table2Mech names a row of paper 000's Table 2.
type table2Mech int

// table2Prep names a column of paper 000's Table 2.
type table2Prep int

const (
	t2Gaussian table2Mech = iota // M_G
	t2DPGD                       // A_GD
	t2PureDP                     // M_L and M_E
	t2SGDSamp                    // A_SGD-samp
	t2SGDIter                    // A_SGD-iter
)

const (
	t2Dedup table2Prep = iota
	t2Quantization
	t2MeanImputation
	t2PCARank
	t2StandardScaling
)

// table2Params are the symbols of Table 2 (L = μ = Δ_f = Δ_Q = 1).
type table2Params struct {
	Alpha, Eps float64 // order (α ≥ 11 for the 1.05 factor) and noise knob ε
	N          int     // dataset size
	P          float64 // Δ∞ of dedup / quantization / imputation
	Eta        float64 // quantization radius
	DeltaMin   float64 // PCA eigengap lower bound δ^k_min
	SigmaMin   float64 // smallest feature std for scaling
}

// table2Cell evaluates paper 000's closed-form Table 2 / Theorem 17 cell. The two
// standard-scaling cells of M_G and A_GD are printed with τ² = 4/σ³; printed
// = true returns them as printed, false (the default) the corrected
// τ² = 16/σ⁶. Cells the paper leaves empty are an error.
func table2Cell(m table2Mech, p table2Prep, v table2Params, printed bool) (float64, error) {
	a, e2 := v.Alpha, v.Eps*v.Eps
	n, pp, eta, dm, sm := float64(v.N), v.P, v.Eta, v.DeltaMin, v.SigmaMin
	if p == t2Dedup {
		p, eta = t2Quantization, 1
	}
	pca := 12.2 * 12.2 / (dm * dm)
	switch m {
	case t2Gaussian:
		switch p {
		case t2Quantization:
			return 1.05 * a * e2 * (1 + eta*eta*pp*pp), nil
		case t2MeanImputation:
			return 1.05 * a * e2 * (1 + 4*pp*pp/((n-pp)*(n-pp))), nil
		case t2PCARank:
			return 1.05 * a * e2 * (1 + pca), nil
		case t2StandardScaling:
			if printed {
				return 1.05 * a * e2 * (1 + 4/(sm*sm*sm)), nil
			}
			return 1.05 * a * e2 * (1 + 16/math.Pow(sm, 6)), nil
		}
	case t2DPGD:
		switch p {
		case t2Quantization:
			return 1.05 * a * e2 * (4 + eta*eta*pp*pp), nil
		case t2MeanImputation:
			return 4.2 * a * e2 * (1 + pp*pp/((n-pp)*(n-pp))), nil
		case t2PCARank:
			return 1.05 * a * e2 * (4 + pca), nil
		case t2StandardScaling:
			if printed {
				return 4.2 * a * e2 * (1 + 1/(sm*sm*sm)), nil
			}
			return 4.2 * a * e2 * (1 + 4/math.Pow(sm, 6)), nil
		}
	case t2PureDP:
		switch p {
		case t2Quantization:
			return v.Eps * (1 + eta*pp), nil
		case t2MeanImputation:
			return v.Eps * (1 + 2*pp/(n-pp)), nil
		case t2PCARank:
			return v.Eps * (1 + 12.2/dm), nil
		case t2StandardScaling:
			return v.Eps * (1 + 4/(sm*sm*sm)), nil
		}
	case t2SGDSamp:
		switch p {
		case t2PCARank:
			return 1.05 * a * e2 * (2*a + pca), nil
		case t2StandardScaling:
			return 2.1 * a * e2 * (a + 8/math.Pow(sm, 6)), nil
		}
	case t2SGDIter:
		r := n * math.Log(n-pp) / ((n - pp) * math.Log(n))
		switch p {
		case t2Quantization:
			return 1.1 * a * e2 * (1 + eta*eta*pp*pp*r), nil
		case t2MeanImputation:
			return 1.1 * a * e2 * (1 + 4*pp*pp*r/((n-pp)*(n-pp))), nil
		}
	}
	return 0, fmt.Errorf("paper 000 Table 2 has no cell for mechanism %d, preprocessing %d", m, p)
}
