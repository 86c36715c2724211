package trainer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/dptrain/dptrain/models"
)

// ErrFinished is returned by Run when asked to resume a run that already
// completed: there is nothing to continue.
var ErrFinished = errors.New("run already finished")

// testDataHook, when set (by tests only; nothing else can reach it), sees
// the prepared data before training: the leak test changes one record.
var testDataHook func(*prepared)

// evaluateNow reports whether step evaluates the released parameters on
// the test set. A final-only run releases nothing intermediate
// (docs/hidden-state.md#a1-final-model-only): it evaluates at its last step
// only.
func (s *state) evaluateNow(step int) bool {
	if s.cfg.EvalEvery <= 0 {
		return false
	}
	if s.cfg.FinalOnly {
		return step == s.steps
	}
	return step%s.cfg.EvalEvery == 0 || step == s.steps
}

// record writes one step: its released part to release/metrics.jsonl and,
// with private diagnostics, the whole record to private/diagnostics.jsonl.
func (s *state) record(rec *Record, step int) error {
	if s.logs.metrics != nil {
		if err := s.logs.metrics.write(rec.released()); err != nil {
			return err
		}
	}
	if s.logs.diag != nil {
		// JSON has no ±Inf or NaN: a training statistic that is not finite
		// (a record of 3e38) is written as 0 and named, rather than
		// failing the write, which would stop the run on the data.
		d := *rec
		for _, f := range []struct {
			name string
			v    *float64
		}{{"loss", &d.Loss}, {"grad_norm_mean", &d.GradNormMean}, {"grad_norm_max", &d.GradNormMax}} {
			if math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
				*f.v, d.NonFinite = 0, append(d.NonFinite, f.name)
			}
		}
		if err := s.logs.diag.write(&d); err != nil {
			return err
		}
	}
	writePoint("step")
	return nil
}

// interruptedTestReason is the hidden-state bound's reason for not applying
// once an interrupted final-only run released its iterate's test figures.
const interruptedTestReason = "the test figures of an interrupted iterate were released (--interrupted-test), so more than the final model is public; the composition bound covers both releases"

// withholdTest reports whether the run withholds its test figures: an
// interrupted final-only run releases nothing about its iterate (the
// hidden-state bound covers the final model alone) unless asked to.
func (s *state) withholdTest(stopped string) bool {
	return stopped != "" && s.cfg.FinalOnly && !s.opts.InterruptedTest
}

// markInterruptedRelease marks the hidden-state bound not applicable when
// an interrupted final-only run is asked to release its iterate's test
// figures. The tracker carries the mark into the checkpoint, so the
// resumed run claims the composition bound too.
func (s *state) markInterruptedRelease(stopped string) error {
	if stopped == "" || !s.cfg.FinalOnly || !s.opts.InterruptedTest || s.tracker.Accountant("hidden") == nil {
		return nil
	}
	for _, b := range s.tracker.Bounds(s.cfg.Delta) {
		if b.Name == "hidden" && !b.Applicable {
			return nil // already not applicable, for its own reason
		}
	}
	return s.tracker.SetApplicable("hidden", false, interruptedTestReason)
}

// divergedAt reports whether the run stops as diverged after step. Only
// the released parameters may decide it: every step's in a run that
// releases every step, the final one's in a final-only run. A final-only
// run whose intermediate iterate goes non-finite runs to its planned end
// (the clipper drops non-finite per-sample gradients, and its stop would
// otherwise publish the step at which a hidden iterate diverged).
func (s *state) divergedAt(step int) bool {
	if s.cfg.FinalOnly && step != s.steps {
		return false
	}
	return !finiteVec(s.model.Params())
}

// runLogs are the run's JSON-lines logs: the released records, kept in
// .work/metrics.jsonl until the run publishes them as release/metrics.jsonl,
// and, with PrivateDiagnostics, private/diagnostics.jsonl (nil otherwise,
// and both nil when the run writes nothing).
type runLogs struct {
	metrics, diag *metricsLog
}

// openMetrics opens the metrics logs; a resumed run first keeps exactly the
// lines of the steps its checkpoint covers. The released records continue
// from the work log, or, when the run last published them (an interrupted
// run), from release/metrics.jsonl; they must cover every step the
// checkpoint does.
func (s *state) openMetrics(resumed bool, upTo int) error {
	if err := os.MkdirAll(s.out.work(""), 0o755); err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	type log struct {
		path, published string
		perm            os.FileMode
		dst             **metricsLog
	}
	logs := []log{{s.out.work("metrics.jsonl"), s.out.release("metrics.jsonl"), 0o644, &s.logs.metrics}}
	if s.cfg.PrivateDiagnostics {
		logs = append(logs, log{s.out.private("diagnostics.jsonl"), "", 0o600, &s.logs.diag})
	}
	for _, l := range logs {
		if resumed {
			if _, err := os.Stat(l.path); errors.Is(err, os.ErrNotExist) && l.published != "" {
				if err := copyFile(l.path, l.published, l.perm); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("metrics: %w", err)
				}
			}
			_, statErr := os.Stat(l.path)
			kept, err := truncateSteps(l.path, upTo, l.perm)
			if err != nil {
				return err
			}
			// A log cut short is refused (a missing one, as a checkpoint
			// copied alone leaves, starts at the checkpoint's step).
			if l.published != "" && statErr == nil && kept != upTo {
				return fmt.Errorf("%w: --resume: the run's released records hold %d of the %d steps its checkpoint covers (%s); start it afresh with --overwrite (without --resume) or use a new --out", ErrInvalidConfig, kept, upTo, s.checkpointPath())
			}
		}
		m, err := openMetrics(l.path, resumed, l.perm)
		if err != nil {
			return err
		}
		*l.dst = m
	}
	return nil
}

func (s *state) closeMetrics() {
	s.logs.metrics.close()
	s.logs.diag.close()
}

// syncMetrics makes the logs durable up to the last step: a checkpoint
// written after it never covers a step whose record a power loss took.
func (s *state) syncMetrics() error {
	return errors.Join(s.logs.metrics.sync(), s.logs.diag.sync())
}

// truncateSteps rewrites a JSON-lines log keeping the lines whose "step"
// is at most upTo, byte for byte (a missing file is left missing), and
// returns how many it kept.
func truncateSteps(path string, upTo int, perm os.FileMode) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("metrics %s: %w", path, err)
	}
	kept := 0
	var keep bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var r struct {
			Step int `json:"step"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return 0, fmt.Errorf("metrics %s line %d: %w", path, line, err)
		}
		if r.Step <= upTo {
			keep.Write(sc.Bytes())
			keep.WriteByte('\n')
			kept++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("metrics %s: %w", path, err)
	}
	return kept, writeFileAtomicMode(path, keep.Bytes(), perm)
}

// writeOutputs writes the run's outputs as one transaction
// (docs/architecture.md#the-run-directory-is-a-transaction): the private
// files, then the whole release into .staging/ (the final model, the EMA
// average when on; the summary; the records; the plots; the report),
// published by one rename; then the work log and, for a completed run, the
// checkpoint are removed unless it is to be kept. A failure before the
// publish leaves release/ as it was and the checkpoint in place, so the
// run can be resumed.
func (s *state) writeOutputs(sum *Summary) (err error) {
	writePoint("final")
	if err := os.RemoveAll(s.out.staging("")); err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	if err := os.Mkdir(s.out.staging(""), 0o755); err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(s.out.staging("")) // no half-built release stays
		}
	}()
	if sum.Stopped != "" && s.cfg.FinalOnly {
		// An interrupted hidden-state run holds an intermediate iterate:
		// releasing it would void the bound, so there is no model.bin
		// until the run completes (the checkpoint, private, carries it).
		sum.Notes = append(sum.Notes, "no model.bin: the run was interrupted, and an intermediate iterate of a final_only run must not be released (resume to finish it)")
		if sum.TestWithheld {
			sum.Notes = append(sum.Notes, "no test figures: nothing about an interrupted final_only run's iterate is released")
		}
	} else if err := s.writeModel(); err != nil {
		return err
	}
	if err := s.writeSummaries(sum); err != nil {
		return err
	}
	if err := s.writeCanaries(); err != nil {
		return err
	}
	if err := copyFile(s.out.staging("metrics.jsonl"), s.out.work("metrics.jsonl"), 0o644); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if s.cfg.Plots {
		if err := s.writePlots(); err != nil {
			return err
		}
	}
	if err := s.writeReport(sum); err != nil {
		return err
	}
	if err := s.out.publish(); err != nil {
		return err
	}
	// release/ holds the records now; a resume continues from them.
	if err := os.RemoveAll(s.out.work("")); err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	if sum.Stopped == "" && !s.cfg.KeepCheckpoint {
		if err := os.Remove(s.checkpointPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove checkpoint: %w", err)
		}
	}
	return nil
}

func (s *state) writeModel() error {
	// One format for every model (models.WriteParams: architecture,
	// description, groups, version, checksum). A models.Net (zoo or
	// FromLayers) carries its layers and the public facts describeModel
	// adds; any other model is saved as arch "custom:<type>": readable with
	// models.ReadParams, and refused with a clear error by eval/predict.
	var buf bytes.Buffer
	err := s.withReleased(func() error {
		if m, ok := s.model.(*models.Net); ok {
			if err := s.describeModel(m); err != nil {
				return err
			}
		}
		if saver, ok := s.model.(interface{ Save(io.Writer) error }); ok {
			if err := saver.Save(&buf); err != nil {
				return fmt.Errorf("save model: %w", err)
			}
			return nil
		}
		return models.WriteParams(&buf, models.ParamFile{Arch: fmt.Sprintf("custom:%T", s.model), Groups: s.model.Groups(), Params: s.model.Params()})
	})
	if err != nil {
		return err
	}
	return s.out.writeRelease("model.bin", buf.Bytes())
}

// writeSummaries writes release/summary.json (what may be published) and
// private/summary.json (that plus the training-data statistics).
func (s *state) writeSummaries(sum *Summary) error {
	rel := releasedSummaryOf(sum, s.cfg)
	b, err := json.MarshalIndent(rel, "", "  ")
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	if err := s.out.writeRelease("summary.json", b); err != nil {
		return err
	}
	priv := privateSummary{Publish: privatePublishNote, releasedSummary: rel, Samples: sum.Samples, Seconds: sum.Seconds, PrivateNotes: sum.PrivateNotes, OutDir: s.cfg.OutDir}
	if b, err = json.MarshalIndent(priv, "", "  "); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return s.out.writePrivate("summary.json", b)
}

// writePlots draws release/test and release/epsilon (into the staged
// release) from the released metrics, and private/diagnostics from the
// private ones.
func (s *state) writePlots() error {
	recs, err := ReadMetrics(s.out.work("metrics.jsonl"))
	if err != nil {
		return err
	}
	// The target ε is drawn only when the run has one: a calibration target or a budget stop.
	opt := PlotOptions{Delta: s.cfg.Delta, TargetEpsilon: s.cfg.Epsilon}
	if err := WritePlots(s.out.staging(""), recs, opt); err != nil {
		return err
	}
	if !s.cfg.PrivateDiagnostics {
		return nil
	}
	if recs, err = ReadMetrics(s.out.private("diagnostics.jsonl")); err != nil {
		return err
	}
	return writeDiagnosticsPlot(s.out.private(""), recs)
}

// checkResumable refuses to resume a run that already finished (its
// released summary says it completed; the checkpoint was removed).
func (s *state) checkResumable() error {
	if err := s.checkFinished(); err != nil {
		return err
	}
	// No summary of a completed run: a finished run may still have lost
	// it; its other records must not be overwritten by a fresh run.
	return s.checkNoRecords()
}

// checkFinished returns ErrFinished when release/ holds a completed run.
// The release is published whole, so its summary says the run completed
// only when the run did; a crash after that publish may have left the
// work log and the checkpoint (with the noise seed), which go now.
func (s *state) checkFinished() error {
	b, err := os.ReadFile(s.out.release("summary.json"))
	if err != nil {
		return nil
	}
	var sum struct {
		Steps   int    `json:"steps"`
		Planned int    `json:"planned_steps"`
		Stopped string `json:"stopped"`
	}
	if json.Unmarshal(b, &sum) != nil || sum.Stopped != "" || sum.Steps <= 0 || sum.Steps != sum.Planned {
		return nil
	}
	if err := os.RemoveAll(s.out.work("")); err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	if !s.cfg.KeepCheckpoint {
		if err := os.Remove(s.checkpointPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove checkpoint: %w", err)
		}
	}
	return fmt.Errorf("%w: %s holds a completed run (%d steps); nothing to resume (use a new --out to train again)", ErrFinished, s.cfg.OutDir, sum.Steps)
}

// checkNoRecords refuses to start afresh (resume without a checkpoint) in
// a directory whose release/ holds an earlier run's records: the new run,
// with its own settings and seed, would append to or replace them.
func (s *state) checkNoRecords() error {
	for _, name := range []string{"metrics.jsonl", "summary.json", "model.bin"} {
		if fi, err := os.Stat(s.out.release(name)); err == nil && fi.Size() > 0 {
			return fmt.Errorf("%w: --resume: %s holds no checkpoint to continue from (private/checkpoint.json), but release/%s holds an earlier run's records; train again with --overwrite (replacing them) or a new --out", ErrInvalidConfig, s.cfg.OutDir, name)
		}
	}
	return nil
}

// NPublic is the part of every privacy claim that says what the unit of
// privacy leaves out: the number of training records is released (train_n,
// q, each record's epoch) and is not protected (docs/accountants.md).
const NPublic = "with the dataset size n treated as public"

// claim states the run's privacy guarantee in words.
func (s *state) claim(sum *Summary) string {
	var b strings.Builder
	if sum.Best.Accountant == "" {
		b.WriteString("no valid privacy bound for this run")
	} else {
		if sum.Sweep != nil {
			sweepClaim(&b, sum.Sweep)
		} else {
			fmt.Fprintf(&b, "(ε = %.4g, δ = %g)-DP under %s neighbouring %s (%s) for the model and everything in release/; unit of privacy: one training record",
				sum.Best.Epsilon, s.cfg.Delta, sum.Best.Relation, NPublic, sum.Best.Accountant)
		}
		if s.opts.heldOut > 0 {
			fmt.Fprintf(&b, "; covers the %d rows of Options.Train trained on, not the %d held out as the test set (Options.HoldOut), whose figures are published without protection", sum.CoveredN, s.opts.heldOut)
		}
		if sum.CoveredN < sum.TrainN {
			fmt.Fprintf(&b, "; covers the %d training records other than the %d carved out as public (those get no protection)", sum.CoveredN, sum.TrainN-sum.CoveredN)
		}
		for _, tb := range sum.Bounds {
			if tb.Name == "hidden" && tb.Reason == interruptedTestReason {
				b.WriteString("; the hidden-state bound does not apply: " + interruptedTestReason)
			}
		}
	}
	if !sum.PrivateRelease {
		b.WriteString("; NOT a private release: the noise and sampling were seeded (reproducible), so anyone who knows the seed can recompute the noise")
	}
	return b.String()
}

// ReleasedSummaryJSON is the summary as release/summary.json holds it:
// what a caller may print or publish (no training-data statistics).
func (s *Summary) ReleasedSummaryJSON() ([]byte, error) {
	return json.Marshal(releasedSummaryOf(s, s.cfg))
}

// ReleaseFields returns, for each JSON file a run may write to release/,
// the provenance of each of its fields; and for every other release file
// the provenance of its content. Tests and auditors use it to check that
// nothing undeclared is published.
func ReleaseFields() map[string]map[string]string {
	out := map[string]map[string]string{
		"summary.json":  fieldProvenance(reflect.TypeFor[releasedSummary]()),
		"metrics.jsonl": fieldProvenance(reflect.TypeFor[releasedRecord]()),
		"canaries.json": fieldProvenance(reflect.TypeFor[canaryRelease]()),
	}
	names := make([]string, 0, len(releasedFiles))
	for n := range releasedFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if k := releasedFiles[n]; k != "fields" {
			out[n] = map[string]string{"": k}
		}
	}
	return out
}

// readJSONFile decodes one JSON file.
func readJSONFile[T any](path string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &v, nil
}
