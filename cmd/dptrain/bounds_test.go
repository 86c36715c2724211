package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Choosing --feature-bounds (issue 40 item 7): from the public test set
// only, train reports the fraction of values the bounds clip and warns
// above 5%, suggests --scale when the features' ranges differ by orders of
// magnitude, and warns when the standardisation's noise dominates.
func TestFeatureBoundsAdvice(t *testing.T) {
	dir := t.TempDir()
	iris := func(i int, c string) string { // petal length 1–6.9: a 0:1 bound clips most of it
		switch c {
		case "species":
			return []string{"setosa", "versicolor"}[i%2]
		case "petal_length":
			return fmt.Sprint(1.4 + 3*float64(i%2) + 0.05*float64(i%9))
		}
		return fmt.Sprint(0.2 + 0.05*float64(i%9))
	}
	wine := func(i int, c string) string { // hue ~0.5–1.5, proline 300–1680
		switch c {
		case "class":
			return fmt.Sprint(i % 2)
		case "proline":
			return fmt.Sprint(300 + 1380*float64(i%2) - 10*float64(i%5))
		}
		return fmt.Sprint(0.5 + float64(i%2) + 0.01*float64(i%5))
	}
	irisTrain, irisTest := filepath.Join(dir, "iris_train.csv"), filepath.Join(dir, "iris_test.csv")
	writeColumns(t, irisTrain, []string{"petal_width", "petal_length", "species"}, 100, iris)
	writeColumns(t, irisTest, []string{"petal_width", "petal_length", "species"}, 40, iris)
	wineTrain, wineTest := filepath.Join(dir, "wine_train.csv"), filepath.Join(dir, "wine_test.csv")
	writeColumns(t, wineTrain, []string{"hue", "proline", "class"}, 100, wine)
	writeColumns(t, wineTest, []string{"hue", "proline", "class"}, 40, wine)
	base := []string{"train", "--dataset", "csv", "--model", "logreg", "--steps", "2", "--batch", "20", "--epsilon", "4", "--seed", "1"}
	for _, tc := range []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"iris 0:1", []string{"--train", irisTrain, "--test", irisTest, "--scale", "minmax", "--feature-bounds", "0:1"},
			// petal_length: every test value is above 1.
			[]string{`clip more than 5% of the public test set's values of "petal_length" 100.0%`}, []string{`"petal_width"`}},
		{"iris declared", []string{"--train", irisTrain, "--test", irisTest, "--scale", "minmax", "--feature-bounds", "0:3,0:8"},
			[]string{"clip none of the public test set's 80 values"}, []string{"warning"}},
		{"wine raw", []string{"--train", wineTrain, "--test", wineTest},
			[]string{`ranges differ by a factor of about 10^3 ("hue" narrowest, "proline" widest)`, "--scale minmax"}, nil},
		{"wine standardize, 100 rows", []string{"--train", wineTrain, "--test", wineTest, "--scale", "standardize", "--feature-bounds", "0:5,0:2000"},
			[]string{"standardisation's noise dominates", `"hue"`}, []string{"ranges differ"}},
	} {
		code, out, errb := runCLI(t, append(append(base, "--out", filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))), tc.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errb)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) || !strings.Contains(errb, w) {
				t.Errorf("%s: %q not in both the summary (stdout) and the log (stderr):\n%s\n%s", tc.name, w, out, errb)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in %s", tc.name, w, out)
			}
		}
	}
}
