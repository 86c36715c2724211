package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/features"
	"github.com/dptrain/dptrain/preprocess"
)

// dataRecord is what a checkpoint holds about the data (checkpoint.Data):
// their digest, and the statistics the run released from them before its
// first step.
type dataRecord struct {
	Digest   DataDigest    `json:"digest"`
	Released releasedStats `json:"released"`
}

// releasedStats are the noisy statistics of the training data a run
// releases before training (in model.bin, or through the features it
// trains on), each composed into the account. A resumed run reuses them
// exactly: recomputed, they would be a second release with the same noise,
// which a change in the data would turn into a noise-free difference. The
// fit still runs on a resume (for its event and its checks); its values
// are discarded.
type releasedStats struct {
	Standardize *standardizeStats      `json:"standardize,omitempty"`
	DPSGDF      *preprocess.Centering  `json:"dpsgdf,omitempty"`
	ScatterNet  *features.ChannelStats `json:"scatternet,omitempty"`
}

// standardizeStats are --scale standardize's released mean and std (in
// the features' units) and the noise std on each released sum (for the
// run's note).
type standardizeStats struct {
	Mean     []float64 `json:"mean"`
	Std      []float64 `json:"std"`
	NoiseStd float64   `json:"noise_std"`
}

// stored returns the checkpoint's released statistic get picks out (nil
// on a fresh run), refusing a resume whose checkpoint lacks it or holds
// one of another length than want.
func storedStat[T any](p *prepared, what string, get func(*releasedStats) *T, length func(*T) int, want int) (*T, error) {
	if p.resumed == nil {
		return nil, nil
	}
	v := get(p.resumed)
	if v == nil || length(v) != want {
		return nil, fmt.Errorf("%w: the checkpoint holds no %s for %d features to reuse", ErrInvalidConfig, what, want)
	}
	return v, nil
}
