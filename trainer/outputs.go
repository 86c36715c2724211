package trainer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/mechanism"
)

// What a run writes, and who may see it.
//
// A run's output directory OUT holds two directories:
//
//	OUT/release/   may be published: every file in it is covered by the
//	               printed ε or is a function of public data
//	OUT/private/   mode 0700, curator only: the checkpoint (with the crypto
//	               seed of the noise), statistics of the training data,
//	               per-instance files, anything that names a record
//
// The terminal (progress bar with its elapsed time and ETA, log lines, the
// printed summary with its wall time, --json output) is the curator's, like
// private/: it may show what private/ holds, and is never published as it
// is. Wall time and the realised sample count move with the realised batch
// sizes, so they are statistics of the training data: private/ and the
// terminal only, never release/ (privateRecordFields, privateSummary).
//
// Each field written to release/ declares its provenance with a `prov`
// struct tag; the provenance test refuses any other kind, and the leak test
// checks that the non-model fields do not move when one training record
// changes. n (the number of training records) is treated as public.
const (
	releaseDir = "release"
	privateDir = "private"
)

// Provenance kinds a released field may have (the `prov` tag).
const (
	// ProvConfig: a function of the configuration and of n (public).
	ProvConfig = "config"
	// ProvAccount: the privacy account, a function of the configuration.
	ProvAccount = "account"
	// ProvModel: computed from the noised (released) model, alone or on
	// public data (the test set).
	ProvModel = "model"
	// ProvNoised: a noisy statistic of the training data whose cost is
	// composed into the run's ε.
	ProvNoised = "noised"
)

// releasedKinds is every provenance allowed in release/.
var releasedKinds = []string{ProvConfig, ProvAccount, ProvModel, ProvNoised}

// releasedFiles names every file a run may write to release/ and the
// provenance of its content; anything else found there is a defect.
var releasedFiles = map[string]string{
	"model.bin":     ProvModel,
	"summary.json":  "fields", // see releasedSummary
	"metrics.jsonl": "fields", // see releasedRecord
	"test.png":      ProvModel,
	"test.svg":      ProvModel,
	"epsilon.png":   ProvAccount,
	"epsilon.svg":   ProvAccount,
	// Audit runs only: the noised canary block and its scores, and the
	// auditor's plot of the scores of included vs excluded canaries.
	"canaries.json": "fields", // see canaryRelease
	// A page made of the released summary and the plots above only
	// (config, account and model provenances; nothing of its own).
	// (An audit's plot of the canary scores split by inclusion bit is
	// drawn from private/canaries' bits, so it goes to private/.)
	"report.html": ProvModel,
}

// outputs owns a run's output directory: it is the only writer of files,
// and it knows which side each one goes to.
type outputs struct {
	root string
}

// newOutputs creates OUT/private (0700; an existing one is narrowed to
// 0700) and OUT/.work, where the run's released records wait to be
// published. release/ is made only by publishing (rundir_publish.go).
func newOutputs(root string) (*outputs, error) {
	o := &outputs{root: root}
	if err := os.MkdirAll(o.private(""), 0o700); err != nil {
		return nil, fmt.Errorf("out_dir: %w", err)
	}
	if err := os.Chmod(o.private(""), 0o700); err != nil {
		return nil, fmt.Errorf("out_dir: %w", err)
	}
	if err := os.MkdirAll(o.work(""), 0o755); err != nil {
		return nil, fmt.Errorf("out_dir: %w", err)
	}
	return o, nil
}

func (o *outputs) release(name string) string { return filepath.Join(o.root, releaseDir, name) }
func (o *outputs) private(name string) string { return filepath.Join(o.root, privateDir, name) }
func (o *outputs) work(name string) string    { return filepath.Join(o.root, workDir, name) }
func (o *outputs) staging(name string) string { return filepath.Join(o.root, stagingDir, name) }

// writeRelease writes a released file into the release being staged; its
// name must be declared.
func (o *outputs) writeRelease(name string, data []byte) error {
	if _, ok := releasedFiles[name]; !ok {
		return fmt.Errorf("release/%s: not a declared release file (internal error)", name)
	}
	return writeFileAtomicMode(o.staging(name), data, 0o644)
}

// writePrivate writes a curator-only file (0600).
func (o *outputs) writePrivate(name string, data []byte) error {
	return writeFileAtomicMode(o.private(name), data, 0o600)
}

// releasedRecord is one line of release/metrics.jsonl: the step's privacy
// account and, on evaluation steps, the released model's test figures.
type releasedRecord struct {
	Step           int                `json:"step" prov:"config"`
	Epoch          float64            `json:"epoch" prov:"config"` // step·B/n
	LR             float64            `json:"lr" prov:"config"`
	TestAcc        *float64           `json:"test_acc,omitempty" prov:"model"`
	TestLoss       *float64           `json:"test_loss,omitempty" prov:"model"`
	Epsilon        map[string]float64 `json:"epsilon" prov:"account"`
	EpsilonBest    float64            `json:"epsilon_best" prov:"account"`
	BestAccountant string             `json:"best_accountant" prov:"account"`
	Relation       string             `json:"relation" prov:"account"`
	Note           string             `json:"note,omitempty" prov:"config"`
	NotApplicable  map[string]string  `json:"not_applicable,omitempty" prov:"account"`
	Deferred       []string           `json:"deferred,omitempty" prov:"account"` // accountants computed only at evaluation steps and the end
	// The clipped count + round(N(0, σ_b²)), an integer drawn exactly, composed into ε (clipcount.go).
	ClippedCountNoised *float64 `json:"clipped_count_noised,omitempty" prov:"noised"`
	ClippedFracNoised  *float64 `json:"clipped_frac_noised,omitempty" prov:"noised"`
}

// privateRecordFields are the JSON keys of a Record that release/ never
// holds (written to private/diagnostics.jsonl, shown on the terminal), and
// why; every other key is a releasedRecord key.
var privateRecordFields = map[string]string{
	"loss":           "mean training loss of the batch",
	"batch_size":     "realised batch size",
	"grad_norm_mean": "training gradient norms",
	"grad_norm_max":  "training gradient norms",
	"clipped_frac":   "raw clipped fraction",
	"train_acc":      "accuracy on training records",
	"elapsed_s":      "wall time: moves with the realised batch sizes",
	"non_finite":     "which training statistics were not finite",
}

// released is the part of r that may be published.
func (r *Record) released() releasedRecord {
	return releasedRecord{Step: r.Step, Epoch: r.Epoch, LR: r.LR, TestAcc: r.TestAcc, TestLoss: r.TestLoss,
		Epsilon: r.Epsilon, EpsilonBest: r.EpsilonBest, BestAccountant: r.BestAccountant, Relation: r.Relation,
		Note: r.Note, NotApplicable: r.NotApplicable, ClippedCountNoised: r.ClippedCountNoised, ClippedFracNoised: r.ClippedFracNoised,
		Deferred: r.Deferred}
}

// releasedBound is one accountant's bound in release/summary.json.
type releasedBound struct {
	Name       string  `json:"name"`
	Epsilon    float64 `json:"epsilon"`
	Order      float64 `json:"order,omitempty"`
	Relation   string  `json:"relation"`
	Applicable bool    `json:"applicable"`
	Reason     string  `json:"reason,omitempty"`
}

// releasedSummary is release/summary.json.
type releasedSummary struct {
	Publish      string             `json:"publish" prov:"config"` // what the directory is
	Claim        string             `json:"claim" prov:"account"`  // the privacy statement in words
	PrivateRel   bool               `json:"private_release" prov:"config"`
	Dataset      string             `json:"dataset" prov:"config"`
	Model        string             `json:"model" prov:"config"`
	Params       int                `json:"params" prov:"config"`
	TrainN       int                `json:"train_n" prov:"config"` // n is treated as public
	TestN        int                `json:"test_n" prov:"config"`
	Covered      int                `json:"covered_n" prov:"config"` // records the claim covers
	Steps        int                `json:"steps" prov:"config"`
	PlannedSteps int                `json:"planned_steps" prov:"config"`
	Sigma        float64            `json:"sigma" prov:"account"`
	Calibrated   bool               `json:"calibrated" prov:"config"`
	Q            float64            `json:"q" prov:"config"`
	Delta        float64            `json:"delta" prov:"config"`
	TestAcc      *float64           `json:"test_acc,omitempty" prov:"model"` // nil: withheld (Summary.TestWithheld)
	TestLoss     *float64           `json:"test_loss,omitempty" prov:"model"`
	Epsilon      map[string]float64 `json:"epsilon" prov:"account"`
	Best         accountant.Bound   `json:"best" prov:"account"`
	Bounds       []releasedBound    `json:"bounds" prov:"account"`
	Notes        []string           `json:"notes,omitempty" prov:"config"`
	Stopped      string             `json:"stopped,omitempty" prov:"config"`
	NoiseVar     float64            `json:"noise_variance" prov:"account"`
	Sensitivity  float64            `json:"sensitivity" prov:"account"`
	NoiseSeeded  bool               `json:"noise_seeded" prov:"config"`
	Noise        Noise              `json:"noise" prov:"config"`
	LatticeK     int                `json:"lattice_k,omitempty" prov:"config"`
	// D0Used is hybrid clipping's d0 as clipped and accounted: min(d0, D).
	D0Used float64 `json:"d0_used,omitempty" prov:"config"`
	// Sweep, for a run of a sweep: the sweep's total ε, which covers a
	// run picked from its table, and why (sweeptotal.go).
	Sweep  *SweepShare `json:"sweep,omitempty" prov:"account"`
	Config Config      `json:"config" prov:"config"`
}

// publishNote is written into release/summary.json; seededPublishNote
// instead when the run is not a private release; privatePublishNote into
// private/summary.json.
const (
	publishNote        = "this directory may be published: every file is covered by the stated privacy claim or is a function of public data (the configuration, n, the test set); private/ must not be"
	seededPublishNote  = "NOT a private release: the noise and sampling were derived from the seed in config (seeded), so anyone who knows it can recompute and subtract the noise; the stated ε describes the mechanism, not these files. Publish them only as a reproducible, non-private result; private/ must not be published in any case"
	privatePublishNote = "private/: curator only, never publish (training-data statistics, wall time, the checkpoint); release/summary.json says whether release/ can be"
)

// releasedSummaryOf projects a run's summary onto what may be published.
func releasedSummaryOf(s *Summary, cfg Config) releasedSummary {
	notes := make([]string, len(s.Notes))
	for i, n := range s.Notes {
		notes[i] = portableText(cfg, n)
	}
	if s.acct != nil && cfg.Clip == mechanism.Hybrid && s.acct.mech.D0() != cfg.D0 {
		notes = append(notes, fmt.Sprintf("d0 = %g used (d0_used): the model has %d parameters, fewer than the configured d0 = %g", s.acct.mech.D0(), s.Params, cfg.D0))
	}
	cfg = portableConfig(cfg)
	cfg.OutDir = "" // a path on the curator's machine
	out := releasedSummary{
		Publish: publishNote, Claim: s.Claim, PrivateRel: s.PrivateRelease,
		Dataset: s.Dataset, Model: s.Model, Params: s.Params, TrainN: s.TrainN, TestN: s.TestN, Covered: s.CoveredN,
		Steps: s.Steps, PlannedSteps: s.PlannedStep, Sigma: s.Sigma, Calibrated: s.Calibrated, Q: s.Q, Delta: s.Delta,
		Epsilon: s.Epsilon, Best: s.Best, Notes: notes, Stopped: s.Stopped,
		NoiseVar: s.NoiseVariance, Sensitivity: s.Sensitivity, NoiseSeeded: s.NoiseSeeded, Config: cfg,
		Noise: s.Noise, LatticeK: s.LatticeK, Sweep: s.Sweep,
	}
	if !s.TestWithheld {
		out.TestAcc, out.TestLoss = &s.TestAcc, &s.TestLoss
	}
	if s.acct != nil && cfg.Clip == mechanism.Hybrid {
		out.D0Used = s.acct.mech.D0()
	}
	if !s.PrivateRelease {
		out.Publish = seededPublishNote
	}
	for _, tb := range s.Bounds {
		if tb.Err != nil {
			out.Bounds = append(out.Bounds, releasedBound{Name: tb.Name, Reason: tb.Err.Error()})
			continue
		}
		out.Bounds = append(out.Bounds, releasedBound{tb.Name, tb.Epsilon, tb.Order, tb.Relation.String(), tb.Applicable, tb.Reason})
	}
	return out
}

// privateSummary is private/summary.json: the released summary plus what
// is a statistic of the training data (the realised sample count, wall
// time: both move with the realised batch sizes) and curator-only notes.
type privateSummary struct {
	Publish string `json:"publish"` // shadows the released summary's
	releasedSummary
	Samples      int      `json:"samples"`
	Seconds      float64  `json:"seconds"`
	PrivateNotes []string `json:"private_notes,omitempty"`
	OutDir       string   `json:"out_dir,omitempty"`
}

// provenanceErrors checks that every JSON field of the struct type t (and of
// the struct types it embeds) declares a released provenance; it returns
// one message per offending field.
func provenanceErrors(t reflect.Type) []string {
	var errs []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			errs = append(errs, provenanceErrors(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		prov := f.Tag.Get("prov")
		ok := false
		for _, k := range releasedKinds {
			ok = ok || prov == k
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("%s.%s (json %q): provenance %q is not one of %s", t.Name(), f.Name, name, prov, strings.Join(releasedKinds, ", ")))
		}
	}
	return errs
}

// fieldProvenance maps the JSON keys of a released struct type to their
// provenance.
func fieldProvenance(t reflect.Type) map[string]string {
	m := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = f.Tag.Get("prov")
		}
	}
	return m
}

// marshalLine is one JSON line.
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
