package trainer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
)

// reportPage is release/report.html: one self-contained page per run, built
// only from what release/ already publishes (the released summary and the
// plots), so it adds no disclosure of its own.
var reportPage = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dptrain run: {{.S.Model}} on {{.S.Dataset}}</title>
<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}img{max-width:100%}pre{background:#f4f4f4;padding:1em;overflow:auto}td{padding:0 1em 0 0}</style>
</head><body>
<h1>{{.S.Model}} on {{.S.Dataset}}</h1>
<h2>Privacy</h2>
<p><b>{{.S.Claim}}</b></p>
<p>The unit of privacy is one training example ({{.Relation}}, with the dataset size n treated as public): the guarantee bounds how much any single
example of the {{.S.TrainN}} training examples can change the probability of anything in this release.
{{if .S.Noise.Lattice}}The noise is the lattice mechanism (γ = C·2<sup>−{{.S.LatticeK}}</sup>, exact integer noise: docs/secure-noise.md).{{end}}
{{if .S.NoiseSeeded}}<b>This run's noise was drawn from a fixed seed: it is reproducible, not private.</b>{{end}}</p>
{{if .S.Sweep}}<p><b>This run is run {{.S.Sweep.Run}} of the {{.S.Sweep.Runs}} runs of a sweep.</b> The guarantee above is the
sweep's total (ε = {{printf "%.4g" .S.Sweep.Total.Epsilon}}), not this run's own ε ({{printf "%.4g" .S.Sweep.Own}}): {{.S.Sweep.Why}}.</p>{{end}}
<p>Not covered by this guarantee: the choice of hyperparameters and of the model{{if .S.Sweep}} outside the sweep's grid, any run on the
same data outside the sweep{{else}}, any other run on the same data{{end}}, and the files in <code>private/</code> (never publish them). The test set ({{.S.TestN}} examples) is
treated as public: the test figures below are computed on it.</p>
<h2>Result</h2>
<table><tr><td>test accuracy</td><td>{{.TestAcc}}</td></tr>
<tr><td>test loss</td><td>{{.TestLoss}}</td></tr>
<tr><td>steps</td><td>{{.S.Steps}} of {{.S.PlannedSteps}}</td></tr>
<tr><td>noise multiplier σ</td><td>{{.S.Sigma}}{{if .S.Calibrated}} (calibrated){{end}}</td></tr>
<tr><td>sampling rate q</td><td>{{.S.Q}}</td></tr></table>
{{range .Plots}}<p><img alt="{{.Name}}" src="data:image/png;base64,{{.Data}}"></p>{{end}}
{{if .S.Notes}}<h2>Notes</h2><ul>{{range .S.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Configuration</h2>
<pre>{{.Config}}</pre>
</body></html>
`))

type reportPlot struct {
	Name string
	Data string
}

// writeReport writes release/report.html from the released summary and
// whichever released plots the staged release holds.
func (s *state) writeReport(sum *Summary) error {
	rel := releasedSummaryOf(sum, s.cfg)
	cfg, err := json.MarshalIndent(rel.Config, "", "  ")
	if err != nil {
		return err
	}
	var plots []reportPlot
	for _, name := range []string{"test.png", "epsilon.png"} {
		if b, err := os.ReadFile(s.out.staging(name)); err == nil {
			plots = append(plots, reportPlot{name, base64.StdEncoding.EncodeToString(b)})
		}
	}
	relation := rel.Best.Relation.String()
	acc, loss := "withheld (an interrupted final-only run releases nothing about its iterate)", "withheld"
	if rel.TestAcc != nil {
		acc, loss = fmt.Sprintf("%.4f", *rel.TestAcc), fmt.Sprintf("%.4f", *rel.TestLoss)
	}
	var buf bytes.Buffer
	if err := reportPage.Execute(&buf, map[string]any{"S": rel, "TestAcc": acc, "TestLoss": loss, "Relation": relation, "Plots": plots, "Config": string(cfg)}); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return s.out.writeRelease("report.html", buf.Bytes())
}
