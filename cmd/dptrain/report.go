package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/dptrain/dptrain/internal/plotkit"
	"github.com/dptrain/dptrain/internal/sysmem"
	"github.com/dptrain/dptrain/objpert"
	"github.com/dptrain/dptrain/rng"
)

type reportFlags struct {
	synthetic        bool
	n, d             int
	data, label      string
	model, mode      string
	eps, delta, lam  float64
	rho              float64
	eps2, eps3, eps4 float64
	tight            bool
	top              int
	out              string
	seed             uint64
	seeded           bool
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f reportFlags
	fs := newFlagSet("report", stdout)
	fs.BoolVar(&f.synthetic, "synthetic", false, "use the synthetic logistic-regression data of paper 004's experiments (θ*~N(0,I), x uniform in the unit ball, y~Bernoulli(sigmoid(xᵀθ*)))")
	fs.IntVar(&f.n, "n", 1000, "synthetic: number of records")
	fs.IntVar(&f.d, "d", 10, "synthetic: dimension")
	fs.StringVar(&f.data, "data", "", "numeric CSV file (optional header row)")
	fs.StringVar(&f.label, "label", "", "label column: header name or 0-based index (default: last column)")
	fs.StringVar(&f.model, "model", "logreg", "logreg (labels 0/1 or -1/+1) or linreg (ridge regression): fit by objective perturbation; or FILE.json, a model released earlier (the model.json --out writes), to report on without refitting")
	fs.StringVar(&f.mode, "mode", "indep", "report beside the data-independent one: indep (none), dep (Alg 2) or adaptive (Alg 4)")
	fs.Float64Var(&f.eps, "epsilon", 1, "ε of the objective-perturbation release (Thm 5 calibration)")
	fs.Float64Var(&f.delta, "delta", 1e-5, "δ of the release and of the report's own releases")
	fs.Float64Var(&f.lam, "lambda", 0, "ridge λ (0: Thm 5's 2β/ε; raised to 2τσ3 for --mode dep)")
	fs.Float64Var(&f.rho, "rho", 0.05, "each report bound fails with probability at most ρ")
	fs.Float64Var(&f.eps2, "eps2", 0, "DP budget of the gradient release (Alg 5; default --epsilon)")
	fs.Float64Var(&f.eps3, "eps3", 0, "DP budget of the Hessian release (Alg 6; default --epsilon)")
	fs.Float64Var(&f.eps4, "eps4", 0, "DP budget of the λ_min release (Alg 3, adaptive; default --epsilon)")
	fs.BoolVar(&f.tight, "tight", false, "also bound the influence term by log(1+f''‖x‖²/λ) (corrected Thm 8)")
	fs.IntVar(&f.top, "top", 10, "number of most exposed records to list")
	fs.StringVar(&f.out, "out", "", "directory: OUT/release/model.json (publishable) and OUT/private/ (0700: pdp_report.csv, pdp_hist.png, per-record values for the curator only)")
	fs.Uint64Var(&f.seed, "seed", 0, "fixed seed for data and noise (default: cryptographic noise, synthetic data seed 1)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fs.Visit(func(fl *flag.Flag) { f.seeded = f.seeded || fl.Name == "seed" })
	cfg, err := f.config()
	if err != nil {
		return err
	}
	var released *objpert.Model // --model FILE
	if f.modelFile() {
		if released, err = readModel(f.model); err != nil {
			return err
		}
		cfg.Loss = released.Loss
	}

	noise, err := rng.NewSeededOrCrypto(f.seed, f.seeded)
	if err != nil {
		return err
	}
	var X *mat.Dense
	var y []float64
	var source string
	if f.synthetic {
		if err := sysmem.Check(fmt.Sprintf("report --synthetic --n %d --d %d", f.n, f.d), reportBytes(f.n, f.d)); err != nil {
			return err
		}
		dataSeed := uint64(1)
		if f.seeded {
			dataSeed = f.seed
		}
		X, y = objpert.SyntheticLogistic(f.n, f.d, rng.New(dataSeed).Child("pdp-synthetic-data"))
		source = fmt.Sprintf("synthetic logistic (n=%d, d=%d, data seed %d)", f.n, f.d, dataSeed)
	} else {
		fh, err := os.Open(f.data)
		if err != nil {
			return asInput(fmt.Errorf("--data: %w", err))
		}
		rows, labels, _, err := readNumericCSV(fh, f.label)
		fh.Close()
		if err != nil {
			return asInput(fmt.Errorf("--data %s: %w", f.data, err))
		}
		if y, err = prepareLabels(labels, cfg.Loss); err != nil {
			return asInput(fmt.Errorf("--data %s: %w", f.data, err))
		}
		var clipped int
		X, clipped = clipRows(rows)
		source = fmt.Sprintf("%s (n=%d, d=%d; %d rows scaled to ‖x‖=1)", f.data, len(rows), len(rows[0]), clipped)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if n, d := X.Dims(); !f.synthetic {
		if err := sysmem.Check(fmt.Sprintf("report --data %s (%d columns)", f.data, d), reportBytes(n, d)); err != nil {
			return err
		}
	}
	var a *objpert.Analysis
	if released != nil {
		source += fmt.Sprintf("; model %s", f.model)
		a, err = untilDone(ctx, func() (*objpert.Analysis, error) {
			return objpert.AnalyzeModel(released, X, y, cfg, noise.Child("pdp-report"))
		})
	} else {
		a, err = untilDone(ctx, func() (*objpert.Analysis, error) {
			return objpert.Analyze(X, y, cfg, noise.Child("pdp-objpert-and-report"))
		})
	}
	if err != nil {
		if errors.Is(err, objpert.ErrInput) {
			return asInput(err)
		}
		return err
	}
	printReport(stdout, a, source, f.top)
	if f.out != "" {
		// Split as train's outputs are: release/ holds what the privacy
		// claim covers (the objective-perturbation model); the per-record
		// table and its histogram are evaluations on private records
		// (exact columns depend on the whole data set: Example 4 of the
		// paper), so they are curator-only.
		relDir, privDir := filepath.Join(f.out, "release"), filepath.Join(f.out, "private")
		if err := os.MkdirAll(relDir, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := os.MkdirAll(privDir, 0o700); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := os.Chmod(privDir, 0o700); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		csvPath := filepath.Join(privDir, "pdp_report.csv")
		if err := writeReportCSV(csvPath, a); err != nil {
			return err
		}
		pngPath := filepath.Join(privDir, "pdp_hist.png")
		if err := writeReportHist(pngPath, a); err != nil {
			return err
		}
		for _, p := range []string{csvPath, pngPath} {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
		}
		modelPath := filepath.Join(relDir, "model.json")
		mj, err := json.MarshalIndent(a.Model, "", "  ")
		if err != nil {
			return fmt.Errorf("model.json: %w", err)
		}
		if err := os.WriteFile(modelPath, append(mj, '\n'), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		fmt.Fprintf(stdout, "publish   %s (the released model, covered by the account above)\n", modelPath)
		fmt.Fprintf(stdout, "private   %s and %s (mode 0600, curator only: per-record values, never publish)\n", csvPath, pngPath)
	}
	return nil
}

// config validates the flags and turns them into an analysis configuration.
func (f *reportFlags) config() (objpert.AnalysisConfig, error) {
	var c objpert.AnalysisConfig
	if f.synthetic == (f.data != "") {
		return c, badInput("give exactly one of --synthetic or --data FILE.csv")
	}
	switch {
	case f.model == "logreg":
		c.Loss = objpert.Logistic{}
	case f.model == "linreg":
		if f.synthetic {
			return c, badInput("--synthetic generates logistic-regression data; use --model logreg")
		}
		c.Loss = objpert.Squared{}
	case f.modelFile():
		if f.lam != 0 {
			return c, badInput("--lambda is the released model's own with --model FILE; leave it unset")
		}
	default:
		return c, badInput("--model must be logreg, linreg or a model FILE.json, got %q", f.model)
	}
	switch f.mode {
	case "indep":
	case "dep":
		c.Mode = objpert.DataDependent
	case "adaptive":
		c.Mode = objpert.Adaptive
	default:
		return c, badInput("--mode must be indep, dep or adaptive, got %q", f.mode)
	}
	if f.synthetic && (f.n < 1 || f.d < 1) {
		return c, badInput("--n and --d must be >= 1, got %d, %d", f.n, f.d)
	}
	if f.top < 0 {
		return c, badInput("--top must be >= 0, got %d", f.top)
	}
	if err := positive("epsilon", f.eps); err != nil {
		return c, err
	}
	if err := inOpenUnit("delta", f.delta); err != nil {
		return c, err
	}
	if err := inOpenUnit("rho", f.rho); err != nil {
		return c, err
	}
	if err := finite("lambda", f.lam); err != nil {
		return c, err
	}
	if f.lam < 0 {
		return c, badInput("--lambda must be >= 0, got %v", f.lam)
	}
	for _, b := range []struct {
		name string
		v    *float64
	}{{"eps2", &f.eps2}, {"eps3", &f.eps3}, {"eps4", &f.eps4}} {
		if *b.v == 0 {
			*b.v = f.eps
		}
		if err := positive(b.name, *b.v); err != nil {
			return c, err
		}
	}
	c.Epsilon, c.Delta, c.Lambda, c.Rho = f.eps, f.delta, f.lam, f.rho
	c.Eps2, c.Eps3, c.Eps4, c.TightLogDet = f.eps2, f.eps3, f.eps4, f.tight
	return c, nil
}

// modelFile reports whether --model names a released model's JSON file
// rather than a loss to fit.
func (f *reportFlags) modelFile() bool {
	return f.model != "logreg" && f.model != "linreg" && strings.HasSuffix(strings.ToLower(f.model), ".json")
}

// readModel reads a released model (objpert.Model's JSON: loss, θ̂, λ, σ).
func readModel(path string) (*objpert.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, asInput(fmt.Errorf("--model: %w", err))
	}
	var m objpert.Model
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, asInput(fmt.Errorf("--model %s: %w", path, err))
	}
	return &m, nil
}

// readNumericCSV reads a numeric CSV. A first row with any non-numeric cell
// is a header. label names the label column (header name or 0-based index;
// empty: the last column); the other columns are the features.
func readNumericCSV(r io.Reader, label string) (rows [][]float64, labels []float64, header []string, err error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.ReuseRecord = false
	cr.TrimLeadingSpace = true
	recs, err := cr.ReadAll()
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		// What went wrong, not where: the file holds training records.
		return nil, nil, nil, fmt.Errorf("malformed CSV: %w", pe.Err)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if len(recs) == 0 {
		return nil, nil, nil, errors.New("empty file")
	}
	for _, cell := range recs[0] {
		if _, e := strconv.ParseFloat(strings.TrimSpace(cell), 64); e != nil {
			header, recs = recs[0], recs[1:]
			break
		}
	}
	if len(recs) == 0 {
		return nil, nil, nil, errors.New("no data rows")
	}
	ncol := len(recs[0])
	if ncol < 2 {
		return nil, nil, nil, fmt.Errorf("need at least one feature and a label column, got %d column(s)", ncol)
	}
	lc := ncol - 1
	if label != "" {
		lc = -1
		for j, h := range header {
			if strings.TrimSpace(h) == label {
				lc = j
			}
		}
		if lc < 0 {
			k, e := strconv.Atoi(label)
			if e != nil || k < 0 || k >= ncol {
				return nil, nil, nil, fmt.Errorf("--label %q is neither a header name nor a column index in [0,%d)", label, ncol)
			}
			lc = k
		}
	}
	for _, rec := range recs {
		// csv.Reader already enforces equal field counts.
		row := make([]float64, 0, ncol-1)
		for j, cell := range rec {
			v, e := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if e != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				// The column, never the cell or its line (training data).
				col := fmt.Sprintf("column %d", j)
				if header != nil {
					col += fmt.Sprintf(" (%q)", header[j])
				}
				return nil, nil, nil, fmt.Errorf("%s: a value is not a finite number", col)
			}
			if j == lc {
				labels = append(labels, v)
			} else {
				row = append(row, v)
			}
		}
		rows = append(rows, row)
	}
	return rows, labels, header, nil
}

// prepareLabels maps logistic labels 0/1 to −1/+1 and checks them.
func prepareLabels(labels []float64, loss objpert.GLM) ([]float64, error) {
	y := append([]float64(nil), labels...)
	if _, ok := loss.(objpert.Logistic); !ok {
		return y, nil
	}
	zeroOne := true
	for _, v := range y {
		switch v {
		case 0, 1:
		case -1:
			zeroOne = false
		default:
			return nil, errors.New("label column: logreg labels must be 0/1 or -1/+1, and a label is neither")
		}
	}
	for i, v := range y {
		if v == 0 && zeroOne {
			y[i] = -1
		} else if v == 0 {
			return nil, errors.New("label column: the labels mix 0 and -1")
		}
	}
	return y, nil
}

// clipRows scales every row with ‖x‖ > 1 onto the unit sphere: a per-record
// map, so it needs no privacy accounting, and it makes Thm 5's bounds hold.
func clipRows(rows [][]float64) (*mat.Dense, int) {
	X := mat.NewDense(len(rows), len(rows[0]), nil)
	clipped := 0
	for i, r := range rows {
		s := 0.0
		for _, v := range r {
			s += v * v
		}
		scale := 1.0
		if s > 1 {
			scale, clipped = 1/math.Sqrt(s), clipped+1
		}
		for j, v := range r {
			X.Set(i, j, v*scale)
		}
	}
	return X, clipped
}

func printReport(w io.Writer, a *objpert.Analysis, source string, top int) {
	c, m := a.Config, a.Model
	fmt.Fprintf(w, "data: %s\n", source)
	fmt.Fprintf(w, "release: %s by objective perturbation, lambda=%.6g sigma=%.6g: (%.4g, %.3g)-DP, %s [%s]\n",
		c.Loss.Name(), m.Lambda, m.Sigma, a.Release.Epsilon, a.Release.Delta, a.Release.Relation, a.Release.Source)
	cols := []struct {
		name string
		v    []float64
	}{
		{"exact eps1 (curator-only)", a.Column(func(r objpert.RecordResult) float64 { return r.Exact.Epsilon })},
		{"report, data-independent", a.Column(func(r objpert.RecordResult) float64 { return r.Indep })},
	}
	if a.Dep != nil {
		cols = append(cols,
			struct {
				name string
				v    []float64
			}{"report, " + a.Dep.Mode.String(), a.Column(func(r objpert.RecordResult) float64 { return r.Dep })},
			struct {
				name string
				v    []float64
			}{"report overhead eps2+eps3+eps4", a.Column(func(r objpert.RecordResult) float64 { return r.Eps2 + r.Eps3 + r.Eps4 })})
	}
	qs := []float64{0, 0.25, 0.5, 0.75, 0.9, 0.99, 1}
	fmt.Fprintf(w, "per-instance ex-post epsilon over the %d training records (report bounds hold w.p. >= 1-%g each):\n", len(a.Records), c.Rho)
	fmt.Fprintf(w, "  %-31s %9s %9s %9s %9s %9s %9s %9s\n", "", "min", "p25", "median", "p75", "p90", "p99", "max")
	for _, col := range cols {
		fmt.Fprintf(w, "  %-31s", col.name)
		for _, q := range qs {
			fmt.Fprintf(w, " %9.4g", objpert.Quantile(col.v, q))
		}
		fmt.Fprintln(w)
	}
	if a.Dep != nil {
		sig := fmt.Sprintf("sigma2=%.4g sigma3=%.4g", a.Dep.Sigma2, a.Dep.Sigma3)
		if a.Dep.Mode == objpert.Adaptive {
			sig += fmt.Sprintf(" sigma4=%.4g lambda_low=%.4g", a.Dep.Sigma4, a.Dep.LambdaLow)
		}
		fmt.Fprintf(w, "report releases (%v): %s tau=%.4f (%v); DP overhead (%.4g, %.3g) summed per release, (%.4g, %.3g) composed by RDP\n",
			a.Dep.Mode, sig, a.Dep.Tau, a.Dep.GOE, a.ReportDP.Epsilon, a.ReportDP.Delta, a.ReportRDP.Epsilon, a.ReportRDP.Delta)
	} else {
		fmt.Fprintln(w, "report: none released (--mode indep: no report overhead in the account); the per-record figures above are statistics of the training records, not covered by ε: curator only, never publish them")
	}
	fmt.Fprintf(w, "account: (%.4g, %.3g)-DP, %s (release + report overhead, basic composition)\n", a.Total.Epsilon, a.Total.Delta, a.Total.Relation)
	// b = −∇J(θ̂; D) ~ N(0, σ²I) when D is the model's training set, so
	// ‖b‖²/σ² is a χ²_d draw; a value in its 1e-6 tails says it is not.
	d := float64(len(m.Theta))
	if p := (distuv.ChiSquared{K: d}).CDF(a.ImpliedNoise * a.ImpliedNoise * d); p < 1e-6 || p > 1-1e-6 {
		fmt.Fprintf(w, "warning: the implied perturbation ‖∇J(θ̂;D)‖/(σ√d) = %.3g is implausible for b ~ N(0, σ²I) (χ²_%d CDF %.3g): is this the model's training data?\n", a.ImpliedNoise, len(m.Theta), p)
	}
	if top > 0 {
		fmt.Fprintf(w, "most exposed records (by exact eps1; curator-only):\n")
		fmt.Fprintf(w, "  %8s %10s %10s %10s %10s\n", "index", "eps1", "indep", "dep", "leverage")
		for _, i := range a.MostExposed(top) {
			r := a.Records[i]
			dep := "-" // no data-dependent report
			if a.Dep != nil {
				dep = fmt.Sprintf("%.4g", r.Dep)
			}
			fmt.Fprintf(w, "  %8d %10.4g %10.4g %10s %10.4g\n", i, r.Exact.Epsilon, r.Indep, dep, r.Exact.Leverage)
		}
	}
	fmt.Fprintln(w, "note: exact per-instance values depend on the whole data set and must not be published; publish the report bounds.")
}

func writeReportCSV(path string, a *objpert.Analysis) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report csv: %w", err)
	}
	w := csv.NewWriter(fh)
	w.Write([]string{"index", "score", "f1", "f2", "leverage", "T1", "T2", "T3", "eps1_exact", "eps1_indep", "eps1_dep", "eps2", "eps3", "eps4"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for _, r := range a.Records {
		e := r.Exact
		w.Write([]string{strconv.Itoa(r.Index), g(e.Score), g(e.D1), g(e.D2), g(e.Leverage), g(e.T1), g(e.T2), g(e.T3),
			g(e.Epsilon), g(r.Indep), g(r.Dep), g(r.Eps2), g(r.Eps3), g(r.Eps4)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		fh.Close()
		return fmt.Errorf("report csv %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("report csv %s: %w", path, err)
	}
	return nil
}

// writeReportHist plots histograms of the exact per-instance loss and the
// report bounds, with the release's DP ε as a vertical line.
func writeReportHist(path string, a *objpert.Analysis) error {
	p, _, err := reportHistPanel(a)
	if err != nil {
		return err
	}
	if err := plotkit.Save(path, 8*vg.Inch, 4.5*vg.Inch, p); err != nil {
		return fmt.Errorf("histogram %s: %w", path, err)
	}
	return nil
}

// reportHistPanel builds writeReportHist's figure: the legend beside the
// histograms and every bar, and the ε line, inside the frame.
func reportHistPanel(a *objpert.Analysis) (*plotkit.Panel, []*plotter.Histogram, error) {
	p := plotkit.New(fmt.Sprintf("per-instance privacy, %s (n=%d)", a.Config.Loss.Name(), len(a.Records)), "ex-post per-instance epsilon", "records")
	series := []struct {
		name string
		v    []float64
		c    color.NRGBA
	}{
		{"exact (curator-only)", a.Column(func(r objpert.RecordResult) float64 { return r.Exact.Epsilon }), color.NRGBA{R: 30, G: 90, B: 200, A: 140}},
		{"report, data-independent", a.Column(func(r objpert.RecordResult) float64 { return r.Indep }), color.NRGBA{R: 230, G: 120, B: 20, A: 140}},
	}
	if a.Dep != nil {
		series = append(series, struct {
			name string
			v    []float64
			c    color.NRGBA
		}{"report, " + a.Dep.Mode.String(), a.Column(func(r objpert.RecordResult) float64 { return r.Dep }), color.NRGBA{R: 40, G: 160, B: 60, A: 140}})
	}
	var hs []*plotter.Histogram
	for _, s := range series {
		var vals plotter.Values
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range s.v {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals = append(vals, v)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if len(vals) == 0 || hi <= lo {
			continue // nothing a histogram can show
		}
		h, err := plotter.NewHist(vals, 40)
		if err != nil {
			return nil, nil, fmt.Errorf("histogram: %w", err)
		}
		h.FillColor, h.LineStyle.Width = s.c, 0
		p.Plot.Add(h)
		p.Add(s.name, h)
		hs = append(hs, h)
	}
	top := plotkit.FitBars(p.Plot, hs...)
	if eps := a.Release.Epsilon; !math.IsInf(eps, 0) && !math.IsNaN(eps) {
		l, err := plotter.NewLine(plotter.XYs{{X: eps, Y: 0}, {X: eps, Y: top}})
		if err != nil {
			return nil, nil, fmt.Errorf("histogram: %w", err)
		}
		l.Color, l.Width, l.Dashes = color.NRGBA{R: 200, A: 255}, vg.Points(1.5), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Plot.Add(l)
		p.Add(fmt.Sprintf("DP epsilon = %.3g", eps), l)
	}
	// ε ≥ 0: the axis starts at 0, and ends a little past the last bar or
	// the ε line so neither sits on the frame.
	x := &p.Plot.X
	x.Min = math.Min(x.Min, 0)
	x.Max += 0.03 * (x.Max - x.Min)
	return p, hs, nil
}

// reportBytes is a lower bound on what a report of n records in d
// dimensions allocates: the n×d data and the per-coordinate sums of the
// grid release (n terms each), and two d×d matrices (the Hessian and the
// report's Gaussian draw), in float64.
func reportBytes(n, d int) float64 {
	fn, fd := float64(n), float64(d)
	return 8 * (2*fn*fd + 2*fd*fd)
}
