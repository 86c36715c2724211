// Command twicenoise regenerates the noise-variance ratios of paper 003's
// Table 1 (Xiao, Wan & Devadas, twice sampling;
// docs/twice-sampling.md#paper-tables) from the accountant alone:
// for every (q1, q2) row and every (ε, T) column it calibrates the noise
// multiplier of (q1, q2)-twice sampling with c∞ = 0.1·c2 (d0 = 100) and of
// plain DP-SGD at q = q1·q2, both with the paper's Lemma 2.3 conversion over
// integer orders 2..64 at δ = 1e-5, and reports z_twice²/z_base². It also
// evaluates the Section 6 hybrid-clipping example (Theorem 4.6, "5.5×") and
// its twice-sampled version (docs/twice-sampling.md#test-vectors), the
// magnitude check for Table 2, whose own ratios need private gradient
// statistics.
//
// Run it through scripts/twice_noise.sh.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/scripts/internal/repro"
)

func main() {
	quick := flag.Bool("quick", false, "skip the tighter-conversion column and the numerical problem (9) optimiser")
	out := flag.String("out", "results/twice_noise", "output directory")
	flag.Parse()
	if _, err := run(*quick, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "twicenoise:", err)
		os.Exit(1)
	}
}

const (
	delta    = 1e-5
	alphaMax = 64
	d0       = 100 // (c2/c∞)², c∞ = 0.1·c2 (paper §6)
)

// budgets are Table 1's columns: ε and the number of steps the paper ran.
var budgets = []struct {
	eps float64
	T   int
}{{2, 1500}, {2.5, 2000}, {4, 2500}, {8, 5000}}

// rows are the (q1, q2) settings: the four of Table 1 and the two that only
// Table 2 reports (whose baseline q = 0.04 Table 1 never shows).
type row struct {
	q1, q2 float64
	label  string
	paper  [4]float64 // Table 1's bracket (%); 0 = not in Table 1
	svhn   [4]float64 // Table 3's bracket (SVHN), the same quantity
}

var rows = []row{
	{0.12, 1.0 / 3, "(0.12, 1/3)", [4]float64{}, [4]float64{}},
	{0.08, 0.5, "(0.08, 1/2)", [4]float64{}, [4]float64{}},
	{0.06, 1.0 / 3, "(0.06, 1/3)", [4]float64{86.2, 85.4, 82.2, 70.8}, [4]float64{89.0, 85.4, 82.2, 70.8}},
	{0.04, 0.5, "(0.04, 1/2)", [4]float64{89.4, 88.2, 77.4, 75.1}, [4]float64{89.4, 88.2, 77.4, 75.1}},
	{0.03, 1.0 / 3, "(0.03, 1/3)", [4]float64{67.4, 65.9, 53.2, 43.3}, [4]float64{67.4, 65.9, 53.2, 43.3}},
	{0.02, 0.5, "(0.02, 1/2)", [4]float64{72.8, 71.6, 61.0, 53.5}, [4]float64{72.8, 71.6, 61.0, 50.4}},
}

type cell struct {
	zTwice, zBase, ratio float64 // Lemma 2.3 (the paper's conversion)
	baseOrder            float64
	ratioBalle           float64 // Balle et al. 2020 conversion; NaN in --quick
}

type hybrid struct {
	q1, q2           float64
	T                int
	eps              float64
	zBase            float64
	twiceOnly        float64 // isotropic twice sampling ratio
	sigma            []float64
	ratio            float64
	optSigma         []float64 // problem (9) numerical optimum; nil in --quick
	optRatio         float64
	paperMagnitudeLo float64
}

type result struct {
	cells      map[[2]int]cell // (row, budget)
	isoOverHyb float64
	normSigma  []float64
	hybrids    []hybrid
}

func calib(q1, q2, d0 float64, T int, eps float64, conv accountant.TwiceConversion) (float64, error) {
	return accountant.Calibrate(accountant.TwiceCalibration(func(s float64) accountant.TwiceSampled { return accountant.NewTwiceSampled(q1, q2, s, d0) },
		T, delta, alphaMax, conv), eps, accountant.WithTolerance(accountant.ExactTolerance))
}

func run(quick bool, out string, log io.Writer) (*result, error) {
	res := &result{cells: map[[2]int]cell{}}
	var csvRows [][]string
	for i, r := range rows {
		q := math.Round(r.q1*r.q2*1e6) / 1e6
		for j, b := range budgets {
			zt, err := calib(r.q1, r.q2, d0, b.T, b.eps, accountant.TwiceMironov)
			if err != nil {
				return nil, fmt.Errorf("%s ε=%g: %w", r.label, b.eps, err)
			}
			zb, err := calib(q, 1, 1, b.T, b.eps, accountant.TwiceMironov)
			if err != nil {
				return nil, fmt.Errorf("baseline q=%g ε=%g: %w", q, b.eps, err)
			}
			_, ord, err := accountant.TwiceEpsilon(accountant.NewTwiceSampled(q, 1, zb, 1), b.T, delta, alphaMax, accountant.TwiceMironov)
			if err != nil {
				return nil, err
			}
			c := cell{zTwice: zt, zBase: zb, ratio: 100 * zt * zt / (zb * zb), baseOrder: ord, ratioBalle: math.NaN()}
			if !quick {
				ztB, err := calib(r.q1, r.q2, d0, b.T, b.eps, accountant.TwiceBalle)
				if err != nil {
					return nil, err
				}
				zbB, err := calib(q, 1, 1, b.T, b.eps, accountant.TwiceBalle)
				if err != nil {
					return nil, err
				}
				c.ratioBalle = 100 * ztB * ztB / (zbB * zbB)
			}
			res.cells[[2]int{i, j}] = c
			csvRows = append(csvRows, []string{fmt.Sprint(r.q1), repro.G(r.q2, 6), repro.G(q, 6), repro.G(b.eps, 3), fmt.Sprint(b.T),
				repro.G(zt, 8), repro.G(zb, 8), repro.G(ord, 3), repro.G(c.ratio, 6), paperCell(r.paper[j]), paperCell(r.svhn[j]), repro.G(c.ratioBalle, 6)})
		}
		fmt.Fprintf(log, "row %s done\n", r.label)
	}
	if err := repro.WriteCSV(filepath.Join(out, "table1_noise_ratios.csv"),
		[]string{"q1", "q2", "q_baseline", "epsilon", "T", "z_twice", "z_baseline", "baseline_order", "ratio_pct", "paper_table1_pct", "paper_table3_pct", "ratio_pct_balle_conversion"}, csvRows); err != nil {
		return nil, err
	}
	if err := hybridExample(quick, res); err != nil {
		return nil, err
	}
	if err := plotRatios(res, filepath.Join(out, "table1_noise_ratios")); err != nil {
		return nil, err
	}
	md := markdown(res, quick)
	if err := repro.WriteFile(filepath.Join(out, "twice_noise.md"), md); err != nil {
		return nil, err
	}
	fmt.Fprint(log, md)
	fmt.Fprintf(log, "wrote %s\n", out)
	return res, nil
}

func paperCell(v float64) string {
	if v == 0 {
		return ""
	}
	return repro.G(v, 4)
}

// hybridExample is §7.5(a, b): the Section 6 blocks (d = 291,898, a
// 1000-dimensional principal block with c2 = 2.5 and the residual with
// c2 = 1), pure Gaussian (Theorem 4.6) and with twice sampling.
func hybridExample(quick bool, res *result) error {
	blocks := []accountant.Block{{Dim: 1000, C2: 2.5, D0: d0}, {Dim: 290898, C2: 1, D0: d0}}
	var err error
	if res.isoOverHyb, err = accountant.IsotropicOverHybrid(blocks); err != nil {
		return err
	}
	sig, err := accountant.OptimalNoise(blocks, 1)
	if err != nil {
		return err
	}
	total := accountant.NoiseTotalVariance(blocks, sig)
	for _, s := range sig {
		res.normSigma = append(res.normSigma, s/math.Sqrt(total)) // Σ r_j σ_j² = 1
	}
	d := 291898.0
	c := math.Sqrt(2.5*2.5 + 1) // isotropic baseline clips to the enclosing L2 ball
	for _, h := range []struct {
		q1, q2 float64
		T      int
		eps    float64
	}{{0.04, 0.5, 5000, 8}, {0.06, 1.0 / 3, 1500, 2}} {
		q := math.Round(h.q1*h.q2*1e6) / 1e6
		zb, err := calib(q, 1, 1, h.T, h.eps, accountant.TwiceMironov)
		if err != nil {
			return err
		}
		zt, err := calib(h.q1, h.q2, d0, h.T, h.eps, accountant.TwiceMironov)
		if err != nil {
			return err
		}
		p := accountant.HybridProblem{Q1: h.q1, Q2: h.q2, Blocks: blocks, Steps: h.T, Epsilon: h.eps, Delta: delta, AlphaMax: alphaMax, Conversion: accountant.TwiceMironov}
		s, tot, err := accountant.CalibrateHybridNoise(p)
		if err != nil {
			return err
		}
		base := d * (zb * c) * (zb * c)
		hy := hybrid{q1: h.q1, q2: h.q2, T: h.T, eps: h.eps, zBase: zb, twiceOnly: zt * zt / (zb * zb), sigma: s, ratio: tot / base}
		if !quick {
			os, otot, err := accountant.OptimizeHybridNoise(p)
			if err != nil {
				return err
			}
			hy.optSigma, hy.optRatio = os, otot/base
		}
		res.hybrids = append(res.hybrids, hy)
	}
	return nil
}

func plotRatios(res *result, base string) error {
	p := plot.New()
	p.Title.Text = "Paper 003 Table 1: noise variance of twice sampling / plain DP-SGD (delta=1e-5, d0=100)"
	p.X.Label.Text, p.Y.Label.Text = "epsilon (T = 1500, 2000, 2500, 5000)", "noise variance ratio (%)"
	xs := make([]float64, len(budgets))
	for j, b := range budgets {
		xs[j] = b.eps
	}
	for i, r := range rows {
		ys := make([]float64, len(budgets))
		for j := range budgets {
			ys[j] = res.cells[[2]int{i, j}].ratio
		}
		if err := repro.AddLine(p, "ours "+r.label, xs, ys, i, false); err != nil {
			return err
		}
		if r.paper[0] != 0 {
			if err := repro.AddLine(p, "paper "+r.label, xs, r.paper[:], i, true); err != nil {
				return err
			}
		}
	}
	p.Y.Min, p.Y.Max = 30, 100
	p.Legend.Left = true
	p.Legend.Top = false
	return repro.SavePlot(p, 8, 6, base)
}

// Spec §6.6's recomputation (python3 reference accountant), the goldens.
var specRatio = [][4]float64{
	{95.4, 95.1, 92.3, 89.1},
	{96.3, 96.0, 93.7, 91.0},
	{86.8, 86.0, 78.4, 71.0},
	{89.2, 88.5, 82.1, 76.0},
	{67.4, 65.7, 53.5, 45.8},
	{73.1, 71.6, 61.5, 55.4},
}

func markdown(res *result, quick bool) string {
	var b strings.Builder
	q := ""
	if quick {
		q = " (--quick: no tighter-conversion column, no numerical problem (9) optimum)"
	}
	fmt.Fprintf(&b, "# Paper 003 Table 1: noise-variance ratios of twice sampling%s\n\n", q)
	fmt.Fprintf(&b, "Ratio = E‖e‖² of (q1, q2)-twice sampling with c∞ = 0.1·c2 (d0 = 100) over that of plain DP-SGD at q = q1·q2, each noise multiplier calibrated to (ε, δ = 1e-5) after T steps with the paper's conversion (Lemma 2.3, integer orders 2..64), as docs/twice-sampling.md#paper-tables. The ratio does not depend on the dataset, so Table 3 (SVHN) should repeat Table 1.\n\n")
	fmt.Fprintf(&b, "| (q1, q2) | ε (T) | z twice | z baseline (α*) | ratio, ours | paper Table 1 | difference | reference | Table 3 (SVHN) |")
	if !quick {
		fmt.Fprintf(&b, " ours, Balle et al. conversion |")
	}
	fmt.Fprintf(&b, "\n|---|---|---|---|---|---|---|---|---|")
	if !quick {
		fmt.Fprintf(&b, "---|")
	}
	fmt.Fprintln(&b)
	for i, r := range rows {
		for j, bu := range budgets {
			c := res.cells[[2]int{i, j}]
			paper, diff, svhn := "—", "", "—"
			if r.paper[j] != 0 {
				paper = fmt.Sprintf("%.1f", r.paper[j])
				diff = fmt.Sprintf("%+.1f", c.ratio-r.paper[j])
				if swapped(i, j) {
					paper += " ‡"
				}
				svhn = fmt.Sprintf("%.1f", r.svhn[j])
				if r.svhn[j] != r.paper[j] {
					svhn += " †"
				}
			}
			fmt.Fprintf(&b, "| %s | %g (%d) | %.5f | %.5f (%g) | %.1f | %s | %s | %.1f | %s |", r.label, bu.eps, bu.T, c.zTwice, c.zBase, c.baseOrder, c.ratio, paper, diff, specRatio[i][j], svhn)
			if !quick {
				fmt.Fprintf(&b, " %.1f |", c.ratioBalle)
			}
			fmt.Fprintln(&b)
		}
	}
	c06, c04 := res.cells[[2]int{2, 2}], res.cells[[2]int{3, 2}]
	fmt.Fprintf(&b, "\n‡ **Swapped cells** (docs/twice-sampling.md#paper-tables): at ε = 4 the paper's 82.2 (row (0.06, 1/3)) and 77.4 (row (0.04, 1/2)) are exchanged. Ours are %.1f and %.1f; against the other row's cell the differences are %+.1f and %+.1f, in line with every other ε ≤ 4 cell, while the printed order gives %+.1f and %+.1f. A row with q2 = 1/3 always gains more than its q2 = 1/2 neighbour at the same q1·q2 in every other column, so the printed order is the anomaly. Table 3 copies the swap, which suggests one table was derived from the other.\n\n",
		c06.ratio, c04.ratio, c06.ratio-77.4, c04.ratio-82.2, c06.ratio-82.2, c04.ratio-77.4)
	fmt.Fprintf(&b, "† Table 3's 89.0 and 50.4 differ from Table 1's 86.2 and 53.5 although the ratio is dataset-independent for the same (q1, q2, T, ε, δ, d0); ours are %.1f and %.1f, so these two Table 3 cells are likely typos.\n\n", res.cells[[2]int{2, 0}].ratio, res.cells[[2]int{5, 3}].ratio)
	fmt.Fprintf(&b, "Agreement: within %.1f points at ε ≤ 4 outside the swapped cells; at ε = 8 ours are %.1f–%.1f points higher (an independent python accountant finds the same residual; it is not the conversion, since the tighter conversion lowers the ratios — see its column).\n\n",
		maxAbsDiff(res, func(j int) bool { return j < 3 }), minDiff(res, 3), maxDiff(res, 3))

	fmt.Fprintf(&b, "## Section 6 hybrid-clipping example and Table 2's magnitude\n\n")
	fmt.Fprintf(&b, "Blocks: r = (1000, 290,898), c2 = (2.5, 1), d = 291,898. The isotropic baseline clips to the enclosing L2 ball of radius %.6f.\n\n", math.Sqrt(2.5*2.5+1))
	fmt.Fprintf(&b, "| quantity | ours | paper | reference | difference (vs reference) |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| isotropic / hybrid total variance (Thm 4.6) | %.9f | \"5.5×\" | 5.533768214 | %s |\n", res.isoOverHyb, repro.Diff(res.isoOverHyb, 5.533768214))
	fmt.Fprintf(&b, "| normalised σ_1 (Σ r_jσ_j² = 1) | %.7f | — | 0.0113066 | %s |\n", res.normSigma[0], repro.Diff(res.normSigma[0], 0.0113066))
	fmt.Fprintf(&b, "| normalised σ_2 | %.7f | — | 0.0017315 | %s |\n", res.normSigma[1], repro.Diff(res.normSigma[1], 0.0017315))
	spec := []struct{ zb, twice, ratio float64 }{{1.206618, 0.7596, 0.1371}, {2.113607, 0.8683, 0.1569}}
	for k, h := range res.hybrids {
		fmt.Fprintf(&b, "| (q1, q2) = (%g, %.3g), T=%d, ε=%g: z baseline (q = q1q2, c = 2.69) | %.6f | — | %.6f | %s |\n", h.q1, h.q2, h.T, h.eps, h.zBase, spec[k].zb, repro.Diff(h.zBase, spec[k].zb))
		fmt.Fprintf(&b, "| … twice sampling alone (isotropic), variance ratio | %.4f | — | %.4f | %s |\n", h.twiceOnly, spec[k].twice, repro.Diff(h.twiceOnly, spec[k].twice))
		fmt.Fprintf(&b, "| … hybrid + twice, Thm 4.6 ratio σ = (%.4f, %.4f), variance ratio | %.4f | Table 2: 10–28%% | %.4f | %s |\n", h.sigma[0], h.sigma[1], h.ratio, spec[k].ratio, repro.Diff(h.ratio, spec[k].ratio))
		if h.optSigma != nil {
			fmt.Fprintf(&b, "| … hybrid + twice, problem (9) optimum σ = (%.4f, %.4f), variance ratio | %.4f | — | %.4f | %s |\n", h.optSigma[0], h.optSigma[1], h.optRatio, spec[k].ratio, repro.Diff(h.optRatio, spec[k].ratio))
		}
	}
	fmt.Fprintf(&b, "\nTable 2/4's own ratios depend on the per-subspace clip norms c_2j fitted to private-gradient statistics with 2,000 public ImageNet images, which the paper does not give; they cannot be regenerated from the accountant. The synthetic check above has the same magnitude (13.7–15.7%% vs 10–28%%).\n")
	return b.String()
}

// swapped marks the two ε = 4 cells the paper swapped.
func swapped(i, j int) bool { return j == 2 && (i == 2 || i == 3) }

func maxAbsDiff(res *result, col func(int) bool) float64 {
	m := 0.0
	for i, r := range rows {
		for j := range budgets {
			if r.paper[j] == 0 || !col(j) || swapped(i, j) {
				continue
			}
			m = math.Max(m, math.Abs(res.cells[[2]int{i, j}].ratio-r.paper[j]))
		}
	}
	return m
}

func minDiff(res *result, j int) float64 {
	m := math.Inf(1)
	for i, r := range rows {
		if r.paper[j] != 0 {
			m = math.Min(m, res.cells[[2]int{i, j}].ratio-r.paper[j])
		}
	}
	return m
}

func maxDiff(res *result, j int) float64 {
	m := math.Inf(-1)
	for i, r := range rows {
		if r.paper[j] != 0 {
			m = math.Max(m, res.cells[[2]int{i, j}].ratio-r.paper[j])
		}
	}
	return m
}
