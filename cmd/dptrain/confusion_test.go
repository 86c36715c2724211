package main

import (
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eval --plot draws a decodable image of the matrix whose counts --json
// prints, with the data's class names.
func TestEvalPlot(t *testing.T) {
	dir, model, _, _ := savedLogreg(t)
	// String labels name the classes (sorted: cat, dog, eel = 0, 1, 2);
	// every fourth row carries the next class's label, so the matrix has
	// off-diagonal counts.
	names := []string{"cat", "dog", "eel"}
	var b strings.Builder
	b.WriteString("f0,f1,f2,label\n")
	const n = 24
	for i := range n {
		c := i % 3
		row := []string{"0", "0", "0"}
		row[c] = "1"
		label := c
		if i%4 == 0 {
			label = (c + 1) % 3
		}
		fmt.Fprintf(&b, "%s,%s\n", strings.Join(row, ","), names[label])
	}
	csv := filepath.Join(dir, "named.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"png", "svg"} {
		out := filepath.Join(dir, "confusion."+ext)
		code, stdout, errb := runCLI(t, "eval", "--model", model, "--dataset", "csv", "--test", csv, "--json", "--plot", out)
		if code != 0 {
			t.Fatalf("eval --plot: exit %d: %s", code, errb)
		}
		var r struct {
			N         int
			Confusion [][]int
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		sum, off := 0, 0
		for i, row := range r.Confusion {
			for j, c := range row {
				sum += c
				if i != j {
					off += c
				}
			}
		}
		if r.N != n || sum != n || off != n/4 {
			t.Fatalf("confusion %v: %d counts (%d off the diagonal) for %d examples, want %d (%d)", r.Confusion, sum, off, r.N, n, n/4)
		}
		st, err := os.Stat(out)
		if err != nil || st.Size() < 5000 {
			t.Fatalf("%s: %v, %d bytes", out, err, st.Size())
		}
		if ext == "svg" {
			svg, _ := os.ReadFile(out)
			for _, want := range []string{"cat", "dog", "eel", "predicted class", "true class"} {
				if !strings.Contains(string(svg), want) {
					t.Errorf("confusion.svg lacks %q", want)
				}
			}
			continue
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("confusion.png: %v", err)
		}
		if bd := img.Bounds(); bd.Dx() < 400 || bd.Dy() < 300 {
			t.Fatalf("confusion.png is %v", bd)
		}
	}
	if code, _, _ := runCLI(t, "eval", "--model", model, "--dataset", "csv", "--test", csv, "--plot", filepath.Join(dir, "c.gif")); code != 2 {
		t.Errorf("--plot c.gif: exit %d, want 2", code)
	}
}

func TestConfusionFigure(t *testing.T) {
	conf := [][]int{{3, 1, 0}, {0, 0, 0}, {2, 2, 4}}
	f, err := newConfusionFigure(conf, []string{"a", "b"}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if f.cells == nil || len(f.cells.Labels) != 9 {
		t.Fatal("want a label in each of the 9 cells")
	}
	// Row-major over the true class, the fraction of that class: the empty
	// class gets 0%, not NaN.
	want := []string{"3\n75%", "1\n25%", "0\n0%", "0\n0%", "0\n0%", "0\n0%", "2\n25%", "2\n25%", "4\n50%"}
	for i, w := range want {
		if f.cells.Labels[i] != w {
			t.Errorf("cell %d: %q, want %q", i, f.cells.Labels[i], w)
		}
	}
	// Class 0 is the top row; the third class, unnamed, is "2".
	g := newConfusionGrid(conf)
	if z := g.Z(0, 2); math.Abs(z-0.75) > 1e-12 {
		t.Errorf("top-left cell %g, want 0.75", z)
	}
	if className([]string{"a", "b"}, 2) != "2" || className([]string{"a", "b"}, 1) != "b" {
		t.Error("class names")
	}
	for _, bad := range [][][]int{nil, {{1, 2}, {3}}, make([][]int, maxConfusionClasses+1)} {
		if _, err := newConfusionFigure(bad, nil, "t"); err == nil {
			t.Errorf("%d-class matrix drawn", len(bad))
		}
	}
}
