package trainer_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/trainer"
)

// wine is a toy table whose two features live on scales 1000 apart
// (alcohol in % around 13, proline in mg/L around 750), the class set by
// both; seed fixes the rows.
func wine(n int, seed uint64) *datasets.Dataset {
	noise := make([]float32, 2*n)
	rng.New(seed).FillNormal(noise, 1)
	rows, labels := make([][]float32, n), make([]int, n)
	for i := range rows {
		c := float32(i % 2)
		rows[i] = []float32{12 + 2*c + 0.4*noise[2*i], 500 + 500*c + 100*noise[2*i+1]}
		labels[i] = i % 2
	}
	ds, err := datasets.FromSlices("wine", rows, labels)
	if err != nil {
		panic(err)
	}
	// The public schema: the columns' and classes' names.
	if err := ds.SetSchema([]string{"alcohol", "proline"}, []string{"class_a", "class_b"}); err != nil {
		panic(err)
	}
	return ds
}

// accuracy is the fraction of rows whose largest probability is their label.
func accuracy(probs []float32, labels []int) float64 {
	k, correct := len(probs)/len(labels), 0
	for i, y := range labels {
		best := 0
		for j := range k {
			if probs[i*k+j] > probs[i*k+best] {
				best = j
			}
		}
		if best == y {
			correct++
		}
	}
	return float64(correct) / float64(len(labels))
}

// Train with --scale's library form and no output directory: the model
// Run leaves behind carries the scaling (as release/model.bin would), so
// PredictRecords on raw rows gives the run's own test accuracy; the
// columns and class names set with SetSchema are recorded too.
func ExampleRun_scaleInMemory() {
	m, err := models.New(models.Spec{Arch: "logreg", InputSize: 2, Classes: 2}, models.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := trainer.Default()
	cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 1e-4, 5, 200, 1, 1
	cfg.Scale, cfg.FeatureBounds = trainer.ScaleMinMax, "8:18,0:1500" // public knowledge of the features
	cfg.Seeded, cfg.Plots = true, false
	test := wine(400, 2)
	sum, err := trainer.Run(context.Background(), cfg, trainer.Options{Model: m, Train: wine(2000, 1), Test: test})
	if err != nil {
		fmt.Println(err)
		return
	}
	probs, err := m.PredictRecords(test.X, test.N()) // raw rows, unscaled
	if err != nil {
		fmt.Println(err)
		return
	}
	md, _ := m.Meta()
	fmt.Printf("preprocessing %s, columns %q, classes %q\n", md.Preprocess[0].Type, md.Input.Columns, md.Classes)
	fmt.Printf("raw-row accuracy equals the run's: %v; above 90%%: %v\n", accuracy(probs, test.Y) == sum.TestAcc, sum.TestAcc > 0.9)
	// Output:
	// preprocessing clip_scale, columns ["alcohol" "proline"], classes ["class_a" "class_b"]
	// raw-row accuracy equals the run's: true; above 90%: true
}

// Without a test set, Run refuses: the test set's figures are published,
// so they must not come from rows the claim says it protects. HoldOut
// holds a fraction of the rows out, and the claim says which rows it
// covers.
func ExampleRun_holdOut() {
	cfg := trainer.Default()
	cfg.Model = "logreg"
	cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 1e-4, 2, 200, 1, 1
	cfg.Scale, cfg.FeatureBounds = trainer.ScaleMinMax, "8:18,0:1500"
	cfg.Seeded, cfg.Plots = true, false
	_, err := trainer.Run(context.Background(), cfg, trainer.Options{Train: wine(1000, 1)})
	fmt.Println(strings.Contains(fmt.Sprint(err), "Options.Test is nil"))
	sum, err := trainer.Run(context.Background(), cfg, trainer.Options{Train: wine(1000, 1), HoldOut: 0.2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("trained on %d, tested on %d, covered %d\n", sum.TrainN, sum.TestN, sum.CoveredN)
	_, after, _ := strings.Cut(sum.Claim, "; covers")
	fmt.Println("covers" + strings.Split(after, ";")[0])
	// Output:
	// true
	// trained on 800, tested on 200, covered 800
	// covers the 800 rows of Options.Train trained on, not the 200 held out as the test set (Options.HoldOut), whose figures are published without protection
}

// What a caller records on its own model (SetInput, SetClasses) survives
// Run when the data names nothing; the command line then reads the model
// by column name.
func ExampleRun_keepsOwnDescription() {
	m, err := models.New(models.Spec{Arch: "logreg", InputSize: 2, Classes: 2}, models.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	m.SetInput(models.Input{Kind: "table", Columns: []string{"alcohol", "proline"}, LabelColumn: "class"})
	m.SetClasses([]string{"a", "b"})
	plain := func(n int, seed uint64) *datasets.Dataset { // no schema
		d := wine(n, seed)
		d.Columns, d.ClassNames = nil, nil
		return d
	}
	cfg := trainer.Default()
	cfg.Epsilon, cfg.Delta, cfg.Epochs, cfg.BatchSize, cfg.ClipNorm, cfg.LR = 4, 1e-4, 1, 200, 1, 1
	cfg.Scale, cfg.FeatureBounds = trainer.ScaleMinMax, "8:18,0:1500"
	cfg.Seeded, cfg.Plots = true, false
	if _, err := trainer.Run(context.Background(), cfg, trainer.Options{Model: m, Train: plain(1000, 1), Test: plain(200, 2)}); err != nil {
		fmt.Println(err)
		return
	}
	md, _ := m.Meta()
	fmt.Printf("columns %q, label %q, classes %q, %d preprocessing step\n", md.Input.Columns, md.Input.LabelColumn, md.Classes, len(md.Preprocess))
	// Output: columns ["alcohol" "proline"], label "class", classes ["a" "b"], 1 preprocessing step
}
