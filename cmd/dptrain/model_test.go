package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models"
)

// savedLogreg writes a 3-feature, 3-class logistic regression whose
// weights pick feature j for class j, and a CSV it classifies perfectly.
func savedLogreg(t *testing.T) (dir, model, csv string, m *models.Net) {
	t.Helper()
	dir = t.TempDir()
	m, err := models.NewLogisticRegression(3, 3, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := m.Params()
	for i := range p {
		p[i] = 0
	}
	// Layout: W (3 classes × 3 features, row-major) then b; eval's
	// accuracy of 1 below checks it.
	for j := range 3 {
		p[j*3+j] = 5
	}
	model = filepath.Join(dir, "model.bin")
	if err := m.SaveFile(model); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("f0,f1,f2,label\n")
	for i := range 9 {
		c := i % 3
		row := []string{"0", "0", "0"}
		row[c] = "1"
		fmt.Fprintf(&b, "%s,%d\n", strings.Join(row, ","), c)
	}
	csv = filepath.Join(dir, "test.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, model, csv, m
}

func TestEvalPredict(t *testing.T) {
	_, model, csv, _ := savedLogreg(t)
	code, out, errb := runCLI(t, "eval", "--model", model, "--dataset", "csv", "--test", csv, "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errb)
	}
	var r struct {
		Accuracy  float64
		N         int
		Confusion [][]int
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.N != 9 || r.Accuracy != 1 || r.Confusion[1][1] != 3 || r.Confusion[0][1] != 0 {
		t.Fatalf("eval: %+v, want 9 examples all right", r)
	}
	if strings.Contains(errb, "NOT covered") {
		t.Errorf("eval on the test split warns: %q", errb)
	}
	// On the training split the figures describe private records: said so.
	if code, _, errb = runCLI(t, "eval", "--model", model, "--dataset", "csv", "--train", csv, "--split", "train", "--json"); code != 0 || !strings.Contains(errb, "NOT covered by the run's ε") {
		t.Errorf("eval --split train: exit %d, stderr %q; want a note that ε does not cover it", code, errb)
	}
	code, out, errb = runCLI(t, "predict", "--model", model, "--input", csv)
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 10 || lines[0] != "predicted,p0,p1,p2" || !strings.HasPrefix(lines[2], "1,") {
		t.Fatalf("predict printed %q", out)
	}
	// p = softmax(5, 0, 0) for the true class.
	want := math.Exp(5) / (math.Exp(5) + 2)
	var p float64
	fmt.Sscanf(strings.Split(lines[1], ",")[1], "%g", &p)
	if math.Abs(p-want) > 1e-5 {
		t.Fatalf("p0 of row 0 = %v, want %v", p, want)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"eval", "--dataset", "csv", "--test", csv}},
		{[]string{"eval", "--model", csv, "--dataset", "csv", "--test", csv}},
		{[]string{"predict", "--model", model}},
	} {
		if code, _, _ := runCLI(t, tc.args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
	}
}

// readSafetensors parses a file by the format's own rules
// (huggingface/safetensors README): u64 LE header size N, N bytes of JSON
// {name: {dtype, shape, data_offsets [begin, end)}} plus an optional
// __metadata__ of strings; offsets are relative to the byte buffer after the
// header, must cover it exactly without overlap, and an F32 tensor's byte
// length is 4 × Π shape.
func readSafetensors(t *testing.T, b []byte) (map[string][]float32, map[string][]int, map[string]string) {
	t.Helper()
	if len(b) < 8 {
		t.Fatal("shorter than the size prefix")
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) {
		t.Fatalf("header size %d exceeds the file", n)
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		t.Fatalf("header: %v", err)
	}
	buf := b[8+n:]
	vals, shapes, meta := map[string][]float32{}, map[string][]int{}, map[string]string{}
	covered := 0
	for name, raw := range hdr {
		if name == "__metadata__" {
			if err := json.Unmarshal(raw, &meta); err != nil {
				t.Fatalf("metadata must map strings to strings: %v", err)
			}
			continue
		}
		var e struct {
			Dtype       string `json:"dtype"`
			Shape       []int  `json:"shape"`
			DataOffsets []int  `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		size := 4
		for _, d := range e.Shape {
			size *= d
		}
		if e.Dtype != "F32" || len(e.DataOffsets) != 2 || e.DataOffsets[1]-e.DataOffsets[0] != size || e.DataOffsets[1] > len(buf) {
			t.Fatalf("%s: %+v does not fit the buffer of %d bytes", name, e, len(buf))
		}
		v := make([]float32, size/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[e.DataOffsets[0]+4*i:]))
		}
		vals[name], shapes[name] = v, e.Shape
		covered += size
	}
	if covered != len(buf) {
		t.Fatalf("tensors cover %d of %d data bytes", covered, len(buf))
	}
	return vals, shapes, meta
}

func TestExportSafetensorsAndNpy(t *testing.T) {
	dir, model, _, m := savedLogreg(t)
	st := filepath.Join(dir, "m.safetensors")
	if code, _, errb := runCLI(t, "export", "--model", model, "--format", "safetensors", "--out", st); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errb)
	}
	b, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	vals, shapes, meta := readSafetensors(t, b)
	// A logistic regression is one Linear layer: weight [classes, inputs]
	// and bias [classes], PyTorch's nn.Linear layout.
	tensors, err := m.ExportTensors()
	if err != nil {
		t.Fatal(err)
	}
	if meta["arch"] != m.Arch() || len(vals) != 2 || len(tensors) != 2 || tensors[0].Name != "0.weight" {
		t.Fatalf("metadata %v and %d tensors, want arch %s and weight, bias", meta, len(vals), m.Arch())
	}
	wantShapes := [][]int{{m.Network().OutputShape().Size(), m.InputSize()}, {m.Network().OutputShape().Size()}}
	for k, tn := range tensors {
		name := tensorName(tn.Name)
		if !strings.HasSuffix(name, []string{".weight", ".bias"}[k]) || fmt.Sprint(shapes[name]) != fmt.Sprint(wantShapes[k]) {
			t.Fatalf("tensor %d: %s of shape %v, want …%s of shape %v", k, name, shapes[name], []string{".weight", ".bias"}[k], wantShapes[k])
		}
		for i, x := range vals[name] {
			if x != m.Params()[tn.Offset+i] {
				t.Fatalf("%s[%d] = %v, want %v", name, i, x, m.Params()[tn.Offset+i])
			}
		}
	}
	var md models.Meta
	if err := json.Unmarshal([]byte(meta["model"]), &md); err != nil || md.Output != "softmax" || len(md.Layers) != 1 || md.Layers[0].Type != "linear" {
		t.Fatalf("metadata model %q: %v", meta["model"], err)
	}
	np := filepath.Join(dir, "npy")
	if code, _, errb := runCLI(t, "export", "--model", model, "--format", "npy", "--out", np); code != 0 {
		t.Fatalf("export npy: exit %d: %s", code, errb)
	}
	for k, tn := range tensors {
		raw, err := os.ReadFile(filepath.Join(np, tensorName(tn.Name)+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		// .npy 1.0: magic, version, u16 header length, header, data; the
		// data starts at a multiple of 64.
		hl := int(binary.LittleEndian.Uint16(raw[8:]))
		hdr := string(raw[10 : 10+hl])
		tuple := []string{fmt.Sprintf("(%d, %d)", m.Network().OutputShape().Size(), m.InputSize()), fmt.Sprintf("(%d,)", m.Network().OutputShape().Size())}[k]
		if string(raw[:8]) != "\x93NUMPY\x01\x00" || (10+hl)%64 != 0 || !strings.Contains(hdr, "'<f4'") || !strings.Contains(hdr, "'shape': "+tuple) || len(raw)-10-hl != 4*tn.Len() {
			t.Fatalf("npy header %q, %d data bytes; want shape %s", hdr, len(raw)-10-hl, tuple)
		}
	}
	if b, err := os.ReadFile(filepath.Join(np, "model.json")); err != nil || !json.Valid(b) || !strings.Contains(string(b), `"tensors": [`) {
		t.Fatalf("model.json: %v %s", err, b)
	}
	if code, _, _ := runCLI(t, "export", "--model", model, "--format", "onnx", "--out", st); code != 2 {
		t.Errorf("--format onnx: exit %d, want 2", code)
	}
}

// writePNG writes a w×h image of one colour.
func writePNG(t *testing.T, path string, w, h int, c color.NRGBA) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An image folder in, a model trained on it by --dataset folder, and
// predict reading a directory of images: one row per file, in name order,
// the file first; an image of another size is bad input naming the file.
func TestPredictImageFolder(t *testing.T) {
	dir := t.TempDir()
	red, blue := color.NRGBA{R: 255, A: 255}, color.NRGBA{B: 255, A: 255}
	for _, split := range []string{"train", "test"} {
		for i := range 20 {
			writePNG(t, filepath.Join(dir, split, "red", fmt.Sprintf("%02d.png", i)), 4, 4, red)
			writePNG(t, filepath.Join(dir, split, "blue", fmt.Sprintf("%02d.png", i)), 4, 4, blue)
		}
	}
	run := filepath.Join(dir, "run")
	if code, _, errb := runCLI(t, "train", "--dataset", "folder", "--data", dir, "--model", "logreg", "--steps", "20",
		"--batch", "20", "--sigma", "0.3", "--epsilon", "0", "--clip-norm", "1", "--lr", "1", "--seed", "1", "--quiet", "--out", run); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb)
	}
	model := filepath.Join(run, "release", "model.bin")
	saved, err := models.LoadNet(model, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if md, _ := saved.Meta(); md.Input.Kind != "image" || md.Input.Channels != "rgb" || fmt.Sprint(md.Input.Image) != "[3 4 4]" ||
		md.Input.Scale != 1.0/255 || md.Input.Layout != "CHW" || fmt.Sprint(md.Classes) != "[blue red]" {
		t.Fatalf("model.bin describes its input as %+v, classes %v", md.Input, md.Classes)
	}
	code, out, errb := runCLI(t, "predict", "--model", model, "--input", filepath.Join(dir, "test"))
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 41 || lines[0] != "file,predicted,p_blue,p_red" {
		t.Fatalf("predict: %d lines, header %q", len(lines), lines[0])
	}
	// Classes are the sorted class directories, printed by name.
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		wantFile, wantClass := fmt.Sprintf("blue/%02d.png", i), "blue"
		if i >= 20 {
			wantFile, wantClass = fmt.Sprintf("red/%02d.png", i-20), "red"
		}
		if f[0] != wantFile || f[1] != wantClass {
			t.Errorf("row %d: %q, want file %s predicted %s", i, line, wantFile, wantClass)
		}
	}
	odd := filepath.Join(dir, "test", "red", "zz.png")
	writePNG(t, odd, 5, 5, red)
	if code, _, errb := runCLI(t, "predict", "--model", model, "--input", filepath.Join(dir, "test")); code != 2 || !strings.Contains(errb, odd) {
		t.Errorf("a 5×5 image among 4×4: exit %d, %q; want 2 naming %s", code, errb, odd)
	}
}
