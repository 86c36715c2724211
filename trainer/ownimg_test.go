package trainer

import (
	"strings"
	"testing"
)

func TestParseResize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		h, w int
		ok   bool
	}{
		{"", 0, 0, true}, {"28x28", 28, 28, true}, {"32X24", 32, 24, true},
		{"28", 0, 0, false}, {"0x28", 0, 0, false}, {"28x-1", 0, 0, false}, {"axb", 0, 0, false}, {"5000x5", 0, 0, false},
	} {
		h, w, err := ParseResize(tc.in)
		if h != tc.h || w != tc.w || (err == nil) != tc.ok {
			t.Errorf("ParseResize(%q) = %d, %d, %v", tc.in, h, w, err)
		}
	}
}

func TestImageConversionSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		dataset  Dataset
		channels int
		resize   string
		err      string
	}{
		{DatasetFolder, 1, "28x28", ""},
		{DatasetFolder, 3, "", ""},
		{DatasetFolder, 2, "", "--channels 2: use 1 (grey) or 3 (RGB)"},
		{DatasetFolder, 0, "28by28", `--resize "28by28"`},
		{DatasetSynthetic, 1, "", "--channels and --resize need --dataset folder"},
	} {
		cfg := Default()
		cfg.Dataset, cfg.Channels, cfg.Resize = tc.dataset, tc.channels, tc.resize
		if tc.dataset == DatasetFolder {
			cfg.DataDir = "x"
		}
		err := cfg.Validate()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s channels %d resize %q: %v, want %q", tc.dataset, tc.channels, tc.resize, err, tc.err)
		}
	}
}
