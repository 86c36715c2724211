package trainer

import (
	"encoding/json"
	"slices"
	"testing"
)

// settingKeys, by which ranks name the settings they differ in, lists
// every key a configuration marshals to (the embedded groups' keys too),
// each once.
func TestSettingKeysCoverTheConfig(t *testing.T) {
	c := Default()
	c.Hidden, c.QuantileLR = []int{3}, 0.1 // some omitempty keys set
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := settingKeys()
	for k := range m {
		if !slices.Contains(keys, k) {
			t.Errorf("key %q of the marshalled config is not among settingKeys", k)
		}
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(keys) {
		t.Errorf("settingKeys repeats a key: %v", keys)
	}
}
