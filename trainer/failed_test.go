package trainer

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// A run that fails mid-training (issue 37, finding 4) returns the account
// of every step it took, the failing one included: the same ε as a run of
// the same mechanism that took that many steps, and a sweep's total over a
// finished run and the failed one is the total over the finished run and
// that shorter run.
func TestFailedRunChargesItsSteps(t *testing.T) {
	base := small(t)
	base.Model, base.Hidden, base.PrivateDiagnostics, base.KeepCheckpoint = "logreg", nil, false, false
	base.Steps, base.EvalEvery, base.CheckpointEvery, base.OutDir = 10, 0, 0, ""
	for _, tc := range []struct {
		name  string
		lr    float64
		final bool
	}{
		{"every step released", 1e300, false},
		{"final only", 1e300, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			c.LR, c.FinalOnly = tc.lr, tc.final
			sum, err := Run(context.Background(), c, Options{})
			if err == nil || sum != nil || !strings.Contains(err.Error(), "diverged") {
				t.Fatalf("want a diverged run, got summary %v, error %v", sum != nil, err)
			}
			var f *FailedRunError
			if !errors.As(err, &f) {
				t.Fatalf("error %v carries no partial account", err)
			}
			part := PartialAccount(err)
			if part == nil || part.Steps < 1 || part.Steps > c.Steps || part.TestWithheld != true {
				t.Fatalf("partial account %+v", part)
			}
			// The same mechanism, as many steps, a learning rate that
			// does not diverge: its own ε is the failed run's.
			same := base
			same.Steps, same.FinalOnly = part.Steps, tc.final
			want := run(t, same, Options{})
			if part.Best.Accountant == "" || math.Abs(part.Best.Epsilon-want.Best.Epsilon) > 1e-9*want.Best.Epsilon {
				t.Errorf("failed at step %d: ε = %v (%s), a %d-step run's is %v (%s)", part.Steps, part.Best.Epsilon, part.Best.Accountant, part.Steps, want.Best.Epsilon, want.Best.Accountant)
			}
			ok := run(t, base, Options{})
			got, err := ComposeRuns([]*Summary{ok, part}, c.Delta)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := ComposeRuns([]*Summary{ok, want}, c.Delta)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || len(got[0].Runs) != 2 || got[0].Bound.Epsilon != ref[0].Bound.Epsilon || !(got[0].Bound.Epsilon > ok.Best.Epsilon) {
				t.Errorf("total with the failed run %+v, want %+v (more than the finished run's %v)", got, ref, ok.Best.Epsilon)
			}
		})
	}
}
