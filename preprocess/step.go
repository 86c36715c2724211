package preprocess

import (
	"errors"
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"

	"gonum.org/v1/gonum/mat"
)

// Sensitivity is what the accountant's Smooth-RDP track needs from a
// preprocessing (docs/srdp.md#sensitivities): L2 is Δ_2, the largest change of
// any common record's output, and LInf is Δ_∞, the number of common records
// whose output can change, when one training record is replaced.
type Sensitivity struct {
	L2   float64 `json:"l2"`
	LInf float64 `json:"linf"`
	// Removes is true when the step can output ∅ (a removed record); an ∅
	// on one side only counts as distance 1 (docs/srdp.md#sensitivities).
	Removes bool `json:"removes,omitempty"`
	// Formula names the bound used, for reports.
	Formula string `json:"formula"`
}

// Tau returns τ = Δ_2·Δ_∞, the d_12 budget of Theorem 2.
func (s Sensitivity) Tau() float64 { return s.L2 * s.LInf }

// IsZero reports whether the preprocessing costs nothing (record-local steps).
func (s Sensitivity) IsZero() bool { return s.L2 == 0 || s.LInf == 0 }

// Bounds declares the dataset collection 𝓛 a priori: properties every
// admissible training set has. Sensitivities are computed from these alone.
// Records live in the unit L2 ball (the paper's instance space); scale
// features by a public constant first if they do not.
type Bounds struct {
	N int `json:"n"` // number of training records (public)
	D int `json:"d"` // number of features
	// AddRemove selects add/remove-one instead of replace-one neighbours. Only
	// dedup and quantization use it (Δ_∞ halves, footnote 5); the other steps
	// report their replace-one bounds (TestBruteForceAddRemove checks that
	// these also cover adding one record for scaling, mean imputation and
	// PCA, at N = the larger dataset's size; regression imputation's bound is
	// the paper's add-one bound doubled).
	AddRemove bool `json:"add_remove"`

	MaxGoodCluster int `json:"max_good_cluster,omitempty"` // b_max: largest good η-cluster (Prop 3, PaperBound only)
	MaxBall4Eta    int `json:"max_ball_4eta,omitempty"`    // most records within 4η of one record (dedup, quantization)

	MaxMissingRecords  int     `json:"max_missing_records,omitempty"`  // p: records with ≥ 1 missing entry
	MaxMissingFeatures int     `json:"max_missing_features,omitempty"` // missing entries per record (0 = D)
	MedianShift        float64 `json:"median_shift,omitempty"`         // per-feature bound x^max_((n+1)/2) − x^min_(n/2)
	TrimmedRange       float64 `json:"trimmed_range,omitempty"`        // per-feature bound x^max_(n−m) − x^min_(m)
	LambdaMin          float64 `json:"lambda_min,omitempty"`           // min eigenvalue of X_rᵀX_r (regression imputation)
	LambdaMax          float64 `json:"lambda_max,omitempty"`           // max eigenvalue of X_rᵀX_r

	SigmaMin   float64 `json:"sigma_min,omitempty"`   // smallest feature std (population) over 𝓛
	RangeMin   float64 `json:"range_min,omitempty"`   // smallest feature range max−min over 𝓛 (min-max scaling)
	ExtremeGap float64 `json:"extreme_gap,omitempty"` // largest change of a feature's min or max under one replacement

	EigenGapMin float64 `json:"eigen_gap_min,omitempty"` // δ^k_min = min λ_k − λ_{k+1} over 𝓛
	TopGapMin   float64 `json:"top_gap_min,omitempty"`   // δ^1_min = min λ_1 − λ_2 over 𝓛 (kept: conservative)
}

// ErrNotAccounted is returned by Sensitivity when the declared bounds do not
// determine a finite sensitivity (a needed bound is missing, or the paper
// gives none); training on such output cannot be accounted for.
var ErrNotAccounted = errors.New("preprocess: sensitivity not accounted")

// ErrChain is returned when a pipeline has more than one data-dependent step
// and no declared chain sensitivity (docs/srdp.md#chains).
var ErrChain = errors.New("preprocess: chained data-dependent steps need a declared sensitivity")

func notAccounted(step, format string, args ...any) error {
	return fmt.Errorf("%s: %w: "+format, append([]any{step, ErrNotAccounted}, args...)...)
}

// Result is a transformed training set: the rows and which records were
// removed (∅). Removed rows keep their place (zero-contribution placeholders,
// docs/srdp.md#removed-records) and their values are not meaningful.
type Result struct {
	X       *mat.Dense
	Removed []bool // nil when nothing was removed
}

// Step is a preprocessing step before fitting.
type Step interface {
	// Name is the step's short name, e.g. "standard_scaler".
	Name() string
	// FitTransform fits the step on the training rows of X that are not
	// removed, and returns the fitted step and the transformed training set.
	// It is deterministic and uses no randomness.
	FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error)
	// Sensitivity is computed from the declared bounds only.
	Sensitivity(b Bounds) (Sensitivity, error)
}

// RecordLocal is implemented by steps whose output for a record depends on
// that record alone (no fitted statistics): they cost no privacy, and they
// scale a preceding step's Δ_2 by their Lipschitz constant.
type RecordLocal interface {
	Lipschitz() float64
}

// Fitted is a fitted step: it applies the training statistics to any rows.
// The set of fitted kinds is closed to this package so that a fitted
// pipeline can always be read back from JSON.
type Fitted interface {
	// Kind names the step in the JSON form.
	Kind() string
	// InDim is the number of input features, or -1 for any.
	InDim() int
	// OutDim is the number of output features for d input features.
	OutDim(d int) int
	// Transform returns π_S applied to each row of X (a new matrix).
	// It panics if X has the wrong number of columns.
	Transform(X *mat.Dense) *mat.Dense
	validate() error
}

func checkDims(kind string, f Fitted, X *mat.Dense) {
	_, c := X.Dims()
	if in := f.InDim(); in >= 0 && c != in {
		panic(fmt.Sprintf("preprocess: %s: input has %d columns, fitted on %d", kind, c, in))
	}
}

// keptRows returns the indices of the rows not removed.
func keptRows(n int, removed []bool) []int {
	idx := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if removed == nil || !removed[i] {
			idx = append(idx, i)
		}
	}
	return idx
}

func copyRemoved(r []bool) []bool {
	if r == nil {
		return nil
	}
	return append([]bool(nil), r...)
}

func checkRemoved(step string, X *mat.Dense, removed []bool) error {
	n, _ := X.Dims()
	if removed != nil && len(removed) != n {
		return fmt.Errorf("%s: removed mask has %d entries for %d rows", step, len(removed), n)
	}
	return nil
}

func finitePositive(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// projectBall scales v onto the unit L2 ball in place if it lies outside;
// projection is nonexpansive, so it never increases Δ_2.
func projectBall(v []float64) {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s > 1 {
		f := 1 / math.Sqrt(s)
		for i := range v {
			v[i] *= f
		}
	}
}

// Preprocessed wraps ev, the training mechanism run on the preprocessed
// data, with these sensitivities for the accountant's Smooth-RDP track. mu is
// accountant.Preprocessed.Mu (0 = unknown: the 2C cap per moved record). For
// steps that remove records mu is raised to 1: an ∅ record at ∅-distance 1
// moves its clipped contribution by up to C (μ_eff = max(μ, C),
// docs/srdp.md#removed-records).
func (s Sensitivity) Preprocessed(ev accountant.Event, mu float64) accountant.Preprocessed {
	if s.Removes && mu > 0 && mu < 1 {
		mu = 1
	}
	return accountant.Preprocessed{Delta2: s.L2, DeltaInf: s.LInf, Mu: mu, Event: ev}
}
