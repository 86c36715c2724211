package optim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Optimizer applies one update per DP-SGD step.
type Optimizer interface {
	// Step updates params in place from the noisy gradient sum, divided by
	// expectedBatch (the sampler's expected batch size, never the realised
	// one), then projects when a Projector is set.
	Step(params, noisySum []float32, expectedBatch float64) error
	// Steps is the number of updates applied so far.
	Steps() int
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

func checkStep(params, sum []float32, eb float64, n int) error {
	if !(eb > 0) || math.IsInf(eb, 0) {
		return fmt.Errorf("optim: expected batch size must be positive and finite, got %v", eb)
	}
	if len(params) != len(sum) {
		return fmt.Errorf("optim: %d parameters but a gradient of length %d", len(params), len(sum))
	}
	if n != 0 && n != len(params) {
		return fmt.Errorf("optim: optimizer state is for %d parameters, got %d", n, len(params))
	}
	return nil
}

// SGDConfig configures SGD.
type SGDConfig struct {
	LR       Schedule
	Momentum float64 // heavy-ball μ ∈ [0,1); 0 is plain SGD
	Nesterov bool
	// WeightDecay adds wd·w to the gradient (coupled L2 regularisation).
	WeightDecay float64
	// Shrink is λ of the regularized hidden-state variant
	// (docs/hidden-state.md#regularised-variant): w ← (1−λ)w − η·g,
	// independent of η. λ ∈ [0,1).
	Shrink float64
	// Project, when set, is applied after every step.
	Project Projector
}

// SGD is stochastic gradient descent on the noisy mean gradient:
// g = sum/expectedBatch (+ wd·w); v ← μv + g; w ← (1−λ)w − η_t·(v, or
// g + μv for Nesterov); then projection.
type SGD struct {
	cfg SGDConfig
	t   int
	vel []float64
}

// NewSGD validates cfg and returns the optimizer.
func NewSGD(cfg SGDConfig) (*SGD, error) {
	if err := ValidateSchedule(cfg.LR, 1); err != nil {
		return nil, err
	}
	if !(cfg.Momentum >= 0 && cfg.Momentum < 1) {
		return nil, fmt.Errorf("optim: momentum must be in [0,1), got %v", cfg.Momentum)
	}
	if cfg.Nesterov && cfg.Momentum == 0 {
		return nil, fmt.Errorf("optim: Nesterov needs momentum > 0")
	}
	if !(cfg.WeightDecay >= 0) || math.IsInf(cfg.WeightDecay, 0) {
		return nil, fmt.Errorf("optim: weight decay must be finite and >= 0, got %v", cfg.WeightDecay)
	}
	if !(cfg.Shrink >= 0 && cfg.Shrink < 1) {
		return nil, fmt.Errorf("optim: shrink λ must be in [0,1), got %v", cfg.Shrink)
	}
	return &SGD{cfg: cfg}, nil
}

// Steps is the number of updates applied.
func (o *SGD) Steps() int { return o.t }

// Step applies one update; see Optimizer.
func (o *SGD) Step(params, noisySum []float32, expectedBatch float64) error {
	if err := checkStep(params, noisySum, expectedBatch, len(o.vel)); err != nil {
		return err
	}
	c := o.cfg
	lr := c.LR.LR(o.t)
	if c.Momentum > 0 && o.vel == nil {
		o.vel = make([]float64, len(params))
	}
	inv := 1 / expectedBatch
	for i, p := range params {
		w := float64(p)
		g := float64(noisySum[i])*inv + c.WeightDecay*w
		if c.Momentum > 0 {
			v := c.Momentum*o.vel[i] + g
			o.vel[i] = v
			if c.Nesterov {
				g += c.Momentum * v
			} else {
				g = v
			}
		}
		params[i] = float32((1-c.Shrink)*w - lr*g)
	}
	o.t++
	if c.Project != nil {
		c.Project.Project(params)
	}
	return nil
}

// AdamConfig configures Adam.
type AdamConfig struct {
	LR           Schedule
	Beta1, Beta2 float64 // 0 means the defaults 0.9 and 0.999
	Eps          float64 // 0 means 1e-8
	WeightDecay  float64
	// Decoupled applies weight decay AdamW-style, w ← w − η·wd·w, instead
	// of adding wd·w to the gradient.
	Decoupled bool
	Project   Projector
}

// Adam is Adam (Kingma & Ba) on the noisy mean gradient, with bias
// correction: m ← β1 m + (1−β1)g, v ← β2 v + (1−β2)g²,
// w ← w − η_t·m̂/(√v̂ + ε), m̂ = m/(1−β1^t), v̂ = v/(1−β2^t).
type Adam struct {
	cfg  AdamConfig
	t    int
	m, v []float64
}

// NewAdam validates cfg (filling defaults) and returns the optimizer.
func NewAdam(cfg AdamConfig) (*Adam, error) {
	if err := ValidateSchedule(cfg.LR, 1); err != nil {
		return nil, err
	}
	if cfg.Beta1 == 0 {
		cfg.Beta1 = 0.9
	}
	if cfg.Beta2 == 0 {
		cfg.Beta2 = 0.999
	}
	if cfg.Eps == 0 {
		cfg.Eps = 1e-8
	}
	if !(cfg.Beta1 > 0 && cfg.Beta1 < 1) || !(cfg.Beta2 > 0 && cfg.Beta2 < 1) {
		return nil, fmt.Errorf("optim: Adam betas must be in (0,1), got %v, %v", cfg.Beta1, cfg.Beta2)
	}
	if !(cfg.Eps > 0) || math.IsInf(cfg.Eps, 0) {
		return nil, fmt.Errorf("optim: Adam eps must be positive, got %v", cfg.Eps)
	}
	if !(cfg.WeightDecay >= 0) || math.IsInf(cfg.WeightDecay, 0) {
		return nil, fmt.Errorf("optim: weight decay must be finite and >= 0, got %v", cfg.WeightDecay)
	}
	return &Adam{cfg: cfg}, nil
}

// Steps is the number of updates applied.
func (o *Adam) Steps() int { return o.t }

// Step applies one update; see Optimizer.
func (o *Adam) Step(params, noisySum []float32, expectedBatch float64) error {
	if err := checkStep(params, noisySum, expectedBatch, len(o.m)); err != nil {
		return err
	}
	c := o.cfg
	if o.m == nil {
		o.m = make([]float64, len(params))
		o.v = make([]float64, len(params))
	}
	lr := c.LR.LR(o.t)
	o.t++
	bc1 := 1 - math.Pow(c.Beta1, float64(o.t))
	bc2 := 1 - math.Pow(c.Beta2, float64(o.t))
	inv := 1 / expectedBatch
	for i, p := range params {
		w := float64(p)
		g := float64(noisySum[i]) * inv
		if c.Decoupled {
			w -= lr * c.WeightDecay * w
		} else {
			g += c.WeightDecay * w
		}
		m := c.Beta1*o.m[i] + (1-c.Beta1)*g
		v := c.Beta2*o.v[i] + (1-c.Beta2)*g*g
		o.m[i], o.v[i] = m, v
		params[i] = float32(w - lr*(m/bc1)/(math.Sqrt(v/bc2)+c.Eps))
	}
	if c.Project != nil {
		c.Project.Project(params)
	}
	return nil
}

// State layout: kind, version, step, then each buffer as a length and
// float64 bits. The configuration is not part of the state: a resumed run
// rebuilds the optimizer from its config and restores the state into it.
const stateVersion = 1

func marshalState(kind string, t int, bufs ...[]float64) []byte {
	var b bytes.Buffer
	w := func(v uint64) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w(uint64(len(kind)))
	b.WriteString(kind)
	w(stateVersion)
	w(uint64(t))
	for _, buf := range bufs {
		w(uint64(len(buf)))
		for _, x := range buf {
			w(math.Float64bits(x))
		}
	}
	return b.Bytes()
}

var errState = errors.New("malformed optimizer state")

func unmarshalState(p []byte, kind string, nbufs int) (int, [][]float64, error) {
	r := func() (uint64, error) {
		if len(p) < 8 {
			return 0, errState
		}
		v := binary.LittleEndian.Uint64(p)
		p = p[8:]
		return v, nil
	}
	n, err := r()
	if err != nil || n > uint64(len(p)) {
		return 0, nil, fmt.Errorf("optim: %s state: %w", kind, errState)
	}
	if k := string(p[:n]); k != kind {
		return 0, nil, fmt.Errorf("optim: state is for %q, not %q", k, kind)
	}
	p = p[n:]
	ver, err1 := r()
	t, err2 := r()
	if err := errors.Join(err1, err2); err != nil || ver != stateVersion || t > math.MaxInt32 {
		return 0, nil, fmt.Errorf("optim: %s state: bad header (version %d, step %d): %w", kind, ver, t, errState)
	}
	bufs := make([][]float64, nbufs)
	for i := range bufs {
		l, err := r()
		if err != nil || l > uint64(len(p)/8) {
			return 0, nil, fmt.Errorf("optim: %s state: buffer %d: %w", kind, i, errState)
		}
		if l == 0 {
			continue
		}
		bufs[i] = make([]float64, l)
		for j := range bufs[i] {
			v, _ := r()
			bufs[i][j] = math.Float64frombits(v)
		}
	}
	if len(p) != 0 {
		return 0, nil, fmt.Errorf("optim: %s state: %d trailing bytes", kind, len(p))
	}
	return int(t), bufs, nil
}

// MarshalBinary saves the step count and the momentum buffer.
func (o *SGD) MarshalBinary() ([]byte, error) {
	return marshalState("sgd", o.t, o.vel), nil
}

// UnmarshalBinary restores a state written by MarshalBinary into an
// optimizer built with the run's configuration.
func (o *SGD) UnmarshalBinary(p []byte) error {
	t, bufs, err := unmarshalState(p, "sgd", 1)
	if err != nil {
		return err
	}
	o.t, o.vel = t, bufs[0]
	return nil
}

// MarshalBinary saves the step count and both moment buffers.
func (o *Adam) MarshalBinary() ([]byte, error) {
	return marshalState("adam", o.t, o.m, o.v), nil
}

// UnmarshalBinary restores a state written by MarshalBinary into an
// optimizer built with the run's configuration.
func (o *Adam) UnmarshalBinary(p []byte) error {
	t, bufs, err := unmarshalState(p, "adam", 2)
	if err != nil {
		return err
	}
	if len(bufs[0]) != len(bufs[1]) {
		return fmt.Errorf("optim: adam state: moment buffers of lengths %d and %d", len(bufs[0]), len(bufs[1]))
	}
	o.t, o.m, o.v = t, bufs[0], bufs[1]
	return nil
}
