// Package preprocess holds the feature preprocessing that runs before DP
// training, in two families with different privacy stories.
//
// Non-private, data-dependent steps (docs/srdp.md, Hu et al. ICML 2024):
// deduplication and quantization (threshold η), imputation (mean, median,
// trimmed mean, linear regression), standard and min-max scaling, and PCA
// (dimension and rank reduction). They are fitted on the private training
// data WITHOUT noise; their privacy cost is paid by the accountant's Smooth
// RDP track (Theorem 2), which needs each step's L2 and L∞ sensitivities.
// Those are computed from bounds the user DECLARES a priori about the
// dataset collection (Bounds), never from the private data: a bound read off
// the data would itself leak. The guarantee is conditional on the training
// set lying in the declared collection; Check-style helpers that test that
// membership are non-private diagnostics, not part of the guarantee.
//
// Each step is fitted once on the training rows (FitTransform) and its
// fitted statistics are applied unchanged to any other rows (Fitted.Transform,
// e.g. the test set). A Pipeline chains steps and reports one Sensitivity for
// the accountant; because the paper has no rule for chains, a pipeline with
// more than one data-dependent step is refused unless the user declares the
// chain's sensitivity (docs/srdp.md#chains). Fitted pipelines serialise to
// JSON.
//
// Where the paper's sensitivities are not safe, the default is a derived
// safe bound and the paper's value is an option (PaperBound), each pinned by
// a test: Proposition 3's Δ_∞ = 2·b_max for dedup/quantization (one record
// can break several good clusters; the default counts records within 4η),
// Corollary 4's mean-imputation Δ_2 when records miss different features,
// and Proposition 6's standard-scaling variance step. Min-max scaling (no
// bound in the paper) and replace-one regression imputation use derived
// bounds; PCA keeps the conservative min{δ^k, δ^1}.
//
// Private feature centering, DPSGD-F (docs/dpsgdf.md, Sun, Suresh, Menon):
// Algorithm 3 (the experiments' variant, the default: normalise features to
// C_F, Gaussian mean with budget ε_F, centre) and Algorithm 2 (the theory
// variant: adaptive private mean, private quantile τ by noisy binary search,
// features (x−μ̂, τ) clipped to √2·τ). Both are DP and report their privacy
// events for the trainer to compose; only Algorithm 2 carries Theorem 1's
// utility guarantee (excess loss ∝ diam(D) instead of max‖x‖), and
// Algorithm 3 does not fix the paper's counterexample when n < μ/ε.
//
// What this package is not: it does not train, it does not compose privacy
// (the accountant does), and it does not load datasets; it works on
// row-major matrices (*mat.Dense, NaN = missing entry) so that the trainer
// can adapt any dataset type.
package preprocess
