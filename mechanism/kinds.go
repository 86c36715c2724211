package mechanism

import (
	"fmt"
	"slices"
	"strings"
)

// Sampler is how a step's batch is drawn.
type Sampler string

const (
	// Poisson includes each record independently with rate q (add/remove-one).
	Poisson Sampler = "poisson"
	// Twice is Poisson sampling of records then of coordinates with rate q2
	// (add/remove-one).
	Twice Sampler = "twice"
	// Shuffle cuts a fresh permutation into fixed-size batches each epoch
	// (replace-one).
	Shuffle Sampler = "shuffle"
	// WithoutReplacement draws each batch of fixed size independently
	// without replacement (replace-one). The trainer does not offer it; the
	// privacy command accounts it.
	WithoutReplacement Sampler = "wor"
	// Cyclic splits the records into Spec.Parts parts by index and
	// Poisson-samples part t mod Parts at step t (add/remove-one): the
	// participation banded correlated noise is amplified under
	// (docs/matrix-mechanism.md). The trainer uses it for noise bandmf.
	Cyclic Sampler = "cyclic"
)

// Samplers lists every Sampler.
var Samplers = []Sampler{Poisson, Twice, Shuffle, WithoutReplacement, Cyclic}

func (s Sampler) String() string { return string(s) }

// MarshalText is the sampler's name.
func (s Sampler) MarshalText() ([]byte, error) { return []byte(s), nil }

// UnmarshalText accepts one of Samplers; an unknown value lists them.
func (s *Sampler) UnmarshalText(b []byte) error {
	v := Sampler(b)
	if !slices.Contains(Samplers, v) {
		return fmt.Errorf("sampler %q is not one of %s", b, join(Samplers))
	}
	*s = v
	return nil
}

// Clip is how a per-example gradient is bounded.
type Clip string

const (
	// Flat clips the whole gradient to L2 norm C.
	Flat Clip = "flat"
	// PerLayer splits C over the layers in proportion to their sizes.
	PerLayer Clip = "per-layer"
	// LInf clamps every coordinate to C/√D (L2 sensitivity C).
	LInf Clip = "linf"
	// Hybrid clips to L2 norm C and every coordinate to C/√d0.
	Hybrid Clip = "hybrid"
	// Subspace clips per block of a public principal basis (hybrid subspace
	// clipping), with per-block noise.
	Subspace Clip = "subspace"
)

// Clips lists every Clip.
var Clips = []Clip{Flat, PerLayer, LInf, Hybrid, Subspace}

func (c Clip) String() string { return string(c) }

// MarshalText is the clip kind's name.
func (c Clip) MarshalText() ([]byte, error) { return []byte(c), nil }

// UnmarshalText accepts one of Clips; an unknown value lists them.
func (c *Clip) UnmarshalText(b []byte) error {
	v := Clip(b)
	if !slices.Contains(Clips, v) {
		return fmt.Errorf("clip %q is not one of %s", b, join(Clips))
	}
	*c = v
	return nil
}

func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
