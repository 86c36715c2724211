package trainer

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/dptrain/dptrain/rng"
)

// Gradient (white-box) canaries for privacy auditing (issue 18; Steinke,
// Nasr & Jagielski 2023). Canary j is a training record whose clipped
// gradient is C·e_j in an auxiliary block of m coordinates appended to the
// released sum: no real record moves those coordinates, so only the noise
// can hide a canary. Each canary is included with probability ½ (bits from
// their own stream), and an included canary is Poisson-sampled into every
// step at the run's rate q, exactly like a record; the block is summed and
// noised with the rest of the vector by the same noise object, and updated
// by plain SGD from 0 (public). The released block is the audit's only
// evidence: score_j = w0_j − wT_j. The canaries are records of the audited
// training set, so the run's ε covers them.

// auditHooks break the mechanism on purpose for the negative controls of
// the audit tests. Only tests set them (nothing else can reach them).
type auditHooks struct {
	noiseScale float64 // multiplies the noise actually added (σ stays in the account; 0: unchanged)
	rateScale  float64 // multiplies the sampling rate actually used (q stays in the account; 0: unchanged)
	leakCounts bool    // also release each canary's raw inclusion count (an unaccounted statistic)
}

var testAuditHooks *auditHooks

// auditCanaries are an audit run's canaries, of one kind (nil: not that
// kind, or not an audit run).
type auditCanaries struct {
	grad  *gradCanaries
	input *inputCanaries
}

// gradCanaries is the canary block of an audit run.
type gradCanaries struct {
	m        int
	included []bool
	rate     float64
	clip     float64
	params   []float32 // released block, from 0
	counts   []int     // times each canary was sampled (private; the leak hook releases it)
	hits     []int     // the canaries sampled this step (the lattice release adds them exactly)
	sample   *rng.Stream
}

// canaryRelease is release/canaries.json: the released canary block.
type canaryRelease struct {
	Kind   string    `json:"kind" prov:"config"`
	Block  []float32 `json:"block,omitempty" prov:"model"` // gradient: the noised canary parameters (w0 = 0)
	Scores []float64 `json:"scores" prov:"model"`
	// Counts is set only by the leak negative control: a raw statistic.
	Counts []int `json:"counts,omitempty" prov:"model"`
}

// canaryTruth is private/canaries.json: the secret inclusion bits.
type canaryTruth struct {
	Kind     string `json:"kind"`
	Included []bool `json:"included"`
}

func (s *state) setupCanaries(root *rng.Stream) error {
	m := s.cfg.AuditCanaries
	if m <= 0 || s.cfg.AuditKind != AuditGradient {
		return nil
	}
	bits := root.Child("canary-bits")
	c := &gradCanaries{m: m, included: make([]bool, m), rate: s.acct.q, clip: s.clipper.Sensitivity().L2,
		params: make([]float32, m), counts: make([]int, m), sample: root.Child("canary-sample")}
	for j := range c.included {
		c.included[j] = bits.Uint64()&1 == 1
	}
	if h := testAuditHooks; h != nil && h.rateScale > 0 {
		c.rate = math.Min(1, c.rate*h.rateScale)
	}
	s.canaries.grad = c
	s.features = append(s.features, &canaryFeature{c: c, off: s.clipper.OutDim(),
		lr: func() (float64, float64) { return s.lrAt(s.now.step), s.acct.expected }})
	return nil
}

// addCanaries adds this step's sampled canaries to the canary block of the
// sum (block = the coordinates after the model's).
func (c *gradCanaries) addCanaries(block []float32) {
	c.hits = c.hits[:0]
	for j, in := range c.included {
		if in && c.sample.Float64() < c.rate {
			block[j] += float32(c.clip)
			c.counts[j]++
			c.hits = append(c.hits, j)
		}
	}
}

// step applies the noisy canary block to the canary parameters (plain SGD
// at the run's learning rate, divided by the expected batch size).
func (c *gradCanaries) step(noisy []float32, lr, expected float64) {
	f := float32(lr / expected)
	for j, v := range noisy {
		c.params[j] -= f * v
	}
}

// scores are w0 − wT: an included canary pushes its coordinate down.
func (c *gradCanaries) scores() []float64 {
	out := make([]float64, c.m)
	for j, p := range c.params {
		out[j] = -float64(p)
	}
	return out
}

// writeCanaries writes the released block and the private bits.
func (s *state) writeCanaries() error {
	if s.out == nil || (s.canaries.grad == nil && s.canaries.input == nil) {
		return nil
	}
	var rel canaryRelease
	var truth canaryTruth
	if c := s.canaries.grad; c != nil {
		rel = canaryRelease{Kind: "gradient", Block: c.params, Scores: c.scores()}
		if h := testAuditHooks; h != nil && h.leakCounts {
			rel.Counts = c.counts
		}
		truth = canaryTruth{Kind: "gradient", Included: c.included}
	} else {
		if err := s.scoreInputCanaries(); err != nil {
			return err
		}
		rel = canaryRelease{Kind: "input", Scores: s.canaries.input.scores}
		truth = canaryTruth{Kind: "input", Included: s.canaries.input.included}
	}
	b, err := json.Marshal(rel)
	if err != nil {
		return fmt.Errorf("canaries: %w", err)
	}
	if err := s.out.writeRelease("canaries.json", b); err != nil {
		return err
	}
	if b, err = json.Marshal(truth); err != nil {
		return fmt.Errorf("canaries: %w", err)
	}
	return s.out.writePrivate("canaries.json", b)
}

// CanaryEvidence is what an audit reads after a run: the released score
// vectors (from release/ only) and the secret inclusion bits (from private/).
type CanaryEvidence struct {
	Kind     string
	Scores   map[string][]float64 // released vectors an attacker can score by
	Included []bool
}

// ReadCanaries reads an audit run's canary evidence from its output
// directory.
func ReadCanaries(outDir string) (*CanaryEvidence, error) {
	o := &outputs{root: outDir}
	rb, err := readJSONFile[canaryRelease](o.release("canaries.json"))
	if err != nil {
		return nil, err
	}
	tb, err := readJSONFile[canaryTruth](o.private("canaries.json"))
	if err != nil {
		return nil, err
	}
	if len(rb.Scores) != len(tb.Included) {
		return nil, fmt.Errorf("canaries: %d scores for %d canaries", len(rb.Scores), len(tb.Included))
	}
	name := "w0-wT"
	if rb.Kind == "input" {
		name = "-loss"
	}
	ev := &CanaryEvidence{Kind: rb.Kind, Scores: map[string][]float64{name: rb.Scores}, Included: tb.Included}
	if len(rb.Counts) == len(tb.Included) {
		c := make([]float64, len(rb.Counts))
		for i, v := range rb.Counts {
			c[i] = float64(v)
		}
		ev.Scores["released counts"] = c
	}
	return ev, nil
}

// Input (black-box) canaries: records the model would not otherwise fit.
// Canary j is the j-th of the last m test records with a label drawn at
// random among the other classes; it joins the training set with
// probability ½ (the test set loses all m, so none is evaluated on). After
// training, each canary is scored by its negative loss under the released
// model: a fitted mislabelled record has a low loss. The number of
// included canaries changes n (treated as public): it reveals how many
// were included, not which.
type inputCanaries struct {
	m        int
	included []bool
	x        []float32
	y        []int
	scores   []float64
}

func (s *state) setupInputCanaries(root *rng.Stream) error {
	m := s.cfg.AuditCanaries
	if m <= 0 || s.cfg.AuditKind != AuditInput {
		return nil
	}
	train, test := s.data.train, s.data.test
	if test.N() <= m {
		return fmt.Errorf("input canaries: %d canaries need more than %d test records", m, test.N())
	}
	if train.NumClasses < 2 {
		return fmt.Errorf("input canaries need a classification dataset")
	}
	bits := root.Child("canary-bits")
	src := test.Subset(seqFrom(test.N()-m, test.N()))
	ic := &inputCanaries{m: m, included: make([]bool, m), x: src.X, y: make([]int, m)}
	d := train.Dim()
	x := append([]float32(nil), train.X...)
	y := append([]int(nil), train.Y...)
	for j := 0; j < m; j++ {
		ic.included[j] = bits.Uint64()&1 == 1
		ic.y[j] = (src.Y[j] + 1 + bits.IntN(train.NumClasses-1)) % train.NumClasses
		if ic.included[j] {
			x = append(x, src.X[j*d:(j+1)*d]...)
			y = append(y, ic.y[j])
		}
	}
	nt := *train
	nt.X, nt.Y = x, y
	s.data.train = &nt
	s.data.test = test.Subset(seq(test.N() - m))
	s.canaries.input = ic
	return nil
}

// scoreInputCanaries scores every canary by its negative loss under the
// released parameters.
func (s *state) scoreInputCanaries() error {
	ic := s.canaries.input
	if ic == nil || ic.scores != nil {
		return nil
	}
	ic.scores = make([]float64, ic.m)
	d := s.data.train.Dim()
	return s.withReleased(func() error {
		s.model.SetTraining(false)
		defer s.model.SetTraining(true)
		for j := 0; j < ic.m; j++ {
			copy(s.batches.x[:d], ic.x[j*d:(j+1)*d])
			s.batches.y[0] = ic.y[j]
			l, _, err := s.model.Evaluate(s.batches.batch(s.batches.x[:d], s.batches.y[:1]))
			if err != nil {
				return fmt.Errorf("input canary %d: %w", j, err)
			}
			ic.scores[j] = -l
		}
		return nil
	})
}
