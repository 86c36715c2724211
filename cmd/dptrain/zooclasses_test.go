package main

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models"
)

// Zoo models take their output width from the public class set (issue 40
// item 2): the MNIST CNN on 2 and 3 classes of grey 28×28 PNGs, ResNet-20
// on 2 classes of colour 32×32 PNGs, each trained, reloaded from model.bin
// with k outputs and predicting one row of k probabilities per image; the
// ScatterNet models (scatcnn, logreg on ScatterNet features) with 3 classes.
func TestZooModelsTakeTheClassCount(t *testing.T) {
	for _, tc := range []struct {
		model   string
		classes []string
		arch    string
		colour  bool
		extra   []string // ScatterNet: features the model reads, not images predict reads
	}{
		{"cnn", []string{"cat", "dog"}, "mnistcnn(2)", false, nil},
		{"cnn", []string{"a", "b", "c"}, "mnistcnn(3)", false, nil},
		{"resnet20", []string{"no", "yes"}, "resnet20gn(2)", true, nil},
		{"scatcnn", []string{"x", "y", "z"}, "scatcnn(243,8,8,3)", true, []string{"--features", "scatternet"}},
		{"logreg", []string{"x", "y", "z"}, "logreg(15552,3)", true, []string{"--features", "scatternet"}},
	} {
		dir := t.TempDir()
		for _, split := range []string{"train", "test"} {
			for c, name := range tc.classes {
				for i := range 2 {
					p := filepath.Join(dir, split, name, fmt.Sprintf("%d.png", i))
					if tc.colour {
						writePNG(t, p, 32, 32, color.NRGBA{R: uint8(80 * c), G: uint8(40 * i), B: 90, A: 255})
					} else {
						writeGreyDigit(t, p, c, i)
					}
				}
			}
		}
		run := filepath.Join(dir, "run")
		code, _, errb := runCLI(t, append([]string{"train", "--dataset", "folder", "--data", dir, "--model", tc.model, "--steps", "2", "--batch", "2",
			"--sigma", "1", "--epsilon", "0", "--seed", "1", "--quiet", "--out", run, "--feature-cache", filepath.Join(dir, "cache")}, tc.extra...)...)
		if code != 0 {
			t.Fatalf("%s on %d classes: exit %d: %s", tc.model, len(tc.classes), code, errb)
		}
		mfile := filepath.Join(run, "release", "model.bin")
		m, err := models.LoadNet(mfile, models.Options{})
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Meta()
		if m.Arch() != tc.arch || strings.Join(md.Classes, ",") != strings.Join(tc.classes, ",") {
			t.Errorf("%s: model.bin holds %s with classes %q, want %s with %q", tc.model, m.Arch(), md.Classes, tc.arch, tc.classes)
		}
		if tc.extra != nil {
			continue // predict reads images, not ScatterNet features
		}
		code, out, errb := runCLI(t, "predict", "--model", mfile, "--input", filepath.Join(dir, "test"))
		if code != 0 {
			t.Fatalf("predict %s: exit %d: %s", tc.model, code, errb)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		wantHeader := "file,predicted,p_" + strings.Join(tc.classes, ",p_")
		if len(lines) != 1+2*len(tc.classes) || lines[0] != wantHeader {
			t.Fatalf("predict %s printed %q, want a header %q and %d rows", tc.model, out, wantHeader, 2*len(tc.classes))
		}
		for _, l := range lines[1:] {
			if f := strings.Split(l, ","); len(f) != 2+len(tc.classes) {
				t.Errorf("predict %s: row %q has %d fields, want %d", tc.model, l, len(f), 2+len(tc.classes))
			}
		}
	}
}
