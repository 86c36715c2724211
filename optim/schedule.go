package optim

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate for step t = 0, 1, 2, .... Schedules
// must be fixed before training (data-independent).
type Schedule interface {
	LR(t int) float64
}

// Constant is a fixed learning rate.
type Constant float64

// LR returns the constant.
func (c Constant) LR(int) float64 { return float64(c) }

// StepDecay multiplies Base by Gamma every Every steps:
// Base·Gamma^⌊t/Every⌋.
type StepDecay struct {
	Base, Gamma float64
	Every       int
}

// LR returns Base·Gamma^⌊t/Every⌋.
func (s StepDecay) LR(t int) float64 {
	return s.Base * math.Pow(s.Gamma, float64(t/s.Every))
}

// Cosine anneals from Base to Min over Total steps:
// Min + (Base−Min)(1 + cos(π t/Total))/2, and Min afterwards.
type Cosine struct {
	Base, Min float64
	Total     int
}

// LR returns the annealed rate.
func (c Cosine) LR(t int) float64 {
	if t >= c.Total {
		return c.Min
	}
	return c.Min + (c.Base-c.Min)*(1+math.Cos(math.Pi*float64(t)/float64(c.Total)))/2
}

// Warmup ramps Then linearly over the first Steps steps:
// Then.LR(t)·(t+1)/Steps for t < Steps, Then.LR(t) afterwards.
type Warmup struct {
	Steps int
	Then  Schedule
}

// LR returns the warmed-up rate.
func (w Warmup) LR(t int) float64 {
	lr := w.Then.LR(t)
	if t < w.Steps {
		lr *= float64(t+1) / float64(w.Steps)
	}
	return lr
}

// ValidateSchedule checks that s is well formed and gives finite,
// non-negative rates over the first steps (horizon) steps.
func ValidateSchedule(s Schedule, horizon int) error {
	switch v := s.(type) {
	case nil:
		return fmt.Errorf("optim: no learning-rate schedule")
	case StepDecay:
		if v.Every < 1 || !(v.Gamma > 0) {
			return fmt.Errorf("optim: step decay needs every >= 1 and gamma > 0, got every=%d gamma=%v", v.Every, v.Gamma)
		}
	case Cosine:
		if v.Total < 1 {
			return fmt.Errorf("optim: cosine schedule needs total >= 1 steps, got %d", v.Total)
		}
	case Warmup:
		if v.Steps < 1 {
			return fmt.Errorf("optim: warm-up needs steps >= 1, got %d", v.Steps)
		}
		if err := ValidateSchedule(v.Then, horizon); err != nil {
			return err
		}
	}
	for t := 0; t < max(horizon, 1); t++ {
		if lr := s.LR(t); !(lr >= 0) || math.IsInf(lr, 0) {
			return fmt.Errorf("optim: learning rate at step %d is %v; want finite and >= 0", t, lr)
		}
	}
	return nil
}
