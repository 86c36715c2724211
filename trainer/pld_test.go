package trainer

import (
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

// TestCalibrationAccountant: by default σ is calibrated by PLD (smaller σ,
// PLD ε at the target, RDP above it); --accountant rdp calibrates by RDP
// and PLD is still reported as the tighter result. PLD appears in the
// metrics at evaluation steps and the last, and is marked deferred elsewhere.
func TestCalibrationAccountant(t *testing.T) {
	c := small(t)
	c.Sigma, c.Epsilon, c.Steps = 0, 2, 25
	def := run(t, c, Options{})
	c.OutDir, c.Accountant = t.TempDir(), "rdp"
	byRDP := run(t, c, Options{})
	q := float64(c.BatchSize) / float64(def.TrainN)
	charges := func(s float64) (accountant.Event, int) {
		return accountant.PoissonSampled{Q: q, Event: accountant.Gaussian{Sigma: s}}, c.Steps
	}
	pldAt := func(opts ...accountant.PLDOption) func(float64) (float64, error) {
		return accountant.Account(func() (accountant.Accountant, error) { return accountant.NewPLD(opts...) }, charges, c.Delta)
	}
	rdpEps := accountant.Account(func() (accountant.Accountant, error) { return accountant.NewRDP() }, charges, c.Delta)
	pld, err := accountant.Calibrate(pldAt(), 2, accountant.WithPLDCertification(pldAt(accountant.WithPLDInterval(accountant.CalibrationPLDInterval)), rdpEps))
	if err != nil {
		t.Fatal(err)
	}
	rdp, err := accountant.Calibrate(rdpEps, 2)
	if err != nil {
		t.Fatal(err)
	}
	if def.Sigma != pld || byRDP.Sigma != rdp || !(pld < rdp) {
		t.Fatalf("σ default %v (pld %v), --accountant rdp %v (rdp %v)", def.Sigma, pld, byRDP.Sigma, rdp)
	}
	if def.Best.Accountant != "pld" || !(def.Best.Epsilon <= 2 && def.Best.Epsilon > 2-1e-3) || !(def.Epsilon["rdp"] > 2) {
		t.Fatalf("default run: best %+v, rdp %v", def.Best, def.Epsilon["rdp"])
	}
	if byRDP.Best.Accountant != "pld" || !(byRDP.Best.Epsilon < byRDP.Epsilon["rdp"]) || !(byRDP.Epsilon["rdp"] <= 2) {
		t.Fatalf("rdp-calibrated run: best %+v, rdp %v", byRDP.Best, byRDP.Epsilon["rdp"])
	}
	recs := mustMetrics(t, def.OutDir)
	for _, r := range recs {
		full := r.Step%c.EvalEvery == 0 || r.Step == c.Steps
		_, has := r.Epsilon["pld"]
		if has != full || full == slices.Contains(r.Deferred, "pld") {
			t.Fatalf("step %d: pld in epsilon %v, deferred %v", r.Step, has, r.Deferred)
		}
		if full && r.BestAccountant != "pld" {
			t.Fatalf("step %d: best %s", r.Step, r.BestAccountant)
		}
	}
	if last := recs[len(recs)-1]; math.Abs(last.EpsilonBest-def.Best.Epsilon) > 0 {
		t.Fatalf("last record ε %v, summary %v", last.EpsilonBest, def.Best.Epsilon)
	}

	c.OutDir, c.Accountant, c.Sampler = t.TempDir(), "pld", "shuffle"
	if err := c.Validate(); err == nil {
		t.Fatal("accountant pld with shuffling accepted")
	}
}
