package mechanism

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
)

// Ledger records every event a run charged, in order: what ran, as data. It
// is kept in the checkpoint so that a resumed run can check that the steps
// already charged are the ones its own mechanism would charge. Consecutive
// steps charged the same event share one entry.
type Ledger struct {
	Entries []LedgerEntry `json:"entries"`
}

// LedgerEntry is one event charged at steps From..To (0..0: the private
// preprocessing before step 1). Event is the event's exact text (Go syntax
// of its value, floats to the last bit).
type LedgerEntry struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Kind  string `json:"kind"`
	Event string `json:"event"`
}

// Charge records ev charged at step (0: before step 1).
func (l *Ledger) Charge(step int, ev accountant.Event) {
	text := fmt.Sprintf("%#v", ev)
	if n := len(l.Entries); n > 0 && step > 0 {
		last := &l.Entries[n-1]
		if last.To == step-1 && last.Event == text && last.From > 0 {
			last.To = step
			return
		}
	}
	l.Entries = append(l.Entries, LedgerEntry{From: step, To: step, Kind: accountant.Kind(ev), Event: text})
}

// Steps is the last step charged (0: none).
func (l *Ledger) Steps() int {
	if len(l.Entries) == 0 {
		return 0
	}
	return l.Entries[len(l.Entries)-1].To
}

// LedgerFor is the ledger m charges for its private preprocessing and steps
// 1..steps at noise multiplier sigma.
func (m *Mechanism) LedgerFor(sigma float64, steps int) *Ledger {
	l := &Ledger{}
	for _, ev := range m.prefix {
		l.Charge(0, ev)
	}
	for k := 1; k <= steps; k++ {
		l.Charge(k, m.StepEvent(sigma, k))
	}
	return l
}

// Check reports the first difference between l and want.
func (l *Ledger) Check(want *Ledger) error {
	for i := 0; i < max(len(l.Entries), len(want.Entries)); i++ {
		switch {
		case i >= len(l.Entries):
			return fmt.Errorf("ledger: missing %s at steps %d–%d", want.Entries[i].Event, want.Entries[i].From, want.Entries[i].To)
		case i >= len(want.Entries):
			return fmt.Errorf("ledger: unexpected %s at steps %d–%d", l.Entries[i].Event, l.Entries[i].From, l.Entries[i].To)
		case l.Entries[i] != want.Entries[i]:
			return fmt.Errorf("ledger: steps %d–%d charged %s; this run's mechanism charges %s at steps %d–%d",
				l.Entries[i].From, l.Entries[i].To, l.Entries[i].Event, want.Entries[i].Event, want.Entries[i].From, want.Entries[i].To)
		}
	}
	return nil
}
