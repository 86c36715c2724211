package main

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

func papersClose(got, want, rel float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// TV2, TV3, TV5 and TV6 of docs/srdp.md#test-vectors: the Table 2 cells next
// to the Theorem 2 values that accountant's TestSRDP* tests pin.
func TestTable2Cells(t *testing.T) {
	tab, err := table2Cell(t2Gaussian, t2PCARank, table2Params{Alpha: 11, Eps: 0.1, DeltaMin: 0.5}, false)
	if err != nil || !papersClose(tab, 68.87958, 1e-6) {
		t.Errorf("Table 2 = %v %v", tab, err)
	}
	if got, _ := table2Cell(t2DPGD, t2MeanImputation, table2Params{Alpha: 11, Eps: 1, N: 1000, P: 50}, false); !papersClose(got, 46.32797783933518, 1e-12) {
		t.Errorf("Table 2: %.16g", got)
	}
	if got, _ := table2Cell(t2SGDSamp, t2PCARank, table2Params{Alpha: 11, Eps: 0.1, DeltaMin: 0.5}, false); !papersClose(got, 71.30508, 1e-6) {
		t.Errorf("samp Table 2: %.8g", got)
	}
	if got, _ := table2Cell(t2SGDIter, t2Dedup, table2Params{Alpha: 11, Eps: 0.05, N: 1000, P: 10}, false); !papersClose(got, 3.0813599, 1e-6) {
		t.Errorf("Theorem 17(iv): %.8g", got)
	}
}

// TV10: Table 2's full grid (α=11, ε=0.1, n=1000, p=10, η=0.1, δ_min=0.5, σ_min=0.5).
func TestSRDPTable2Grid(t *testing.T) {
	v := table2Params{Alpha: 11, Eps: 0.1, N: 1000, P: 10, Eta: 0.1, DeltaMin: 0.5, SigmaMin: 0.5}
	tests := []struct {
		m       table2Mech
		p       table2Prep
		printed bool
		want    float64
	}{
		{t2Gaussian, t2Dedup, false, 11.6655}, {t2Gaussian, t2Quantization, false, 0.231},
		{t2Gaussian, t2MeanImputation, false, 0.115547}, {t2Gaussian, t2PCARank, false, 68.87958},
		{t2Gaussian, t2StandardScaling, true, 3.8115}, {t2Gaussian, t2StandardScaling, false, 118.3875},
		{t2DPGD, t2Dedup, false, 12.012}, {t2DPGD, t2Quantization, false, 0.5775},
		{t2DPGD, t2MeanImputation, false, 0.462047}, {t2DPGD, t2PCARank, false, 69.22608},
		{t2DPGD, t2StandardScaling, true, 4.158}, {t2DPGD, t2StandardScaling, false, 118.734},
		{t2PureDP, t2Dedup, false, 1.1}, {t2PureDP, t2Quantization, false, 0.2},
		{t2PureDP, t2MeanImputation, false, 0.10202}, {t2PureDP, t2PCARank, false, 2.54},
		{t2PureDP, t2StandardScaling, false, 3.3},
		{t2SGDSamp, t2PCARank, false, 71.30508}, {t2SGDSamp, t2StandardScaling, false, 120.813},
		{t2SGDIter, t2Dedup, false, 12.32544}, {t2SGDIter, t2Quantization, false, 0.243044},
		{t2SGDIter, t2MeanImputation, false, 0.12105},
	}
	for _, tc := range tests {
		got, err := table2Cell(tc.m, tc.p, v, tc.printed)
		if err != nil || !papersClose(got, tc.want, 1e-5) {
			t.Errorf("mech %d prep %d printed=%v: %.7g want %.7g (%v)", tc.m, tc.p, tc.printed, got, tc.want, err)
		}
	}
	if _, err := table2Cell(t2SGDSamp, t2Dedup, v, false); err == nil {
		t.Error("empty cell returned a value")
	}
	// Every unflagged M_G / A_GD cell is 1.05·(ε̃(2α,τ) + ε(2α)) with τ from
	// §3.5 (docs/srdp.md#closed-form-table; checked by substitution).
	for _, tc := range []struct {
		p   table2Prep
		tau float64
	}{{t2Dedup, 10}, {t2Quantization, 1}, {t2MeanImputation, 20.0 / 990}, {t2PCARank, 24.4}, {t2StandardScaling, 32}} {
		g := accountant.GaussianMechanismSRDP(1, 1, 10)
		want := 1.05 * (g.SRDP(22, tc.tau) + g.RDP(22))
		if got, _ := table2Cell(t2Gaussian, tc.p, v, false); !papersClose(got, want, 1e-9) {
			t.Errorf("M_G prep %d: %v vs substitution %v", tc.p, got, want)
		}
	}
	// Fig. 2 sample points in units of αε² (α=1/ε² scaling: use α=1, ε=1).
	unit := table2Params{Alpha: 1, Eps: 1, N: 100, P: 200, Eta: 0.01}
	if got, _ := table2Cell(t2Gaussian, t2Quantization, unit, false); !papersClose(got, 5.25, 1e-12) {
		t.Errorf("Fig 2(a) η=0.01: %v", got)
	}
	unit.Eta = 0.1
	if got, _ := table2Cell(t2Gaussian, t2Quantization, unit, false); !papersClose(got, 421.05, 1e-12) {
		t.Errorf("Fig 2(a) η=0.1: %v", got)
	}
	if g := accountant.GroupPrivacyGaussian(1, 1, 201); g != 20200.5 {
		t.Errorf("Fig 2(a) group: %v", g)
	}
	unit = table2Params{Alpha: 1, Eps: 1, N: 100, P: 50}
	if got, _ := table2Cell(t2Gaussian, t2MeanImputation, unit, false); !papersClose(got, 5.25, 1e-12) {
		t.Errorf("Fig 2(b): %v", got)
	}
	// Fig. 2(b) at n = 53, p = 50: 1167.7 vs group 1300.5.
	unit = table2Params{Alpha: 1, Eps: 1, N: 53, P: 50}
	if got, _ := table2Cell(t2Gaussian, t2MeanImputation, unit, false); !papersClose(got, 1167.7, 1e-4) || accountant.GroupPrivacyGaussian(1, 1, 51) != 1300.5 {
		t.Errorf("Fig 2(b) n=53: %v", got)
	}
	// Fig. 2(c) at n = 500, δ_min = 0.07: exact τ 31064.66, 12.2-form 31895.34, group 125500.5.
	tau := accountant.PCARankTau(500, 0.07)
	if got := 1.05 * (1 + tau*tau); !papersClose(got, 31064.66, 1e-6) {
		t.Errorf("Fig 2(c) exact τ: %v", got)
	}
	if got, _ := table2Cell(t2Gaussian, t2PCARank, table2Params{Alpha: 1, Eps: 1, DeltaMin: 0.07}, false); !papersClose(got, 31895.34, 1e-6) {
		t.Errorf("Fig 2(c) 12.2 form: %v", got)
	}
	if accountant.GroupPrivacyGaussian(1, 1, 501) != 125500.5 {
		t.Error("Fig 2(c) group")
	}
	// Fig. 2 crossings (docs/srdp.md#paper-figures): the Theorem 2 curve meets
	// group privacy between consecutive integers around p ≈ 50.16 for (b) at
	// n = 53, and around n ≈ 249.1 (exact τ) / 251.6 (12.2 form) at
	// δ_min = 0.07 and n ≈ 116.6 (exact τ) at δ_min = 0.15 for (c).
	below := func(thm2, group float64) bool { return thm2 < group }
	fb := func(p int) bool {
		v, _ := table2Cell(t2Gaussian, t2MeanImputation, table2Params{Alpha: 1, Eps: 1, N: 53, P: float64(p)}, false)
		return below(v, accountant.GroupPrivacyGaussian(1, 1, p+1))
	}
	if !fb(50) || fb(51) {
		t.Errorf("Fig 2(b) n=53: crossing not in (50, 51)")
	}
	fcExact := func(n int, gap float64) bool {
		tau := accountant.PCARankTau(n, gap)
		return below(1.05*(1+tau*tau), accountant.GroupPrivacyGaussian(1, 1, n+1))
	}
	fc12 := func(n int, gap float64) bool {
		v, _ := table2Cell(t2Gaussian, t2PCARank, table2Params{Alpha: 1, Eps: 1, DeltaMin: gap}, false)
		return below(v, accountant.GroupPrivacyGaussian(1, 1, n+1))
	}
	if fcExact(249, 0.07) || !fcExact(250, 0.07) || fc12(251, 0.07) || !fc12(252, 0.07) ||
		fcExact(116, 0.15) || !fcExact(117, 0.15) {
		t.Errorf("Fig 2(c): crossings not at 249.1 / 251.6 (δ=0.07) and 116.6 (δ=0.15)")
	}
}

// TV6 of docs/srdp.md#test-vectors: SGD-iter + dedup.
func TestSGDIterSRDP(t *testing.T) {
	it := sgdIterSRDP{N: 1000, Kappa: 10, L: 1, Mu: 1, Eps: 0.05}
	if got := accountant.SRDPBoundAt(11, it, 10, 2, 2); !papersClose(got, 2.9365855, 1e-6) {
		t.Errorf("iter c=2: %.8g", got)
	}
	if got, _, _ := accountant.SRDPBound(11, it, 10); !papersClose(got, 1.6757099, 1e-6) {
		t.Errorf("iter optimal: %.8g", got)
	}
}
