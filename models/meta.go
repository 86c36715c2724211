package models

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
)

// Meta is what a model file says about its model besides the parameters:
// enough to rebuild and use it without this package (scripts/torch_models.py
// and scripts/numpy_client.py read it from an export).
type Meta struct {
	Arch  string `json:"arch"`
	Input Input  `json:"input"`
	// Layers is the network, first layer first; nil for a network with a
	// layer this package cannot describe (it is then rebuilt from Arch).
	Layers []LayerSpec `json:"layers,omitempty"`
	// Loss is "softmax_cross_entropy", "logistic" (one logit, labels 0/1)
	// or "squared" (regression).
	Loss string `json:"loss,omitempty"`
	// Output is how Predict maps the network's outputs: "softmax",
	// "sigmoid" (one logit z: the columns 1−σ(z), σ(z)) or "identity".
	Output string `json:"output,omitempty"`
	// Classes names each class index (public: a test set's, or given).
	Classes []string `json:"classes,omitempty"`
	// Preprocess lists the transforms applied to a record's features, in
	// order, before the network sees them.
	Preprocess []Transform `json:"preprocess,omitempty"`
}

// Input describes what the network reads.
type Input struct {
	// Shape is the per-example shape the network takes, [C, H, W].
	Shape []int `json:"shape"`
	// Kind is "table" or "image" ("" when unknown).
	Kind string `json:"kind,omitempty"`
	// Columns are a table's feature columns (from its header line), in the
	// order the network reads them; LabelColumn is the label column's name
	// (or 0-based index without a header) and LabelIndex its 0-based
	// position in the training table.
	Columns     []string `json:"columns,omitempty"`
	LabelColumn string   `json:"label_column,omitempty"`
	LabelIndex  int      `json:"label_index,omitempty"`
	// Image is an image's shape [C, H, W] as read (a linear model or MLP
	// reads it flattened); Layout its values' order: "CHW" (channel planes
	// of rows).
	Image  []int  `json:"image,omitempty"`
	Layout string `json:"layout,omitempty"`
	// Channels is "rgb" or "gray" for images.
	Channels string `json:"channels,omitempty"`
	// Scale multiplies a raw value (an 8-bit pixel: 1/255) before the
	// preprocessing; 0 means 1.
	Scale float64 `json:"scale,omitempty"`
}

// Transform is one preprocessing step applied to every record.
type Transform struct {
	// Type is "l2_normalize" (the record scaled to L2 norm C, zero records
	// left alone), "center" (l2_normalize to C when C > 0, then minus
	// Mean), "clip_scale" (each feature clipped to [Lo, Hi], then minus
	// Mean, divided by Scale: docs/tabular.md) or "withheld" (a step whose
	// statistics the file does not hold, Name says which; Apply refuses it).
	Type  string    `json:"type"`
	C     float64   `json:"c,omitempty"`
	Mean  []float64 `json:"mean,omitempty"`
	Name  string    `json:"name,omitempty"`
	Lo    []float64 `json:"lo,omitempty"`
	Hi    []float64 `json:"hi,omitempty"`
	Scale []float64 `json:"scale,omitempty"`
}

// LayerSpec is one layer. Shapes are per example, [C, H, W]; Tensors names
// the layer's parameter tensors (weight, then bias) as export names them,
// the PyTorch state_dict keys of the equivalent module (scripts/torch_models.py).
type LayerSpec struct {
	// Type is linear, conv2d, relu, tanh, maxpool2d, avgpool2d,
	// globalavgpool, flatten, groupnorm, dropout, sequential or residual.
	Type     string   `json:"type"`
	InShape  []int    `json:"in_shape"`
	OutShape []int    `json:"out_shape"`
	Tensors  []string `json:"tensors,omitempty"`
	// In and Out are a linear layer's features or a convolution's
	// channels; In is a groupnorm's channels.
	In  int `json:"in,omitempty"`
	Out int `json:"out,omitempty"`
	// Kernel, Stride and Padding of convolutions and pools (square).
	Kernel  int  `json:"kernel,omitempty"`
	Stride  int  `json:"stride,omitempty"`
	Padding int  `json:"padding,omitempty"`
	Bias    bool `json:"bias,omitempty"`
	// WeightStd: the convolution uses its kernels standardised per output
	// channel, (w − mean)/√(var + Eps), biased variance.
	WeightStd bool `json:"weight_std,omitempty"`
	// Groups, Affine and Eps of a groupnorm.
	Groups int     `json:"groups,omitempty"`
	Affine bool    `json:"affine,omitempty"`
	Eps    float64 `json:"eps,omitempty"`
	// P is a dropout's probability (identity at prediction).
	P float64 `json:"p,omitempty"`
	// Layers of a sequential; Body and Shortcut (nil: identity) of a
	// residual, whose output is body(x) + shortcut(x).
	Layers   []LayerSpec `json:"layers,omitempty"`
	Body     *LayerSpec  `json:"body,omitempty"`
	Shortcut *LayerSpec  `json:"shortcut,omitempty"`
}

// ErrUndescribed is returned for a network with a layer of a type Meta
// cannot describe (one defined outside models/nn).
var ErrUndescribed = errors.New("layer type not describable")

func shapeOf(s nn.Shape) []int { return []int{s.C, s.H, s.W} }

// describeLayers describes layers fed in, their torch module paths under
// prefix ("" at the top), indexed from 0.
func describeLayers(layers []nn.Layer[float32], in nn.Shape, prefix string) ([]LayerSpec, nn.Shape, error) {
	specs := make([]LayerSpec, len(layers))
	for i, l := range layers {
		s, out, err := describeLayer(l, in, prefix+strconv.Itoa(i))
		if err != nil {
			return nil, nn.Shape{}, err
		}
		specs[i], in = s, out
	}
	return specs, in, nil
}

// describeLayer describes l on input in; path is its torch module path.
func describeLayer(l nn.Layer[float32], in nn.Shape, path string) (LayerSpec, nn.Shape, error) {
	s := LayerSpec{InShape: shapeOf(in)}
	out := in
	tensors := func(bias bool) {
		s.Tensors = []string{path + ".weight"}
		if bias {
			s.Tensors = append(s.Tensors, path+".bias")
		}
	}
	conv := func(c *nn.Conv2d[float32]) {
		s.Type, s.In, s.Out, s.Kernel, s.Stride, s.Padding, s.Bias = "conv2d", c.Cin, c.Cout, c.K, c.Stride, c.Pad, c.Bias
		out = nn.Shape{C: c.Cout, H: (in.H+2*c.Pad-c.K)/c.Stride + 1, W: (in.W+2*c.Pad-c.K)/c.Stride + 1}
		tensors(c.Bias)
	}
	pool := func(kind string, k, stride int) {
		s.Type, s.Kernel, s.Stride = kind, k, stride
		out = nn.Shape{C: in.C, H: (in.H-k)/stride + 1, W: (in.W-k)/stride + 1}
	}
	switch v := l.(type) {
	case *nn.Linear[float32]:
		s.Type, s.In, s.Out, s.Bias = "linear", v.In, v.Out, v.Bias
		out = nn.Vec(v.Out)
		tensors(v.Bias)
	case *nn.WSConv2d[float32]:
		conv(v.Conv2d)
		s.WeightStd, s.Eps = true, v.Eps
	case *nn.Conv2d[float32]:
		conv(v)
	case *nn.ReLU[float32]:
		s.Type = "relu"
	case *nn.Tanh[float32]:
		s.Type = "tanh"
	case *nn.Dropout[float32]:
		s.Type, s.P = "dropout", v.P
	case *nn.MaxPool2d[float32]:
		pool("maxpool2d", v.K, v.Stride)
	case *nn.AvgPool2d[float32]:
		pool("avgpool2d", v.K, v.Stride)
	case *nn.GlobalAvgPool[float32]:
		s.Type, out = "globalavgpool", nn.Vec(in.C)
	case *nn.Flatten[float32]:
		s.Type, out = "flatten", nn.Vec(in.Size())
	case *nn.GroupNorm[float32]:
		s.Type, s.In, s.Groups, s.Affine, s.Eps = "groupnorm", v.Channels, v.Groups, v.Affine, v.Eps
		if v.Affine {
			tensors(true)
		}
	case *nn.Sequential[float32]:
		s.Type = "sequential"
		var err error
		if s.Layers, out, err = describeLayers(v.Children(), in, path+"."); err != nil {
			return LayerSpec{}, nn.Shape{}, err
		}
	case *nn.Residual[float32]:
		s.Type = "residual"
		body, bout, err := describeLayer(v.Body, in, path+".body")
		if err != nil {
			return LayerSpec{}, nn.Shape{}, err
		}
		s.Body, out = &body, bout
		if v.Shortcut != nil {
			sc, _, err := describeLayer(v.Shortcut, in, path+".shortcut")
			if err != nil {
				return LayerSpec{}, nn.Shape{}, err
			}
			s.Shortcut = &sc
		}
	default:
		return LayerSpec{}, nn.Shape{}, fmt.Errorf("%s (%T): %w", path, l, ErrUndescribed)
	}
	s.OutShape = shapeOf(out)
	return s, out, nil
}

// buildLayers rebuilds the layers specs describe.
func buildLayers(specs []LayerSpec) ([]nn.Layer[float32], error) {
	out := make([]nn.Layer[float32], len(specs))
	for i, s := range specs {
		l, err := buildLayer(s)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		out[i] = l
	}
	return out, nil
}

func buildLayer(s LayerSpec) (nn.Layer[float32], error) {
	switch s.Type {
	case "linear":
		return nn.NewLinear[float32](s.In, s.Out, s.Bias), nil
	case "conv2d":
		if s.WeightStd {
			if s.Bias {
				return nil, errors.New("conv2d: a weight-standardised convolution has no bias")
			}
			c := nn.NewWSConv2d[float32](s.In, s.Out, s.Kernel, s.Stride, s.Padding)
			c.Eps = s.Eps
			return c, nil
		}
		return nn.NewConv2d[float32](s.In, s.Out, s.Kernel, s.Stride, s.Padding, s.Bias), nil
	case "relu":
		return nn.NewReLU[float32](), nil
	case "tanh":
		return nn.NewTanh[float32](), nil
	case "dropout":
		// Identity at prediction; the stream only feeds training masks.
		return nn.NewDropout[float32](s.P, rng.New(0)), nil
	case "maxpool2d":
		return nn.NewMaxPool2d[float32](s.Kernel, s.Stride), nil
	case "avgpool2d":
		return nn.NewAvgPool2d[float32](s.Kernel, s.Stride), nil
	case "globalavgpool":
		return nn.NewGlobalAvgPool[float32](), nil
	case "flatten":
		return nn.NewFlatten[float32](), nil
	case "groupnorm":
		g := nn.NewGroupNorm[float32](s.Groups, s.In, s.Affine)
		g.Eps = s.Eps
		return g, nil
	case "sequential":
		ls, err := buildLayers(s.Layers)
		if err != nil {
			return nil, err
		}
		return nn.NewSequential(ls...), nil
	case "residual":
		if s.Body == nil {
			return nil, errors.New("residual without a body")
		}
		body, err := buildLayer(*s.Body)
		if err != nil {
			return nil, fmt.Errorf("residual body: %w", err)
		}
		var sc nn.Layer[float32]
		if s.Shortcut != nil {
			if sc, err = buildLayer(*s.Shortcut); err != nil {
				return nil, fmt.Errorf("residual shortcut: %w", err)
			}
		}
		return nn.NewResidual(body, sc), nil
	}
	return nil, fmt.Errorf("unknown layer type %q", s.Type)
}

func lossName(l nn.Loss[float32]) string {
	switch l.(type) {
	case *nn.SoftmaxCrossEntropy[float32]:
		return "softmax_cross_entropy"
	case nn.LogisticLoss[float32], *nn.LogisticLoss[float32]:
		return "logistic"
	case nn.SquaredLoss[float32], *nn.SquaredLoss[float32]:
		return "squared"
	}
	return ""
}

func lossOf(name string) (nn.Loss[float32], bool, error) {
	switch name {
	case "softmax_cross_entropy":
		return &nn.SoftmaxCrossEntropy[float32]{}, true, nil
	case "logistic":
		return nn.LogisticLoss[float32]{}, true, nil
	case "squared":
		return nn.SquaredLoss[float32]{}, false, nil
	}
	return nil, false, fmt.Errorf("unknown loss %q", name)
}

// SetInput records what the model reads (its Shape is the network's).
func (m *Net) SetInput(in Input) { m.usage.Input = in }

// SetClasses records the class names (public: the test set's or given).
func (m *Net) SetClasses(names []string) { m.usage.Classes = append([]string(nil), names...) }

// SetPreprocess records the transforms applied to records before the
// network.
func (m *Net) SetPreprocess(ts []Transform) { m.usage.Preprocess = append([]Transform(nil), ts...) }

// Meta describes the model: architecture, layers, loss, input, classes and
// preprocessing. Layers is nil (and err ErrUndescribed) for a network with
// a layer type outside models/nn.
func (m *Net) Meta() (Meta, error) {
	md := m.usage
	md.Arch = m.arch
	md.Input.Shape = shapeOf(m.net.InputShape())
	md.Loss = lossName(m.net.Loss())
	switch md.Loss {
	case "softmax_cross_entropy":
		md.Output = "softmax"
	case "logistic":
		md.Output = "sigmoid"
	case "squared":
		md.Output = "identity"
	}
	specs, _, err := describeLayers(m.net.Layers(), m.net.InputShape(), "")
	if err != nil {
		return md, err
	}
	md.Layers = specs
	return md, nil
}

// ErrBadDescription marks a model file whose layer description is
// inconsistent: a size out of range, or layers that do not hold the
// parameters the file carries. Such a file is refused by load and export
// alike, never exported as if it were right.
var ErrBadDescription = errors.New("the model file's layer description is inconsistent")

// specParams is the parameter count of the layers specs describe; at is
// the layers' position ("layer 2", "layer 3.body") for messages. A size out
// of range is an error naming the layer and the field.
func specParams(specs []LayerSpec, at string) (int, error) {
	total := 0
	for i, s := range specs {
		where := fmt.Sprintf("%s%d (%s)", at, i, s.Type)
		for _, f := range []struct {
			name     string
			v, limit int
		}{{"in", s.In, MaxFileParams}, {"out", s.Out, MaxFileParams}, {"kernel", s.Kernel, 1 << 12}} {
			if f.v < 0 || f.v > f.limit {
				return 0, fmt.Errorf("%w: layer %s has %s = %d, outside [0, %d]", ErrBadDescription, where, f.name, f.v, f.limit)
			}
		}
		n := 0
		switch s.Type {
		case "linear":
			n = s.In * s.Out
		case "conv2d":
			n = s.Out * s.In * s.Kernel * s.Kernel
		case "groupnorm":
			if s.Affine {
				n = 2 * s.In
			}
		case "sequential":
			k, err := specParams(s.Layers, fmt.Sprintf("%s%d.", at, i))
			if err != nil {
				return 0, err
			}
			n = k
		case "residual":
			for _, b := range []struct {
				name string
				l    *LayerSpec
			}{{"body", s.Body}, {"shortcut", s.Shortcut}} {
				if b.l != nil {
					k, err := specParams([]LayerSpec{*b.l}, fmt.Sprintf("%s%d.%s.", at, i, b.name))
					if err != nil {
						return 0, err
					}
					n += k
				}
			}
		}
		if s.Bias && (s.Type == "linear" || s.Type == "conv2d") {
			n += s.Out
		}
		// Each factor is at most 2^30, so n (at most 2^72 before this
		// check) may have wrapped: recheck with the factors' own bound.
		if n < 0 || n > MaxFileParams || (s.Type == "conv2d" && s.Kernel > 0 && s.Out > 0 && s.In > MaxFileParams/(s.Kernel*s.Kernel*s.Out)) || (s.Type == "linear" && s.Out > 0 && s.In > MaxFileParams/s.Out) {
			return 0, fmt.Errorf("%w: layer %s describes more than %d parameters", ErrBadDescription, where, MaxFileParams)
		}
		if total += n; total > MaxFileParams {
			return 0, fmt.Errorf("%w: the layers up to %s describe more than %d parameters", ErrBadDescription, where, MaxFileParams)
		}
	}
	return total, nil
}

// maxInput bounds a described input's values per example.
const maxInput = 1 << 24

// fromMeta rebuilds the network md describes, which must hold params
// parameters: a description is checked against the data present before
// any buffer is allocated for it.
func fromMeta(md Meta, params int, o Options) (*Net, error) {
	if len(md.Input.Shape) != 3 {
		return nil, fmt.Errorf("%w: input shape %v: want [C, H, W]", ErrBadDescription, md.Input.Shape)
	}
	if c, h, w := md.Input.Shape[0], md.Input.Shape[1], md.Input.Shape[2]; c <= 0 || h <= 0 || w <= 0 || c > maxInput || h > maxInput || w > maxInput || c*h*w > maxInput {
		return nil, fmt.Errorf("%w: input shape %v out of range", ErrBadDescription, md.Input.Shape)
	}
	n, err := specParams(md.Layers, "")
	if err != nil {
		return nil, err
	}
	if n != params {
		return nil, fmt.Errorf("%w: its layers describe %d parameters, but the file holds %d", ErrBadDescription, n, params)
	}
	loss, classifier, err := lossOf(md.Loss)
	if err != nil {
		return nil, err
	}
	layers, err := buildLayers(md.Layers)
	if err != nil {
		return nil, err
	}
	in := nn.Shape{C: md.Input.Shape[0], H: md.Input.Shape[1], W: md.Input.Shape[2]}
	def := 256
	if in.H > 1 || in.W > 1 {
		def = 64
	}
	net, err := nn.NewNetwork(in, o.maxBatch(def), loss, layers...)
	if err != nil {
		return nil, err
	}
	m := newNet(md.Arch, net, classifier)
	m.usage = Meta{Input: md.Input, Classes: md.Classes, Preprocess: md.Preprocess}
	return m, nil
}

// Tensors with torch names: ExportTensors lists the parameter tensors under
// the names of Meta's layers (PyTorch state_dict keys: "0.weight",
// "3.body.0.weight"), in the order of Params.
func (m *Net) ExportTensors() ([]nn.ParamTensor, error) {
	md, err := m.Meta()
	if err != nil {
		return nil, err
	}
	var names []string
	var walk func([]LayerSpec)
	walk = func(ls []LayerSpec) {
		for _, l := range ls {
			names = append(names, l.Tensors...)
			walk(l.Layers)
			if l.Body != nil {
				walk([]LayerSpec{*l.Body})
			}
			if l.Shortcut != nil {
				walk([]LayerSpec{*l.Shortcut})
			}
		}
	}
	walk(md.Layers)
	ts := m.Tensors()
	if len(ts) != len(names) {
		return nil, fmt.Errorf("%s: %d tensors, %d names", m.arch, len(ts), len(names))
	}
	for i := range ts {
		ts[i].Name = names[i]
	}
	return ts, nil
}

// PredictRecords is Predict on num raw records x (row-major, as the data
// the model was trained from held them before any preprocessing): it
// applies the model's recorded preprocessing to a copy first, as the
// command line's predict does. x is not modified.
func (m *Net) PredictRecords(x []float32, num int) ([]float32, error) {
	c := slices.Clone(x)
	if err := m.ApplyPreprocess(c, num); err != nil {
		return nil, err
	}
	return m.Predict(c, num)
}

// ApplyPreprocess applies the model's preprocessing to n records x in place
// (after Input.Scale, which the caller applies when reading raw values).
func (m *Net) ApplyPreprocess(x []float32, n int) error {
	return ApplyTransforms(m.usage.Preprocess, x, n, m.InputSize())
}

// ApplyTransforms applies ts to n records of d features in place. A
// "withheld" step is an error naming it.
func ApplyTransforms(ts []Transform, x []float32, n, d int) error {
	if len(x) != n*d {
		return fmt.Errorf("preprocess: %d values for %d records of %d features", len(x), n, d)
	}
	normalize := func(c float64) {
		for i := range n {
			row := x[i*d : (i+1)*d]
			var ss float64
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			if ss == 0 {
				continue
			}
			f := c / math.Sqrt(ss)
			for j, v := range row {
				row[j] = float32(float64(v) * f)
			}
		}
	}
	for _, t := range ts {
		switch t.Type {
		case "l2_normalize":
			normalize(t.C)
		case "center":
			if len(t.Mean) != d {
				return fmt.Errorf("preprocess center: %d means for %d features", len(t.Mean), d)
			}
			if t.C > 0 {
				normalize(t.C)
			}
			for i := range n {
				for j := range d {
					x[i*d+j] = float32(float64(x[i*d+j]) - t.Mean[j])
				}
			}
		case "clip_scale":
			if len(t.Lo) != d || len(t.Hi) != d || len(t.Mean) != d || len(t.Scale) != d {
				return fmt.Errorf("preprocess clip_scale: %d/%d/%d/%d bounds, centres and scales for %d features", len(t.Lo), len(t.Hi), len(t.Mean), len(t.Scale), d)
			}
			for j := range d {
				if !(t.Scale[j] > 0) || !(t.Lo[j] <= t.Hi[j]) {
					return fmt.Errorf("preprocess clip_scale: feature %d needs lo <= hi and scale > 0, got %v:%v and %v", j, t.Lo[j], t.Hi[j], t.Scale[j])
				}
			}
			for i := range n {
				for j := range d {
					v := min(max(float64(x[i*d+j]), t.Lo[j]), t.Hi[j])
					x[i*d+j] = float32((v - t.Mean[j]) / t.Scale[j])
				}
			}
		case "withheld":
			return fmt.Errorf("preprocess %s: the model was trained on features transformed with statistics its file does not hold; apply the same transform before predicting", t.Name)
		default:
			return fmt.Errorf("preprocess: unknown step %q", t.Type)
		}
	}
	return nil
}
