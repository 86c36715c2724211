package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/dptrain/dptrain/scripts/internal/repro"
)

func writeFile(path, text string) error { return repro.WriteFile(path, text) }

// paperTable4 is the paper's Table 4 (docs/srdp.md#paper-figures): ε → values
// for Clip 0.1R, 0.7R, 0.99R and the unclipped pre-processed pipeline. The
// caption says excess empirical loss; the values look like accuracies.
var paperTable4 = map[float64][4]float64{
	1: {0.84, 0.89, 0.88, 0.89},
	2: {0.84, 0.89, 0.89, 0.89},
	5: {0.85, 0.90, 0.90, 0.90},
}

func clipIndex(c float64) int {
	switch c {
	case 0.1:
		return 0
	case 0.7:
		return 1
	case 0.99:
		return 2
	}
	return 3
}

func clipName(c float64) string {
	if c >= 1 {
		return "no clipping (pre-processed pipeline)"
	}
	return fmt.Sprintf("clip %gR", c)
}

func write(res *result) error {
	out := res.cfg.out
	g := func(v float64) string { return repro.G(v, 8) }
	var rows [][]string
	for _, r := range res.records {
		fig := "fig3"
		if r.method == "table4" {
			fig = "table4"
		}
		rows = append(rows, []string{fig, g(r.eps), r.method, g(r.clip), fmt.Sprint(r.free), fmt.Sprint(r.seed), g(r.lr), g(r.z), g(r.excess), g(r.acc), g(r.pcaCapture)})
	}
	if err := repro.WriteCSV(filepath.Join(out, "runs.csv"), []string{"result", "epsilon", "method", "data_clip", "pca_cost_ignored", "seed", "lr", "noise_multiplier", "excess_loss", "accuracy", "dppca_captured_energy"}, rows); err != nil {
		return err
	}
	rows = nil
	for _, s := range res.fig3 {
		rows = append(rows, []string{g(s.eps), s.method, g(s.lr), g(s.z), g(s.zPCA), g(s.epsCheck), g(s.mean), g(s.sd), g(s.accMean), g(s.accSD), fmt.Sprint(len(s.excess))})
	}
	if err := repro.WriteCSV(filepath.Join(out, "fig3.csv"), []string{"epsilon", "method", "selected_lr", "noise_multiplier", "noise_multiplier_pca", "epsilon_recomputed", "excess_loss_mean", "excess_loss_sd", "accuracy_mean", "accuracy_sd", "seeds"}, rows); err != nil {
		return err
	}
	rows = nil
	for _, s := range res.table4 {
		p := math.NaN()
		if v, ok := paperTable4[s.eps]; ok {
			p = v[clipIndex(s.clip)]
		}
		rows = append(rows, []string{g(s.eps), g(s.clip), fmt.Sprint(s.free), g(s.lr), g(s.z), g(s.epsCheck), g(s.accMean), g(s.accSD), g(p), g(s.accMean - p), g(s.mean), g(s.sd)})
	}
	if err := repro.WriteCSV(filepath.Join(out, "table4.csv"), []string{"epsilon", "data_clip_over_R", "pca_cost_ignored", "selected_lr", "noise_multiplier", "epsilon_recomputed", "accuracy_mean", "accuracy_sd", "paper", "difference", "excess_loss_mean", "excess_loss_sd"}, rows); err != nil {
		return err
	}
	return plotFig3(res)
}

type errPts struct{ x, y, e []float64 }

func (p errPts) Len() int                        { return len(p.x) }
func (p errPts) XY(i int) (float64, float64)     { return p.x[i], p.y[i] }
func (p errPts) YError(i int) (float64, float64) { return p.e[i], p.e[i] }

func plotFig3(res *result) error {
	p := plot.New()
	p.Title.Text = "Fig. 3: excess empirical loss of private logistic regression"
	p.X.Label.Text = "overall privacy epsilon (delta = " + fmt.Sprint(res.cfg.delta) + ")"
	p.Y.Label.Text = "excess empirical logistic loss (mean +- sd over seeds)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(func() []plot.Tick {
		var t []plot.Tick
		for _, e := range res.cfg.eps {
			t = append(t, plot.Tick{Value: e, Label: fmt.Sprint(e)})
		}
		return t
	}())
	top := 0.0
	for i, m := range methods {
		var pts errPts
		for _, s := range res.fig3 {
			if s.method == m {
				pts.x, pts.y, pts.e = append(pts.x, s.eps), append(pts.y, s.mean), append(pts.e, s.sd)
				top = math.Max(top, s.mean+s.sd)
			}
		}
		if err := repro.AddLine(p, m, pts.x, pts.y, i, m == mAFree); err != nil {
			return err
		}
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		eb.Color = repro.Palette[i%len(repro.Palette)]
		eb.LineStyle.Width = vg.Points(1)
		p.Add(eb)
	}
	zx := []float64{res.cfg.eps[0], res.cfg.eps[len(res.cfg.eps)-1]}
	if err := repro.AddLine(p, "theta = 0 (no training)", zx, []float64{res.zeroExcess, res.zeroExcess}, 6, true); err != nil {
		return err
	}
	top = math.Max(top, res.zeroExcess)
	p.Y.Min, p.Y.Max = 0, 1.6*top // room for the legend
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return repro.SavePlot(p, 8, 5.5, filepath.Join(res.cfg.out, "fig3"))
}

func f4(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.4f", v)
}

// short is a method's label, "(a)", "(b)", "(c)" or "(a′)".
func short(m string) string {
	if m == mAFree {
		return "(a′)"
	}
	return m[:3]
}

// order returns the methods (a), (b), (c) sorted by mean excess loss at eps.
func order(res *result, eps float64) (string, map[string]float64) {
	mean := map[string]float64{}
	for _, s := range res.fig3 {
		if s.eps == eps {
			mean[s.method] = s.mean
		}
	}
	ms := []string{mA, mB, mC}
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			if mean[ms[j]] < mean[ms[i]] {
				ms[i], ms[j] = ms[j], ms[i]
			}
		}
	}
	var parts []string
	for _, m := range ms {
		parts = append(parts, short(m))
	}
	return strings.Join(parts, " < "), mean
}

func markdown(res *result) string {
	c := res.cfg
	var b strings.Builder
	q := ""
	if c.quick {
		q = " (--quick: smaller data and grid, NOT the paper's setting)"
	}
	fmt.Fprintf(&b, "# Paper 000 (SRDP, non-private preprocessing): Figure 3 and Table 4%s\n\n", q)
	fmt.Fprintf(&b, "Private logistic regression on synthetic approximately-low-rank data (docs/srdp.md#paper-figures). Runtime %.0f s.\n\n", res.seconds)

	fmt.Fprintf(&b, "## Setting (everything the paper leaves open is a choice, stated here)\n\n")
	fmt.Fprintf(&b, "- **Data** (our reconstruction of sklearn `make_classification`, seed %d): n = %d, d = %d, 2 classes, one cluster per class at a random hypercube vertex (class_sep %g), %d informative Gaussian features with a random per-class covariance (sklearn's U(−1,1) matrix), flip_y %g; mixed into d dims by a random %d×%d U(−1,1) matrix; isotropic noise ν = %g; columns centred; every row divided by the largest row norm (so R = max‖x‖ = 1). The top %d eigenvalues of the 1/n covariance carry %.7f of the variance; λ_k = %.4g, λ_k+1 = %.4g (k = %d).\n",
		c.gen.Seed, res.n, res.d, c.gen.ClassSep, c.gen.Informative, c.gen.FlipY, c.gen.Informative, res.d, c.gen.Nu, c.gen.Informative, res.share, res.eig[c.k-1], res.eig[c.k], c.k)
	fmt.Fprintf(&b, "- **Privacy:** overall (ε, δ) with δ = %g (the paper does not say); add/remove-one neighbours throughout (Poisson-SGM RDP; Theorem 2's add/remove variant, docs/srdp.md#the-combination-rule).\n", c.delta)
	fmt.Fprintf(&b, "- **Private LR (all methods):** DP-SGD with Poisson sampling (expected batch %d, q = %g), %d epochs = %d steps, per-example clipping C = %g, noise N(0, z²C²) on the clipped sum divided by q·n, projection onto ‖θ‖ ≤ R_θ = %g after every step (needed for the data-smoothness μ of Theorem 2), last iterate, θ₀ = 0, no intercept (data centred). The paper's Opacus settings were lr 1e-2, max_grad_norm 10, 10 epochs. %s lr 1e-2 barely moves θ in %d steps on unit-norm data, so the learning rate is picked per method and ε from {%s} by the lowest mean excess loss over seeds (Table 4: highest mean accuracy) — tuning on S is not accounted, as in the paper.\n",
		c.train.Batch, float64(c.train.Batch)/float64(res.n), c.train.Epochs, c.train.run(res.n).Steps, c.train.Clip, c.train.RTheta, clipText(c.train.Clip), c.train.run(res.n).Steps, joinF(c.lrs))
	fmt.Fprintf(&b, "- **Metric:** ℓ̂_S(θ̂) − ℓ̂_S(θ*) on the original S, θ* = argmin over ‖θ‖ ≤ R_θ (the unconstrained optimum does not exist: n < d, S is separable). θ* by accelerated projected gradient (FISTA with restarts) in the row-space coordinates of S (X = U·diag(s)·Vᵀ from the n×n Gram matrix; a logit only depends on Vᵀθ), stopped when the Frank–Wolfe gap certifies ℓ̂_S(θ*) − min ≤ %.2g: ℓ̂_S(θ*) = %.6f (gap %.2g, %d iterations), accuracy %.4f. Models trained in k dims map back as θ = A_k·w (x·θ = (A_kᵀx)·w, ‖θ‖ = ‖w‖), so their loss on S is the loss of w on the projected rows. θ = 0 has excess %.4f.\n",
		c.optTol, res.lossStar, res.gapStar, res.optIters, res.accStar, res.zeroExcess)
	fmt.Fprintf(&b, "- **(a)** non-private PCA (1/n centred covariance, through the n×n Gram matrix) to k = %d, dimension reduction A_kᵀx, DP-SGD in k dims; z calibrated by bisection so that the SRDP accountant's bound (per-step RDP of the Poisson SGM, per-step SRDP α·(Δ∞·min(2, μΔ2))²/(2z²) without amplification, Theorem 2 with optimal c, RDP → DP) meets the overall ε. Sensitivity (Prop. 5, dimension reduction, `preprocess.PCA{Dim: true}`) at the declared gaps δ^k_min = %.4g, δ^1_min = %.4g — the data's own gaps, i.e. the paper's conditional guarantee for the collection of datasets with at least these gaps (reading them from S is itself not private): Δ2 = %.4g, Δ∞ = %g, τ = %.4g; μ = (1 + R_x·R_θ/4)/C = %.4g.\n",
		c.k, res.gapK, res.gap1, res.sens.L2, res.sens.LInf, res.sens.L2*res.sens.LInf, res.mu)
	fmt.Fprintf(&b, "- **(b)** the same DP-SGD on the raw %d-dim rows, z by the RDP accountant.\n", res.d)
	fmt.Fprintf(&b, "- **(c)** DP-PCA by the Gaussian noisy covariance (Analyze Gauss / SULQ, not Chaudhuri et al.'s Bingham-sampling PPCA): XᵀX + (z/√2)·GOE, sensitivity ‖xxᵀ‖_F ≤ 1, (ε/2, δ/2); top-k subspace by %d shifted block subspace iterations (block k+%d) + Rayleigh–Ritz in float32 (an exact %d×%d eigendecomposition is not affordable here; worst Ritz residual / noise edge ≤ %.2g); then DP-SGD on the projected rows X·V̂ with (ε/2, δ/2); basic composition gives (ε, δ). The iteration is not converged in the bulk of the noise spectrum; what matters for (c) is the data energy the subspace captures, and a one-off check against the exact eigendecomposition on a d = 1500 instance of this generator at the same noise levels (not rerun here) gave 0.0572 vs exact 0.0595 at 15 iterations and 0.0589 at 30 (z = 1.8), 0.0379 vs 0.0384 (z = 8). %s\n",
		c.pcaIters, c.pcaOver, res.d, res.d, maxResid(res), spikeText(res))
	fmt.Fprintf(&b, "- **(a′)** reference only: (a)'s pipeline at (b)'s noise, i.e. accounting as if the non-private PCA were free (what \"ignore the preprocessing\" gives; NOT a DP bound for the pipeline).\n")
	fmt.Fprintf(&b, "- %d seeds (training randomness: sampling, noise, DP-PCA noise) on one fixed dataset; mean ± sd over seeds.\n\n", c.seeds)

	fmt.Fprintf(&b, "## Why (a) is calibrated to group privacy here\n\n")
	lo, hi := math.Inf(1), 0.0
	for _, eps := range c.eps {
		var za, zb float64
		for _, s := range res.fig3 {
			if s.eps == eps && s.method == mA {
				za = s.z
			}
			if s.eps == eps && s.method == mB {
				zb = s.z
			}
		}
		lo, hi = math.Min(lo, za/zb), math.Max(hi, za/zb)
	}
	capTxt := "sits"
	if !res.capped {
		capTxt = "does NOT sit"
	}
	fmt.Fprintf(&b, "Each DP-SGD step's SRDP leg moves the clipped gradient sum by Δ∞·min(2C, μ·C·Δ2) (no subsampling amplification is claimed), against C for the RDP leg. Here μ·Δ2 = %.4g, so that shift is %.4g·C and it %s at the cap 2C·n: Theorem 2 is then no better than group privacy over all n records, and z(a) is %.3g–%.3g × z(b). This is not specific to our data: Prop. 5's τ = nΔ2 ≈ 24/δ^k_min (dimension reduction) does not shrink with n, and δ^k ≤ tr(Σ)/k ≤ 1/k for unit-ball data, so μτ ≥ 24k = %d even at the best possible gap (ours, δ^k = %.3g with λ_1 = %.3g ≫ λ_k, gives τ = %.3g). A step's SRDP shift is thus at least ~10³ times its RDP sensitivity, which is group privacy over ~10³ records; at this T and q only n of order 10⁷–10⁸ would make the noise on the *mean* gradient small. The paper's Table 4 discussion writes the PCA sensitivity as 12R/(nδ) with R the maximum norm of the *unnormalised* data, which suggests that Prop. 5 was evaluated with unnormalised eigengaps (large δ, small τ); on unit-ball data, as Prop. 5 requires, τ is large. We cannot check this (the paper's code was not available to us).\n\n",
		res.mu*res.sens.L2, res.shift, capTxt, lo, hi, 24*c.k, res.gapK, res.eig[0], res.sens.L2*res.sens.LInf)

	fmt.Fprintf(&b, "## Figure 3: excess empirical loss (mean ± sd over %d seeds; selected lr in brackets)\n\n", c.seeds)
	fmt.Fprintf(&b, "| ε | (a) PCA + DP-SGD, SRDP | (b) raw DP-SGD | (c) DP-PCA + DP-SGD | (a′) PCA free (not DP) | z (a) / (b) / (c: PCA, SGD) | ours: order | paper: (a) < (b) < (c) |\n|---|---|---|---|---|---|---|---|\n")
	for _, eps := range c.eps {
		cell := map[string]summary{}
		for _, s := range res.fig3 {
			if s.eps == eps {
				cell[s.method] = s
			}
		}
		ord, mean := order(res, eps)
		holds := mean[mA] < mean[mB] && mean[mB] < mean[mC]
		ok := "no"
		if holds {
			ok = "yes"
		}
		ms := func(m string) string {
			s := cell[m]
			return fmt.Sprintf("%.4f ± %.4f (%g)", s.mean, s.sd, s.lr)
		}
		fmt.Fprintf(&b, "| %g | %s | %s | %s | %s | %.4g / %.4g / %.4g, %.4g | %s | %s |\n", eps, ms(mA), ms(mB), ms(mC), ms(mAFree),
			cell[mA].z, cell[mB].z, cell[mC].zPCA, cell[mC].z, ord, ok)
	}
	fmt.Fprintf(&b, "\nε recomputed from the calibrated z by each method's own accountant: ")
	var chk []string
	for _, s := range res.fig3 {
		if s.method == mAFree {
			continue
		}
		chk = append(chk, fmt.Sprintf("%s ε=%g → %.5g", short(s.method), s.eps, s.epsCheck))
	}
	fmt.Fprintf(&b, "%s (for (c) the sum of the two halves).\n\n", strings.Join(chk, "; "))
	fmt.Fprintf(&b, "Paper's claim (qualitative; no numbers are printed): (a) < (b) < (c) at every ε, the gap largest at small ε. %s\n\n", claimText(res))
	fmt.Fprintf(&b, "Accuracy on S at the selected lr: ")
	var accs []string
	for _, s := range res.fig3 {
		accs = append(accs, fmt.Sprintf("%s ε=%g %.3f", short(s.method), s.eps, s.accMean))
	}
	fmt.Fprintf(&b, "%s; θ* %.3f. DP-PCA subspace captures %s of ‖X‖_F² (non-private top-k: %.6f).\n\n", strings.Join(accs, ", "), res.accStar, captureText(res), res.pcaCaptureNonPrivate)

	fmt.Fprintf(&b, "## Table 4: clipping before the projection (accuracy on S, mean ± sd over %d seeds)\n\n", c.seeds)
	fmt.Fprintf(&b, "Procedure (paper §F.2): A_k fitted on the unclipped S; rows clipped to norm C·R (R = 1); projected A_kᵀ·clip(x); private LR calibrated by Theorem 2 with Δ2 scaled by C (\"12R/(nδ) → 12C/(nδ)\") and μ = (1 + C·R_θ/4)/C_grad. Accuracy is the sign of x·A_k·w on S (clipping only rescales a row, so it equals the accuracy on the clipped rows). The paper's caption says excess loss but the values look like accuracies; they are a loose ±0.03 regression target. The right-hand columns repeat each cell with the PCA cost ignored (z of plain DP-SGD, not a DP bound).\n\n")
	fmt.Fprintf(&b, "| ε | variant | z (Thm 2) | ours: accuracy | paper | difference | within ±0.03 | PCA cost ignored: accuracy | difference |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, eps := range c.t4Eps {
		for _, cl := range c.clips {
			var s, fr summary
			for _, t := range res.table4 {
				if t.eps == eps && t.clip == cl {
					if t.free {
						fr = t
					} else {
						s = t
					}
				}
			}
			p := math.NaN()
			if v, ok := paperTable4[eps]; ok {
				p = v[clipIndex(cl)]
			}
			within := "—"
			if !math.IsNaN(p) {
				within = "no"
				if math.Abs(s.accMean-p) <= 0.03 {
					within = "yes"
				}
			}
			fmt.Fprintf(&b, "| %g | %s | %.4g | %.3f ± %.3f (lr %g) | %s | %s | %s | %.3f ± %.3f (lr %g) | %s |\n", eps, clipName(cl), s.z, s.accMean, s.accSD, s.lr, f4(p), diff(s.accMean, p), within, fr.accMean, fr.accSD, fr.lr, diff(fr.accMean, p))
		}
	}
	fmt.Fprintf(&b, "\nNon-private θ* (‖θ‖ ≤ %g) has accuracy %.3f on S.\n", c.train.RTheta, res.accStar)
	return b.String()
}

// clipText explains the gradient clip norm against the paper's 10.
func clipText(c float64) string {
	if c == 10 {
		return "Here C = 10 as in the paper: every per-example gradient has norm ≤ ‖x‖ ≤ 1, so C = 10 never clips and the noise z·C is 10× that of C = 1 (the default of this script) for the same ε."
	}
	return fmt.Sprintf("Here C = %g: every per-example gradient has norm ≤ ‖x‖ ≤ 1, so any C ≥ 1 never clips, and the paper's C = 10 would only multiply the noise z·C by 10 for the same ε (`--clip 10` runs it).", c)
}

func diff(ours, paper float64) string {
	if math.IsNaN(paper) {
		return "—"
	}
	return fmt.Sprintf("%+.3f", ours-paper)
}

func joinF(v []float64) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

func maxResid(res *result) float64 {
	m := 0.0
	for _, s := range res.fig3 {
		m = math.Max(m, s.resid)
	}
	return m
}

// minEdge is the smallest semicircle edge 2√d·z/√2 of the DP-PCA noise
// over the ε grid.
func minEdge(res *result) float64 {
	m := math.Inf(1)
	for _, s := range res.fig3 {
		if s.method == mC {
			m = math.Min(m, 2*math.Sqrt(float64(res.d))*s.zPCA/math.Sqrt2)
		}
	}
	return m
}

// spikeText compares the data's top eigenvalue of XᵀX with the DP-PCA
// noise: below the BBP threshold √d·z/√2 no eigenvector of the noisy
// covariance aligns with the data.
func spikeText(res *result) string {
	top, edge := float64(res.n)*res.eig[0], minEdge(res)
	if top < edge/2 {
		return fmt.Sprintf("Here the data's top eigenvalue of XᵀX, n·λ_1 = %.3g, is below the spike-detection (BBP) threshold √d·z/√2 ≥ %.3g of the noise at every ε, so the DP-PCA subspace is essentially random: it captures about k/d = %.3g of the data energy.", top, edge/2, float64(res.cfg.k)/float64(res.d))
	}
	return fmt.Sprintf("The data's top eigenvalue of XᵀX, n·λ_1 = %.3g, exceeds the noise's spike-detection (BBP) threshold √d·z/√2 = %.3g at the largest ε.", top, edge/2)
}

func captureText(res *result) string {
	var s []string
	for _, x := range res.fig3 {
		if x.method == mC {
			s = append(s, fmt.Sprintf("%.3f at ε=%g", x.capture, x.eps))
		}
	}
	return strings.Join(s, ", ")
}

// claimText states, per ε, whether the paper's ordering holds and whether
// the (b) − (a) gap is largest at the smallest ε.
func claimText(res *result) string {
	var held, failed []string
	gaps := map[float64]float64{}
	for _, eps := range res.cfg.eps {
		_, mean := order(res, eps)
		if mean[mA] < mean[mB] && mean[mB] < mean[mC] {
			held = append(held, fmt.Sprint(eps))
		} else {
			failed = append(failed, fmt.Sprint(eps))
		}
		gaps[eps] = mean[mB] - mean[mA]
	}
	var b strings.Builder
	if len(failed) == 0 {
		fmt.Fprintf(&b, "**Ours: the ordering holds at every ε.**")
	} else {
		fmt.Fprintf(&b, "**Ours: the ordering does not hold at ε ∈ {%s}**", strings.Join(failed, ", "))
		if len(held) > 0 {
			fmt.Fprintf(&b, " (holds at ε ∈ {%s})", strings.Join(held, ", "))
		}
		fmt.Fprintf(&b, ".")
	}
	var gs []string
	largest := res.cfg.eps[0]
	for _, eps := range res.cfg.eps {
		gs = append(gs, fmt.Sprintf("%.4f at ε=%g", gaps[eps], eps))
		if gaps[eps] > gaps[largest] {
			largest = eps
		}
	}
	fmt.Fprintf(&b, " (b) − (a): %s; ", strings.Join(gs, ", "))
	if largest == res.cfg.eps[0] && gaps[largest] > 0 {
		fmt.Fprintf(&b, "largest (and positive) at the smallest ε, as the paper says.")
	} else {
		fmt.Fprintf(&b, "not largest-positive at the smallest ε.")
	}
	// The same comparison for the reference (a′).
	var fs []string
	for _, eps := range res.cfg.eps {
		_, mean := order(res, eps)
		var free float64
		for _, s := range res.fig3 {
			if s.eps == eps && s.method == mAFree {
				free = s.mean
			}
		}
		rel := ">"
		if free < mean[mB] {
			rel = "<"
		}
		fs = append(fs, fmt.Sprintf("ε=%g: (a′) %s (b)", eps, rel))
	}
	fmt.Fprintf(&b, " With the PCA cost ignored: %s.", strings.Join(fs, ", "))
	var above []string
	for _, sm := range res.fig3 {
		if (sm.method == mA || sm.method == mC) && sm.mean >= res.zeroExcess-0.02 {
			above = append(above, fmt.Sprintf("%s at ε=%g", short(sm.method), sm.eps))
		}
	}
	if len(above) > 0 {
		fmt.Fprintf(&b, " Within 0.02 of, or above, the untrained θ = 0 (excess %.4f): %s.", res.zeroExcess, strings.Join(above, ", "))
	}
	return b.String()
}
