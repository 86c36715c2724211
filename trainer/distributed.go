package trainer

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/dptrain/dptrain/sampler"
)

// Reducer combines the work of the ranks of a data-parallel run (package
// internal/mpi's Comm is one). Every rank runs the same global sampler from
// the same root seed and keeps the examples it owns (index mod size), so a
// step's batch is the same for any number of ranks; the clipped sums are
// summed across ranks, and the noise, drawn from the shared stream, is
// added identically on every rank after the reduction, so every rank holds
// the same parameters without a second message. The privacy mechanism and
// its account do not depend on the number of ranks.
type Reducer interface {
	Rank() int
	Size() int
	SumFloat32(buf []float32) error
	SumFloat64(buf []float64) error
	SumInt64(buf []int64) error
	MaxFloat64(buf []float64) error
	Broadcast(buf []byte, root int) error
}

// oneProcess is the Reducer of a run in one process: one rank, whose
// reductions leave every buffer as it is. A run without Options.Reducer
// uses it, so the step reduces the same way whatever the number of ranks.
type oneProcess struct{}

func (oneProcess) Rank() int                   { return 0 }
func (oneProcess) Size() int                   { return 1 }
func (oneProcess) SumFloat32([]float32) error  { return nil }
func (oneProcess) SumFloat64([]float64) error  { return nil }
func (oneProcess) SumInt64([]int64) error      { return nil }
func (oneProcess) MaxFloat64([]float64) error  { return nil }
func (oneProcess) Broadcast([]byte, int) error { return nil }

// batchShare is this rank's share of a step's batch and, under twice
// sampling, the examples' coordinate masks.
type batchShare struct {
	twice *sampler.Twice  // the sampler that draws the masks; nil without twice sampling
	masks []*sampler.Mask // one chunk's masks
	own   []int           // this rank's examples of the batch
	dist  distMasks       // the masks on one of several ranks
}

// owned filters a batch's indices to those this rank owns.
func (s *state) owned(idx []int) []int {
	if s.dist.Size() == 1 {
		return idx
	}
	s.share.own = s.share.own[:0]
	s.share.dist.pos = s.share.dist.pos[:0]
	s.share.dist.batch, s.share.dist.drawn, s.share.dist.used = len(idx), 0, 0
	r, n := s.dist.Rank(), s.dist.Size()
	for p, i := range idx {
		if i%n == r {
			s.share.own = append(s.share.own, i)
			s.share.dist.pos = append(s.share.dist.pos, p)
		}
	}
	return s.share.own
}

// distMasks keeps twice sampling's coordinate masks on one rank equal to
// one process's: one process draws a mask per batch example, in batch
// order, from one stream; every rank draws the same sequence from the
// shared stream and keeps the masks of the examples it owns (drawing the
// others into a scratch mask), so example i's mask at step t is the same
// for any number of ranks.
type distMasks struct {
	pos     []int         // the batch positions of this rank's examples
	batch   int           // the step's batch size
	drawn   int           // masks drawn from the stream this step
	used    int           // own examples whose masks were handed out
	scratch *sampler.Mask // the masks of other ranks' examples
}

// drawOwnedMasks fills masks with those of the next len(masks) examples
// this rank owns.
func (s *state) drawOwnedMasks(masks []*sampler.Mask) []*sampler.Mask {
	d := &s.share.dist
	for _, m := range masks {
		s.skipMasks(d.pos[d.used])
		s.share.twice.FillMask(m)
		d.drawn++
		d.used++
	}
	return masks
}

// skipMasks draws (and drops) the masks of other ranks' examples up to
// batch position p.
func (s *state) skipMasks(p int) {
	d := &s.share.dist
	if d.drawn < p && d.scratch == nil {
		d.scratch = sampler.NewMask(s.clipper.OutDim())
	}
	for ; d.drawn < p; d.drawn++ {
		s.share.twice.FillMask(d.scratch)
	}
}

// reduceStep sums the clipped sum and the step's statistics over ranks.
func (s *state) reduceStep(sum []float32, st *stepStats) error {
	if s.share.twice != nil {
		// The stream leaves the step where one process's leaves it.
		s.skipMasks(s.share.dist.batch)
	}
	if err := s.dist.SumFloat32(sum); err != nil {
		return fmt.Errorf("all-reduce of the clipped sum: %w", err)
	}
	if err := s.grad.reduce(s.dist); err != nil {
		return err
	}
	v := []float64{st.lossSum, float64(st.n), st.normSum, float64(st.clipped), float64(st.nonFinite), float64(st.normsCount), 0}
	if s.quant != nil {
		// Adaptive clipping's centred count is a sum over the batch like
		// the gradient; its noise, drawn from the shared stream after
		// the reduction, is the same on every rank, and so is C_t.
		v[6] = s.quant.count
	}
	if err := s.dist.SumFloat64(v); err != nil {
		return fmt.Errorf("all-reduce of the step statistics: %w", err)
	}
	st.lossSum, st.n, st.normSum, st.clipped, st.nonFinite, st.normsCount = v[0], int(v[1]), v[2], int(v[3]), int(v[4]), int(v[5])
	if s.quant != nil {
		s.quant.count = v[6]
	}
	m := []float64{st.normMax}
	if err := s.dist.MaxFloat64(m); err != nil {
		return fmt.Errorf("all-reduce of the step statistics: %w", err)
	}
	st.normMax = m[0]
	return nil
}

// anyStop is true on every rank when any rank was asked to stop, so that
// all ranks leave the loop at the same step (one rank alone would leave the
// others waiting in the next reduction).
func (s *state) anyStop(stop bool) (bool, error) {
	v := []float64{0}
	if stop {
		v[0] = 1
	}
	if err := s.dist.MaxFloat64(v); err != nil {
		return true, fmt.Errorf("all-reduce of the stop flag: %w", err)
	}
	return v[0] > 0, nil
}

// broadcastBytes sends rank 0's b to every rank (length first).
func (s *state) broadcastBytes(b []byte) ([]byte, error) {
	n := make([]byte, 8)
	binary.LittleEndian.PutUint64(n, uint64(len(b)))
	if err := s.dist.Broadcast(n, 0); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint64(n)
	if s.dist.Rank() != 0 {
		b = make([]byte, size)
	}
	if err := s.dist.Broadcast(b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// syncSettings makes every rank start from rank 0's view: ranks whose
// settings or binaries differ from rank 0's refuse to start. One rank has
// no other to agree with.
func (s *state) syncSettings() error {
	if s.dist.Size() == 1 {
		return nil
	}
	if s.dist.Rank() == 0 {
		s.logf("distributed run on %d ranks: the per-rank clipped sums (un-noised), the noise's root seed and the configuration hash cross the interconnect in the clear; it must be trusted like the training data (docs/distributed.md)", s.dist.Size())
	}
	own, err := buildID()
	if err != nil {
		return fmt.Errorf("distributed start: %w", err)
	}
	mine := s.cfg.Hash() + "\n" + own
	b, err := s.broadcastBytes([]byte(mine))
	if err != nil {
		return fmt.Errorf("distributed start: %w", err)
	}
	// Every rank learns which ranks differ, so that all of them refuse
	// (a rank refusing alone would leave the others waiting).
	h, id, _ := strings.Cut(string(b), "\n")
	n := s.dist.Size()
	v := make([]float64, 2*n)
	if h != s.cfg.Hash() {
		v[s.dist.Rank()] = 1
	}
	if id != own {
		v[n+s.dist.Rank()] = 1
	}
	if err := s.dist.MaxFloat64(v); err != nil {
		return fmt.Errorf("distributed start: %w", err)
	}
	var settings, binaries []string
	for r := range n {
		if v[r] > 0 {
			settings = append(settings, fmt.Sprint(r))
		}
		if v[n+r] > 0 {
			binaries = append(binaries, fmt.Sprint(r))
		}
	}
	switch {
	case len(binaries) > 0:
		return fmt.Errorf("distributed start: the dptrain binary of rank %s differs from rank 0's (build %s on rank 0): run the same dptrain build on every rank", strings.Join(binaries, ", "), id)
	case len(settings) > 0:
		keys, err := s.differingSettings()
		if err != nil {
			return fmt.Errorf("distributed start: %w", err)
		}
		return fmt.Errorf("%w: distributed start: the settings of rank %s differ from rank 0's in %s: every rank must be given the same flags", ErrInvalidConfig, strings.Join(settings, ", "), strings.Join(keys, ", "))
	}
	return nil
}

// settingKeys are the configuration's keys (the flags' names), in the
// order of Config's fields: the same on every rank, as the binaries are.
func settingKeys() []string {
	var keys []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
				walk(f.Type) // DataConfig, ModelConfig, …: their keys are Config's
			case name != "" && name != "-":
				keys = append(keys, name)
			}
		}
	}
	walk(reflect.TypeFor[Config]())
	return keys
}

// differingSettings names the settings in which some rank differs from
// rank 0 (every rank learns all of them): rank 0 sends its settings, each
// rank marks the keys whose values differ, and the marks are combined.
// Only the names are reported: the values are each rank's flags.
func (s *state) differingSettings() ([]string, error) {
	own := fixedSettings(s.cfg)
	b, _ := json.Marshal(own)
	b, err := s.broadcastBytes(b)
	if err != nil {
		return nil, err
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("rank 0's settings: %w", err)
	}
	keys := settingKeys()
	v := make([]float64, len(keys))
	for i, k := range keys {
		if string(own[k]) != string(root[k]) {
			v[i] = 1
		}
	}
	if err := s.dist.MaxFloat64(v); err != nil {
		return nil, err
	}
	var diff []string
	for i, k := range keys {
		if v[i] > 0 {
			diff = append(diff, k)
		}
	}
	if len(diff) == 0 {
		diff = []string{"settings that hash differently"}
	}
	return diff, nil
}

// syncData makes every rank agree on its data before training: rank 0
// sends the digest of the data it read (trainer/datadigest.go), and a rank
// whose training or test data differ, or that could not load them, makes
// every rank refuse (a rank refusing alone would leave the others waiting).
// The message names the split and its file as configured, never a value.
// loadErr is this rank's error from loading the data (the collective runs
// anyway); the result is the error this rank returns.
func (s *state) syncData(data *prepared, loadErr error) error {
	if s.dist.Size() == 1 {
		return loadErr
	}
	var mine DataDigest
	if data != nil {
		mine = data.digest
	}
	b, _ := json.Marshal(mine)
	b, err := s.broadcastBytes(b)
	if err != nil {
		return fmt.Errorf("distributed start: %w", err)
	}
	var root DataDigest
	if err := json.Unmarshal(b, &root); err != nil {
		return fmt.Errorf("distributed start: rank 0's data digest: %w", err)
	}
	n, r := s.dist.Size(), s.dist.Rank()
	v := make([]float64, 3*n)
	switch {
	case loadErr != nil:
		v[r] = 1
	case root.Train.SHA256 == "" || root.Test.SHA256 == "":
		// rank 0 failed to load: it says so itself.
	default:
		if mine.Train != root.Train {
			v[n+r] = 1
		}
		if mine.Test != root.Test {
			v[2*n+r] = 1
		}
	}
	if err := s.dist.MaxFloat64(v); err != nil {
		return fmt.Errorf("distributed start: %w", err)
	}
	if loadErr != nil {
		return loadErr
	}
	ranks := func(off int) string {
		var rs []string
		for i := range n {
			if v[off+i] > 0 {
				rs = append(rs, fmt.Sprint(i))
			}
		}
		return strings.Join(rs, ", ")
	}
	var which []string
	if rs := ranks(n); rs != "" {
		which = append(which, fmt.Sprintf("the training data (%s) of rank %s", mine.Train.File, rs))
	}
	if rs := ranks(2 * n); rs != "" {
		which = append(which, fmt.Sprintf("the test data (%s) of rank %s", mine.Test.File, rs))
	}
	switch {
	case ranks(0) != "":
		return fmt.Errorf("distributed start: rank %s could not load its data (its own message says why)", ranks(0))
	case len(which) > 0:
		return fmt.Errorf("%w: distributed start: %s differ from rank 0's: every rank must read the same data (the same files with the same contents)", ErrInvalidConfig, strings.Join(which, " and "))
	}
	return nil
}

// buildID identifies this binary: the SHA-256 of its executable, so that
// two builds from differing sources never pass for one another. A variable
// so that the tests can give one rank another identity.
var buildID = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("build ID: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("build ID: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("build ID: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
})

// evalReduce sums an evaluation's loss and correct count over ranks.
func (s *state) evalReduce(lossSum float64, correct int) (float64, int, error) {
	v := []float64{lossSum, float64(correct)}
	if err := s.dist.SumFloat64(v); err != nil {
		return 0, 0, fmt.Errorf("all-reduce of the evaluation: %w", err)
	}
	return v[0], int(v[1]), nil
}
