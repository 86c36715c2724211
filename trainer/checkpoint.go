package trainer

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dptrain/dptrain/mechanism"
	"math"
	"os"
)

const checkpointVersion = 1

// checkpoint is everything a run needs to continue exactly where it was:
// parameters, optimizer, sampler and noise streams, and the accountants.
type checkpoint struct {
	Version    int     `json:"version"`
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
	// CountNoise is the released clipped count's noise stream (with
	// ClippedCountSigma).
	CountNoise []byte `json:"count_noise,omitempty"`
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
	Private bool `json:"private"`
	// BasisAt and BasisFrom locate the subspace basis in use: the step after
	// which it was estimated and the parameters it was estimated at.
	BasisAt   int    `json:"basis_at,omitempty"`
	BasisFrom []byte `json:"basis_from,omitempty"`
	// InstanceNorms is the per-instance diagnostic's norm history
	// ([step][example]); float64 round-trips exactly through JSON.
	InstanceNorms [][]float64 `json:"instance_norms,omitempty"`
	Warning       string      `json:"warning,omitempty"`
	// Samples is the number of examples processed so far (the sum of the
	// realised batch sizes), so the summary of a resumed run counts them all.
	Samples int `json:"samples,omitempty"`
	// EMA is the parameter average's state (optim.EMA: its step count and
	// the float64 average, exactly), present when the run keeps one.
	EMA []byte `json:"ema,omitempty"`
	// Canary* hold an audit run's canary block, sample counts and sampling
	// stream.
	// ClipNow and QuantileRNG are the adaptive clip norm C_t and its count
	// noise stream (clip_quantile).
	ClipNow      float64 `json:"clip_now,omitempty"`
	QuantileRNG  []byte  `json:"quantile_rng,omitempty"`
	CanaryParams []byte  `json:"canary_params,omitempty"`
	CanaryCounts []int   `json:"canary_counts,omitempty"`
	CanaryRNG    []byte  `json:"canary_rng,omitempty"`
	// Data is the digest of the data the run read and the statistics it
	// released from them before training (resumedata.go); a checkpoint
	// without it (older) cannot be resumed.
	Data *dataRecord `json:"data,omitempty"`
}

// ErrNoCheckpoint is returned by loadCheckpoint when none exists.
var ErrNoCheckpoint = errors.New("no checkpoint")

func saveCheckpoint(path string, c *checkpoint) error {
	c.Version = checkpointVersion
	b, err := json.Marshal(c)
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

func parseCheckpoint(b []byte) (*checkpoint, error) {
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("corrupt: %w", err)
	}
	if c.Version != checkpointVersion {
		return nil, fmt.Errorf("version %d, want %d", c.Version, checkpointVersion)
	}
	if c.Step < 0 || len(c.Params)%4 != 0 || len(c.BasisFrom)%4 != 0 {
		return nil, fmt.Errorf("corrupt: step %d, %d parameter bytes", c.Step, len(c.Params))
	}
	return &c, nil
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
