package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeGreyDigit writes a 28×28 8-bit grey PNG for class 0–9: a vertical
// bar at column 2+2·class, its length varying with i.
func writeGreyDigit(t *testing.T, path string, class, i int) {
	img := image.NewGray(image.Rect(0, 0, 28, 28))
	for y := 4; y < 20+i; y++ {
		img.SetGray(2+2*class, y, color.Gray{255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The MNIST CNN (1×28×28) trains and predicts on a user's own folder of
// 28×28 grey PNGs; a colour image among them is refused naming the file and
// the flag that converts it, and --channels 1 converts it.
func TestCNNOnGreyImageFolder(t *testing.T) {
	dir := t.TempDir()
	for _, split := range []string{"train", "test"} {
		for c := range 10 { // the MNIST CNN has 10 outputs
			for i := range 2 {
				writeGreyDigit(t, filepath.Join(dir, split, fmt.Sprint(c), fmt.Sprintf("%d.png", i)), c, i)
			}
		}
	}
	run := filepath.Join(dir, "run")
	train := []string{"train", "--dataset", "folder", "--data", dir, "--model", "cnn", "--steps", "2", "--batch", "4",
		"--sigma", "1", "--epsilon", "0", "--seed", "1", "--quiet", "--out", run, "--overwrite"}
	code, _, errb := runCLI(t, train...)
	if code != 0 {
		t.Fatalf("train cnn on grey 28×28 PNGs: exit %d: %s", code, errb)
	}
	model := filepath.Join(run, "release", "model.bin")
	code, out, errb := runCLI(t, "predict", "--model", model, "--input", filepath.Join(dir, "test"))
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 21 || !strings.HasPrefix(lines[0], "file,predicted,p_0,") || !strings.HasPrefix(lines[1], "0/0.png,") || !strings.HasPrefix(lines[20], "9/1.png,") {
		t.Fatalf("predict printed %d lines: %q", len(lines), out)
	}

	// One colour image in train/: refused by name, with the fix.
	colour := filepath.Join(dir, "train", "7", "9.png")
	writePNG(t, colour, 28, 28, color.NRGBA{R: 200, G: 100, B: 50, A: 255})
	code, _, errb = runCLI(t, train...)
	if code != 2 || !strings.Contains(errb, colour) || !strings.Contains(errb, "--channels 1") {
		t.Fatalf("a colour image among grey ones: exit %d, %q; want 2 naming %s and --channels 1", code, errb, colour)
	}
	if code, _, errb = runCLI(t, append(train, "--channels", "1")...); code != 0 {
		t.Fatalf("--channels 1: exit %d: %s", code, errb)
	}
	// predict takes the model's channel count; a colour image needs the flag.
	writePNG(t, filepath.Join(dir, "test", "7", "9.png"), 28, 28, color.NRGBA{R: 200, A: 255})
	if code, _, errb = runCLI(t, "predict", "--model", model, "--input", filepath.Join(dir, "test")); code != 2 || !strings.Contains(errb, "--channels 1") {
		t.Fatalf("predict on a colour image: exit %d, %q", code, errb)
	}
	if code, _, errb = runCLI(t, "predict", "--model", model, "--input", filepath.Join(dir, "test"), "--channels", "1"); code != 0 {
		t.Fatalf("predict --channels 1: exit %d: %s", code, errb)
	}
	// 56×56 images resized to the model's 28×28.
	writePNG(t, filepath.Join(dir, "big", "x.png"), 56, 56, color.NRGBA{R: 9, G: 9, B: 9, A: 255})
	if code, _, errb = runCLI(t, "predict", "--model", model, "--input", filepath.Join(dir, "big"), "--channels", "1", "--resize", "28x28"); code != 0 {
		t.Fatalf("predict --resize 28x28: exit %d: %s", code, errb)
	}
	if code, _, errb = runCLI(t, "predict", "--model", model, "--input", filepath.Join(dir, "big"), "--channels", "1"); code != 2 || !strings.Contains(errb, "56×56, want 28×28") {
		t.Fatalf("predict on 56×56 without --resize: exit %d, %q", code, errb)
	}
}

// README.md, configs/README.md and --seed's help say the same about a
// seed (the behaviour TestTrainSeedMakesNoiseReproducible checks): an
// explicit --seed seeds the noise too, a config's "seed" only the
// initialisation unless "seeded": true.
func TestSeedStatementAgrees(t *testing.T) {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ") }
	want := []string{
		"--seed N on the command line seeds the initialisation and also the DP noise and sampling",
		`A config file's "seed": N seeds only the initialisation; add "seeded": true to seed the noise and sampling from it too.`,
	}
	for _, f := range []string{"../../README.md", "../../configs/README.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(norm(string(b)), w) {
				t.Errorf("%s does not say %q", f, w)
			}
		}
	}
	_, out, _ := runCLI(t, "train", "--help")
	for _, w := range []string{"given explicitly on the command line it also seeds the DP noise and sampling",
		`a config file's "seed" fixes the initialisation only unless it also says "seeded": true`} {
		if !strings.Contains(norm(out), w) {
			t.Errorf("train --help does not say %q", w)
		}
	}
}

// A folder of 32×32 colour PNGs does not fit the MNIST CNN: refused as bad
// input (exit 2) naming the flags that convert it; with them it trains, and
// eval converts the test folder the same way.
func TestCNNOnConvertedColourFolder(t *testing.T) {
	dir := t.TempDir()
	for _, split := range []string{"train", "test"} {
		for c := range 10 {
			writePNG(t, filepath.Join(dir, split, fmt.Sprint(c), "0.png"), 32, 32, color.NRGBA{R: uint8(25 * c), G: 40, B: 90, A: 255})
		}
	}
	run := filepath.Join(dir, "run")
	train := []string{"train", "--dataset", "folder", "--data", dir, "--model", "cnn", "--steps", "2", "--batch", "5",
		"--sigma", "1", "--epsilon", "0", "--seed", "1", "--quiet", "--out", run}
	if code, _, errb := runCLI(t, train...); code != 2 || !strings.Contains(errb, "shape [3 32 32]") || !strings.Contains(errb, "--channels 1 --resize 28x28") {
		t.Fatalf("cnn on 3×32×32: exit %d, %q; want 2 naming the conversion flags", code, errb)
	}
	if code, _, errb := runCLI(t, append(train, "--channels", "1", "--resize", "28x28")...); code != 0 {
		t.Fatalf("cnn with --channels 1 --resize 28x28: exit %d: %s", code, errb)
	}
	model := filepath.Join(run, "release", "model.bin")
	code, out, errb := runCLI(t, "eval", "--model", model, "--dataset", "folder", "--data", dir, "--channels", "1", "--resize", "28x28")
	if code != 0 || !strings.Contains(out, "(test, 10 examples)") {
		t.Fatalf("eval with the same conversion: exit %d, %q, %s", code, out, errb)
	}
}
