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
	"slices"
	"strconv"
	"strings"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/trainer"
)

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
	fs := newFlagSet("eval", stdout)
	model := fs.String("model", "", "the model file (a run's release/model.bin)")
	cfg := trainer.Default()
	fs.TextVar(&cfg.Dataset, "dataset", trainer.DatasetEmbedded, "embedded | fashion-mnist | mnist | cifar10 | csv | npy | folder")
	fs.StringVar(&cfg.DataDir, "data", "", "data directory (for fashion-mnist, mnist, cifar10, folder)")
	fs.StringVar(&cfg.TrainFile, "train", "", "dataset csv: the training table (with --split train); npy: FEATURES.npy,LABELS.npy")
	fs.StringVar(&cfg.TestFile, "test", "", "dataset csv: the table to evaluate on; npy: FEATURES.npy,LABELS.npy")
	fs.StringVar(&cfg.LabelColumn, "label-column", "", "dataset csv: label column, header name or 0-based index (default: the last)")
	fs.Var(stringList{&cfg.Classes}, "classes", classesUsage+" (give the training run's)")
	fs.IntVar(&cfg.Channels, "channels", 0, channelsUsage+" (give the training run's)")
	fs.StringVar(&cfg.Resize, "resize", "", resizeUsage+" (give the training run's)")
	split := fs.String("split", "test", "test or train (train: a curator's diagnostic of the private records, not covered by ε)")
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
	warnNonFinite(stderr, *model, m.Params())
	md, _ := m.Meta()
	if (cfg.Dataset == trainer.DatasetCSV || cfg.Dataset == trainer.DatasetFolder) && len(cfg.Classes) == 0 {
		// The model's class set maps the labels as in training.
		cfg.Classes = md.Classes
	}
	if cfg.Dataset == trainer.DatasetCSV || cfg.Dataset == trainer.DatasetNPY {
		// Only the evaluated table is needed; the other one may be absent.
		if cfg.TrainFile == "" {
			cfg.TrainFile = cfg.TestFile
		}
		if cfg.TestFile == "" {
			cfg.TestFile = cfg.TrainFile
		}
		if cfg.LabelColumn == "" {
			cfg.LabelColumn = md.Input.LabelColumn
		}
	}
	var (
		ds  *datasets.Dataset
		src string
	)
	if cfg.Dataset == trainer.DatasetCSV && len(md.Input.Columns) == m.InputSize() {
		// The model's columns, by name, with the reader train used.
		file := cfg.TestFile
		if *split == "train" {
			file = cfg.TrainFile
		}
		if ds, err = datasets.LoadCSV(file, datasets.CSVOptions{SniffHeader: true, Label: cfg.LabelColumn,
			Columns: md.Input.Columns, Classes: cfg.Classes}); err != nil {
			return asInput(err)
		}
		src = "csv " + file
	} else {
		l, lsrc, err := trainer.LoadDataset(cfg)
		if err != nil {
			return asInput(err)
		}
		ds, src = l.Test, lsrc
		if *split == "train" {
			ds = l.Train
		}
	}
	switch *split {
	case "test":
	case "train":
		// Figures computed on the training records are not covered by the
		// run's ε: they are for the curator's eyes.
		fmt.Fprintln(stderr, "note: --split train evaluates the model on its training records; these figures are NOT covered by the run's ε: do not publish them")
	default:
		return badInput("--split must be test or train, got %q", *split)
	}
	if ds.Dim() != m.InputSize() {
		return badInput("model %s takes %d inputs; %s has %d features per example", m.Arch(), m.InputSize(), src, ds.Dim())
	}
	if !m.Classifier() {
		return badInput("model %s is a regression; eval reports classification accuracy", m.Arch())
	}
	x := slices.Clone(ds.X)
	if err := m.ApplyPreprocess(x, ds.N()); err != nil {
		return asInput(err)
	}
	loss, correct, err := m.Evaluate(models.Batch{X: x, Y: ds.Y, N: ds.N()})
	if err != nil {
		return err
	}
	probs, err := m.Predict(x, ds.N())
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
		names := ds.ClassNames
		if names == nil {
			names = md.Classes
		}
		if err := writeConfusionPlot(*plotPath, conf, names, title); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote the confusion matrix to %s\n", *plotPath)
	}
	if *jsonOut {
		return json.NewEncoder(stdout).Encode(map[string]any{"model": m.Arch(), "data": src, "split": *split, "n": ds.N(),
			"accuracy": float64(correct) / n, "loss": loss / n, "confusion": conf, "classes": md.Classes})
	}
	fmt.Fprintf(stdout, "model     %s\ndata      %s (%s, %d examples)\naccuracy  %.4f\nloss      %.4f\n", m.Arch(), src, *split, ds.N(), float64(correct)/n, loss/n)
	if len(md.Classes) > 0 {
		fmt.Fprintf(stdout, "classes   %s\n", strings.Join(md.Classes, ", "))
	}
	names := ds.ClassNames
	if names == nil {
		names = md.Classes
	}
	fmt.Fprintln(stdout, "confusion (rows: true class, columns: predicted)")
	writeConfusionText(stdout, conf, names)
	return nil
}

// writeConfusionText prints the confusion matrix with its class names (or
// indices) heading the rows and the columns.
func writeConfusionText(w io.Writer, conf [][]int, names []string) {
	label := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return strconv.Itoa(i)
	}
	first := 0
	for i := range conf {
		first = max(first, len([]rune(label(i))))
	}
	widths := make([]int, len(conf))
	for j := range conf {
		widths[j] = max(6, len([]rune(label(j))))
		for _, row := range conf {
			widths[j] = max(widths[j], len(strconv.Itoa(row[j])))
		}
	}
	fmt.Fprintf(w, "%-*s", first, "")
	for j := range conf {
		fmt.Fprintf(w, " %*s", widths[j], label(j))
	}
	fmt.Fprintln(w)
	for i, row := range conf {
		fmt.Fprintf(w, "%-*s", first, label(i))
		for j, c := range row {
			fmt.Fprintf(w, " %*d", widths[j], c)
		}
		fmt.Fprintln(w)
	}
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
	fs := newFlagSet("predict", stdout)
	model := fs.String("model", "", "the model file (a run's release/model.bin)")
	input := fs.String("input", "", "what to predict: a CSV table of feature rows (a header line is detected; a model that knows its columns reads them by name; its label column, if present, is dropped), a NumPy .npy array of examples (N×D, or N×H×W / N×C×H×W images with values in [0, 1]), one .png/.jpg image, or a directory of them (searched recursively), each of the model's input size (e.g. 32×32 RGB; see --resize)")
	label := fs.String("label-column", "", "column to drop when the input carries labels: header name or 0-based index (default: the last)")
	out := fs.String("out", "", "write the CSV here instead of stdout")
	var conv datasets.ImageFolderOptions
	fs.IntVar(&conv.Channels, "channels", 0, "image input: convert every image to N channels, 1 or 3 (see train --channels); default: the model's, and an image with the other count is an error")
	resize := fs.String("resize", "", "image input: resize every image to the model's size by bilinear interpolation (see train --resize; give the same `HxW`)")
	fullPrecision := fs.Bool("full-precision", false, "print each probability with every digit its float32 value needs to be read back exactly (default: 6 significant digits)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	digits := 6
	if *fullPrecision {
		digits = -1 // the shortest text that reads back as the same float32
	}
	m, err := loadModelFlag(*model)
	if err != nil {
		return err
	}
	warnNonFinite(stderr, *model, m.Params())
	md, _ := m.Meta()
	if *input == "" {
		return badInput("--input FILE.csv or DIR of images is required")
	}
	var (
		x     []float32
		n     int
		files []string // image inputs: the first column of the output
	)
	rh, rw, err := trainer.ParseResize(*resize)
	if err != nil {
		return badInput("%v", err)
	}
	conv.Convert, conv.Resize, conv.Height, conv.Width = conv.Channels != 0, rh > 0, rh, rw
	kind, err := inputKind(*input)
	if err != nil {
		return asInput(err)
	}
	switch kind {
	case inputImages:
		if x, files, err = readImageDir(*input, m, conv); err != nil {
			return asInput(err)
		}
		n = len(files)
	case inputImage:
		files = []string{filepath.Base(*input)}
		if x, err = readImages([]string{*input}, m, conv); err != nil {
			return asInput(err)
		}
		n = 1
	case inputNPY:
		f, err := readModelNPY(*input, m)
		if err != nil {
			return asInput(err)
		}
		defer f.Close()
		x, n = f.X, f.N
	default:
		if x, n, err = readModelCSV(*input, md, m.InputSize(), *label); err != nil {
			return asInput(err)
		}
	}
	if err := m.ApplyPreprocess(x, n); err != nil {
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
	if files != nil {
		cols = append([]string{"file"}, cols...)
	}
	named := m.Classifier() && len(md.Classes) == k
	for j := range k {
		if named {
			cols = append(cols, csvField("p_"+md.Classes[j]))
		} else {
			cols = append(cols, fmt.Sprintf("p%d", j))
		}
	}
	fmt.Fprintln(bw, strings.Join(cols, ","))
	for i := range n {
		row := probs[i*k : (i+1)*k]
		if files != nil {
			fmt.Fprint(bw, csvField(filepath.ToSlash(files[i])), ",")
		}
		if named {
			fmt.Fprint(bw, csvField(md.Classes[argmax(row)]))
		} else {
			fmt.Fprint(bw, argmax(row))
		}
		for _, p := range row {
			fmt.Fprint(bw, ",", strconv.FormatFloat(float64(p), 'g', digits, 32))
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

// readImageDir decodes every image under dir for m: images of the model's
// C×H×W when it takes image planes (converted or resized as conv asks),
// else images whose C·W·H pixels are its inputs (a linear model or MLP
// trained on an image folder reads them flattened). It returns the pixels
// and the files relative to dir.
func readImageDir(dir string, m *models.Net, conv datasets.ImageFolderOptions) ([]float32, []string, error) {
	files, err := datasets.ListImages(dir)
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(dir, f)
	}
	x, err := readImages(paths, m, conv)
	return x, files, err
}

// readImages decodes the image files paths for m (see readImageDir).
func readImages(paths []string, m *models.Net, conv datasets.ImageFolderOptions) ([]float32, error) {
	if s := m.Network().InputShape(); (s.C == 1 || s.C == 3) && s.H > 1 && s.W > 1 {
		if conv.Channels == 0 {
			conv.Channels = s.C
		}
		if conv.Resize && (conv.Width != s.W || conv.Height != s.H) {
			return nil, fmt.Errorf("predict: --resize %dx%d, but %s takes %dx%d images", conv.Height, conv.Width, m.Arch(), s.H, s.W)
		}
		conv.Width, conv.Height = s.W, s.H
	}
	x, c, w, h, err := datasets.LoadImagesAs(paths, conv)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	if c*w*h != m.InputSize() {
		return nil, fmt.Errorf("predict: %s takes %d inputs; %d×%d images of %d channels give %d", m.Arch(), m.InputSize(), w, h, c, c*w*h)
	}
	return x, nil
}

// csvField quotes s when CSV needs it (a comma, quote or line break).
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func runExport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", stdout)
	model := fs.String("model", "", "the model file (a run's release/model.bin; any model, zoo or custom)")
	format := fs.String("format", "safetensors", "safetensors (one file, PyTorch/JAX/NumPy; the model's description in __metadata__[\"model\"]) or npy (a directory of NAME.npy files and model.json); names are PyTorch state_dict keys of scripts/torch_models.py's modules")
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
	tensors, meta, err := exportTensors(*model, f)
	if err != nil {
		return asInput(err)
	}
	var metaJSON []byte
	if meta != nil {
		if metaJSON, err = json.MarshalIndent(meta, "", " "); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stderr, "note: %s does not describe its layers (a version-1 file outside the zoo, or a model this version cannot rebuild): one flat tensor per layer, no model.json\n", *model)
	}
	switch *format {
	case "safetensors":
		b, err := safetensors(f, tensors, metaJSON)
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
		for _, t := range tensors {
			p := filepath.Join(*out, tensorName(t.Name)+".npy")
			if err := os.WriteFile(p, npy(f.Params[t.Offset:t.Offset+t.Len()], t.Shape), 0o644); err != nil {
				return err
			}
		}
		if metaJSON != nil {
			if err := os.WriteFile(filepath.Join(*out, "model.json"), append(metaJSON, '\n'), 0o644); err != nil {
				return err
			}
		}
	default:
		return badInput("--format must be safetensors or npy, got %q", *format)
	}
	fmt.Fprintf(stdout, "exported %s (%d parameters in %d tensors) to %s\n", f.Arch, len(f.Params), len(tensors), *out)
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func tensorName(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// exportTensors names each tensor of f with its shape as the PyTorch
// state_dict of the equivalent modules names it (scripts/torch_models.py:
// "0.weight" [out, in, …], "3.body.0.weight"), with the model's description;
// a file whose model cannot be rebuilt (version 1, outside the zoo)
// exports each group as one flat tensor, and no description. A file whose
// layer description is inconsistent is refused, as load refuses it: its
// tensors' shapes would be wrong.
func exportTensors(path string, f models.ParamFile) ([]nn.ParamTensor, *models.Meta, error) {
	m, err := models.LoadNet(path, models.Options{})
	if errors.Is(err, models.ErrBadDescription) {
		return nil, nil, err
	}
	if err == nil && m.NumParams() == len(f.Params) {
		if ts, err := m.ExportTensors(); err == nil {
			md, _ := m.Meta()
			return ts, &md, nil
		}
	}
	ts := make([]nn.ParamTensor, len(f.Groups))
	for i, g := range f.Groups {
		ts[i] = nn.ParamTensor{Name: g.Name, Offset: g.Offset, Shape: []int{g.Len}}
	}
	return ts, nil, nil
}

// safetensors encodes the tensors as F32 (format: an 8-byte little-endian header size, a JSON header naming each
// tensor's dtype, shape and byte range, padded with spaces to 8 bytes, then
// the data). The architecture and the model's description (models.Meta as
// JSON, key "model") travel in __metadata__, whose values are strings.
func safetensors(f models.ParamFile, tensors []nn.ParamTensor, meta []byte) ([]byte, error) {
	type entry struct {
		Dtype       string   `json:"dtype"`
		Shape       []int    `json:"shape"`
		DataOffsets [2]int64 `json:"data_offsets"`
	}
	md := map[string]string{"arch": f.Arch, "producer": "dptrain"}
	if meta != nil {
		md["model"] = string(meta)
	}
	header := map[string]any{"__metadata__": md}
	for _, t := range tensors {
		n := tensorName(t.Name)
		if _, dup := header[n]; dup {
			return nil, errors.New("export: two parameter tensors named " + n)
		}
		header[n] = entry{"F32", t.Shape, [2]int64{int64(4 * t.Offset), int64(4 * (t.Offset + t.Len()))}}
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
// C order, the given shape).
func npy(v []float32, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += "," // a one-element Python tuple
	}
	h := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple)
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
