package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
)

// customStack is a FromLayers model with every describable layer type.
func customStack(t *testing.T) *Net {
	t.Helper()
	ws := nn.NewWSConv2d[float32](4, 4, 3, 1, 1)
	m, err := FromLayers("custom", nn.Shape{C: 2, H: 6, W: 6}, 0, 3,
		nn.NewConv2d[float32](2, 4, 3, 1, 1, true), nn.NewGroupNorm[float32](2, 4, true), nn.NewReLU[float32](),
		nn.NewResidual[float32](nn.NewSequential[float32](ws, nn.NewTanh[float32]()), nil),
		nn.NewResidual[float32](nn.NewConv2d[float32](4, 3, 1, 1, 0, false), nn.NewConv2d[float32](4, 3, 3, 1, 1, true)),
		nn.NewAvgPool2d[float32](2, 2), nn.NewMaxPool2d[float32](2, 1),
		nn.NewDropout[float32](0.25, rng.New(1)), nn.NewFlatten[float32](),
		nn.NewLinear[float32](12, 5, true), nn.NewReLU[float32](), nn.NewLinear[float32](5, 3, false))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSaveRoundTripEveryModel saves every zoo model and a FromLayers stack
// with usage metadata and reads it back: same architecture, description,
// parameters and predictions, bit for bit.
func TestSaveRoundTripEveryModel(t *testing.T) {
	build := map[string]func() (*Net, error){
		"logreg2":  func() (*Net, error) { return NewLogisticRegression(5, 2, Options{}) },
		"logreg3":  func() (*Net, error) { return NewLogisticRegression(5, 3, Options{}) },
		"linreg":   func() (*Net, error) { return NewLinearRegression(5, Options{}) },
		"mlp":      func() (*Net, error) { return NewMLP(5, []int{7, 6}, 3, "tanh", Options{Seed: 1}) },
		"mnistcnn": func() (*Net, error) { return NewMNISTCNN(Options{Seed: 2}) },
		"scatcnn":  func() (*Net, error) { return NewScatterCNN(nn.Shape{C: 3, H: 4, W: 4}, 4, Options{Seed: 3}) },
		"resnet20": func() (*Net, error) { return NewResNet20GN(10, Options{Seed: 4}) },
		"resnet22ws": func() (*Net, error) {
			return New(Spec{Arch: "resnet22", Classes: 3, WeightStd: true}, Options{Seed: 5})
		},
		"custom": func() (*Net, error) { return customStack(t), nil },
	}
	for name, mk := range build {
		t.Run(name, func(t *testing.T) {
			m, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			s := rng.New(9)
			for i := range m.Params() {
				m.Params()[i] = float32(s.NormFloat64() * 0.1)
			}
			m.SetClasses([]string{"a", "b", "c"})
			m.SetInput(Input{Kind: "table", Columns: []string{"x1", "x2"}, LabelColumn: "y"})
			m.SetPreprocess([]Transform{{Type: "l2_normalize", C: 2}})
			var buf bytes.Buffer
			if err := m.Save(&buf); err != nil {
				t.Fatal(err)
			}
			got, err := ReadNet(bytes.NewReader(buf.Bytes()), "m.bin", Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := m.Meta()
			have, err := got.Meta()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, have) {
				t.Fatalf("meta changed:\n%+v\n%+v", want, have)
			}
			if got.Arch() != m.Arch() || !slices.Equal(got.Params(), m.Params()) || !slices.Equal(got.Groups(), m.Groups()) {
				t.Fatal("architecture, parameters or groups changed")
			}
			x := make([]float32, 3*m.InputSize())
			for i := range x {
				x[i] = float32(s.NormFloat64())
			}
			p1, err1 := m.Predict(x, 3)
			p2, err2 := got.Predict(x, 3)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p1, p2) {
				t.Fatalf("predictions differ: %v vs %v", p1[:3], p2[:3])
			}
		})
	}
}

// TestSaveReadsVersion1 loads testdata/v1_logreg_4_3.bin, written by the
// version-1 writer (logreg(4,3), parameter i = i/4 − 1).
func TestSaveReadsVersion1(t *testing.T) {
	b, err := os.ReadFile("testdata/v1_logreg_4_3.bin")
	if err != nil {
		t.Fatal(err)
	}
	if v := b[8]; v != 1 {
		t.Fatalf("fixture version %d", v)
	}
	m, err := ReadNet(bytes.NewReader(b), "v1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Arch() != "logreg(4,3)" || m.NumParams() != 15 {
		t.Fatalf("got %s with %d parameters", m.Arch(), m.NumParams())
	}
	for i, v := range m.Params() {
		if v != float32(i)*0.25-1 {
			t.Fatalf("parameter %d = %v", i, v)
		}
	}
	f, err := ReadParams(bytes.NewReader(b), MaxFileParams)
	if err != nil || f.Meta != nil {
		t.Fatalf("v1 file: meta %v, err %v", f.Meta, err)
	}
	md, err := m.Meta()
	if err != nil || md.Output != "softmax" || len(md.Layers) != 1 || md.Layers[0].Type != "linear" {
		t.Fatalf("meta of a v1 model: %+v, %v", md, err)
	}
}

// TestSaveLongMeta: metadata past version 1's 4 KiB string cap round-trips,
// and a header claiming more metadata than the file holds is refused.
func TestSaveLongMeta(t *testing.T) {
	m, _ := NewLogisticRegression(2, 2, Options{})
	cols := make([]string, 2000)
	for i := range cols {
		cols[i] = "column_with_a_long_name"
	}
	m.SetInput(Input{Columns: cols})
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNet(bytes.NewReader(buf.Bytes()), "m", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if md, _ := got.Meta(); len(md.Input.Columns) != 2000 {
		t.Fatalf("%d columns", len(md.Input.Columns))
	}
	b := buf.Bytes()[:200]
	if _, err := ReadParams(bytes.NewReader(b), MaxFileParams); err == nil {
		t.Fatal("truncated metadata accepted")
	}
}

// TestExportTensorNames checks names and shapes against the PyTorch modules
// of scripts/torch_models.py.
func TestExportTensorNames(t *testing.T) {
	type tensor struct {
		name  string
		shape []int
	}
	for _, tc := range []struct {
		name    string
		mk      func() (*Net, error)
		count   int
		checked []tensor // a selection, by index: first, a middle one, last
		at      []int
	}{
		{"logreg2", func() (*Net, error) { return NewLogisticRegression(30, 2, Options{}) }, 2,
			[]tensor{{"0.weight", []int{1, 30}}, {"0.bias", []int{1}}}, []int{0, 1}},
		{"mlp", func() (*Net, error) { return NewMLP(64, []int{32}, 10, "relu", Options{}) }, 4,
			[]tensor{{"0.weight", []int{32, 64}}, {"2.weight", []int{10, 32}}, {"2.bias", []int{10}}}, []int{0, 2, 3}},
		{"mnistcnn", func() (*Net, error) { return NewMNISTCNN(Options{}) }, 8,
			[]tensor{{"0.weight", []int{16, 1, 8, 8}}, {"3.weight", []int{32, 16, 4, 4}}, {"7.weight", []int{32, 512}}, {"9.bias", []int{10}}},
			[]int{0, 2, 4, 7}},
		{"scatcnn", func() (*Net, error) { return NewScatterCNN(nn.Shape{C: 243, H: 8, W: 8}, 10, Options{}) }, 6,
			[]tensor{{"0.weight", []int{64, 243, 3, 3}}, {"3.bias", []int{64}}, {"6.weight", []int{10, 1024}}}, []int{0, 3, 4}},
		// Stem conv, GN (2), 9 blocks × 6, 2 shortcuts × 3, linear (2).
		{"resnet20gn", func() (*Net, error) { return NewResNet20GN(10, Options{}) }, 65,
			[]tensor{{"0.weight", []int{16, 3, 3, 3}}, {"1.bias", []int{16}}, {"3.body.0.weight", []int{16, 16, 3, 3}},
				{"3.body.1.weight", []int{16}}, {"9.body.0.weight", []int{32, 16, 3, 3}}, {"9.shortcut.0.weight", []int{32, 16, 1, 1}},
				{"9.shortcut.1.bias", []int{32}}, {"22.weight", []int{10, 64}}, {"22.bias", []int{10}}},
			[]int{0, 2, 3, 4, 21, 27, 29, 63, 64}},
		{"custom", func() (*Net, error) { return customStack(t), nil }, 11,
			[]tensor{{"0.weight", []int{4, 2, 3, 3}}, {"1.weight", []int{4}}, {"3.body.0.weight", []int{4, 4, 3, 3}},
				{"4.body.weight", []int{3, 4, 1, 1}}, {"4.shortcut.bias", []int{3}}, {"9.bias", []int{5}}, {"11.weight", []int{3, 5}}},
			[]int{0, 2, 4, 5, 7, 9, 10}},
	} {
		m, err := tc.mk()
		if err != nil {
			t.Fatal(err)
		}
		ts, err := m.ExportTensors()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(ts) != tc.count {
			t.Errorf("%s: %d tensors, want %d", tc.name, len(ts), tc.count)
			continue
		}
		total := 0
		for _, x := range ts {
			if x.Offset != total {
				t.Errorf("%s: %s at %d, want %d", tc.name, x.Name, x.Offset, total)
			}
			total += x.Len()
		}
		if total != m.NumParams() {
			t.Errorf("%s: tensors cover %d of %d parameters", tc.name, total, m.NumParams())
		}
		for i, w := range tc.checked {
			g := ts[tc.at[i]]
			if g.Name != w.name || !slices.Equal(g.Shape, w.shape) {
				t.Errorf("%s: tensor %d is %s %v, want %s %v", tc.name, tc.at[i], g.Name, g.Shape, w.name, w.shape)
			}
		}
	}
}

// TestMetaDescribesLayers checks the description of the MNIST CNN against
// its definition (tanh, strides, padding, shapes) and of a weight-
// standardised ResNet's convolutions.
func TestMetaDescribesLayers(t *testing.T) {
	m, _ := NewMNISTCNN(Options{})
	md, err := m.Meta()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, l := range md.Layers {
		types = append(types, l.Type)
	}
	want := []string{"conv2d", "tanh", "maxpool2d", "conv2d", "tanh", "maxpool2d", "flatten", "linear", "tanh", "linear"}
	if !slices.Equal(types, want) {
		t.Fatalf("layers %v, want %v", types, want)
	}
	c := md.Layers[0]
	if c.In != 1 || c.Out != 16 || c.Kernel != 8 || c.Stride != 2 || c.Padding != 3 || !c.Bias || !slices.Equal(c.OutShape, []int{16, 14, 14}) {
		t.Fatalf("first conv %+v", c)
	}
	if p := md.Layers[5]; !slices.Equal(p.OutShape, []int{32, 4, 4}) || p.Stride != 1 {
		t.Fatalf("second pool %+v", p)
	}
	if !slices.Equal(md.Input.Shape, []int{1, 28, 28}) || md.Output != "softmax" || md.Loss != "softmax_cross_entropy" {
		t.Fatalf("input %v output %s loss %s", md.Input.Shape, md.Output, md.Loss)
	}
	r, _ := New(Spec{Arch: "resnet20", WeightStd: true}, Options{})
	rd, _ := r.Meta()
	if s := rd.Layers[0]; !s.WeightStd || s.Eps != nn.DefaultWSEps || s.Bias {
		t.Fatalf("ws stem %+v", s)
	}
	if g := rd.Layers[1]; g.Type != "groupnorm" || g.Groups != 4 || g.In != 16 || !g.Affine || g.Eps != 1e-5 {
		t.Fatalf("groupnorm %+v", g)
	}
	b, _ := json.Marshal(rd)
	if len(b) <= maxString {
		t.Fatalf("ResNet metadata of %d bytes fits version 1's cap: test the long path elsewhere", len(b))
	}
}

// TestApplyTransforms checks the preprocessing steps on hand-computed rows.
func TestApplyTransforms(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   []Transform
		x    []float32
		want []float32
		err  bool
	}{
		{"normalize", []Transform{{Type: "l2_normalize", C: 10}}, []float32{3, 4, 0, 0}, []float32{6, 8, 0, 0}, false},
		{"center", []Transform{{Type: "center", C: 5, Mean: []float64{1, -1}}}, []float32{3, 4, 0, 1}, []float32{2, 5, -1, 6}, false},
		// Clipped to [0,16]×[-1,1], minus (4, 0), divided by (2, 0.5).
		{"clip_scale", []Transform{{Type: "clip_scale", Lo: []float64{0, -1}, Hi: []float64{16, 1}, Mean: []float64{4, 0}, Scale: []float64{2, 0.5}}}, []float32{20, 0.25, -3, -9}, []float32{6, 0.5, -2, -2}, false},
		{"clip_scale short", []Transform{{Type: "clip_scale", Lo: []float64{0}, Hi: []float64{16}, Mean: []float64{4}, Scale: []float64{2}}}, []float32{1, 2, 3, 4}, nil, true},
		{"clip_scale zero scale", []Transform{{Type: "clip_scale", Lo: []float64{0, 0}, Hi: []float64{1, 1}, Mean: []float64{0, 0}, Scale: []float64{1, 0}}}, []float32{1, 2, 3, 4}, nil, true},
		{"withheld", []Transform{{Type: "withheld", Name: "standardize"}}, []float32{1, 2, 3, 4}, nil, true},
		{"unknown", []Transform{{Type: "pca"}}, []float32{1, 2, 3, 4}, nil, true},
	} {
		x := slices.Clone(tc.x)
		err := ApplyTransforms(tc.ts, x, 2, 2)
		if (err != nil) != tc.err {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if tc.err {
			continue
		}
		for i := range x {
			if math.Abs(float64(x[i]-tc.want[i])) > 1e-6 {
				t.Errorf("%s: got %v, want %v", tc.name, x, tc.want)
				break
			}
		}
	}
}

// TestReadNetRefusesInconsistentMeta: a description whose layers do not
// hold the file's parameters, or whose input is out of range, is refused
// before anything is built for it.
func TestReadNetRefusesInconsistentMeta(t *testing.T) {
	m, _ := NewMLP(4, []int{8}, 3, "relu", Options{})
	good, _ := m.Meta()
	// Each refusal says what is wrong with the description, naming the
	// layer; before, an out-of-range size read "the layers hold -1
	// parameters".
	for _, tc := range []struct {
		name string
		edit func(*Meta)
		want string
	}{
		{"wider layer", func(md *Meta) { md.Layers[0].Out = 1 << 20 }, "describe 5242907 parameters, but the file holds 67"}, // 4·2^20 + 2^20 + 8·3 + 3
		{"huge input", func(md *Meta) { md.Input.Shape = []int{1 << 20, 1 << 20, 1} }, "input shape [1048576 1048576 1] out of range"},
		{"negative size", func(md *Meta) { md.Layers[2].In = -8 }, "layer 2 (linear) has in = -8, outside [0, 1073741824]"},
		{"huge kernel", func(md *Meta) { md.Layers[0].Kernel = 1 << 13 }, "layer 0 (linear) has kernel = 8192"},
		{"conv overflow", func(md *Meta) {
			md.Layers[0] = LayerSpec{Type: "conv2d", In: 1 << 30, Out: 1 << 30, Kernel: 1 << 12}
		}, "layer 0 (conv2d) describes more than 1073741824 parameters"},
		{"nested", func(md *Meta) {
			md.Layers = []LayerSpec{{Type: "sequential", Layers: []LayerSpec{md.Layers[0], {Type: "linear", In: -1, Out: 3}}}}
		}, "layer 0.1 (linear) has in = -1"},
		{"bias dropped", func(md *Meta) { md.Layers[2].Bias = false }, "describe 64 parameters, but the file holds 67"},
	} {
		b, _ := json.Marshal(good)
		var md Meta
		json.Unmarshal(b, &md)
		tc.edit(&md)
		var buf bytes.Buffer
		if err := WriteParams(&buf, ParamFile{Arch: m.Arch(), Meta: &md, Groups: m.Groups(), Params: m.Params()}); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadNet(&buf, "m.bin", Options{}); !errors.Is(err, ErrBadDescription) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
		}
	}
	var buf bytes.Buffer
	WriteParams(&buf, ParamFile{Arch: m.Arch(), Meta: &good, Groups: m.Groups(), Params: m.Params()})
	if _, err := ReadNet(&buf, "m.bin", Options{}); err != nil {
		t.Fatalf("the unedited description: %v", err)
	}
}
