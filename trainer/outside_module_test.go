package trainer_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// outsideProgram is what a user writes in their own module: an nn model
// on their own in-memory data, trained and accounted through the public
// API only (no internal/ package).
const outsideProgram = `package main

import (
	"context"
	"fmt"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/trainer"
)

func main() {
	noise := make([]float32, 2000)
	rng.New(1).FillNormal(noise, 0.5)
	rows, labels := make([][]float32, 1000), make([]int, 1000)
	for i := range rows {
		c := float32(2*(i%2) - 1)
		rows[i], labels[i] = []float32{c + noise[2*i], c + noise[2*i+1]}, i%2
	}
	train, err := datasets.FromSlices("mine", rows, labels)
	if err != nil {
		panic(err)
	}
	m, err := models.FromLayers("mlp", nn.Vec(2), 0, 1,
		nn.NewLinear[float32](2, 8, true), nn.NewReLU[float32](), nn.NewLinear[float32](8, 2, true))
	if err != nil {
		panic(err)
	}
	cfg := trainer.Default()
	cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 3, 1e-4, 3, 100, 1, 0.5
	cfg.Seeded, cfg.Plots = true, false
	sum, err := trainer.Run(context.Background(), cfg, trainer.Options{Model: m, Train: train, HoldOut: 0.2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("steps %d epsilon %.2f\n", sum.Steps, sum.Best.Epsilon)
}
`

// TestOutsideModule builds a separate module against this one with a
// replace directive, as a user would, offline: the dependencies come from
// the module cache and this module's go.sum.
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Offline, the module cache lacks the go.mod files of some old modules
	// deep in the graph (gonum plot's svgo), so the requirements are the
	// library's own, as "go mod tidy" with network access would write them.
	reqs, err := exec.Command(goBin, "list", "-C", root, "-m", "-f", "{{if not .Main}}{{.Path}} {{.Version}}{{end}}", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	mod := "module example.com/mine\n\ngo 1.26\n\nrequire (\n\tgithub.com/dptrain/dptrain v0.0.0\n"
	for _, l := range strings.Split(strings.TrimSpace(string(reqs)), "\n") {
		if l != "" {
			mod += "\t" + l + " // indirect\n"
		}
	}
	mod += ")\n\nreplace github.com/dptrain/dptrain => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"go.mod": mod, "go.sum": string(sum), "main.go": outsideProgram} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goBin, "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run in an outside module: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "steps 24 epsilon 3.00" {
		t.Fatalf("outside module printed %q, want %q", got, "steps 24 epsilon 3.00")
	}
}
