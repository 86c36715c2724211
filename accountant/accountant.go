package accountant

import (
	"encoding/json"
	"fmt"
)

// Relation is the neighbouring relation a bound holds for.
type Relation int

const (
	// AddRemove: neighbouring datasets differ by adding or removing one record
	// (Poisson subsampling).
	AddRemove Relation = iota + 1
	// ReplaceOne: neighbouring datasets differ by replacing one record
	// (fixed-size sampling, the hidden-state bound).
	ReplaceOne
)

func (r Relation) String() string {
	switch r {
	case AddRemove:
		return "add-remove"
	case ReplaceOne:
		return "replace-one"
	}
	return "unknown"
}

// MarshalText writes the relation's name ("add-remove", "replace-one"), so
// JSON reports say which relation a bound holds for in words.
// The zero Relation (no bound) is "unknown".
func (r Relation) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalJSON reads a relation's name, or the number that reports written
// before names were used hold.
func (r *Relation) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case string:
		for _, c := range []Relation{0, AddRemove, ReplaceOne} {
			if x == c.String() {
				*r = c
				return nil
			}
		}
	case float64:
		if c := Relation(x); float64(c) == x && c >= 0 && c <= ReplaceOne {
			*r = c
			return nil
		}
	}
	return fmt.Errorf("accountant: unknown relation %s", b)
}

// Bound is an (ε, δ) guarantee as reported by one accountant.
type Bound struct {
	Accountant string   `json:"accountant"` // name of the accountant that produced it
	Epsilon    float64  `json:"epsilon"`    // ε
	Delta      float64  `json:"delta"`      // δ
	Order      float64  `json:"order"`      // RDP order that attained ε (0 when not an RDP bound)
	Relation   Relation `json:"relation"`   // neighbouring relation the bound holds for
}

// Accountant composes events and converts the composition to (ε, δ).
//
// Implementations are not safe for concurrent use.
type Accountant interface {
	// Name is a short identifier such as "rdp", "twice", "hidden", "srdp".
	Name() string
	// Supports returns nil when Compose would accept ev, and otherwise an
	// error wrapping ErrUnsupported (or ErrInvalid) saying why.
	Supports(ev Event) error
	// Compose adds count sequential runs of ev to the account. On error
	// the account is unchanged.
	Compose(ev Event, count int) error
	// Epsilon returns the smallest ε this accountant can prove at delta.
	Epsilon(delta float64) (Bound, error)
	// Delta returns the smallest δ this accountant can prove at epsilon.
	Delta(epsilon float64) (float64, error)
	// MarshalJSON / UnmarshalJSON serialise the account so that a resumed
	// run continues exactly.
	MarshalJSON() ([]byte, error)
	UnmarshalJSON([]byte) error
}
