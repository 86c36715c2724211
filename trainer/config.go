package trainer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/models/nn"
)

// Config describes one training run. The zero value is not valid; start
// from [Default] and change what you need. JSON field names are the
// config-file keys and match the CLI flags.
type Config struct {
	DataConfig
	ModelConfig
	PreprocessConfig
	MechanismConfig
	TrainingConfig
	AdaptiveConfig
	RunConfig

	// The fields below follow the sections so that the JSON keys keep
	// their order, and the settings hash of existing runs its value.

	// PublicData names the public dataset whose first PublicN training
	// records estimate subspace clipping's basis: a dataset name other than
	// the private one, or "test" (the first PublicN test records, which
	// then leave the evaluation set). Empty: the first PublicN training
	// records are carved out as public, and the claim covers the rest only.
	PublicData string `json:"public_data,omitempty"`
	// ClippedCountSigma σ_b > 0 releases each step's count of clipped
	// examples plus N(0, σ_b²) in release/metrics.jsonl; the step is then
	// accounted at σ_eff = (σ⁻² + σ_b⁻²)^(−1/2) (see clipcount.go). 0: off.
	ClippedCountSigma float64 `json:"clipped_count_sigma,omitempty"`
	// AuditCanaries > 0 makes this an audit run (dptrain audit): that many
	// canaries of kind AuditKind ("gradient": white-box gradient canaries
	// in an extra block of the released vector), each included with
	// probability ½. They are records of the audited training set.
	AuditCanaries int       `json:"audit_canaries,omitempty"`
	AuditKind     AuditKind `json:"audit_kind,omitempty"`
	// Distributed is "mpi" for a data-parallel run (mpirun -np N dptrain
	// train --distributed mpi; Options.Reducer carries the ranks). Not part
	// of the settings hash: the mechanism is the same for any number of
	// ranks, so a run may resume with another.
	Distributed Distributed `json:"distributed,omitempty"`
}

// DataConfig is the section of Config for the data: the dataset, where it
// is, how much of it is used, and its feature map. Its fields are embedded
// in Config, with the same JSON keys and flags.
type DataConfig struct {
	Dataset    Dataset `json:"dataset"`     // "embedded" (Fashion-MNIST subset), "fashion-mnist", "mnist", "cifar10", "synthetic"
	DataDir    string  `json:"data_dir"`    // explicit data directory (else $DPTRAIN_DATA, Debian's, embedded)
	TrainLimit int     `json:"train_limit"` // use only the first N training examples (0 = all)
	TestLimit  int     `json:"test_limit"`  // use only the first N test examples (0 = all)

	// Dataset "csv": the training and test tables and their label column
	// (header name or 0-based index; "" = the last column). Dataset "npy":
	// each file is a pair "FEATURES.npy,LABELS.npy" (docs/npy.md).
	TrainFile   string `json:"train,omitempty"`
	TestFile    string `json:"test,omitempty"`
	LabelColumn string `json:"label_column,omitempty"`
	// Classes is the public class set of datasets csv and folder (label
	// Classes[i] is class i); nil: the test set's (trainer/userdata.go).
	Classes []string `json:"classes,omitempty"`
	// Dataset "folder": Channels (1 grey, 3 RGB; 0: the test images') and
	// Resize ("HxW"; "": the test images' size) convert every image
	// (datasets.ImageFolderOptions documents how).
	Channels int    `json:"channels,omitempty"`
	Resize   string `json:"resize,omitempty"`

	Features FeatureMap `json:"features"` // "" (raw) or "scatternet"
	// ScatterNet normalisation: "group" (per example, no privacy cost),
	// "private" (per-channel statistics by the Gaussian mechanism, composed
	// into the run's account) or "none".
	FeatureNorm      FeatureNorm `json:"feature_norm"`
	FeatureGroups    int         `json:"feature_groups"`     // "group": number of channel groups (27 divides 243)
	FeatureNormSigma float64     `json:"feature_norm_sigma"` // "private": noise multiplier of the statistics
	FeatureNormClip  float64     `json:"feature_norm_clip"`  // "private": L2 clip of each example's statistics
	FeatureCache     string      `json:"feature_cache"`      // directory for cached features ("" = user cache dir)
}

// ModelConfig is the section of Config for the model. Its fields are
// embedded in Config, with the same JSON keys and flags.
type ModelConfig struct {
	Model  Model `json:"model"`  // "logreg", "linreg", "mlp", "cnn", "resnet20", "resnet22", "scatcnn" (CNN on ScatterNet features)
	Hidden []int `json:"hidden"` // MLP hidden widths
	// WeightStd makes the ResNets' convolutions weight-standardised
	// (models/nn.WSConv2d; De et al. 2022).
	WeightStd bool `json:"weight_std,omitempty"`
}

// PreprocessConfig is the section of Config for feature preprocessing:
// DPSGD-F, tabular scaling by declared bounds, and SRDP-accounted
// preprocessing. Its fields are embedded in Config, with the same JSON keys
// and flags.
type PreprocessConfig struct {
	// Feature preprocessing: DPSGD-F private centering (paper 001).
	DPSGDF bool `json:"dpsgdf"`
	// DPSGDFVariant is "practical" (Algorithm 3, the paper's experiments;
	// "" means it) or "theory" (Algorithm 2: private mean and quantile τ at
	// ρ-zCDP from the run's ε, features (x − μ̂, τ) clipped to √2τ; the only
	// variant with Theorem 1's utility guarantee).
	DPSGDFVariant DPSGDFVariant `json:"dpsgdf_variant,omitempty"`
	FeatureEps    float64       `json:"feature_epsilon"` // ε_F spent on the private mean (practical)
	FeatureCF     float64       `json:"feature_clip"`    // C_F: normalise every record to this L2 norm (DPSGD-F practical, or alone: no privacy cost); theory: the public bound R on ‖x‖

	// Tabular scaling by per-feature bounds the user DECLARES
	// (docs/tabular.md): "minmax" maps [lo, hi] to [0, 1] at no privacy
	// cost; "standardize" releases each feature's mean and std by the
	// Gaussian mechanism at noise multiplier ScaleSigma or, when it is 0,
	// at the multiplier that spends ScaleEpsFraction (0: 0.1) of epsilon on
	// them alone; the event is composed into the run's ε.
	Scale            Scale   `json:"scale,omitempty"`
	FeatureBounds    string  `json:"feature_bounds,omitempty"`         // "lo:hi", "lo:hi,lo:hi,…" (one per feature) or "@file"
	ScaleSigma       float64 `json:"scale_sigma,omitempty"`            // standardize: declared noise multiplier of the statistics
	ScaleEpsFraction float64 `json:"scale_epsilon_fraction,omitempty"` // standardize: fraction of epsilon for the statistics when ScaleSigma is 0

	// Non-private, data-dependent preprocessing, accounted by Smooth RDP
	// (paper 000) from sensitivities computed from DECLARED properties of
	// the dataset collection, never from the data.
	Preprocess  Preprocess `json:"preprocess"`    // "" | "pca" | "standardize"
	PCAK        int        `json:"pca_k"`         // PCA: number of components
	PCADim      bool       `json:"pca_dim"`       // PCA: dimension reduction (R^k) instead of rank reduction (R^d)
	EigenGapMin float64    `json:"eigen_gap_min"` // PCA: declared min eigengap δ_min of every admissible dataset
	SigmaMin    float64    `json:"sigma_min"`     // standardize: declared smallest feature std
	LipschitzMu float64    `json:"lipschitz_mu"`  // μ: clipped gradient's Lipschitz constant in the input, in units of C (0: unknown, 2C cap)
}

// MechanismConfig is the section of Config for the step's mechanism:
// sampling, clipping, noise and the privacy target. Its fields are embedded
// in Config, with the same JSON keys and flags.
type MechanismConfig struct {
	Sampler   mechanism.Sampler `json:"sampler"`    // "poisson", "twice", "shuffle"
	BatchSize int               `json:"batch_size"` // expected (Poisson) or fixed (shuffle) batch size
	Q2        float64           `json:"q2"`         // coordinate sampling rate (twice sampling)

	// Accountant calibrates σ: "" (the tightest that applies: PLD for
	// Poisson-sampled DP-SGD, else the run's own), "rdp" or "pld".
	Accountant Accountant `json:"accountant,omitempty"`

	// Clipping and noise.
	Clip     mechanism.Clip `json:"clip"`      // "flat", "per-layer", "linf", "hybrid", "subspace"
	ClipNorm float64        `json:"clip_norm"` // C (L2)
	D0       float64        `json:"d0"`        // hybrid: c∞ = C/√d0 (subspace: on the residual block)

	// Hybrid subspace clipping (paper 003): nested cumulative ranks of the
	// principal blocks, estimated from PublicN declared-public training
	// examples (removed from the private set) by PowerIters power
	// iterations, refreshed every SubspaceRefresh steps (0: once).
	SubspaceRanks   []int   `json:"subspace_ranks"`
	PublicN         int     `json:"public_n"`
	PowerIters      int     `json:"power_iters"`
	SubspaceRefresh int     `json:"subspace_refresh"`
	Sigma           float64 `json:"sigma"`   // noise multiplier; 0 = calibrate to Epsilon
	Epsilon         float64 `json:"epsilon"` // target ε (calibrates σ when Sigma = 0; budget stop otherwise)
	Delta           float64 `json:"delta"`
	// Noise is "continuous" (the default; unset means it, so configs and
	// their hash keep their bytes) or "lattice" (exact lattice sum and
	// exactly sampled integer noise: docs/secure-noise.md).
	Noise Noise `json:"noise,omitempty"`
	// Bands is b for noise bandmf: the strategy's bands, and the parts of
	// its cyclic sampling (1: DP-SGD's noise and Poisson sampling); other
	// noises ignore it.
	Bands int `json:"bands,omitempty"`
}

// TrainingConfig is the section of Config for the length of the run, the
// optimizer and what is released of the iterates. Its fields are embedded in
// Config, with the same JSON keys and flags.
type TrainingConfig struct {
	Epochs float64 `json:"epochs"` // used when Steps = 0
	Steps  int     `json:"steps"`

	// Optimizer.
	Optimizer   Optimizer `json:"optimizer"` // "sgd", "momentum", "adam"
	LR          float64   `json:"lr"`
	Momentum    float64   `json:"momentum"`
	WeightDecay float64   `json:"weight_decay"`
	Schedule    Schedule  `json:"schedule"` // "constant", "cosine"
	Radius      float64   `json:"radius"`   // project onto the L2 ball of this radius after each step (0 = off); with it the mean clipped gradient is clipped to C (hidden-state A3)
	// FinalOnly declares that only the final model is released: metrics
	// and checkpoints are private state. Required for the hidden-state bound.
	FinalOnly bool `json:"final_only"`
	// EMA d ∈ (0,1) keeps an exponential moving average of the iterates
	// (De et al. 2022; [optim.EMA]): a₀ = θ₀, after step t
	// a_t = d_t·a_{t−1} + (1−d_t)·θ_t with warm-up d_t = min(d, (1+t)/(10+t)).
	// Test evaluation, the summary's test figures and model.bin then use the
	// average; training proceeds on the iterates. Post-processing of the
	// private iterates: no privacy cost. 0 = off. Refused with final_only
	// (the hidden-state bound covers the last iterate only). omitempty keeps
	// the config hash of runs without it as it was.
	EMA float64 `json:"ema,omitempty"`
	// Augmult K > 1: each example's gradient is the mean over K random
	// crops and flips, clipped once (trainer/augment.go). 0 or 1 = off.
	Augmult int `json:"augmult,omitempty"`
}

// AdaptiveConfig is the section of Config for adaptive clipping and the
// per-instance diagnostic. Its fields are embedded in Config, with the same
// JSON keys and flags.
type AdaptiveConfig struct {
	// ClipQuantile γ ∈ (0,1) adapts the clip norm to a private estimate of
	// the γ-quantile of the gradient norms, starting at ClipNorm, with
	// geometric step QuantileLR (0: 0.2) and count noise QuantileCountSigma
	// (0: expected batch/20) (Andrew et al. 2021; trainer/quantile.go).
	ClipQuantile       float64 `json:"clip_quantile,omitempty"`
	QuantileLR         float64 `json:"quantile_lr,omitempty"`
	QuantileCountSigma float64 `json:"quantile_count_sigma,omitempty"`

	// PerInstance > 0 tracks the per-instance RDP
	// (docs/per-instance.md#gaussian-mechanism-and-dp-sgd) of the
	// first PerInstance training examples: a curator-only diagnostic.
	PerInstance int `json:"per_instance"`
}

// RunConfig is the section of Config for the engine, reproducibility and the
// outputs. Its fields are embedded in Config, with the same JSON keys and
// flags.
type RunConfig struct {
	MaxPhysicalBatch int `json:"max_physical_batch"` // memory bound on one chunk of per-sample gradients
	// Precision is "f32" (the default; unset means it, so configs and their
	// hash keep their bytes) or "bf16": the engine's matrix products round
	// their operands to bfloat16 and sum in float32, on CPUs with AVX-512
	// BF16 only (docs/precision.md). The engine's GEMM is process-wide:
	// runs in one process at the same time must share it.
	Precision Precision `json:"precision,omitempty"`

	// Reproducibility and output.
	//
	// Seed initialises the model (and generates the synthetic dataset and
	// picks subspace clipping's public examples): data-independent choices
	// that cost no privacy when known. The privacy-relevant randomness — the
	// DP noise, the sampler (a known Poisson stream reveals who was in each
	// batch) and the noise of any private preprocessing — comes from a root
	// stream seeded from crypto/rand unless Seeded is set, in which case it
	// is derived from Seed: reproducible, but anyone who knows the seed can
	// recompute and subtract the noise, so a seeded run is not a private
	// release. The crypto root's seed is kept in the checkpoint (private
	// state) so that a resumed run continues the same streams. A config
	// file's "seed" fixes the initialisation only: add "seeded": true to
	// derive the noise from it too. An explicit --seed on the command line
	// implies --seeded (see cmd/dptrain).
	Seed            uint64 `json:"seed"`
	Seeded          bool   `json:"seeded"`
	EvalEvery       int    `json:"eval_every"`
	OutDir          string `json:"out_dir"`
	CheckpointEvery int    `json:"checkpoint_every"`
	Plots           bool   `json:"plots"`
	// PrivateDiagnostics writes the raw training-data statistics (batch
	// loss, gradient norms, clipped fraction, realised batch size, training
	// accuracy) to OUT/private/diagnostics.jsonl and its plot, and shows the
	// batch loss in the progress bar. None of it is covered by ε.
	PrivateDiagnostics bool `json:"private_diagnostics,omitempty"`
	// KeepCheckpoint keeps OUT/private/checkpoint.json after the run
	// completes (it holds the noise seed: never release it); by default a
	// completed run removes it.
	KeepCheckpoint bool `json:"keep_checkpoint,omitempty"`
}

// Default is the embedded default run: the MNIST CNN on the embedded
// Fashion-MNIST subset, DP-SGD to ε = 3, δ = 1e-5.
func Default() Config {
	// Tramèr & Boneh's end-to-end CNN settings (momentum 0.9, C = 0.1,
	// large lr), scaled to the 5,000-image subset: q ≈ 0.1, 15 epochs.
	var c Config
	c.Dataset = DatasetEmbedded
	c.Model = ModelCNN
	c.Sampler = "poisson"
	c.BatchSize = 512
	c.Clip = "flat"
	c.ClipNorm = 0.1
	c.Epsilon = 3
	c.Delta = 1e-5
	c.Epochs = 15
	c.Optimizer = OptimizerMomentum
	c.LR = 4
	c.Momentum = 0.9
	c.Schedule = ScheduleConstant
	c.MaxPhysicalBatch = 128
	c.Seed = 1
	c.Seeded = false // DP noise and sampling from crypto/rand
	c.EvalEvery = 20
	c.CheckpointEvery = 50
	c.Plots = true
	c.D0 = 100
	c.PublicN = 200
	c.PowerIters = 2
	c.FeatureNorm = FeatureNormGroup
	c.FeatureGroups = 27
	c.FeatureNormSigma = 8
	c.FeatureNormClip = 30
	return c
}

// Validate's faults are sorted into sections, one sentinel each, so that a
// caller can test for the kind of fault with errors.Is (a bad choice also
// wraps ErrUnknownChoice and is a *ChoiceError for errors.As). Every error
// Validate returns wraps ErrInvalidConfig.
var (
	// ErrInvalidConfig is wrapped by every error of Validate.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrData: the dataset, its files and limits, public_data.
	ErrData = errors.New("invalid data settings")
	// ErrFeatures: feature maps and preprocessing (ScatterNet, DPSGD-F,
	// SRDP-accounted PCA or standardisation).
	ErrFeatures = errors.New("invalid feature settings")
	// ErrModel: the model and its shape.
	ErrModel = errors.New("invalid model settings")
	// ErrMechanism: the sampler, the clip and everything they must agree
	// with (batch size, q2, d0, subspace ranks, adaptive clipping, the
	// released clipped count).
	ErrMechanism = errors.New("invalid mechanism settings")
	// ErrPrivacy: the privacy target and its accounting (sigma, epsilon,
	// delta, accountant, per-instance tracking, audit canaries).
	ErrPrivacy = errors.New("invalid privacy settings")
	// ErrOptimization: length, optimizer, schedule, EMA, augmentation and
	// the engine's chunk size.
	ErrOptimization = errors.New("invalid optimisation settings")
	// ErrOutput: evaluation and checkpoint cadence, distribution.
	ErrOutput = errors.New("invalid output settings")
)

// Validate checks every field and returns one error naming every bad
// value: it wraps ErrInvalidConfig, the section sentinel of each fault
// (ErrData, ErrMechanism, …) and each fault itself.
func (c *Config) Validate() error {
	return invalidConfig(
		c.validateData(),
		c.validateFeatures(),
		c.validateModel(),
		c.validateMechanism(),
		c.validatePrivacy(),
		c.validateOptimization(),
		c.validateOutputs(),
	)
}

// validateData checks the dataset, its files and the public data.
func (c *Config) validateData() error {
	f := faults{section: ErrData}
	f.add(checkChoice("dataset", c.Dataset, datasetValues))
	c.validateUserData(f.bad)
	if c.TrainLimit < 0 || c.TestLimit < 0 {
		f.bad("train_limit and test_limit must be >= 0, got %d and %d", c.TrainLimit, c.TestLimit)
	}
	if p := c.PublicData; p != "" {
		switch {
		case Dataset(p) == c.Dataset || (Dataset(p) == DatasetEmbedded && c.Dataset == DatasetFashionMNIST) || (Dataset(p) == DatasetFashionMNIST && c.Dataset == DatasetEmbedded):
			f.bad("public_data %q is (part of) the private training corpus %q; name a different dataset, or \"test\"", p, c.Dataset)
		case p != "test" && (c.Features != FeaturesRaw || c.DPSGDF || c.FeatureCF > 0 || c.Scale != ScaleNone):
			f.bad("public_data %q would skip the training data's feature preprocessing; use public_data test or raw features", p)
		}
	}
	return f.join()
}

// validateFeatures checks feature maps and preprocessing: ScatterNet and
// its normalisation, SRDP-accounted PCA or standardisation, DPSGD-F.
func (c *Config) validateFeatures() error {
	f := faults{section: ErrFeatures}
	f.add(checkChoice("features", c.Features, featureMapValues))
	f.add(checkChoice("preprocess", c.Preprocess, preprocessValues))
	f.add(checkChoice("scale", c.Scale, scaleValues))
	if c.Scale != ScaleNone {
		if strings.TrimSpace(c.FeatureBounds) == "" {
			f.bad("scale %s needs feature_bounds declared from public knowledge of the features (lo:hi, one per feature, or @file)", c.Scale)
		}
		if c.Preprocess != PreprocessNone || c.DPSGDF || c.FeatureCF > 0 || c.Features != FeaturesRaw {
			f.bad("scale %s takes raw tabular features; it cannot be combined with preprocess, dpsgdf, feature_clip or feature maps", c.Scale)
		}
	}
	if c.Scale == ScaleStandardize {
		if f.finite("scale_sigma", c.ScaleSigma) && c.ScaleSigma < 0 {
			f.bad("scale_sigma must be >= 0, got %v", c.ScaleSigma)
		}
		if f.finite("scale_epsilon_fraction", c.ScaleEpsFraction) && !(c.ScaleEpsFraction >= 0 && c.ScaleEpsFraction < 1) {
			f.bad("scale_epsilon_fraction must be in [0, 1), got %v", c.ScaleEpsFraction)
		}
		if c.ScaleSigma == 0 && !(c.Epsilon > 0) {
			f.bad("scale standardize needs scale_sigma, or a target epsilon to take scale_epsilon_fraction of")
		}
	} else if c.Scale == ScaleNone && (c.FeatureBounds != "" || c.ScaleSigma != 0 || c.ScaleEpsFraction != 0) {
		f.bad("feature_bounds, scale_sigma and scale_epsilon_fraction need scale minmax or standardize")
	}
	if c.Features == FeaturesScatterNet {
		f.add(checkChoice("feature_norm", c.FeatureNorm, featureNormValues))
		if c.FeatureNorm == FeatureNormGroup && c.FeatureGroups < 1 {
			f.bad("feature_groups must be >= 1, got %d", c.FeatureGroups)
		}
		if c.FeatureNorm == FeatureNormPrivate {
			if f.finite("feature_norm_sigma", c.FeatureNormSigma) && !(c.FeatureNormSigma > 0) {
				f.bad("feature_norm_sigma must be > 0 with private normalisation, got %v", c.FeatureNormSigma)
			}
			if f.finite("feature_norm_clip", c.FeatureNormClip) && !(c.FeatureNormClip > 0) {
				f.bad("feature_norm_clip must be > 0 with private normalisation, got %v", c.FeatureNormClip)
			}
		}
		if c.Model.takesRawImages() {
			f.bad("features scatternet feeds logreg, mlp or scatcnn; model %q takes raw images", c.Model)
		}
	}
	switch c.Preprocess {
	case PreprocessPCA:
		if c.PCAK < 1 {
			f.bad("pca_k must be >= 1 with preprocess pca, got %d", c.PCAK)
		}
		if f.finite("eigen_gap_min", c.EigenGapMin) && !(c.EigenGapMin > 0) {
			f.bad("eigen_gap_min must be > 0 with preprocess pca (declare it for the dataset collection), got %v", c.EigenGapMin)
		}
	case PreprocessStandardize:
		if f.finite("sigma_min", c.SigmaMin) && !(c.SigmaMin > 0) {
			f.bad("sigma_min must be > 0 with preprocess standardize (declare it for the dataset collection), got %v", c.SigmaMin)
		}
	}
	if f.finite("lipschitz_mu", c.LipschitzMu) && c.LipschitzMu < 0 {
		f.bad("lipschitz_mu must be >= 0, got %v", c.LipschitzMu)
	}
	if c.Preprocess != PreprocessNone && c.DPSGDF {
		f.bad("preprocess and dpsgdf cannot be combined (the SRDP accountant takes one preprocessing declaration)")
	}
	if f.finite("feature_clip", c.FeatureCF) && c.FeatureCF < 0 {
		f.bad("feature_clip must be >= 0, got %v", c.FeatureCF)
	}
	f.add(checkChoice("dpsgdf_variant", c.DPSGDFVariant, dpsgdfVariantValues))
	if c.DPSGDFVariant != DPSGDFDefault && !c.DPSGDF {
		f.bad("dpsgdf_variant %q needs dpsgdf", c.DPSGDFVariant)
	}
	if c.DPSGDF && c.DPSGDFVariant == DPSGDFTheory {
		if f.finite("feature_clip", c.FeatureCF) && !(c.FeatureCF > 0) {
			f.bad("feature_clip must be > 0 with dpsgdf_variant theory (the public bound R on every record's norm), got %v", c.FeatureCF)
		}
		if !(c.Epsilon > 0) {
			f.bad("dpsgdf_variant theory sizes its private statistics from the run's epsilon, which must be > 0")
		}
		if c.FeatureEps != 0 {
			f.bad("feature_epsilon is Algorithm 3's mean budget; dpsgdf_variant theory takes its budget from epsilon (got feature_epsilon %v)", c.FeatureEps)
		}
		if c.Features != FeaturesRaw {
			f.bad("dpsgdf_variant theory works on float64 copies of the features and is not offered with features %q", c.Features)
		}
	} else if c.DPSGDF {
		if f.finite("feature_epsilon", c.FeatureEps) && !(c.FeatureEps > 0) {
			f.bad("feature_epsilon must be > 0 with dpsgdf, got %v", c.FeatureEps)
		}
		if f.finite("feature_clip", c.FeatureCF) && !(c.FeatureCF > 0) {
			f.bad("feature_clip must be > 0 with dpsgdf, got %v", c.FeatureCF)
		}
	}
	return f.join()
}

// validateModel checks the model and its hidden widths.
func (c *Config) validateModel() error {
	f := faults{section: ErrModel}
	f.add(checkChoice("model", c.Model, modelValues))
	for _, h := range c.Hidden {
		if h < 1 {
			f.bad("hidden widths must be >= 1, got %v", c.Hidden)
			break
		}
	}
	return f.join()
}

var (
	knownSamplers = []mechanism.Sampler{mechanism.Poisson, mechanism.Twice, mechanism.Shuffle, mechanism.Cyclic}
	knownClips    = mechanism.Clips
)

// validateMechanism checks the sampler and the clip, and every setting
// they must agree with: all of Validate's sampler and clip checks sit here.
// Combinations whose accounting is not implemented are refused rather than
// accounted as something they are not.
func (c *Config) validateMechanism() error {
	f := faults{section: ErrMechanism}
	f.add(checkChoice("sampler", c.Sampler, knownSamplers))
	f.add(checkChoice("clip", c.Clip, knownClips))
	if c.Sampler == mechanism.Cyclic && c.Noise != NoiseBandMF {
		f.bad("sampler cyclic is noise bandmf's (its parts are the bands); use --noise bandmf --bands b")
	}
	if c.Accountant == AccountantPLD && ((c.Sampler != mechanism.Poisson && c.Sampler != mechanism.Cyclic) || c.Preprocess != PreprocessNone || c.Clip == mechanism.Subspace) {
		f.bad("accountant pld needs sampler poisson without preprocess or clip subspace (got sampler %s)", c.Sampler)
	}
	if c.BatchSize < 1 {
		f.bad("batch_size must be >= 1, got %d", c.BatchSize)
	}
	if c.Sampler == mechanism.Twice {
		if f.finite("q2", c.Q2) && !(c.Q2 > 0 && c.Q2 <= 1) {
			f.bad("q2 must be in (0,1] for twice sampling, got %v", c.Q2)
		}
	}
	if f.finite("clip_norm", c.ClipNorm) && !(c.ClipNorm > 0) {
		f.bad("clip_norm must be > 0, got %v", c.ClipNorm)
	}
	if c.Clip == mechanism.Subspace {
		if len(c.SubspaceRanks) == 0 {
			f.bad("subspace_ranks must list the nested cumulative ranks (e.g. [8,16]) with clip subspace")
		}
		for i, r := range c.SubspaceRanks {
			if r < 1 || (i > 0 && r <= c.SubspaceRanks[i-1]) {
				f.bad("subspace_ranks must be increasing positive cumulative ranks, got %v", c.SubspaceRanks)
				break
			}
		}
		if n := len(c.SubspaceRanks); n > 0 && c.PublicN < c.SubspaceRanks[n-1] {
			f.bad("public_n (%d) must be at least the largest subspace rank (%d)", c.PublicN, c.SubspaceRanks[n-1])
		}
		if c.PowerIters < 1 {
			f.bad("power_iters must be >= 1, got %d", c.PowerIters)
		}
		if c.SubspaceRefresh < 0 {
			f.bad("subspace_refresh must be >= 0, got %d", c.SubspaceRefresh)
		}
	}
	if c.PublicData != "" && c.Clip != mechanism.Subspace {
		f.bad("public_data feeds subspace clipping's basis; it needs clip subspace, got %q", c.Clip)
	}
	if c.Clip == mechanism.Hybrid || c.Clip == mechanism.Subspace || c.Sampler == mechanism.Twice {
		if f.finite("d0", c.D0) && !(c.D0 >= 1) {
			f.bad("d0 must be >= 1, got %v", c.D0)
		}
	}
	if c.PerInstance > 0 && (c.Sampler != mechanism.Poisson || c.Clip != mechanism.Flat) {
		f.bad("per_instance needs sampler poisson and clip flat (the per-instance sensitivity is min(‖g‖, C)), got %s and %s", c.Sampler, c.Clip)
	}
	if c.AuditCanaries > 0 && c.AuditKind == AuditGradient && (c.Clip != mechanism.Flat || c.Sampler != mechanism.Poisson) {
		f.bad("gradient canaries need clip flat and sampler poisson (isotropic noise, Poisson rate q), got %s and %s", c.Clip, c.Sampler)
	}
	c.validateNoise(&f)
	for _, err := range c.mechanismErrors() {
		f.add(err)
	}
	c.validateQuantile(f.bad)
	return f.join()
}

// validatePrivacy checks the privacy target and its accounting.
func (c *Config) validatePrivacy() error {
	f := faults{section: ErrPrivacy}
	f.add(checkChoice("accountant", c.Accountant, accountantValues))
	sigmaOK := f.finite("sigma", c.Sigma)
	epsOK := f.finite("epsilon", c.Epsilon)
	if sigmaOK && c.Sigma < 0 {
		f.bad("sigma must be > 0 (or 0 to calibrate to epsilon), got %v", c.Sigma)
	}
	// A σ whose variance (σ·C)² underflows would reach the accountant and
	// the noise as 0 ("got 0"): refuse it here, as typed.
	if sigmaOK && c.Sigma > 0 && (c.Sigma*c.Sigma < minNormal || (c.ClipNorm > 0 && c.Sigma*c.ClipNorm*c.Sigma*c.ClipNorm < minNormal)) {
		f.bad("sigma %v is too small: its noise variance underflows to 0; use sigma >= 1e-150", c.Sigma)
	}
	if epsOK && c.Epsilon < 0 {
		f.bad("epsilon must be > 0, got %v", c.Epsilon)
	}
	if sigmaOK && epsOK && c.Sigma == 0 && c.Epsilon == 0 {
		f.bad("set sigma (noise multiplier) or epsilon (target to calibrate sigma)")
	}
	if f.finite("delta", c.Delta) && !(c.Delta > 0 && c.Delta < 1) {
		f.bad("delta must be in (0,1), got %v", c.Delta)
	}
	if c.PerInstance < 0 {
		f.bad("per_instance must be >= 0, got %d", c.PerInstance)
	}
	if c.AuditCanaries < 0 {
		f.bad("audit_canaries must be >= 0, got %d", c.AuditCanaries)
	}
	if c.AuditCanaries > 0 {
		f.add(checkChoice("audit_kind", c.AuditKind, auditKindValues))
		if c.AuditKind == AuditGradient && c.Radius > 0 {
			f.bad("gradient canaries are not offered with radius (the outer clip acts on the whole released vector)")
		}
	}
	return f.join()
}

// validateOptimization checks the run's length, the optimizer and its
// schedule, the averaged iterates, augmentation and the chunk size.
func (c *Config) validateOptimization() error {
	f := faults{section: ErrOptimization}
	f.add(checkChoice("optimizer", c.Optimizer, optimizerValues))
	f.add(checkChoice("schedule", c.Schedule, scheduleValues))
	if c.Steps < 0 {
		f.bad("steps must be >= 0, got %d", c.Steps)
	}
	if f.finite("epochs", c.Epochs) && c.Steps == 0 && !(c.Epochs > 0) {
		f.bad("set steps >= 1 or epochs > 0 (got steps=%d epochs=%v)", c.Steps, c.Epochs)
	}
	if f.finite("lr", c.LR) && !(c.LR > 0) {
		f.bad("lr must be > 0, got %v", c.LR)
	}
	if f.finite("momentum", c.Momentum) && !(c.Momentum >= 0 && c.Momentum < 1) {
		f.bad("momentum must be in [0,1), got %v", c.Momentum)
	}
	if f.finite("weight_decay", c.WeightDecay) && c.WeightDecay < 0 {
		f.bad("weight_decay must be >= 0, got %v", c.WeightDecay)
	}
	if f.finite("radius", c.Radius) && c.Radius < 0 {
		f.bad("radius must be >= 0 (0 = no projection), got %v", c.Radius)
	}
	if f.finite("ema", c.EMA) && !(c.EMA >= 0 && c.EMA < 1) {
		f.bad("ema must be in [0,1) (0 = off), got %v", c.EMA)
	}
	if c.EMA > 0 && c.FinalOnly {
		f.bad("ema cannot be combined with final_only: the hidden-state bound covers only the last iterate, and the average releases a function of every iterate")
	}
	if c.Precision != precisionUnset {
		f.add(checkChoice("precision", c.Precision, precisionValues))
	}
	if c.Precision.BF16() && !nn.HasBF16() {
		f.bad("precision bf16 is refused: %v; use precision f32", nn.ErrNoBF16)
	}
	if c.MaxPhysicalBatch < 1 {
		f.bad("max_physical_batch must be >= 1, got %d", c.MaxPhysicalBatch)
	}
	c.validateAugmult(f.bad)
	return f.join()
}

// validateOutputs checks the evaluation and checkpoint cadence and the
// distribution over ranks.
func (c *Config) validateOutputs() error {
	f := faults{section: ErrOutput}
	if c.EvalEvery < 0 || c.CheckpointEvery < 0 {
		f.bad("eval_every and checkpoint_every must be >= 0")
	}
	f.add(checkChoice("distributed", c.Distributed, distributedValues))
	return f.join()
}

// faults collects one section's faults.
type faults struct {
	section error
	errs    []error
}

// add records err (if non-nil) as a fault of the section.
func (f *faults) add(err error) {
	if err != nil {
		f.errs = append(f.errs, &fault{section: f.section, err: err})
	}
}

// bad records a fault described by a message.
func (f *faults) bad(format string, args ...any) { f.add(fmt.Errorf(format, args...)) }

// finite records a fault unless v is finite, and reports whether it is.
func (f *faults) finite(name string, v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		f.bad("%s must be finite, got %v", name, v)
		return false
	}
	return true
}

// join returns the section's faults as one error (nil if none).
func (f *faults) join() error { return errors.Join(f.errs...) }

// fault is one of Validate's findings: its message is err's; errors.Is
// finds its section's sentinel and whatever err wraps.
type fault struct {
	section error
	err     error
}

func (e *fault) Error() string   { return e.err.Error() }
func (e *fault) Unwrap() []error { return []error{e.section, e.err} }

// invalidError is Validate's error: the sections' joined faults, printed
// on one line after "invalid config: " (the CLI prints it as one line).
type invalidError struct{ sections []error }

// invalidConfig returns nil if every section is nil, else an error that
// wraps ErrInvalidConfig and every section's faults.
func invalidConfig(sections ...error) error {
	var e invalidError
	for _, s := range sections {
		if s != nil {
			e.sections = append(e.sections, s)
		}
	}
	if len(e.sections) == 0 {
		return nil
	}
	return &e
}

func (e *invalidError) Error() string {
	var msgs []string
	for _, s := range e.sections {
		if j, ok := s.(interface{ Unwrap() []error }); ok {
			for _, f := range j.Unwrap() {
				msgs = append(msgs, f.Error())
			}
		} else {
			msgs = append(msgs, s.Error())
		}
	}
	return ErrInvalidConfig.Error() + ": " + strings.Join(msgs, "; ")
}

func (e *invalidError) Unwrap() []error { return append([]error{ErrInvalidConfig}, e.sections...) }

// LoadConfig reads a JSON config file over base: keys present in the file
// override base's values; unknown keys are an error.
func LoadConfig(path string, base Config) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("config %s: %w", path, err)
	}
	cfg, err := ParseConfig(data, base)
	if err != nil {
		return base, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads a JSON config over base, as LoadConfig does; one JSON
// object, unknown, duplicate or mis-cased keys and trailing data are errors. A "seed" fixes the
// initialisation only; the noise and sampling stay crypto-seeded unless the
// file also says "seeded": true (a reproducible, not private, run).
func ParseConfig(data []byte, base Config) (Config, error) {
	if err := checkConfigKeys(data); err != nil {
		return base, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	cfg := base
	if err := dec.Decode(&cfg); err != nil {
		return base, err
	}
	if dec.More() {
		return base, errors.New("trailing data after the config object")
	}
	return cfg, nil
}

// Hash identifies the settings that must not change across a resume
// (everything but output and progress options).
func (c Config) Hash() string {
	k := c
	k.OutDir, k.EvalEvery, k.CheckpointEvery, k.Plots = "", 0, 0, false
	k.PrivateDiagnostics, k.KeepCheckpoint, k.Distributed = false, false, ""
	k.Noise = k.hashedNoise()
	if k.Noise != NoiseBandMF {
		k.Bands = 0 // read by noise bandmf only
	}
	if !k.Precision.BF16() {
		k.Precision = precisionUnset // f32: likewise
	}
	b, _ := json.Marshal(k) // a struct of plain fields always marshals
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// validateNoise checks the noise choice and refuses the combinations the
// lattice noise does not support, rather than half-supporting them.
func (c *Config) validateNoise(f *faults) {
	if c.Noise != noiseUnset {
		f.add(checkChoice("noise", c.Noise, noiseValues))
	}
	c.validateBandMF(f)
	if c.Noise.Lattice() {
		for _, r := range c.latticeRefusals() {
			f.bad("%s", r)
		}
	}
}

// latticeRefusals are the reasons the lattice noise cannot run this
// configuration (none: it can).
func (c *Config) latticeRefusals() []string {
	var rs []string
	if c.Clip == mechanism.Subspace {
		rs = append(rs, "noise lattice does not support clip subspace (its per-block noise and rotated clips are not on the lattice yet)")
	}
	if c.FinalOnly {
		rs = append(rs, "noise lattice does not support final_only: the hidden-state bound needs each step to be a contraction and rounding is not one (docs/secure-noise.md); final-only runs keep the continuous noise")
	}
	if c.Radius > 0 {
		rs = append(rs, fmt.Sprintf("noise lattice does not support radius %v: radius clips the float gradient sum, which the lattice release then replaces, so the projection would do nothing; use noise continuous with radius", c.Radius))
	}
	return rs
}

// hashedNoise is the noise a run's steps take, as its settings hash and
// resume check record it: lattice whether set or by default (the same
// run), bandmf, and continuous as unset (set or by default: the hash of
// runs that predate the setting and of those from before lattice became
// the default).
func (c *Config) hashedNoise() Noise {
	switch {
	case c.Noise == NoiseBandMF:
		return NoiseBandMF
	case c.usesLattice():
		return NoiseLattice
	}
	return noiseUnset
}

// usesLattice reports whether the run's steps take the lattice noise: set
// explicitly, or by default (DefaultNoise) where the lattice supports the
// run.
func (c *Config) usesLattice() bool {
	switch c.Noise {
	case NoiseLattice:
		return true
	case noiseUnset:
		return DefaultNoise == NoiseLattice && len(c.latticeRefusals()) == 0
	}
	return false
}

// validateBandMF checks noise bandmf's settings and refuses what its accounts
// (the amplified banded theorem under cyclic Poisson sampling, MMCC under
// ordinary Poisson sampling) do not cover.
func (c *Config) validateBandMF(f *faults) {
	bad := f.bad
	if c.Noise != NoiseBandMF {
		// Bands is read by noise bandmf only (so that a sweep can put the
		// noise on an axis with one --bands); other runs ignore it, and so
		// does their hash.
		return
	}
	if c.Bands < 1 {
		bad("noise bandmf needs bands >= 1 (1: DP-SGD), got %d", c.Bands)
	}
	if c.Sampler != mechanism.Poisson && c.Sampler != mechanism.Cyclic {
		bad("noise bandmf samples by poisson (every example at every step, accounted by MMCC) or cyclic (Poisson within one of b parts, the amplified banded theorem), got %s", c.Sampler)
	}
	if c.Clip != mechanism.Flat && c.Clip != mechanism.PerLayer {
		bad("noise bandmf supports clip flat or per-layer (isotropic noise), got %s", c.Clip)
	}
	if c.FinalOnly || c.Radius > 0 {
		bad("noise bandmf does not support final_only or radius (the hidden-state bound assumes independent noise)")
	}
	if c.ClipQuantile > 0 || c.ClippedCountSigma > 0 {
		bad("noise bandmf does not support clip_quantile or clipped_count_sigma (their counts are accounted with Poisson sampling)")
	}
	if c.AuditCanaries > 0 {
		bad("noise bandmf does not support audit runs")
	}
	if c.Preprocess != PreprocessNone {
		bad("noise bandmf does not support preprocess (SRDP accounts Poisson sampling)")
	}
}
