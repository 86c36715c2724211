package main

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/preprocess"
)

// All accounts here are add/remove-one: the Poisson-subsampled Gaussian's
// RDP is add/remove, Theorem 2 carries over to it
// (docs/srdp.md#the-combination-rule), and the Analyze-Gauss covariance
// release has sensitivity ‖xxᵀ‖_F = ‖x‖² ≤ 1 under add/remove.

// dpsgd describes a DP-SGD run: Poisson rate Q for Steps steps.
type dpsgd struct {
	Q     float64
	Steps int
}

// srdpEpsilon is ε at delta of the run on data preprocessed by a step of
// sensitivity sens, by the SRDP accountant (Theorem 2 with optimal c on the
// cumulative RDP and SRDP curves, then RDP → DP). mu is the Lipschitz
// constant of one record's clipped gradient in its input, in units of the
// clip norm (accountant.Preprocessed.Mu).
func srdpEpsilon(run dpsgd, z float64, sens preprocess.Sensitivity, mu, delta float64) (float64, error) {
	a := accountant.NewSRDP()
	ev := sens.Preprocessed(accountant.PoissonSampled{Q: run.Q, Event: accountant.Gaussian{Sigma: z}}, mu)
	if err := a.Compose(ev, run.Steps); err != nil {
		return 0, err
	}
	b, err := a.Epsilon(delta)
	return b.Epsilon, err
}

// calibrateSRDP is the paper's "adjusted privacy"
// (docs/srdp.md#paper-figures): the smallest noise multiplier, by bisection,
// at which the SRDP account of preprocessing + DP-SGD meets (eps, delta).
func calibrateSRDP(run dpsgd, eps, delta float64, sens preprocess.Sensitivity, mu float64) (float64, error) {
	z, err := accountant.Calibrate(func(z float64) (float64, error) {
		return srdpEpsilon(run, z, sens, mu, delta)
	}, eps, accountant.WithTolerance(1e-3*eps))
	if err != nil {
		return 0, fmt.Errorf("SRDP calibration at ε=%g: %w", eps, err)
	}
	return z, nil
}

// rdpEpsilon is ε at delta of the run by the RDP accountant.
func rdpEpsilon(run dpsgd, z, delta float64) (float64, error) {
	b, err := accountant.PoissonEpsilon(run.Q, z, run.Steps, delta)
	return b.Epsilon, err
}

// calibrateRDP is the noise multiplier of plain DP-SGD for (eps, delta).
func calibrateRDP(run dpsgd, eps, delta float64) (float64, error) {
	z, err := accountant.Calibrate(func(z float64) (float64, error) { return rdpEpsilon(run, z, delta) }, eps, accountant.WithTolerance(1e-3*eps))
	if err != nil {
		return 0, fmt.Errorf("RDP calibration at ε=%g: %w", eps, err)
	}
	return z, nil
}

// gaussEpsilon is ε at delta of one Gaussian release of sensitivity 1 with
// noise multiplier z (RDP accountant, add/remove).
func gaussEpsilon(z, delta float64) (float64, error) {
	a, err := accountant.NewRDP(accountant.WithRelation(accountant.AddRemove))
	if err != nil {
		return 0, err
	}
	if err := a.Compose(accountant.Gaussian{Sigma: z}, 1); err != nil {
		return 0, err
	}
	b, err := a.Epsilon(delta)
	return b.Epsilon, err
}

// calibrateGauss is the noise multiplier of the Analyze-Gauss covariance
// release for (eps, delta).
func calibrateGauss(eps, delta float64) (float64, error) {
	z, err := accountant.Calibrate(func(z float64) (float64, error) { return gaussEpsilon(z, delta) }, eps, accountant.WithTolerance(1e-3*eps))
	if err != nil {
		return 0, fmt.Errorf("Gaussian calibration at ε=%g: %w", eps, err)
	}
	return z, nil
}

// pcaSensitivity is Proposition 5's sensitivity of PCA dimension reduction
// to k on n records, with the declared eigengaps, for data clipped to norm
// clip ≤ 1 after the projector was fitted on the unclipped data: the
// projected record A_kᵀ·clip(x) moves by at most clip·Δ2 (Table 4's
// "12R/(nδ) → 12C/(nδ)").
func pcaSensitivity(n, k int, gapK, gap1, clip float64) (preprocess.Sensitivity, error) {
	s, err := preprocess.PCA{K: k, Dim: true}.Sensitivity(preprocess.Bounds{N: n, EigenGapMin: gapK, TopGapMin: gap1, AddRemove: true})
	if err != nil {
		return s, err
	}
	s.L2 *= clip
	return s, nil
}

// logisticMu is the data-smoothness (Def. 6) of the logistic loss's gradient
// −y·s(−y θᵀx)·x in x for ‖x‖ ≤ rx and ‖θ‖ ≤ rTheta, 1 + rx·rTheta/4
// (docs/srdp.md#training-steps), in units of the clip norm c (clipping is
// 1-Lipschitz).
func logisticMu(rx, rTheta, c float64) float64 { return (1 + rx*rTheta/4) / c }

// capped reports whether the SRDP shift of one step sits at the clipping cap
// Δ∞·2C, i.e. Theorem 2 is no better than group privacy over all n records.
func capped(sens preprocess.Sensitivity, mu float64) bool { return mu*sens.L2 >= 2 }

// groupShift is the accountant's per-step shift of the clipped sum in units
// of C (Preprocessed.shift): Δ∞·min(2, μ·Δ2).
func groupShift(sens preprocess.Sensitivity, mu float64) float64 {
	return sens.LInf * math.Min(2, mu*sens.L2)
}
