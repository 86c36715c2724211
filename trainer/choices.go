package trainer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Each multiple-choice setting of [Config] is a named string type with one
// constant per value. Its UnmarshalText, used by JSON configs and by the
// CLI's flags alike, refuses an unknown value with a *ChoiceError that
// lists the valid ones; Validate checks them again for configs built in Go.
// Config.Sampler and Config.Clip are typed by the mechanism that they
// describe and are not declared here.

// ErrUnknownChoice is wrapped by every *ChoiceError.
var ErrUnknownChoice = errors.New("unknown choice")

// ChoiceError reports a value that is not one of a setting's constants.
type ChoiceError struct {
	Field string   // the config key, e.g. "model"
	Value string   // what was given
	Valid []string // every accepted value, in documentation order
}

func (e *ChoiceError) Error() string {
	quoted := make([]string, len(e.Valid))
	for i, v := range e.Valid {
		quoted[i] = v
		if v == "" {
			quoted[i] = `""`
		}
	}
	return fmt.Sprintf("%s %q is not one of %s", e.Field, e.Value, strings.Join(quoted, ", "))
}

func (e *ChoiceError) Unwrap() error { return ErrUnknownChoice }

// checkChoice returns a *ChoiceError unless v is one of valid.
func checkChoice[T ~string](field string, v T, valid []T) error {
	if slices.Contains(valid, v) {
		return nil
	}
	names := make([]string, len(valid))
	for i, s := range valid {
		names[i] = string(s)
	}
	return &ChoiceError{Field: field, Value: string(v), Valid: names}
}

// unmarshalChoice sets *dst to text if it is one of valid.
func unmarshalChoice[T ~string](dst *T, field string, text []byte, valid []T) error {
	v := T(text)
	if err := checkChoice(field, v, valid); err != nil {
		return err
	}
	*dst = v
	return nil
}

// Dataset names the data a run trains on (Config.Dataset).
type Dataset string

const (
	DatasetEmbedded     Dataset = "embedded" // the Fashion-MNIST subset compiled into the binary
	DatasetFashionMNIST Dataset = "fashion-mnist"
	DatasetMNIST        Dataset = "mnist"
	DatasetCIFAR10      Dataset = "cifar10"
	DatasetSynthetic    Dataset = "synthetic"
	DatasetCSV          Dataset = "csv"    // Config.TrainFile and TestFile
	DatasetFolder       Dataset = "folder" // an image tree in Config.DataDir
	DatasetNPY          Dataset = "npy"    // NumPy pairs in Config.TrainFile and TestFile (docs/npy.md)
	DatasetMemory       Dataset = "memory" // data passed in Options (see InMemory)
)

var datasetValues = []Dataset{DatasetEmbedded, DatasetFashionMNIST, DatasetMNIST, DatasetCIFAR10,
	DatasetSynthetic, DatasetCSV, DatasetFolder, DatasetNPY, DatasetMemory}

func (d Dataset) String() string { return string(d) }

// MarshalText returns the value as written in configs.
func (d Dataset) MarshalText() ([]byte, error) { return []byte(d), nil }

// UnmarshalText accepts one of the Dataset constants.
func (d *Dataset) UnmarshalText(text []byte) error {
	return unmarshalChoice(d, "dataset", text, datasetValues)
}

// Model names the network a run trains (Config.Model).
type Model string

const (
	ModelLogReg   Model = "logreg" // multinomial logistic regression
	ModelLinReg   Model = "linreg" // least-squares linear regression
	ModelMLP      Model = "mlp"    // widths from Config.Hidden
	ModelCNN      Model = "cnn"    // the MNIST CNN (1×28×28 inputs)
	ModelResNet20 Model = "resnet20"
	ModelResNet22 Model = "resnet22"
	ModelScatCNN  Model = "scatcnn" // CNN on ScatterNet features
)

var modelValues = []Model{ModelLogReg, ModelLinReg, ModelMLP, ModelCNN, ModelResNet20, ModelResNet22, ModelScatCNN}

func (m Model) String() string { return string(m) }

// MarshalText returns the value as written in configs.
func (m Model) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText accepts one of the Model constants.
func (m *Model) UnmarshalText(text []byte) error {
	return unmarshalChoice(m, "model", text, modelValues)
}

// takesRawImages reports whether the model needs the dataset's images
// rather than a feature map.
func (m Model) takesRawImages() bool {
	return m == ModelCNN || m == ModelResNet20 || m == ModelResNet22
}

// Optimizer names the update rule (Config.Optimizer).
type Optimizer string

const (
	OptimizerSGD      Optimizer = "sgd"
	OptimizerMomentum Optimizer = "momentum" // heavy-ball SGD with Config.Momentum
	OptimizerAdam     Optimizer = "adam"
)

var optimizerValues = []Optimizer{OptimizerSGD, OptimizerMomentum, OptimizerAdam}

func (o Optimizer) String() string { return string(o) }

// MarshalText returns the value as written in configs.
func (o Optimizer) MarshalText() ([]byte, error) { return []byte(o), nil }

// UnmarshalText accepts one of the Optimizer constants.
func (o *Optimizer) UnmarshalText(text []byte) error {
	return unmarshalChoice(o, "optimizer", text, optimizerValues)
}

// Schedule names the learning-rate schedule (Config.Schedule).
type Schedule string

const (
	ScheduleConstant Schedule = "constant"
	ScheduleCosine   Schedule = "cosine" // from Config.LR to 0 over the run
)

var scheduleValues = []Schedule{ScheduleConstant, ScheduleCosine}

func (s Schedule) String() string { return string(s) }

// MarshalText returns the value as written in configs.
func (s Schedule) MarshalText() ([]byte, error) { return []byte(s), nil }

// UnmarshalText accepts one of the Schedule constants.
func (s *Schedule) UnmarshalText(text []byte) error {
	return unmarshalChoice(s, "schedule", text, scheduleValues)
}

// FeatureMap names the fixed feature map applied to the inputs
// (Config.Features).
type FeatureMap string

const (
	FeaturesRaw        FeatureMap = ""           // the inputs as they are
	FeaturesScatterNet FeatureMap = "scatternet" // a fixed ScatterNet (no privacy cost)
)

var featureMapValues = []FeatureMap{FeaturesRaw, FeaturesScatterNet}

func (f FeatureMap) String() string { return string(f) }

// MarshalText returns the value as written in configs.
func (f FeatureMap) MarshalText() ([]byte, error) { return []byte(f), nil }

// UnmarshalText accepts one of the FeatureMap constants.
func (f *FeatureMap) UnmarshalText(text []byte) error {
	return unmarshalChoice(f, "features", text, featureMapValues)
}

// FeatureNorm names the normalisation of ScatterNet features
// (Config.FeatureNorm; read only with FeaturesScatterNet).
type FeatureNorm string

const (
	FeatureNormGroup   FeatureNorm = "group"   // per example: no privacy cost
	FeatureNormPrivate FeatureNorm = "private" // per-channel statistics by the Gaussian mechanism, accounted
	FeatureNormNone    FeatureNorm = "none"
)

var featureNormValues = []FeatureNorm{FeatureNormGroup, FeatureNormPrivate, FeatureNormNone}

func (f FeatureNorm) String() string { return string(f) }

// MarshalText returns the value as written in configs.
func (f FeatureNorm) MarshalText() ([]byte, error) { return []byte(f), nil }

// UnmarshalText accepts one of the FeatureNorm constants, or "" (unset:
// refused by Validate only when ScatterNet features need it).
func (f *FeatureNorm) UnmarshalText(text []byte) error {
	return unmarshalChoice(f, "feature_norm", text, append([]FeatureNorm{""}, featureNormValues...))
}

// Preprocess names the non-private, data-dependent preprocessing that Smooth
// RDP accounts (Config.Preprocess).
type Preprocess string

const (
	PreprocessNone        Preprocess = ""
	PreprocessPCA         Preprocess = "pca"
	PreprocessStandardize Preprocess = "standardize"
)

var preprocessValues = []Preprocess{PreprocessNone, PreprocessPCA, PreprocessStandardize}

func (p Preprocess) String() string { return string(p) }

// MarshalText returns the value as written in configs.
func (p Preprocess) MarshalText() ([]byte, error) { return []byte(p), nil }

// UnmarshalText accepts one of the Preprocess constants.
func (p *Preprocess) UnmarshalText(text []byte) error {
	return unmarshalChoice(p, "preprocess", text, preprocessValues)
}

// Scale names the tabular scaling by declared feature bounds
// (Config.Scale, docs/tabular.md).
type Scale string

const (
	ScaleNone Scale = ""
	// ScaleMinMax maps each feature's declared [lo, hi] to [0, 1]: data-
	// independent, no privacy cost.
	ScaleMinMax Scale = "minmax"
	// ScaleStandardize subtracts a private mean and divides by a private
	// standard deviation (Gaussian mechanism, composed into the run's ε).
	ScaleStandardize Scale = "standardize"
)

var scaleValues = []Scale{ScaleNone, ScaleMinMax, ScaleStandardize}

func (s Scale) String() string { return string(s) }

// MarshalText returns the value as written in configs.
func (s Scale) MarshalText() ([]byte, error) { return []byte(s), nil }

// UnmarshalText accepts one of the Scale constants.
func (s *Scale) UnmarshalText(text []byte) error {
	return unmarshalChoice(s, "scale", text, scaleValues)
}

// DPSGDFVariant names the DPSGD-F algorithm (Config.DPSGDFVariant).
type DPSGDFVariant string

const (
	DPSGDFDefault   DPSGDFVariant = ""          // DPSGDFPractical
	DPSGDFPractical DPSGDFVariant = "practical" // the paper's experiments: private mean at Config.FeatureEps
	DPSGDFTheory    DPSGDFVariant = "theory"    // private mean and quantile at ρ-zCDP from the run's ε
)

var dpsgdfVariantValues = []DPSGDFVariant{DPSGDFDefault, DPSGDFPractical, DPSGDFTheory}

func (v DPSGDFVariant) String() string { return string(v) }

// MarshalText returns the value as written in configs.
func (v DPSGDFVariant) MarshalText() ([]byte, error) { return []byte(v), nil }

// UnmarshalText accepts one of the DPSGDFVariant constants.
func (v *DPSGDFVariant) UnmarshalText(text []byte) error {
	return unmarshalChoice(v, "dpsgdf_variant", text, dpsgdfVariantValues)
}

// Accountant names the accountant that calibrates σ (Config.Accountant).
type Accountant string

const (
	AccountantAuto Accountant = ""    // the tightest that applies: PLD for Poisson DP-SGD, else the run's own
	AccountantRDP  Accountant = "rdp" // Rényi DP
	AccountantPLD  Accountant = "pld" // privacy loss distribution
)

var accountantValues = []Accountant{AccountantAuto, AccountantRDP, AccountantPLD}

func (a Accountant) String() string { return string(a) }

// MarshalText returns the value as written in configs.
func (a Accountant) MarshalText() ([]byte, error) { return []byte(a), nil }

// UnmarshalText accepts one of the Accountant constants.
func (a *Accountant) UnmarshalText(text []byte) error {
	return unmarshalChoice(a, "accountant", text, accountantValues)
}

// AuditKind names the canaries of an audit run (Config.AuditKind; read
// only when Config.AuditCanaries > 0).
type AuditKind string

const (
	AuditGradient AuditKind = "gradient" // white-box gradient canaries in an extra block of the released vector
	AuditInput    AuditKind = "input"    // crafted input records
)

var auditKindValues = []AuditKind{AuditGradient, AuditInput}

func (k AuditKind) String() string { return string(k) }

// MarshalText returns the value as written in configs.
func (k AuditKind) MarshalText() ([]byte, error) { return []byte(k), nil }

// UnmarshalText accepts one of the AuditKind constants. (The field is
// omitted from JSON when unset.)
func (k *AuditKind) UnmarshalText(text []byte) error {
	return unmarshalChoice(k, "audit_kind", text, auditKindValues)
}

// Distributed names how a run spreads over processes (Config.Distributed).
type Distributed string

const (
	DistributedNone Distributed = ""    // one process
	DistributedMPI  Distributed = "mpi" // one rank of a data-parallel MPI run
)

var distributedValues = []Distributed{DistributedNone, DistributedMPI}

func (d Distributed) String() string { return string(d) }

// MarshalText returns the value as written in configs.
func (d Distributed) MarshalText() ([]byte, error) { return []byte(d), nil }

// UnmarshalText accepts one of the Distributed constants.
func (d *Distributed) UnmarshalText(text []byte) error {
	return unmarshalChoice(d, "distributed", text, distributedValues)
}

// Noise names how a step's released sum is noised (Config.Noise).
type Noise string

const (
	// NoiseContinuous is the float Gaussian added to the float32 clipped
	// sum (clip.Gaussian): the one earlier seeded runs used.
	NoiseContinuous Noise = "continuous"
	// NoiseLattice quantises each clipped example onto the lattice
	// γℤᵈ (γ = C·2⁻ᵏ), sums exactly in int64 and adds exactly sampled
	// round(Z): a post-processing of the Gaussian mechanism that floating-
	// point attacks cannot exploit (docs/secure-noise.md).
	NoiseLattice Noise = "lattice"
	// NoiseBandMF correlates the continuous Gaussian noise across steps by
	// a b-banded matrix factorization optimised for the run's workload
	// (Config.Bands), with cyclic Poisson sampling over b parts and the
	// amplified banded theorem's account (docs/matrix-mechanism.md).
	NoiseBandMF Noise = "bandmf"
	// noiseUnset is the default (Default, a Config built in Go):
	// DefaultNoise where the lattice supports the run, else continuous.
	noiseUnset Noise = ""
)

// DefaultNoise is the noise of a run that does not set one, wherever the
// lattice noise supports the run (final-only, subspace-clipped and radius
// runs keep the continuous noise: Config.usesLattice). Issue 42: switching
// the default to the lattice is this one line.
const DefaultNoise = NoiseLattice

var noiseValues = []Noise{NoiseContinuous, NoiseLattice, NoiseBandMF}

func (n Noise) String() string { return string(n) }

// MarshalText returns the value as written in configs.
func (n Noise) MarshalText() ([]byte, error) { return []byte(n), nil }

// UnmarshalText accepts one of the Noise constants.
func (n *Noise) UnmarshalText(text []byte) error {
	return unmarshalChoice(n, "noise", text, noiseValues)
}

// Lattice reports whether the run uses the lattice noise.
func (n Noise) Lattice() bool { return n == NoiseLattice }

// Precision names the engine's GEMM arithmetic (Config.Precision).
type Precision string

const (
	// PrecisionF32 is float32 throughout: the default, and what earlier
	// seeded runs used.
	PrecisionF32 Precision = "f32"
	// PrecisionBF16 rounds the operands of the engine's matrix products
	// to bfloat16 and sums in float32 (AVX-512 BF16 CPUs only), with the
	// clipping margin of docs/precision.md.
	PrecisionBF16 Precision = "bf16"
	// precisionUnset is the default (Default, a Config built in Go): f32.
	precisionUnset Precision = ""
)

var precisionValues = []Precision{PrecisionF32, PrecisionBF16}

func (p Precision) String() string { return string(p) }

// MarshalText returns the value as written in configs.
func (p Precision) MarshalText() ([]byte, error) { return []byte(p), nil }

// UnmarshalText accepts one of the Precision constants.
func (p *Precision) UnmarshalText(text []byte) error {
	return unmarshalChoice(p, "precision", text, precisionValues)
}

// BF16 reports whether the run's products use bfloat16.
func (p Precision) BF16() bool { return p == PrecisionBF16 }
