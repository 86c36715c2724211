// Package accountant turns a description of what ran into a privacy bound.
//
// What ran is data: an [Event] is an immutable value naming one mechanism
// (a Gaussian of noise multiplier σ, a Poisson-subsampled event, an event
// composed with itself T times, ...). An [Accountant] composes the events it
// supports and refuses the rest with an error wrapping [ErrUnsupported]; it
// never guesses. Every bound names its neighbouring relation (add/remove-one
// or replace-one), and a [Tracker] runs several accountants side by side,
// one event per training step.
//
// The core pieces:
//
//   - [RDP] (from [NewRDP]) is the Rényi-DP accountant for DP-SGD: the
//     Poisson-subsampled Gaussian of Mironov, Talwar & Zhang 2019
//     ([PoissonGaussianRDP]; fractional orders by the proven absolute-value
//     series, or the signed series of Opacus and TF Privacy) and fixed-size
//     sampling without replacement (Wang, Balle & Kasiviswanathan 2019,
//     [WORGaussianRDP], replace-one). It keeps one running sum per order, so
//     a step and an ε query each cost O(#orders).
//   - [EpsilonFromRDP] and [DeltaFromRDP] convert any RDP curve to (ε, δ)
//     with the conversion of Balle et al. 2020; other RDP-based accountants
//     reuse them.
//   - [Calibrate] is the one calibrator: it inverts ε(x) of a fresh
//     accountant and an event built from a parameter x ([Account]), for a
//     noise multiplier (returning the conservative end), a number of steps
//     ([WithMaxSteps]) or a PLD σ certified on its fine grid
//     ([WithPLDCertification]); [PoissonSteps] and [PoissonEpsilon] are the
//     DP-SGD shortcuts.
//   - [Tracker] reports each accountant's bound and the tightest valid one
//     per relation (never a minimum across relations), and serialises to
//     JSON so that a resumed run continues the account bit for bit.
//
// The package does not run mechanisms and does not add noise; the training
// loop describes what it did and the accountants answer.
package accountant
