package trainer

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/mechanism"
)

// One band is DP-SGD: the same batches, noise, ε and model.bin, bit for
// bit, as noise continuous with Poisson sampling.
func TestBandMFOneBandIsDPSGD(t *testing.T) {
	c := small(t)
	dp := run(t, c, Options{})
	b := c
	b.OutDir = t.TempDir()
	b.Noise, b.Bands = NoiseBandMF, 1
	bm := run(t, b, Options{})
	if !bytes.Equal(readFile(t, filepath.Join(c.OutDir, "release", "model.bin")), readFile(t, filepath.Join(b.OutDir, "release", "model.bin"))) {
		t.Fatal("model.bin differs from DP-SGD's")
	}
	for name, eps := range dp.Epsilon {
		if bm.Epsilon[name] != eps {
			t.Errorf("%s: ε %v, DP-SGD %v", name, bm.Epsilon[name], eps)
		}
	}
}

// b bands: each example is charged ⌈T/b⌉ Poisson-subsampled Gaussians at
// the rate within a part, b·B/n (the amplified banded theorem); the run
// resumes bit for bit (the correlator's state is checkpointed), and the
// noise it adds is not DP-SGD's.
func TestBandMFAccountAndResume(t *testing.T) {
	c := small(t)
	c.Noise, c.Bands, c.Sampler = NoiseBandMF, 4, mechanism.Cyclic
	full := run(t, c, Options{})
	q := float64(c.BatchSize*c.Bands) / float64(full.TrainN)
	want, err := accountant.PoissonEpsilon(q, c.Sigma, (c.Steps+c.Bands-1)/c.Bands, c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if got := full.Epsilon["rdp"]; math.Abs(got-want.Epsilon) > 1e-12 {
		t.Errorf("rdp ε %v, independent account of ⌈%d/%d⌉ steps at q = %v: %v", got, c.Steps, c.Bands, q, want.Epsilon)
	}
	if full.Q != q {
		t.Errorf("summary q %v, want %v", full.Q, q)
	}
	if !strings.Contains(strings.Join(full.Notes, "\n"), "4-banded strategy") {
		t.Errorf("notes do not describe the strategy: %q", full.Notes)
	}

	c2 := c
	c2.OutDir = t.TempDir()
	if _, err := Run(context.Background(), c2, Options{StopAfter: 13}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("stop: %v", err)
	}
	resumed := run(t, c2, Options{Resume: true})
	if full.Epsilon["rdp"] != resumed.Epsilon["rdp"] || full.TestLoss != resumed.TestLoss {
		t.Fatalf("resumed run differs: ε %v vs %v, loss %v vs %v", full.Epsilon, resumed.Epsilon, full.TestLoss, resumed.TestLoss)
	}
	if !bytes.Equal(readFile(t, filepath.Join(c.OutDir, "release", "model.bin")), readFile(t, filepath.Join(c2.OutDir, "release", "model.bin"))) {
		t.Fatal("resumed model differs")
	}

	dp := small(t)
	run(t, dp, Options{})
	if bytes.Equal(readFile(t, filepath.Join(dp.OutDir, "release", "model.bin")), readFile(t, filepath.Join(c.OutDir, "release", "model.bin"))) {
		t.Fatal("4 bands gave DP-SGD's model")
	}
}

func TestBandMFRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no bands", func(c *Config) { c.Noise = NoiseBandMF }},
		{"shuffle", func(c *Config) { c.Noise, c.Bands, c.Sampler = NoiseBandMF, 2, mechanism.Shuffle }},
		{"linf", func(c *Config) { c.Noise, c.Bands, c.Clip = NoiseBandMF, 2, mechanism.LInf }},
		{"final only", func(c *Config) { c.Noise, c.Bands, c.FinalOnly, c.Radius = NoiseBandMF, 2, true, 5 }},
		{"clipped count", func(c *Config) { c.Noise, c.Bands, c.ClippedCountSigma = NoiseBandMF, 2, 3 }},
	} {
		c := small(t)
		tc.edit(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: Validate = %v, want a refusal", tc.name, err)
		}
	}
	// A part rate above 1 (batch·bands > n) is refused at setup.
	c := small(t)
	c.Noise, c.Bands, c.BatchSize, c.Sampler = NoiseBandMF, 50, 200, mechanism.Cyclic
	if _, err := Run(context.Background(), c, Options{}); err == nil || !strings.Contains(err.Error(), "rate within a part") {
		t.Errorf("batch·bands > n: %v", err)
	}
}

// b bands under the default (ordinary) Poisson sampling: accounted by MMCC
// on the PLD accountant, the primary; its ε is the PLD of the strategy's
// MMCC rows at the run's σ, δ split as documented, and larger than DP-SGD's
// at the same σ (the rows carry the earlier participations' shifts).
func TestBandMFPoissonMMCC(t *testing.T) {
	c := small(t)
	c.Noise, c.Bands, c.Sigma = NoiseBandMF, 2, 2
	got := run(t, c, Options{})
	eps, ok := got.Epsilon["pld"]
	if !ok || len(got.Epsilon) != 1 {
		t.Fatalf("ε %v: want the PLD accountant alone", got.Epsilon)
	}
	if !strings.Contains(strings.Join(got.Notes, "\n"), "MMCC") {
		t.Errorf("notes do not name MMCC: %q", got.Notes)
	}
	dp, err := accountant.PLDPoissonEpsilon(got.Q, c.Sigma, c.Steps, c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if !(eps > dp.Epsilon) || math.IsInf(eps, 0) {
		t.Errorf("MMCC ε %v, DP-SGD's at the same σ %v: want a finite, larger ε", eps, dp.Epsilon)
	}
	r := c
	r.Accountant = AccountantRDP
	r.OutDir = t.TempDir()
	if _, err := Run(context.Background(), r, Options{}); err == nil || !strings.Contains(err.Error(), "MMCC") {
		t.Errorf("MMCC with the RDP accountant: %v, want a refusal naming MMCC", err)
	}
}
