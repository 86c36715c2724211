// Package features computes handcrafted, data-independent image features for
// private learning: the 2-D wavelet scattering transform ("ScatterNet") that
// Tramèr & Boneh (2021, "Differentially private learning needs better
// features") feed to linear models and small CNNs trained with DP-SGD.
//
// The transform follows Kymatio's Scattering2D (Andreeva et al.), itself the
// construction of Oyallon & Mallat: Morlet wavelets ψ_{j,θ} and a Gaussian
// low-pass φ_J defined in the Fourier domain, first- and second-order
// modulus coefficients |x⋆ψ|, ||x⋆ψ1|⋆ψ2|, each averaged by φ_J and
// subsampled by 2^J. For CIFAR-10 (32×32×3) with J=2, L=8, order 2 this gives
// 3·81 = 243 channels of 8×8. Every constant and its Kymatio source is
// documented in filters.go.
//
// The transform depends on no data, so computing it costs no privacy. What
// does cost privacy is normalising the features with dataset statistics:
// PrivateChannelStats computes per-channel means and variances with the
// Gaussian mechanism and returns the accountant.Gaussian event and the
// sensitivity it used, which the caller must compose with the training
// events. GroupNormalize (per-example statistics) and ChannelStats.Apply
// with statistics fixed in advance (e.g. from public data) are the
// alternatives at no privacy cost.
//
// Features can be cached on disk (LoadOrCompute), keyed by a SHA-256 hash of
// the source pixels and the transform parameters.
//
// What this package is not: a general wavelet library (only the filter bank
// Scattering2D uses), or a trainable layer (no gradients flow through it).
package features
