package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/trainer"
)

func init() {
	register(&command{name: "eval", summary: "accuracy, loss and confusion matrix of a saved model: --model RUN/release/model.bin --dataset … [--split test] [--plot FILE.png]", run: runEval})
	register(&command{name: "predict", summary: "class probabilities as CSV: --model FILE --input FILE.csv [--out FILE.csv]", run: runPredict})
	register(&command{name: "export", summary: "a model's weights for PyTorch/NumPy/JAX: --model FILE --format safetensors|npy --out PATH", run: runExport})
}

// loadModelFlag rebuilds the zoo model saved at path; a mismatch or a
// corrupt or foreign file is bad input.
func loadModelFlag(path string) (*models.Net, error) {
	if path == "" {
		return nil, badInput("--model FILE is required (a run's release/model.bin)")
	}
	m, err := models.LoadNet(path, models.Options{})
	if err != nil {
		return nil, asInput(err)
	}
	return m, nil
}

func runEval(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	model := fs.String("model", "", "the model file (a run's release/model.bin)")
	cfg := trainer.Default()
	fs.StringVar(&cfg.Dataset, "dataset", "embedded", "embedded | fashion-mnist | mnist | cifar10 | csv | folder")
	fs.StringVar(&cfg.DataDir, "data", "", "data directory (for fashion-mnist, mnist, cifar10, folder)")
	fs.StringVar(&cfg.TrainFile, "train", "", "dataset csv: the training table (with --split train)")
	fs.StringVar(&cfg.TestFile, "test", "", "dataset csv: the table to evaluate on")
	fs.StringVar(&cfg.LabelColumn, "label-column", "", "dataset csv: label column, header name or 0-based index (default: the last)")
	split := fs.String("split", "test", "test or train")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	plotPath := fs.String("plot", "", "also draw the confusion matrix as a heat map to `FILE.png` (or .svg): rows the true class, columns the predicted one, each cell coloured by its share of the row, with its count and percentage")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if ext := strings.ToLower(filepath.Ext(*plotPath)); *plotPath != "" && ext != ".png" && ext != ".svg" {
		return badInput("--plot %s: the name must end in .png or .svg", *plotPath)
	}
	m, err := loadModelFlag(*model)
	if err != nil {
		return err
	}
	if cfg.Dataset == "csv" {
		// Only the evaluated table is needed; the other one may be absent.
		if cfg.TrainFile == "" {
			cfg.TrainFile = cfg.TestFile
		}
		if cfg.TestFile == "" {
			cfg.TestFile = cfg.TrainFile
		}
	}
	l, src, err := trainer.LoadDataset(cfg)
	if err != nil {
		return asInput(err)
	}
	ds := l.Test
	switch *split {
	case "test":
	case "train":
		ds = l.Train
	default:
		return badInput("--split must be test or train, got %q", *split)
	}
	if ds.Dim() != m.InputSize() {
		return badInput("model %s takes %d inputs; %s has %d features per example", m.Arch(), m.InputSize(), src, ds.Dim())
	}
	if !m.Classifier() {
		return badInput("model %s is a regression; eval reports classification accuracy", m.Arch())
	}
	loss, correct, err := m.Evaluate(models.Batch{X: ds.X, Y: ds.Y, N: ds.N()})
	if err != nil {
		return err
	}
	probs, err := m.Predict(ds.X, ds.N())
	if err != nil {
		return err
	}
	k := len(probs) / max(ds.N(), 1)
	conf := make([][]int, k)
	for i := range conf {
		conf[i] = make([]int, k)
	}
	for i, y := range ds.Y {
		if y < k {
			conf[y][argmax(probs[i*k:(i+1)*k])]++
		}
	}
	n := float64(ds.N())
	if *plotPath != "" && k > maxConfusionClasses {
		return badInput("--plot: %d classes, more than the %d a readable image holds; use --json for the matrix", k, maxConfusionClasses)
	}
	if *plotPath != "" {
		title := fmt.Sprintf("%s on %s (%s), %d examples, accuracy %.3f", m.Arch(), src, *split, ds.N(), float64(correct)/n)
		if err := writeConfusionPlot(*plotPath, conf, ds.ClassNames, title); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote the confusion matrix to %s\n", *plotPath)
	}
	if *jsonOut {
		return json.NewEncoder(stdout).Encode(map[string]any{"model": m.Arch(), "data": src, "split": *split, "n": ds.N(),
			"accuracy": float64(correct) / n, "loss": loss / n, "confusion": conf})
	}
	fmt.Fprintf(stdout, "model     %s\ndata      %s (%s, %d examples)\naccuracy  %.4f\nloss      %.4f\n", m.Arch(), src, *split, ds.N(), float64(correct)/n, loss/n)
	fmt.Fprintln(stdout, "confusion (rows: true class, columns: predicted)")
	for _, row := range conf {
		for j, c := range row {
			if j > 0 {
				fmt.Fprint(stdout, " ")
			}
			fmt.Fprintf(stdout, "%6d", c)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func runPredict(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict", stderr)
	model := fs.String("model", "", "the model file (a run's release/model.bin)")
	input := fs.String("input", "", "CSV of feature rows (a header line is detected; with one column more than the model's inputs, --label-column is dropped)")
	label := fs.String("label-column", "", "column to drop when the input carries labels: header name or 0-based index (default: the last)")
	out := fs.String("out", "", "write the CSV here instead of stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := loadModelFlag(*model)
	if err != nil {
		return err
	}
	if *input == "" {
		return badInput("--input FILE.csv is required")
	}
	x, n, err := readFeatureCSV(*input, m.InputSize(), *label)
	if err != nil {
		return asInput(err)
	}
	probs, err := m.Predict(x, n)
	if err != nil {
		return err
	}
	w := stdout
	if *out != "" {
		fh, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer fh.Close()
		w = fh
	}
	bw := bufio.NewWriter(w)
	k := len(probs) / max(n, 1)
	cols := []string{"predicted"}
	for j := range k {
		cols = append(cols, fmt.Sprintf("p%d", j))
	}
	fmt.Fprintln(bw, strings.Join(cols, ","))
	for i := range n {
		row := probs[i*k : (i+1)*k]
		fmt.Fprint(bw, argmax(row))
		for _, p := range row {
			fmt.Fprint(bw, ",", strconv.FormatFloat(float64(p), 'g', 6, 32))
		}
		fmt.Fprintln(bw)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if *out != "" {
		fmt.Fprintf(stderr, "wrote %d predictions to %s\n", n, *out)
	}
	return nil
}

// readFeatureCSV reads rows of d features, or d+1 columns of which the
// label column is dropped.
func readFeatureCSV(path string, d int, label string) ([]float32, int, error) {
	opts := datasets.CSVOptions{LabelIndex: -1}
	if i, aerr := strconv.Atoi(label); aerr == nil {
		opts.LabelIndex = i
	} else {
		opts.Label = label
	}
	header, err := datasets.SniffCSVHeader(path, opts.LabelIndex)
	if err != nil {
		return nil, 0, err
	}
	opts.Header = header
	if probe, err := datasets.LoadCSV(path, opts); err == nil && probe.Dim() == d {
		return probe.X, probe.N(), nil
	}
	// No label column: every column is a feature.
	if header, err = datasets.SniffCSVHeader(path, datasets.NoColumn); err != nil {
		return nil, 0, err
	}
	x, n, got, err := datasets.LoadFeatureCSV(path, header)
	if err != nil {
		return nil, 0, err
	}
	if got != d && got != d+1 {
		return nil, 0, fmt.Errorf("csv %s: %d columns per row; the model takes %d features", path, got, d)
	}
	if got != d {
		return nil, 0, fmt.Errorf("csv %s: %d columns per row, and dropping the label column %q did not leave %d features", path, got, label, d)
	}
	return x, n, nil
}

func runExport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", stderr)
	model := fs.String("model", "", "the model file (a run's release/model.bin; any model, zoo or custom)")
	format := fs.String("format", "safetensors", "safetensors (one file, PyTorch/JAX/NumPy) or npy (a directory of GROUP.npy files)")
	out := fs.String("out", "", "output file (safetensors) or directory (npy)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *model == "" || *out == "" {
		return badInput("--model FILE and --out PATH are required")
	}
	fh, err := os.Open(*model)
	if err != nil {
		return asInput(err)
	}
	f, err := models.ReadParams(fh, models.MaxFileParams)
	fh.Close()
	if err != nil {
		return asInput(fmt.Errorf("%s: %w", *model, err))
	}
	switch *format {
	case "safetensors":
		b, err := safetensors(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			return err
		}
	case "npy":
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		for _, g := range f.Groups {
			p := filepath.Join(*out, tensorName(g.Name)+".npy")
			if err := os.WriteFile(p, npy(f.Params[g.Offset:g.Offset+g.Len]), 0o644); err != nil {
				return err
			}
		}
	default:
		return badInput("--format must be safetensors or npy, got %q", *format)
	}
	fmt.Fprintf(stdout, "exported %s (%d parameters in %d tensors) to %s\n", f.Arch, len(f.Params), len(f.Groups), *out)
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func tensorName(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// safetensors encodes the parameter groups as F32 tensors of shape [len]
// (format: an 8-byte little-endian header size, a JSON header naming each
// tensor's dtype, shape and byte range, padded with spaces to 8 bytes, then
// the data). The architecture travels in __metadata__.
func safetensors(f models.ParamFile) ([]byte, error) {
	type entry struct {
		Dtype       string   `json:"dtype"`
		Shape       []int    `json:"shape"`
		DataOffsets [2]int64 `json:"data_offsets"`
	}
	header := map[string]any{"__metadata__": map[string]string{"arch": f.Arch, "producer": "dptrain"}}
	for _, g := range f.Groups {
		n := tensorName(g.Name)
		if _, dup := header[n]; dup {
			return nil, errors.New("export: two parameter groups named " + n)
		}
		header[n] = entry{"F32", []int{g.Len}, [2]int64{int64(4 * g.Offset), int64(4 * (g.Offset + g.Len))}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	b = append(b, h...)
	for _, v := range f.Params {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b, nil
}

// npy encodes v as a NumPy .npy file (format 1.0, little-endian float32,
// shape (len(v),)).
func npy(v []float32) []byte {
	h := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }", len(v))
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	b = append(b, h...)
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}
