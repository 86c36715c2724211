package accountant

import (
	"encoding/json"
	"testing"
)

// Bounds serialise with lower-case keys and the relation in words, and
// read back both that form and the numeric relations of older reports.
func TestBoundJSON(t *testing.T) {
	for _, tc := range []struct {
		b    Bound
		want string
	}{
		{Bound{"rdp", 2.5, 1e-5, 7.5, AddRemove}, `{"accountant":"rdp","epsilon":2.5,"delta":0.00001,"order":7.5,"relation":"add-remove"}`},
		{Bound{"hidden", 3, 1e-3, 0, ReplaceOne}, `{"accountant":"hidden","epsilon":3,"delta":0.001,"order":0,"relation":"replace-one"}`},
		{Bound{}, `{"accountant":"","epsilon":0,"delta":0,"order":0,"relation":"unknown"}`},
	} {
		got, err := json.Marshal(tc.b)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.b, got, err, tc.want)
		}
		var back Bound
		if err := json.Unmarshal(got, &back); err != nil || back != tc.b {
			t.Errorf("round trip of %s = %+v, %v", got, back, err)
		}
	}
	var old Bound
	if err := json.Unmarshal([]byte(`{"Accountant":"rdp","Epsilon":2.99,"Delta":1e-5,"Order":7,"Relation":2}`), &old); err != nil ||
		old != (Bound{"rdp", 2.99, 1e-5, 7, ReplaceOne}) {
		t.Errorf("old summary: %+v, %v", old, err)
	}
	for _, bad := range []string{`"both"`, `3`, `1.5`, `-1`, `true`} {
		var r Relation
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("relation %s accepted as %v", bad, r)
		}
	}
}
