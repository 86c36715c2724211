package optim

import (
	"fmt"
	"math"
)

// EMA is an exponential moving average of the parameter iterates, as De et
// al. 2022 ("Unlocking high-accuracy differentially private image
// classification through scale") evaluate DP-SGD. It starts at the initial
// parameters, a₀ = θ₀, and after the optimizer's t-th step (t = 1, 2, …,
// counted over the whole run) takes in the new iterate θ_t:
//
//	d_t = min(d, (1+t)/(10+t)),   a_t = d_t·a_{t−1} + (1−d_t)·θ_t
//
// The warm-up (TensorFlow's ExponentialMovingAverage with num_updates, the
// form jax_privacy uses) keeps the first averages from being dominated by
// the initialisation: d₁ = 2/11, d₂ = 3/12, …, until (1+t)/(10+t) reaches
// d, from t = (10d−1)/(1−d) on (step 890 for d = 0.99, 9,890 for 0.999):
// a shorter run averages with the warm-up decay throughout. The average is
// kept in float64; each product is rounded before the sum, so the result
// does not depend on whether the compiler fuses multiply-adds.
//
// Privacy: the average is computed from the iterates alone, never from the
// data, so wherever every iterate is covered by the privacy bound (DP-SGD's
// composition over all steps) it is post-processing and costs no privacy.
// It is NOT covered by a hidden-state bound, which holds for the last
// iterate only: the average depends on every intermediate iterate.
type EMA struct {
	decay float64
	t     int
	avg   []float64
}

// NewEMA returns the average with decay d ∈ (0,1) started at init (a₀ = init).
func NewEMA(d float64, init []float32) (*EMA, error) {
	if !(d > 0 && d < 1) {
		return nil, fmt.Errorf("optim: EMA decay must be in (0,1), got %v", d)
	}
	e := &EMA{decay: d, avg: make([]float64, len(init))}
	for i, p := range init {
		e.avg[i] = float64(p)
	}
	return e, nil
}

// Decay is the effective decay d_t of update t (1-based).
func (e *EMA) Decay(t int) float64 {
	return min(e.decay, (1+float64(t))/(10+float64(t)))
}

// Update takes in the iterate after the next optimizer step.
func (e *EMA) Update(params []float32) error {
	if len(params) != len(e.avg) {
		return fmt.Errorf("optim: EMA of %d parameters, got %d", len(e.avg), len(params))
	}
	e.t++
	d := e.Decay(e.t)
	for i, p := range params {
		e.avg[i] = float64(d*e.avg[i]) + float64((1-d)*float64(p))
	}
	return nil
}

// Steps is the number of updates taken in (t).
func (e *EMA) Steps() int { return e.t }

// Average is a_t in float64; the caller must not modify it.
func (e *EMA) Average() []float64 { return e.avg }

// Params writes a_t, rounded to float32, into dst.
func (e *EMA) Params(dst []float32) error {
	if len(dst) != len(e.avg) {
		return fmt.Errorf("optim: EMA of %d parameters, destination has %d", len(e.avg), len(dst))
	}
	for i, a := range e.avg {
		dst[i] = float32(a)
	}
	return nil
}

// MarshalBinary saves t and the average exactly (the optimizers' layout).
func (e *EMA) MarshalBinary() ([]byte, error) {
	return marshalState("ema", e.t, e.avg), nil
}

// UnmarshalBinary restores a state written by MarshalBinary into an EMA
// built with the run's decay and parameter count.
func (e *EMA) UnmarshalBinary(p []byte) error {
	t, bufs, err := unmarshalState(p, "ema", 1)
	if err != nil {
		return err
	}
	if len(bufs[0]) != len(e.avg) {
		return fmt.Errorf("optim: ema state: %d parameters, want %d", len(bufs[0]), len(e.avg))
	}
	for i, a := range bufs[0] {
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return fmt.Errorf("optim: ema state: coordinate %d is %v", i, a)
		}
	}
	e.t, e.avg = t, bufs[0]
	return nil
}
