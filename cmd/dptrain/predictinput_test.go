package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// predict reads a .npy array and a single image as well as CSV tables and
// image directories, with the same predictions; anything else is refused
// saying what is accepted, and a wrong-size image names --resize.
func TestPredictInputs(t *testing.T) {
	dir := t.TempDir()
	// A table model: the .npy of the CSV's rows predicts the same.
	val := func(i int, c string) string {
		if c == "y" {
			return fmt.Sprint(i % 2)
		}
		return fmt.Sprint(float64(i%2) - 0.5 + 0.01*float64(i) + float64(len(c)))
	}
	table := filepath.Join(dir, "t.csv")
	writeColumns(t, table, []string{"a", "bb", "y"}, 30, val)
	run := filepath.Join(dir, "run")
	if code, _, errb := runCLI(t, "train", "--dataset", "csv", "--train", table, "--test", table, "--model", "logreg",
		"--steps", "2", "--batch", "10", "--sigma", "1", "--epsilon", "0", "--quiet", "--out", run); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb)
	}
	model := filepath.Join(run, "release", "model.bin")
	_, fromCSV, _ := runCLI(t, "predict", "--model", model, "--input", table)
	var rows []float32
	for i := range 30 {
		for _, c := range []string{"a", "bb"} {
			v, _ := strconv.ParseFloat(val(i, c), 32)
			rows = append(rows, float32(v))
		}
	}
	arr := filepath.Join(dir, "x.npy")
	os.WriteFile(arr, npy(rows, []int{30, 2}), 0o644)
	renamed := filepath.Join(dir, "x.bin") // a NumPy file under another name
	os.WriteFile(renamed, npy(rows, []int{30, 2}), 0o644)
	wrong := filepath.Join(dir, "wrong.npy")
	os.WriteFile(wrong, npy(rows, []int{20, 3}), 0o644)
	sheet := filepath.Join(dir, "t.xlsx")
	os.WriteFile(sheet, []byte("PK\x03\x04 a zipped spreadsheet"), 0o644)
	blob := filepath.Join(dir, "t.parquet")
	os.WriteFile(blob, []byte("PAR1\x00\x01\x02"), 0o644)
	fakeNPY := filepath.Join(dir, "fake.npy")
	os.WriteFile(fakeNPY, []byte("1,2\n"), 0o644)
	for _, tc := range []struct {
		input string
		code  int
		err   []string
	}{
		{arr, 0, nil},
		{renamed, 0, nil},
		{wrong, 2, []string{"shape (20, 3)", "N×2"}},
		{sheet, 2, []string{"zip archive", "export it as CSV", ".npy"}},
		{blob, 2, []string{"unknown kind", "CSV table", "NumPy array", "one image"}},
		{fakeNPY, 2, []string{"not a NumPy array"}},
	} {
		code, out, errb := runCLI(t, "predict", "--model", model, "--input", tc.input)
		if code != tc.code || (code == 0 && out != fromCSV) {
			t.Errorf("%s: exit %d (want %d), stderr %q, same output as the CSV: %v", filepath.Base(tc.input), code, tc.code, errb, out == fromCSV)
		}
		for _, w := range tc.err {
			if !strings.Contains(errb, w) {
				t.Errorf("%s: stderr %q lacks %q", filepath.Base(tc.input), errb, w)
			}
		}
	}

	// An image model: one image predicts as its row of the directory's.
	imgs := filepath.Join(dir, "img")
	for _, split := range []string{"train", "test"} {
		for c := range 2 {
			for i := range 2 {
				writeGreyDigit(t, filepath.Join(imgs, split, fmt.Sprint(c), fmt.Sprintf("%d.png", i)), c, i)
			}
		}
	}
	irun := filepath.Join(dir, "irun")
	if code, _, errb := runCLI(t, "train", "--dataset", "folder", "--data", imgs, "--model", "cnn", "--steps", "1", "--batch", "2",
		"--sigma", "1", "--epsilon", "0", "--quiet", "--out", irun); code != 0 {
		t.Fatalf("train cnn: exit %d: %s", code, errb)
	}
	imodel := filepath.Join(irun, "release", "model.bin")
	_, all, _ := runCLI(t, "predict", "--model", imodel, "--input", filepath.Join(imgs, "test"))
	code, one, errb := runCLI(t, "predict", "--model", imodel, "--input", filepath.Join(imgs, "test", "1", "0.png"))
	allLines, oneLines := strings.Split(strings.TrimSpace(all), "\n"), strings.Split(strings.TrimSpace(one), "\n")
	if code != 0 || len(oneLines) != 2 || oneLines[0] != allLines[0] || strings.TrimPrefix(oneLines[1], "0.png") != strings.TrimPrefix(allLines[3], "1/0.png") {
		t.Errorf("one image: exit %d %s: %q; the directory's row: %q", code, errb, oneLines, allLines[3])
	}
	big := filepath.Join(dir, "big.png")
	writePNG(t, big, 40, 30, color.NRGBA{R: 90, G: 90, B: 90, A: 255})
	if code, _, errb := runCLI(t, "predict", "--model", imodel, "--input", big, "--channels", "1"); code != 2 || !strings.Contains(errb, "--resize 28x28") {
		t.Errorf("a 40×30 image: exit %d: %s; want 2 naming --resize 28x28", code, errb)
	}
	if code, _, errb := runCLI(t, "predict", "--model", imodel, "--input", big, "--channels", "1", "--resize", "28x28"); code != 0 {
		t.Errorf("--resize 28x28: exit %d: %s", code, errb)
	}
}
