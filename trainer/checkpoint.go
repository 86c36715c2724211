package trainer

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/dptrain/dptrain/mechanism"
)

// The checkpoint file's format versions. Version 1 was a flat JSON object
// with one named field per feature and no checksum; version 2 wraps the
// checkpoint's exact bytes with their SHA-256 and keeps each optional
// feature's state under the feature's name (docs/architecture.md#the-checkpoint-file).
const (
	checkpointVersion       = 2
	oldestCheckpointVersion = 1
	checkpointFormat        = "dptrain checkpoint"
)

// checkpointFile is the file's outer form from version 2 on. Checkpoint
// holds the checkpoint's bytes exactly as written, so SHA256 is checked
// over what was written, not over a re-encoding.
type checkpointFile struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	SHA256     string          `json:"sha256"` // hex SHA-256 of Checkpoint's bytes
	Checkpoint json.RawMessage `json:"checkpoint"`
}

// checkpoint is everything a run needs to continue exactly where it was:
// parameters, optimizer, sampler and noise streams, the accountants, and
// the optional features' own state by name.
type checkpoint struct {
	ConfigHash string  `json:"config_hash"`
	Config     Config  `json:"config"`
	Step       int     `json:"step"`
	Sigma      float64 `json:"sigma"` // the noise multiplier in use (after calibration)
	// Q is the sampling rate the account used; a resume refuses a
	// configuration whose rate differs (0 in older checkpoints: not checked).
	Q         float64 `json:"q,omitempty"`
	Params    []byte  `json:"params"`
	Optimizer []byte  `json:"optimizer"`
	Sampler   []byte  `json:"sampler"`
	Noise     []byte  `json:"noise"`
	// Root is the state of the run's root random stream, from which the
	// sampler, the noise and any private preprocessing's noise are derived.
	// In a crypto-seeded run it is the secret seed of all of them: a resumed
	// run continues the same streams, and the file must never be released.
	Root    []byte          `json:"root,omitempty"`
	Tracker json.RawMessage `json:"tracker"`
	// Ledger is every event charged so far (nil in older checkpoints); a
	// resumed run checks it against what its own mechanism charges.
	Ledger *mechanism.Ledger `json:"ledger,omitempty"`
	// Private marks a checkpoint of a hidden-state run: the intermediate
	// iterate it holds must never be released, or the hidden-state bound
	// no longer applies.
	Private bool   `json:"private"`
	Warning string `json:"warning,omitempty"`
	// Samples is the number of examples processed so far (the sum of the
	// realised batch sizes), so the summary of a resumed run counts them all.
	Samples int `json:"samples,omitempty"`
	// Features holds each optional feature's state under its name.
	Features featureStates `json:"features,omitempty"`
	// Data is the digest of the data the run read and the statistics it
	// released from them before training (resumedata.go); a checkpoint
	// without it (older) cannot be resumed.
	Data *dataRecord `json:"data,omitempty"`
}

// featureStates is the optional features' checkpoint state, by name.
type featureStates map[string]json.RawMessage

// put stores v as name's state.
func (f *featureStates) put(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("feature %s: %w", name, err)
	}
	if *f == nil {
		*f = featureStates{}
	}
	(*f)[name] = b
	return nil
}

// get decodes name's state into v; a feature the run has on but the
// checkpoint lacks is an error.
func (f featureStates) get(name string, v any) error {
	b, ok := f[name]
	if !ok {
		return fmt.Errorf("holds no %s state", name)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s state: %w", name, err)
	}
	return nil
}

// checkpointV1 is a version-1 file: the fields version 2 kept, and one
// named field per optional feature.
type checkpointV1 struct {
	checkpoint
	Version       int         `json:"version"`
	CountNoise    []byte      `json:"count_noise,omitempty"`
	BasisAt       int         `json:"basis_at,omitempty"`
	BasisFrom     []byte      `json:"basis_from,omitempty"`
	InstanceNorms [][]float64 `json:"instance_norms,omitempty"`
	EMA           []byte      `json:"ema,omitempty"`
	ClipNow       float64     `json:"clip_now,omitempty"`
	QuantileRNG   []byte      `json:"quantile_rng,omitempty"`
	CanaryParams  []byte      `json:"canary_params,omitempty"`
	CanaryCounts  []int       `json:"canary_counts,omitempty"`
	CanaryRNG     []byte      `json:"canary_rng,omitempty"`
}

// The optional features' checkpoint names and state.
const (
	featureClippedCount = "clipped_count"
	featureSubspace     = "subspace"
	featurePerInstance  = "per_instance"
	featureEMA          = "ema"
	featureQuantile     = "clip_quantile"
	featureCanaries     = "canaries"
)

// rngState is a feature whose only state is its noise stream.
type rngState struct {
	RNG []byte `json:"rng"`
}

// subspaceCheckpoint locates the basis in use: the step after which it was
// estimated and the parameters it was estimated at.
type subspaceCheckpoint struct {
	BasisAt   int    `json:"basis_at"`
	BasisFrom []byte `json:"basis_from"`
}

// instanceCheckpoint is the per-instance diagnostic's norm history
// ([step][example]); float64 round-trips exactly through JSON.
type instanceCheckpoint struct {
	Norms [][]float64 `json:"norms"`
}

// emaCheckpoint is the parameter average's state (optim.EMA: its step
// count and the float64 average, exactly).
type emaCheckpoint struct {
	State []byte `json:"state"`
}

// quantileCheckpoint is the adaptive clip norm C_t and its count noise
// stream.
type quantileCheckpoint struct {
	ClipNow float64 `json:"clip_now"`
	RNG     []byte  `json:"rng"`
}

// canaryCheckpoint is an audit run's canary block, sample counts and
// sampling stream.
type canaryCheckpoint struct {
	Params []byte `json:"params"`
	Counts []int  `json:"counts"`
	RNG    []byte `json:"rng"`
}

// upgrade moves a version-1 checkpoint's feature fields under their names.
func (v *checkpointV1) upgrade() (*checkpoint, error) {
	c := v.checkpoint
	c.Features = nil
	var err error
	put := func(on bool, name string, st any) {
		if on && err == nil {
			err = c.Features.put(name, st)
		}
	}
	put(v.CountNoise != nil, featureClippedCount, rngState{v.CountNoise})
	put(v.BasisFrom != nil, featureSubspace, subspaceCheckpoint{v.BasisAt, v.BasisFrom})
	put(v.InstanceNorms != nil, featurePerInstance, instanceCheckpoint{v.InstanceNorms})
	put(v.EMA != nil, featureEMA, emaCheckpoint{v.EMA})
	put(v.ClipNow != 0 || v.QuantileRNG != nil, featureQuantile, quantileCheckpoint{v.ClipNow, v.QuantileRNG})
	put(v.CanaryParams != nil || v.CanaryRNG != nil, featureCanaries, canaryCheckpoint{v.CanaryParams, v.CanaryCounts, v.CanaryRNG})
	return &c, err
}

// ErrNoCheckpoint is returned by loadCheckpoint when none exists.
var ErrNoCheckpoint = errors.New("no checkpoint")

// encodeCheckpoint is c in the current file format.
func encodeCheckpoint(c *checkpoint) ([]byte, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	return json.Marshal(checkpointFile{Format: checkpointFormat, Version: checkpointVersion, SHA256: hex.EncodeToString(sum[:]), Checkpoint: body})
}

func saveCheckpoint(path string, c *checkpoint) error {
	b, err := encodeCheckpoint(c)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	// Private state (parameters mid-run, and the noise streams' seeds):
	// readable by the owner only.
	return writeFileAtomicMode(path, b, 0o600)
}

func loadCheckpoint(path string) (*checkpoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint %s: %w", path, ErrNoCheckpoint)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	c, err := parseCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

// startAfresh is the way out of a checkpoint that cannot be resumed.
const startAfresh = "it cannot be resumed: start the run afresh with --overwrite (without --resume), which replaces the run's outputs, or use a new out_dir"

// parseCheckpoint reads either format version: the current one after
// checking its checksum, or a version-1 file, whose feature fields it moves
// under their names. Any other version is refused with the reason.
func parseCheckpoint(b []byte) (*checkpoint, error) {
	var f checkpointFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("corrupt (not a checkpoint file: %v); %s", err, startAfresh)
	}
	var c *checkpoint
	switch {
	case f.Version == checkpointVersion:
		if f.Format != checkpointFormat {
			return nil, fmt.Errorf("corrupt: format %q, want %q; %s", f.Format, checkpointFormat, startAfresh)
		}
		sum := sha256.Sum256(f.Checkpoint)
		if hex.EncodeToString(sum[:]) != f.SHA256 {
			return nil, fmt.Errorf("damaged: its checksum does not match its contents (a partial write or an edit); %s", startAfresh)
		}
		c = &checkpoint{}
		if err := json.Unmarshal(f.Checkpoint, c); err != nil {
			return nil, fmt.Errorf("corrupt: %w", err)
		}
	case f.Version == 1:
		var v checkpointV1
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("corrupt: %w", err)
		}
		var err error
		if c, err = v.upgrade(); err != nil {
			return nil, fmt.Errorf("version 1: %w", err)
		}
	case f.Version > checkpointVersion:
		return nil, fmt.Errorf("format version %d was written by a newer dptrain (this one reads versions %d to %d): resume it with that dptrain, or start the run afresh with --overwrite (without --resume)", f.Version, oldestCheckpointVersion, checkpointVersion)
	default:
		return nil, fmt.Errorf("format version %d predates the versions this dptrain reads (%d to %d); %s", f.Version, oldestCheckpointVersion, checkpointVersion, startAfresh)
	}
	if c.Step < 0 || len(c.Params)%4 != 0 {
		return nil, fmt.Errorf("corrupt: step %d, %d parameter bytes", c.Step, len(c.Params))
	}
	return c, nil
}

// float32Bytes encodes v exactly (little-endian IEEE 754).
func float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// setFloat32s decodes b into dst, which must have the matching length.
func setFloat32s(dst []float32, b []byte) error {
	if len(b) != 4*len(dst) {
		return fmt.Errorf("parameter vector has %d bytes, model needs %d", len(b), 4*len(dst))
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}
