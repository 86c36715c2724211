// Command cifarruns runs issue 12's CIFAR-10 experiments through the trainer
// and collates their results: ScatterNet + logistic regression (Tramèr &
// Boneh's 67.0% setting), ScatterNet + DPSGD-F, ScatterNet + small CNN, all at
// ε = 3, and ResNet-20-GN end to end at ε = 8 with plain DP-SGD beside twice
// sampling + hybrid clipping at the same ε and steps.
//
// Data: a CIFAR-10 JPEG re-encoding (outside the repository) imported with
// `dptrain data import` (not byte-identical to canonical CIFAR-10; results
// say so). Each run writes the trainer's usual outputs under
// OUT/NAME/ (summary.json, metrics.jsonl, plots); `-collate` rebuilds
// OUT/cifar10.md from every summary present, so long runs can be done one at
// a time (`-run NAME`).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dptrain/dptrain/scripts/internal/repro"
	"github.com/dptrain/dptrain/trainer"
)

type spec struct {
	name, what, reference string
	args                  string // the equivalent dptrain train flags, for the record
	edit                  func(c *trainer.Config)
}

func runs(data string, resnetEpochs float64) []spec {
	scat := func(c *trainer.Config) {
		c.Dataset, c.DataDir, c.Features, c.FeatureNorm = "cifar10", data, "scatternet", "private"
		c.FeatureNormSigma, c.FeatureNormClip = 8, 30
		c.Epsilon, c.Delta, c.Sigma = 3, 1e-5, 0
		c.BatchSize, c.Optimizer, c.LR, c.Momentum, c.ClipNorm = 8192, "momentum", 4, 0.9, 0.1
		c.MaxPhysicalBatch, c.EvalEvery = 1024, 20
	}
	resnet := func(c *trainer.Config) {
		c.Dataset, c.DataDir, c.Model = "cifar10", data, "resnet20"
		c.Epsilon, c.Delta, c.Sigma = 8, 1e-5, 0
		c.BatchSize, c.Optimizer, c.LR, c.Momentum, c.ClipNorm = 1024, "momentum", 1, 0.9, 1
		c.Epochs, c.MaxPhysicalBatch, c.EvalEvery = resnetEpochs, 64, 25
	}
	return []spec{
		// The best of a sweep recorded in the results README (lr 1–4, 80–150
		// epochs, batch 8192/16384, EMA, group vs private normalisation).
		{"scat-logreg", "ScatterNet + logistic regression, DP-SGD, ε = 3, EMA of the iterates (d = 0.99)", "67.0 (T&B, canonical CIFAR-10, older conversion); target ≥ 65",
			"--features scatternet --feature-norm private --model logreg --batch 8192 --epochs 100 --lr 1.5 --momentum 0.9 --clip-norm 0.1 --ema 0.99 --epsilon 3",
			func(c *trainer.Config) { scat(c); c.Model, c.Epochs, c.LR, c.EMA = "logreg", 100, 1.5, 0.99 }},
		{"scat-dpsgdf", "ScatterNet + DPSGD-F logistic regression (ε_F = 0.05 inside ε = 3)", "–",
			"--features scatternet --feature-norm private --model logreg --dpsgdf --feature-epsilon 0.05 --feature-clip 100 --batch 8192 --epochs 80 --lr 2 --clip-norm 0.1 --epsilon 3",
			func(c *trainer.Config) {
				scat(c)
				c.Model, c.Epochs, c.DPSGDF, c.FeatureEps, c.FeatureCF, c.LR = "logreg", 80, true, 0.05, 100, 2
			}},
		{"scat-cnn", "ScatterNet + small CNN (T&B's [64, M, 64]), DP-SGD, ε = 3, 15 epochs (T&B: 60; reduced to fit a session)", "69.3 (T&B, 60 epochs)",
			"--features scatternet --feature-norm private --model scatcnn --batch 8192 --epochs 15 --lr 4 --momentum 0.9 --clip-norm 0.1 --epsilon 3",
			func(c *trainer.Config) { scat(c); c.Model, c.Epochs = "scatcnn", 15 }},
		{"resnet20-dpsgd", "ResNet-20-GN end to end, DP-SGD (Poisson q = 1024/50000, flat clip 1), ε = 8", "paper 003 Table 1 baseline (ResNet22, tuned T): 73.8 at q = 0.02",
			fmt.Sprintf("--model resnet20 --batch 1024 --epochs %g --lr 1 --momentum 0.9 --clip-norm 1 --epsilon 8", resnetEpochs),
			resnet},
		{"resnet20-twice", "ResNet-20-GN, twice sampling (q1 = 2048/50000, q2 = 1/2) + hybrid clipping (d0 = 100), ε = 8, the baseline's steps", "paper 003 Table 1 row (0.04, 1/2): 77.2",
			fmt.Sprintf("--model resnet20 --sampler twice --q2 0.5 --clip hybrid --d0 100 --batch 2048 --steps <as resnet20-dpsgd> --lr 1 --momentum 0.9 --clip-norm 1 --epsilon 8"),
			func(c *trainer.Config) {
				resnet(c)
				c.Sampler, c.Q2, c.Clip, c.D0, c.BatchSize = "twice", 0.5, "hybrid", 100, 2048
				c.Steps = int(resnetEpochs*50000/1024 + 0.999) // the baseline's steps
			}},
	}
}

func main() {
	data := flag.String("data", "../cifar10", "imported CIFAR-10 directory (dptrain data import)")
	out := flag.String("out", "results/cifar10", "results directory")
	only := flag.String("run", "", "comma-separated run names (default: all)")
	collate := flag.Bool("collate", false, "only rebuild the results table from the summaries present")
	resnetEpochs := flag.Float64("resnet-epochs", 5, "epochs of the ResNet-20 runs (the committed results: 5)")
	flag.Parse()
	if err := run(*data, *out, *only, *collate, *resnetEpochs); err != nil {
		fmt.Fprintln(os.Stderr, "cifarruns:", err)
		os.Exit(1)
	}
}

func run(data, out, only string, collateOnly bool, resnetEpochs float64) error {
	specs := runs(data, resnetEpochs)
	if !collateOnly {
		want := map[string]bool{}
		for _, n := range strings.Split(only, ",") {
			if n = strings.TrimSpace(n); n != "" {
				want[n] = true
			}
		}
		for _, s := range specs {
			if len(want) > 0 && !want[s.name] {
				continue
			}
			c := trainer.Default()
			c.Seeded = true // reproducible (recorded results): noise and sampling from seed 1
			s.edit(&c)
			c.OutDir, c.CheckpointEvery = filepath.Join(out, s.name), 25
			fmt.Printf("== %s: %s\n", s.name, s.what)
			start := time.Now()
			sum, err := trainer.Run(context.Background(), c, trainer.Options{Progress: trainer.ProgressLines, Out: os.Stdout, Log: os.Stderr, Resume: true})
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			fmt.Printf("== %s: test accuracy %.4f, ε = %.4f (%s), %s\n", s.name, sum.TestAcc, sum.Best.Epsilon, sum.Best.Accountant, time.Since(start).Round(time.Second))
			// The model is large; the summary, metrics and plots are what
			// the results keep (a completed run removes its checkpoint).
			// The wall time is kept beside the released summary: these
			// runs are seeded (not private releases), recorded for papers.
			os.Remove(filepath.Join(c.OutDir, "release", "model.bin"))
			os.WriteFile(filepath.Join(c.OutDir, "wall_seconds.txt"), fmt.Appendf(nil, "%.0f\n", time.Since(start).Seconds()), 0o644)
		}
	}
	return collate(out, specs)
}

type summary struct {
	Steps   int                `json:"steps"`
	Sigma   float64            `json:"sigma"`
	Q       float64            `json:"q"`
	TestAcc float64            `json:"test_acc"`
	Seconds float64            `json:"seconds"`
	Epsilon map[string]float64 `json:"epsilon"`
	Best    struct {
		Accountant string
		Epsilon    float64
	} `json:"best"`
	Notes   []string `json:"notes"`
	Source  string   `json:"source"`
	TrainN  int      `json:"train_n"`
	Samples int      `json:"samples"`
}

func collate(out string, specs []spec) error {
	var md strings.Builder
	md.WriteString("# CIFAR-10 runs (issue 12)\n\n")
	md.WriteString("Data: the CIFAR-10 JPEG re-encoding (luma quality ≈ 75) imported with `dptrain data import`; not byte-identical to the canonical CIFAR-10 binary release, so accuracies can differ slightly from published CIFAR-10 figures. δ = 1e-5; ε is RDP with the Balle et al. 2020 conversion (Tramèr & Boneh used the older, looser conversion, so at equal ε our runs get less noise). Machine: 2 cores, shared with other work while these ran.\n\n")
	// The epochs column is steps·q (expected passes over the training set),
	// read from the summary so the table describes what ran, not the flags.
	md.WriteString("| run | what | steps | epochs (steps·q) | σ | ε (accountant) | test acc (%) | reference (%) | wall time |\n|---|---|---|---|---|---|---|---|---|\n")
	var rows [][]string
	for _, s := range specs {
		// release/summary.json (runs since the release split) or the
		// older flat layout.
		b, err := os.ReadFile(filepath.Join(out, s.name, "release", "summary.json"))
		if err != nil {
			b, err = os.ReadFile(filepath.Join(out, s.name, "summary.json"))
		}
		if err != nil {
			md.WriteString(fmt.Sprintf("| %s | %s | – | – | – | – | not run yet | %s | – |\n", s.name, s.what, s.reference))
			continue
		}
		var sm summary
		if err := json.Unmarshal(b, &sm); err != nil {
			return fmt.Errorf("%s summary: %w", s.name, err)
		}
		if w, err := os.ReadFile(filepath.Join(out, s.name, "wall_seconds.txt")); err == nil {
			fmt.Sscan(string(w), &sm.Seconds)
		}
		md.WriteString(fmt.Sprintf("| %s | %s | %d | %.1f | %.4f | %.4f (%s) | %.2f | %s | %s |\n", s.name, s.what, sm.Steps, float64(sm.Steps)*sm.Q, sm.Sigma, sm.Best.Epsilon, sm.Best.Accountant, 100*sm.TestAcc, s.reference, (time.Duration(sm.Seconds) * time.Second).String()))
		rows = append(rows, []string{s.name, fmt.Sprint(sm.Steps), fmt.Sprintf("%.6f", sm.Sigma), fmt.Sprintf("%.6f", sm.Best.Epsilon), sm.Best.Accountant, fmt.Sprintf("%.4f", sm.TestAcc), fmt.Sprintf("%.0f", sm.Seconds)})
	}
	md.WriteString("\nCommands (`dptrain train --dataset cifar10 --data DIR` plus):\n\n")
	for _, s := range specs {
		md.WriteString(fmt.Sprintf("- %s: `%s`\n", s.name, s.args))
	}
	md.WriteString("\nReproduce: `scripts/cifar10_runs.sh [--run NAME] [--data DIR]` (ScatterNet features are cached in the user cache directory after the first run, ≈ 5 min on 2 cores).\n")
	md.WriteString("\nscat-logreg's settings are the best of the sweep in `scat-logreg-sweep.md`: every setting tried lands in 64.1–65.0%, short of the 65% target; the likely cause (the JPEG re-encoding) is discussed there. twice + hybrid used the baseline's lr, untuned for it, and its test accuracy swings (7.7% at step 50) where DP-SGD's climbs steadily: the comparison is not a verdict on twice sampling.\n")
	if err := repro.WriteCSV(filepath.Join(out, "cifar10.csv"), []string{"run", "steps", "sigma", "epsilon", "accountant", "test_acc", "seconds"}, rows); err != nil {
		return err
	}
	return repro.WriteFile(filepath.Join(out, "cifar10.md"), md.String())
}
