// Package objpert computes per-instance (ex-post) privacy for objective
// perturbation and the Gaussian mechanism, and the privately publishable
// privacy reports of Redberg & Wang, "Privately Publishable Per-instance
// Privacy" (NeurIPS 2021; docs/per-instance.md).
//
// What it holds:
//   - objective perturbation (ObjPert, Alg 1) for generalized linear models:
//     [Fit] solves argmin Σℓ + (λ/2)‖θ‖² + bᵀθ exactly (Newton, ‖∇‖ ≲ 1e-12),
//     [CalibrateObjPert] and [ObjPertEpsilon] give its (ε, δ)-DP guarantee;
//     [FitObjPert] releases it with exact noise, a certified solve and a
//     shifted grid, adding (1 + e^ε)τ to δ (docs/secure-noise.md);
//   - the exact ex-post per-instance loss ε1(θ̂, D, z) of every record
//     ([Model.ExPost], Alg 1x). It depends on the whole data set and is a
//     CURATOR-ONLY diagnostic: publishing it leaks the data (Example 4);
//   - the publishable reports: data-independent (Thm 8/9, zero privacy cost),
//     data-dependent (Alg 2 with Algs 5 and 6) and adaptive (Alg 4 with Alg 3),
//     each with its own per-instance and DP overhead ([Report]); their
//     releases (ĝ, Ĥ, λ̂) are lattice sums and grid counts with exact integer
//     noise from package lattice, whose rounding widens the reports' tails
//     and sensitivities by [Slack] (docs/per-instance.md#exact-releases);
//   - the Gaussian-mechanism formulas (Thm 22, Cor 23), the pDP of the report's
//     releases (Thms 11, 14, 17), and the λ1(GOE) quantile τ ([GOEQuantile])
//     with a corrected normalisation (docs/per-instance.md#the-goe-quantile);
//   - a per-instance RDP diagnostic for DP-SGD from clipped per-example
//     gradient norms ([PerInstanceRDP]); a guarantee only under a Rényi filter;
//   - [Analyze], which runs all of the above on a data set (the engine of
//     `dptrain report` and scripts/pdp_synthetic.sh), [AnalyzeModel], the same
//     for a model released earlier (its public part is [Model]'s JSON: loss,
//     the grid release θ̃ with its grid and shift, λ, σ, τ; never b), the run's whole account (release + report overhead,
//     the report's Gaussian releases composed by RDP, [Report.ComposedDP]),
//     and the synthetic data of the paper's experiments ([SyntheticLogistic]).
//
// What it is not: a general accountant. The report's DP overhead is returned
// both as (ε, δ) numbers and as accountant.Gaussian events (each release of
// Algs 3, 5 and 6 is a Gaussian mechanism) so that the run's account can
// compose them; ObjPert itself is not a Gaussian mechanism and is returned as
// an [ApproxDP] (ε, δ) pair. The regulariser r of the paper is taken as 0
// (only the ridge term λ/2‖θ‖²), and the parameter space is all of ℝ^d, as the
// ex-post analysis requires.
//
// Sign convention (docs/per-instance.md#what-a-report-is): "member" means z ∈
// D (remove neighbour), a non-member is the add neighbour.
package objpert
