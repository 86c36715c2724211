package trainer

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// fixedSettings is c's settings by config key, without those a resume or a
// rank may change (output, evaluation, checkpoint and diagnostic choices;
// see Config.Hash).
func fixedSettings(c Config) map[string]json.RawMessage {
	c.OutDir, c.EvalEvery, c.CheckpointEvery, c.Plots = "", 0, 0, false
	c.PrivateDiagnostics, c.KeepCheckpoint, c.Distributed = false, false, ""
	if c.Noise = c.hashedNoise(); c.Noise == noiseUnset {
		c.Noise = NoiseContinuous // named in messages
	}
	b, _ := json.Marshal(c) // plain fields always marshal
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	return m
}

// settingsDiff names every setting (by its config key) that differs between
// a checkpoint's configuration and this run's, among those that must not
// change across a resume (see Config.Hash); wasHash is the checkpoint's
// settings hash.
func settingsDiff(was Config, wasHash string, now Config) []string {
	a, b := fixedSettings(was), fixedSettings(now)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var diff []string
	for k := range keys {
		va, vb := string(a[k]), string(b[k])
		if va != vb {
			diff = append(diff, fmt.Sprintf("%s: checkpoint %s, now %s", k, orUnset(va), orUnset(vb)))
		}
	}
	sort.Strings(diff)
	if was.Noise == noiseUnset && was.hashedNoise() == NoiseLattice {
		old := was
		old.Noise = NoiseContinuous
		if wasHash == old.Hash() {
			diff = append(diff, "noise: the checkpoint's run took the continuous noise, the default before lattice; pass --noise continuous to continue it")
		}
	}
	if len(diff) == 0 {
		diff = []string{"settings hash differs"}
	}
	return diff
}

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}

// checkMechanism refuses a checkpoint whose mechanism differs from the one
// this run set up: the account continues from the checkpoint's σ and q, so
// the noise and sampling must be the same (after calibration, which could
// otherwise land elsewhere on another machine).
func (s *state) checkMechanism(ck *checkpoint) error {
	var bad []string
	if s.cfg.Sigma > 0 && ck.Sigma != s.cfg.Sigma {
		bad = append(bad, fmt.Sprintf("sigma: checkpoint %g, now %g", ck.Sigma, s.cfg.Sigma))
	}
	if ck.Q != 0 && math.Abs(ck.Q-s.acct.q) > 1e-12*ck.Q {
		bad = append(bad, fmt.Sprintf("q: checkpoint %g, now %g", ck.Q, s.acct.q))
	}
	if ck.Config.Clip != s.cfg.Clip || ck.Config.ClipNorm != s.cfg.ClipNorm {
		bad = append(bad, fmt.Sprintf("clip: checkpoint %s %g, now %s %g", ck.Config.Clip, ck.Config.ClipNorm, s.cfg.Clip, s.cfg.ClipNorm))
	}
	if ck.Config.Sampler != s.cfg.Sampler {
		bad = append(bad, fmt.Sprintf("sampler: checkpoint %s, now %s", ck.Config.Sampler, s.cfg.Sampler))
	}
	if len(bad) > 0 {
		return fmt.Errorf("checkpoint %s does not match this run's mechanism (%v); use a new out_dir", s.checkpointPath(), bad)
	}
	return nil
}

// restoreLedger continues the checkpoint's ledger after checking that it is
// what this run's mechanism charges for the prefix and steps 1..ck.Step at
// the checkpoint's σ. An older checkpoint without one gets the ledger the
// mechanism implies.
func (s *state) restoreLedger(ck *checkpoint) error {
	if ck.Ledger != nil && ck.Ledger.Steps() != ck.Step {
		// The step and the events charged are written together: a
		// difference means the file was edited or damaged, not another
		// mechanism.
		return fmt.Errorf("%w: checkpoint %s: its step (%d) disagrees with its events, which were charged through step %d: the file was edited or damaged; resume from an intact checkpoint, or start afresh with --overwrite", ErrInvalidConfig, s.checkpointPath(), ck.Step, ck.Ledger.Steps())
	}
	want := s.acct.mech.LedgerFor(ck.Sigma, ck.Step)
	if ck.Ledger == nil {
		s.acct.ledger = want
		return nil
	}
	if err := ck.Ledger.Check(want); err != nil {
		return fmt.Errorf("checkpoint %s: the events it charged are not this run's mechanism's: %w", s.checkpointPath(), err)
	}
	s.acct.ledger = ck.Ledger
	return nil
}

func (s *state) checkpointPath() string { return s.out.private("checkpoint.json") }

func (s *state) checkpoint(step int) error {
	if err := s.syncMetrics(); err != nil {
		return fmt.Errorf("checkpoint: metrics: %w", err)
	}
	ck := &checkpoint{ConfigHash: s.cfg.Hash(), Config: s.cfg, Step: step, Sigma: s.sigma, Q: s.acct.q,
		Params: float32Bytes(s.model.Params()), Private: s.cfg.FinalOnly, Root: s.rootState, Samples: s.samples,
		Data: &dataRecord{Digest: s.data.digest, Released: s.data.released}}
	var err error
	if ck.Optimizer, err = s.opt.MarshalBinary(); err != nil {
		return fmt.Errorf("checkpoint optimizer: %w", err)
	}
	if ck.Sampler, err = s.samp.MarshalBinary(); err != nil {
		return fmt.Errorf("checkpoint sampler: %w", err)
	}
	if ck.Noise, err = s.noiseRNG.MarshalBinary(); err != nil {
		return fmt.Errorf("checkpoint noise: %w", err)
	}
	if ck.Tracker, err = s.tracker.MarshalJSON(); err != nil {
		return fmt.Errorf("checkpoint tracker: %w", err)
	}
	ck.Ledger = s.acct.ledger
	for _, f := range s.features {
		st, err := f.save()
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", f.name(), err)
		}
		if err := ck.Features.put(f.name(), st); err != nil {
			return err
		}
	}
	var warn []string
	if s.cfg.FinalOnly {
		warn = append(warn, "PRIVATE STATE: this run releases only its final model; releasing this checkpoint voids the hidden-state bound")
	}
	if !s.cfg.Seeded {
		warn = append(warn, "SECRET: holds the crypto/rand seed of the DP noise and sampling streams; anyone holding this file can recompute the noise: never release it")
	}
	ck.Warning = strings.Join(warn, "; ")
	return saveCheckpoint(s.checkpointPath(), ck)
}

func (s *state) restore(ck *checkpoint) error {
	if ck.Step > s.steps {
		return fmt.Errorf("checkpoint %s is at step %d, beyond this run's %d steps", s.checkpointPath(), ck.Step, s.steps)
	}
	if err := setFloat32s(s.model.Params(), ck.Params); err != nil {
		return fmt.Errorf("checkpoint %s: %w", s.checkpointPath(), err)
	}
	if err := s.opt.UnmarshalBinary(ck.Optimizer); err != nil {
		return fmt.Errorf("checkpoint %s optimizer: %w", s.checkpointPath(), err)
	}
	if err := s.samp.UnmarshalBinary(ck.Sampler); err != nil {
		return fmt.Errorf("checkpoint %s sampler: %w", s.checkpointPath(), err)
	}
	if err := s.noiseRNG.UnmarshalBinary(ck.Noise); err != nil {
		return fmt.Errorf("checkpoint %s noise: %w", s.checkpointPath(), err)
	}
	if err := s.tracker.UnmarshalJSON(ck.Tracker); err != nil {
		return fmt.Errorf("checkpoint %s accountants: %w", s.checkpointPath(), err)
	}
	// The account continues at the checkpoint's σ: the noise is rebuilt
	// from it too, so the two can never disagree.
	if err := s.checkMechanism(ck); err != nil {
		return err
	}
	s.sigma = ck.Sigma
	if err := s.restoreLedger(ck); err != nil {
		return err
	}
	var err error
	if s.noise, err = s.buildNoise(); err != nil {
		return fmt.Errorf("noise: %w", err)
	}
	s.samples = ck.Samples
	if err := s.restoreFeatures(ck); err != nil {
		return fmt.Errorf("checkpoint %s: %w", s.checkpointPath(), err)
	}
	return nil
}

// restoreFeatures restores each optional feature that is on from its
// state under its name.
func (s *state) restoreFeatures(ck *checkpoint) error {
	for _, f := range s.features {
		if err := f.load(ck.Features, ck.Step); err != nil {
			return err
		}
	}
	return nil
}
