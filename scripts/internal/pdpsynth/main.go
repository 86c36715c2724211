// Command pdpsynth runs the synthetic logistic-regression experiments of
// paper 004 (Redberg & Wang 2021, §4.1–4.2 and App. B.1;
// docs/per-instance.md#paper-experiments): objective perturbation at (ε, δ)
// with Thm 5's λ and σ, then every training record's exact ex-post pDP against
// the data-independent (Alg 2), data-dependent (Alg 2, λ raised to 2τσ3) and
// adaptive (Alg 4) report bounds, swept over n at d = 50 (Fig 4) and over d
// at n = 1000 (Figs 3 and 5). It writes CSV, PNG + SVG plots and a markdown
// table.
//
// Run it through scripts/pdp_synthetic.sh.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/dptrain/dptrain/objpert"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/scripts/internal/repro"
)

type row struct {
	sweep          string
	n, d, seed     int
	variant        string
	lambda, sigma  float64
	exMax, exMed   float64
	exMin          float64
	bndMax, bndMed float64 // the variant's report bound
	overMax        float64 // max per-instance overhead ε2+ε3(+ε4)
	uniMax         float64 // max uniform (Thm 9, ℓ1) data-independent bound: holds for all records at once
	under          float64 // fraction of records whose bound is below the exact loss
	dpEps          float64 // DP ε of the whole account: release + report overhead (Analysis.Total)
}

func main() {
	quick := flag.Bool("quick", false, "small version (fewer n, d and seeds)")
	out := flag.String("out", "results/pdp_synthetic", "output directory")
	eps := flag.Float64("epsilon", 0.5, "ε1 of the ObjPert release (paper §4.2: 0.5)")
	delta := flag.Float64("delta", 1e-3, "δ (paper [SUBM]: 1e-3)")
	rho := flag.Float64("rho", 0.05, "report failure probability")
	seeds := flag.Int("seeds", 5, "repetitions per setting")
	flag.Parse()
	if _, err := run(*quick, *out, *eps, *delta, *rho, *seeds, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pdpsynth:", err)
		os.Exit(1)
	}
}

// run performs both sweeps, writes the outputs into out and returns every
// (setting, seed, variant) row.
func run(quick bool, out string, eps, delta, rho float64, seeds int, log io.Writer) ([]row, error) {
	nsN, dN := []int{100, 300, 1000, 3000, 10000}, 50
	ds, nD := []int{1, 5, 10, 20, 30, 40, 50, 60}, 1000
	if quick {
		nsN, dN = []int{100, 300, 1000}, 20
		ds, nD = []int{1, 5, 10, 20}, 300
		seeds = min(seeds, 2)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	var rows []row
	for _, n := range nsN {
		for s := 0; s < seeds; s++ {
			r, err := setting("n", n, dN, s, eps, delta, rho)
			if err != nil {
				return nil, err
			}
			rows = append(rows, r...)
		}
		fmt.Fprintf(log, "n sweep: n=%d d=%d done\n", n, dN)
	}
	for _, d := range ds {
		for s := 0; s < seeds; s++ {
			r, err := setting("d", nD, d, s, eps, delta, rho)
			if err != nil {
				return nil, err
			}
			rows = append(rows, r...)
		}
		fmt.Fprintf(log, "d sweep: n=%d d=%d done\n", nD, d)
	}
	if err := writeCSV(filepath.Join(out, "pdp_synthetic.csv"), rows); err != nil {
		return nil, err
	}
	if err := plotSweep(filepath.Join(out, "pdp_synthetic_n"), rows, "n", fmt.Sprintf("d=%d, eps=%g, delta=%g", dN, eps, delta), eps); err != nil {
		return nil, err
	}
	if err := plotSweep(filepath.Join(out, "pdp_synthetic_d"), rows, "d", fmt.Sprintf("n=%d, eps=%g, delta=%g", nD, eps, delta), eps); err != nil {
		return nil, err
	}
	md := markdown(rows, eps, delta, rho, seeds, quick)
	if err := os.WriteFile(filepath.Join(out, "pdp_synthetic.md"), []byte(md), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprint(log, md)
	fmt.Fprintf(log, "wrote %s/{pdp_synthetic.csv,pdp_synthetic_{n,d}.{png,svg},pdp_synthetic.md}\n", out)
	return rows, nil
}

// setting runs the three report variants on one synthetic data set.
func setting(sweep string, n, d, seed int, eps, delta, rho float64) ([]row, error) {
	base := rng.New(uint64(1000*n + d + 7919*seed))
	X, y := objpert.SyntheticLogistic(n, d, base.Child("data"))
	var out []row
	for _, v := range []struct {
		name string
		mode objpert.Mode
	}{{"indep", 0}, {"dep", objpert.DataDependent}, {"adaptive", objpert.Adaptive}} {
		c := objpert.AnalysisConfig{Loss: objpert.Logistic{}, Epsilon: eps, Delta: delta, Rho: rho, Mode: v.mode, Eps2: eps, Eps3: eps, Eps4: eps}
		a, err := objpert.Analyze(X, y, c, base.Child("noise-"+v.name))
		if err != nil {
			return nil, fmt.Errorf("n=%d d=%d seed %d %s: %w", n, d, seed, v.name, err)
		}
		exact := a.Column(func(r objpert.RecordResult) float64 { return r.Exact.Epsilon })
		bound := a.Column(func(r objpert.RecordResult) float64 { return r.Indep })
		if v.mode != 0 {
			bound = a.Column(func(r objpert.RecordResult) float64 { return r.Dep })
		}
		over := a.Column(func(r objpert.RecordResult) float64 { return r.Eps2 + r.Eps3 + r.Eps4 })
		uni := make([]float64, n)
		for i := range uni {
			uni[i] = a.Indep.EpsilonUniform(X.RawRowView(i), y[i])
		}
		under := 0
		for i := range exact {
			if bound[i] < exact[i] {
				under++
			}
		}
		out = append(out, row{
			sweep: sweep, n: n, d: d, seed: seed, variant: v.name,
			lambda: a.Model.Lambda, sigma: a.Model.Sigma,
			exMax: objpert.Quantile(exact, 1), exMed: objpert.Quantile(exact, 0.5), exMin: objpert.Quantile(exact, 0),
			bndMax: objpert.Quantile(bound, 1), bndMed: objpert.Quantile(bound, 0.5), overMax: objpert.Quantile(over, 1), uniMax: objpert.Quantile(uni, 1),
			under: float64(under) / float64(n), dpEps: a.Total.Epsilon,
		})
	}
	return out, nil
}

func writeCSV(path string, rows []row) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(fh)
	w.Write([]string{"sweep", "n", "d", "seed", "variant", "lambda", "sigma", "eps1_max", "eps1_median", "eps1_min",
		"bound_max", "bound_median", "overhead_max", "uniform_indep_max", "frac_bound_below_exact", "dp_epsilon_total"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, r := range rows {
		w.Write([]string{r.sweep, strconv.Itoa(r.n), strconv.Itoa(r.d), strconv.Itoa(r.seed), r.variant, g(r.lambda), g(r.sigma),
			g(r.exMax), g(r.exMed), g(r.exMin), g(r.bndMax), g(r.bndMed), g(r.overMax), g(r.uniMax), g(r.under), g(r.dpEps)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

type key struct {
	sweep   string
	x       int
	variant string
}

// means averages each row field over seeds, keyed by sweep, x and variant.
func means(rows []row) (map[key]row, map[string][]int) {
	sum := map[key]row{}
	cnt := map[key]float64{}
	xs := map[string][]int{}
	for _, r := range rows {
		x := r.n
		if r.sweep == "d" {
			x = r.d
		}
		k := key{r.sweep, x, r.variant}
		if _, ok := sum[k]; !ok && r.variant == "indep" {
			xs[r.sweep] = append(xs[r.sweep], x)
		}
		s := sum[k]
		s.sweep, s.n, s.d, s.variant = r.sweep, r.n, r.d, r.variant
		s.lambda += r.lambda
		s.sigma += r.sigma
		s.exMax += r.exMax
		s.exMed += r.exMed
		s.exMin += r.exMin
		s.bndMax += r.bndMax
		s.bndMed += r.bndMed
		s.overMax += r.overMax
		s.uniMax += r.uniMax
		s.under += r.under
		s.dpEps += r.dpEps
		sum[k] = s
		cnt[k]++
	}
	for k, s := range sum {
		c := cnt[k]
		s.lambda /= c
		s.sigma /= c
		s.exMax /= c
		s.exMed /= c
		s.exMin /= c
		s.bndMax /= c
		s.bndMed /= c
		s.overMax /= c
		s.uniMax /= c
		s.under /= c
		s.dpEps /= c
		sum[k] = s
	}
	return sum, xs
}

// plotSweep saves the sweep's plot as base.png and base.svg.
func plotSweep(base string, rows []row, sweep, title string, eps float64) error {
	m, xs := means(rows)
	p := plot.New()
	p.Title.Text = "synthetic logistic regression: worst case over records, " + title
	p.X.Label.Text = sweep
	p.Y.Label.Text = "per-instance epsilon"
	if sweep == "n" {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	lines := []struct {
		name    string
		variant string
		f       func(row) float64
		c       color.NRGBA
	}{
		{"max exact eps1 (Thm 5 lambda)", "indep", func(r row) float64 { return r.exMax }, color.NRGBA{B: 200, A: 255}},
		{"max data-independent bound", "indep", func(r row) float64 { return r.bndMax }, color.NRGBA{R: 230, G: 120, A: 255}},
		{"max uniform data-independent bound (Thm 9, l1)", "indep", func(r row) float64 { return r.uniMax }, color.NRGBA{R: 160, G: 100, B: 40, A: 255}},
		{"max exact eps1 (dep lambda)", "dep", func(r row) float64 { return r.exMax }, color.NRGBA{R: 120, G: 120, B: 220, A: 255}},
		{"max data-dependent bound (Alg 2)", "dep", func(r row) float64 { return r.bndMax }, color.NRGBA{G: 150, A: 255}},
		{"max adaptive bound (Alg 4)", "adaptive", func(r row) float64 { return r.bndMax }, color.NRGBA{R: 150, B: 150, A: 255}},
		{"median exact eps1", "indep", func(r row) float64 { return r.exMed }, color.NRGBA{R: 90, G: 90, B: 90, A: 255}},
	}
	top := eps
	for _, l := range lines {
		var pts plotter.XYs
		for _, x := range xs[sweep] {
			pts = append(pts, plotter.XY{X: float64(x), Y: l.f(m[key{sweep, x, l.variant}])})
			top = math.Max(top, pts[len(pts)-1].Y)
		}
		ln, sc, err := plotterLinePoints(pts)
		if err != nil {
			return err
		}
		ln.Color, sc.Color = l.c, l.c
		p.Add(ln, sc)
		p.Legend.Add(l.name, ln, sc)
	}
	lo, hi := float64(xs[sweep][0]), float64(xs[sweep][len(xs[sweep])-1])
	ref, err := plotter.NewLine(plotter.XYs{{X: lo, Y: eps}, {X: hi, Y: eps}})
	if err != nil {
		return err
	}
	ref.Color, ref.Dashes = color.NRGBA{R: 200, A: 255}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(ref)
	p.Legend.Add(fmt.Sprintf("DP epsilon = %g", eps), ref)
	p.Legend.Top = true
	p.Y.Min, p.Y.Max = 0, 1.7*top // room for the legend above the curves
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(8*vg.Inch, 5*vg.Inch, base+ext); err != nil {
			return err
		}
	}
	return nil
}

func plotterLinePoints(pts plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	ln, err := plotter.NewLine(pts)
	if err != nil {
		return nil, nil, err
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, nil, err
	}
	return ln, sc, nil
}

func markdown(rows []row, eps, delta, rho float64, seeds int, quick bool) string {
	m, xs := means(rows)
	var b strings.Builder
	fmt.Fprintf(&b, "# Paper 004 synthetic logistic regression (paper §4.1, App. B.1)\n\n")
	lam, sig, _ := objpert.CalibrateObjPert(eps, delta, 1, 0.25)
	fmt.Fprintf(&b, "ObjPert at (ε, δ) = (%g, %g): Thm 5 gives λ = %.6g, σ = %.6g (test vector 7.5 at (0.5, 1e-3): λ = 1, σ = 15.850201). ", eps, delta, lam, sig)
	fmt.Fprintf(&b, "Report failure probability ρ = %g; data-dependent budgets ε2 = ε3 (= ε4) = %g; τ by the rigorous GOE bound. ", rho, eps)
	fmt.Fprintf(&b, "Means over %d seed(s)%s. Labels: y ~ Bernoulli(sigmoid(xᵀθ*)) (the paper's label model is garbled; assumption).\n\n", seeds, map[bool]string{true: " (--quick)", false: ""}[quick])
	// The paper's figures are missing from its text, so its printed numbers
	// are the calibration and the GOE threshold; the reference column for
	// those is the paper (or an independent recomputation where the paper
	// prints a formula only).
	tauTW, _ := objpert.GOEQuantile(50, 1-8.465e-6/2, objpert.GOETracyWidom)
	tauRig, _ := objpert.GOEQuantile(50, 1-8.465e-6/2, objpert.GOERigorous)
	fmt.Fprintf(&b, "| quantity | paper / spec | ours | difference | note |\n|---|---|---|---|---|\n")
	if eps == 0.5 && delta == 1e-3 {
		fmt.Fprintf(&b, "| Thm 5 λ at (0.5, 1e-3) | 1 (test vector 7.5) | %.6g | %s | |\n", lam, repro.Diff(lam, 1))
		fmt.Fprintf(&b, "| Thm 5 σ at (0.5, 1e-3) | 15.850201 (test vector 7.5) | %.6f | %s | the paper prints σ² as σ (251.23) |\n", sig, repro.Diff(sig, 15.850201))
	}
	fmt.Fprintf(&b, "| τ = λ1(GOE(50)) quantile at ρ = 8.465e-6 | 12 (paper App. D) | %.3f (Tracy–Widom) / %.3f (rigorous, used) | %s / %s | the paper's 12 is the (Z+Zᵀ)/2 scale: %.3f/√2 = %.3f (errata §9.1) |\n",
		tauTW, tauRig, repro.Diff(tauTW, 12), repro.Diff(tauRig, 12), tauTW, tauTW/math.Sqrt2)
	fmt.Fprintf(&b, "\n")
	for _, sw := range []string{"n", "d"} {
		other := "d"
		if sw == "d" {
			other = "n"
		}
		fmt.Fprintf(&b, "## Sweep over %s\n\n", sw)
		fmt.Fprintf(&b, "| %s | %s | max ε1 | median ε1 | max INDEP | max UNIFORM | max DEP (λ) | max ε1 at DEP λ | max ADAPT | max overhead DEP | bound < ε1 (INDEP/DEP/ADAPT) | DP ε total DEP (δ = 2·%g) |\n", sw, other, delta)
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, x := range xs[sw] {
			in, de, ad := m[key{sw, x, "indep"}], m[key{sw, x, "dep"}], m[key{sw, x, "adaptive"}]
			o := in.d
			if sw == "d" {
				o = in.n
			}
			fmt.Fprintf(&b, "| %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f (%.3g) | %.4f | %.4f | %.3f | %.3f/%.3f/%.3f | %.3g |\n",
				x, o, in.exMax, in.exMed, in.bndMax, in.uniMax, de.bndMax, de.lambda, de.exMax, ad.bndMax, de.overMax, in.under, de.under, ad.under, de.dpEps)
		}
		fmt.Fprintln(&b)
	}
	// The paper's claims, checked on these numbers.
	fmt.Fprintf(&b, "## Against the paper's claims\n\n| claim (paper) | measured |\n|---|---|\n")
	medRatio, spreadN, spreadD := math.Inf(1), [2]float64{math.Inf(1), 0}, [2]float64{math.Inf(1), 0}
	for k, r := range m {
		if k.variant != "indep" {
			continue
		}
		medRatio = math.Min(medRatio, eps/r.exMed)
		sp := &spreadN
		if k.sweep == "d" {
			sp = &spreadD
		}
		sp[0], sp[1] = math.Min(sp[0], r.bndMax), math.Max(sp[1], r.bndMax)
	}
	fmt.Fprintf(&b, "| true pDP is about an order of magnitude below ε (§4.1) | ε / median ε1 ≥ %.1f in every setting |\n", medRatio)
	fmt.Fprintf(&b, "| GLM ex-post bounds do not depend on n (App. B.1, Fig 4) | max INDEP bound ranges %.4f–%.4f over n |\n", spreadN[0], spreadN[1])
	fmt.Fprintf(&b, "| GLM ex-post bounds do not depend on d (App. B.1, Fig 5) | max INDEP bound ranges %.4f–%.4f over d |\n", spreadD[0], spreadD[1])
	fmt.Fprintf(&b, "| report bounds hold per record w.p. ≥ 1−ρ (INDEP, Cor 23), ≥ 1−3ρ (DEP: Hessian, noisy gradient and INDEP events; ADAPT: Thm 13) | fraction of records below their exact loss is in the tables (ρ = %g); failures within one run are correlated (one noise draw) |\n", rho)
	fmt.Fprintf(&b, "| (not a paper claim) per-record bounds are not uniform: the most exposed records are those the realised noise hits, so max ε1 can exceed max bound | the uniform ℓ1 bound (Thm 9 / Prop 15) covers all records at once, at a √log d price |\n")
	fmt.Fprintf(&b, "| DATA-DEP needs stronger regularisation λ ≥ 2τσ3 (CR §4.1) | see the DEP λ column (τ rigorous; the paper's τ≈12 at d=50 is too small, errata §9.1) |\n")
	return b.String()
}
