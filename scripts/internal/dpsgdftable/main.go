// Command dpsgdftable reproduces paper 001's Table 1 (DPSGD-F, feature
// preprocessing for DP linear optimisation) on a reduced grid: logistic
// regression on Fashion-MNIST (and MNIST when present) with DP-SGD on
// normalised pixels against DPSGD-F (private centring, Algorithm 3), at
// ε ∈ {1, 2}, δ = 1e-5, plus a non-private SGD baseline.
//
// Reduced grid (the paper's is 1,400 configurations per cell, ×5 for ε_F):
// C_F ∈ {1, 10, 100}, lr ∈ {0.5, 2, 8}, batch 4096, 40 epochs, C_G = 1,
// ε_F = 0.02, one run per configuration (the paper averages 10). Our ε is
// RDP with the Balle et al. conversion; the paper used a PLD accountant, which
// is tighter, so our runs get slightly more noise for the same ε. As in the
// paper, the grid search itself is not accounted.
//
// --quick trains on the embedded Fashion-MNIST subset with one configuration
// per cell (minutes become seconds); it checks the pipeline, not the paper.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/scripts/internal/repro"
	"github.com/dptrain/dptrain/trainer"
)

// paper holds Table 1's accuracies (%): [dataset][column].
var paper = map[string]map[string]float64{
	"mnist":         {"DPSGD ε=1": 87.4, "DPSGD-F ε=1": 92.0, "DPSGD ε=2": 89.6, "DPSGD-F ε=2": 92.3, "SGD": 92.9},
	"fashion-mnist": {"DPSGD ε=1": 77.2, "DPSGD-F ε=1": 84.0, "DPSGD ε=2": 78.7, "DPSGD-F ε=2": 84.5, "SGD": 85.0},
}

var columns = []string{"DPSGD ε=1", "DPSGD-F ε=1", "DPSGD ε=2", "DPSGD-F ε=2", "SGD"}

type result struct {
	dataset, column string
	cf, lr, eps     float64
	acc             float64
	epsReported     float64
}

func main() {
	quick := flag.Bool("quick", false, "embedded subset, one configuration per cell")
	out := flag.String("out", "results/dpsgdf_table1", "output directory")
	data := flag.String("data", "", "data directory (else $DPTRAIN_DATA, /usr/share/datasets)")
	flag.Parse()
	if err := run(*quick, *out, *data); err != nil {
		fmt.Fprintln(os.Stderr, "dpsgdftable:", err)
		os.Exit(1)
	}
}

func run(quick bool, out, data string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	sets := []string{"fashion-mnist", "mnist"}
	cfs, lrs := []float64{1, 10, 100}, []float64{0.5, 2, 8}
	epochs := 40.0
	if quick {
		sets, cfs, lrs, epochs = []string{"embedded"}, []float64{10}, []float64{2}, 10
	}
	var results []result
	var skipped []string
	for _, ds := range sets {
		if ds != "embedded" {
			if _, _, err := datasets.Load(ds, datasets.Options{Dir: data, NoEmbedded: true}); err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %v", ds, err))
				continue
			}
		}
		for _, eps := range []float64{1, 2} {
			for _, f := range []bool{false, true} {
				for _, cf := range cfs {
					for _, lr := range lrs {
						r, err := train(ds, data, eps, f, cf, lr, epochs, quick)
						if err != nil {
							fmt.Fprintf(os.Stderr, "  %s ε=%g dpsgdf=%v C_F=%g lr=%g: %v\n", ds, eps, f, cf, lr, err)
							continue
						}
						results = append(results, r)
						fmt.Printf("%-14s %-12s C_F=%-4g lr=%-4g acc %.4f (ε %.4f)\n", ds, r.column, cf, lr, r.acc, r.epsReported)
					}
				}
			}
		}
		// Non-private SGD baseline on the same grid: normalised features, no
		// clipping or noise worth the name (σ = 1e-9, C = 1e6); its ε is
		// meaningless. Momentum 0.9: plain SGD is still far from converged
		// after 40 epochs of batch 4096 without the normalising effect of
		// clipping (81.1% at best), and the column is the non-private
		// reference, not a like-for-like optimizer.
		for _, cf := range cfs {
			for _, lr := range lrs {
				r, err := trainNonPrivate(ds, data, cf, lr, epochs)
				if err != nil {
					fmt.Fprintf(os.Stderr, "  %s SGD C_F=%g lr=%g: %v\n", ds, cf, lr, err)
					continue
				}
				results = append(results, r)
				fmt.Printf("%-14s %-12s C_F=%-4g lr=%-4g acc %.4f\n", ds, r.column, cf, lr, r.acc)
			}
		}
	}
	return write(out, results, skipped, quick)
}

func base(ds, data string, epochs float64) trainer.Config {
	c := trainer.Default()
	c.Seeded = true // reproducible (recorded results): noise and sampling from seed 1
	c.Dataset, c.DataDir, c.Model = trainer.Dataset(ds), data, trainer.ModelLogReg
	c.BatchSize, c.Epochs, c.ClipNorm, c.Delta = 4096, epochs, 1, 1e-5
	c.Optimizer, c.Momentum = trainer.OptimizerSGD, 0
	c.EvalEvery, c.CheckpointEvery, c.Plots, c.OutDir = 0, 0, false, ""
	if ds == "embedded" {
		c.BatchSize = 512
	}
	return c
}

func train(ds, data string, eps float64, dpsgdf bool, cf, lr, epochs float64, quick bool) (result, error) {
	c := base(ds, data, epochs)
	c.Epsilon, c.Sigma, c.LR, c.FeatureCF = eps, 0, lr, cf
	col := fmt.Sprintf("DPSGD ε=%g", eps)
	if dpsgdf {
		c.DPSGDF, c.FeatureEps = true, 0.02
		col = fmt.Sprintf("DPSGD-F ε=%g", eps)
	}
	s, err := trainer.Run(context.Background(), c, trainer.Options{})
	if err != nil {
		return result{}, err
	}
	return result{dataset: name(ds), column: col, cf: cf, lr: lr, eps: eps, acc: s.TestAcc, epsReported: s.Best.Epsilon}, nil
}

func trainNonPrivate(ds, data string, cf, lr, epochs float64) (result, error) {
	c := base(ds, data, epochs)
	c.Epsilon, c.Sigma, c.ClipNorm, c.LR, c.FeatureCF = 0, 1e-9, 1e6, lr, cf
	c.Optimizer, c.Momentum = trainer.OptimizerMomentum, 0.9
	s, err := trainer.Run(context.Background(), c, trainer.Options{})
	if err != nil {
		return result{}, err
	}
	return result{dataset: name(ds), column: "SGD", cf: cf, lr: lr, acc: s.TestAcc}, nil
}

func name(ds string) string {
	if ds == "embedded" {
		return "fashion-mnist"
	}
	return ds
}

func write(out string, results []result, skipped []string, quick bool) error {
	rows := make([][]string, 0, len(results))
	for _, r := range results {
		rows = append(rows, []string{r.dataset, r.column, repro.G(r.cf, 4), repro.G(r.lr, 4), fmt.Sprintf("%.4f", r.acc), fmt.Sprintf("%.4f", r.epsReported)})
	}
	if err := repro.WriteCSV(filepath.Join(out, "runs.csv"), []string{"dataset", "algorithm", "feature_clip", "lr", "test_acc", "epsilon"}, rows); err != nil {
		return err
	}
	best := map[string]map[string]result{}
	for _, r := range results {
		if best[r.dataset] == nil {
			best[r.dataset] = map[string]result{}
		}
		if b, ok := best[r.dataset][r.column]; !ok || r.acc > b.acc {
			best[r.dataset][r.column] = r
		}
	}
	var md strings.Builder
	md.WriteString("# Paper 001, Table 1: DP-SGD vs DPSGD-F, logistic regression, δ = 1e-5\n\n")
	if quick {
		md.WriteString("**--quick run** on the embedded 5,000-image Fashion-MNIST subset with one configuration per cell: a smoke test, not the paper's setting.\n\n")
	} else {
		md.WriteString("Reduced grid: C_F ∈ {1, 10, 100}, lr ∈ {0.5, 2, 8}, batch 4096, 40 epochs, C_G = 1, ε_F = 0.02 (DPSGD-F's private mean, inside the total ε), one run per configuration; best test accuracy per cell; the DP columns use plain SGD (the paper's), the non-private SGD column momentum 0.9. The paper searched 1,400 configurations per cell (×5 for ε_F) and averaged 10 runs; it used a PLD accountant, we use RDP (Balle et al. conversion), which is looser, so our runs carry slightly more noise at the same ε.\n\n")
	}
	md.WriteString("| dataset | column | ours (%) | paper (%) | difference | best setting |\n|---|---|---|---|---|---|\n")
	sets := make([]string, 0, len(best))
	for ds := range best {
		sets = append(sets, ds)
	}
	sort.Strings(sets)
	for _, ds := range sets {
		for _, col := range columns {
			b, ok := best[ds][col]
			if !ok {
				continue
			}
			setting := fmt.Sprintf("C_F=%s, lr=%s", repro.G(b.cf, 4), repro.G(b.lr, 4))
			md.WriteString(fmt.Sprintf("| %s | %s | %.1f | %.1f | %s | %s |\n", ds, col, 100*b.acc, paper[ds][col], repro.Diff(100*b.acc, paper[ds][col]), setting))
		}
	}
	for _, s := range skipped {
		md.WriteString(fmt.Sprintf("\nSkipped %s\n", s))
	}
	if err := repro.WriteFile(filepath.Join(out, "dpsgdf_table1.md"), md.String()); err != nil {
		return err
	}
	return plotAcc(out, results)
}

// plotAcc draws test accuracy against lr per (algorithm, ε) at the best C_F.
func plotAcc(out string, results []result) error {
	p := plot.New()
	p.Title.Text = "Paper 001 Table 1 (reduced grid): test accuracy vs learning rate, best C_F"
	p.X.Label.Text = "learning rate"
	p.Y.Label.Text = "test accuracy"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{}
	i := 0
	for _, col := range columns {
		byLR := map[float64]float64{}
		for _, r := range results {
			if r.column == col && r.acc > byLR[r.lr] {
				byLR[r.lr] = r.acc
			}
		}
		if len(byLR) == 0 {
			continue
		}
		var xs, ys []float64
		for lr := range byLR {
			xs = append(xs, lr)
		}
		sort.Float64s(xs)
		for _, x := range xs {
			ys = append(ys, byLR[x])
		}
		if err := repro.AddLine(p, col, xs, ys, i, col == "SGD"); err != nil {
			return err
		}
		i++
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	return repro.SavePlot(p, 7, 4.5, filepath.Join(out, "dpsgdf_table1"))
}
