package models

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dptrain/dptrain/models/nn"
)

// ErrUnknownArch is returned by FromArch for an architecture it cannot
// rebuild: a model defined in the caller's code (its parameters are still
// readable with ReadParams).
var ErrUnknownArch = errors.New("architecture not in the zoo")

// FromArch rebuilds the zoo model an architecture name describes (the name
// a parameter file stores: "logreg(784,10)", "mlp(784,256,10,relu)",
// "mnistcnn", "mnistcnn(3)", "scatcnn(243,8,8,10)", "resnet20gn(10)", "resnet22gn(10)").
func FromArch(arch string, o Options) (*Net, error) {
	name, args, _ := strings.Cut(strings.TrimSuffix(arch, ")"), "(")
	var parts []string
	if args != "" {
		parts = strings.Split(args, ",")
	}
	ints := func(ss []string) ([]int, error) {
		out := make([]int, len(ss))
		for i, s := range ss {
			v, err := strconv.Atoi(s)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("architecture %q: bad size %q", arch, s)
			}
			out[i] = v
		}
		return out, nil
	}
	want := func(n int) ([]int, error) {
		if len(parts) != n {
			return nil, fmt.Errorf("architecture %q: want %d sizes, got %d", arch, n, len(parts))
		}
		return ints(parts)
	}
	switch name {
	case "logreg":
		v, err := want(2)
		if err != nil {
			return nil, err
		}
		return NewLogisticRegression(v[0], v[1], o)
	case "linreg":
		v, err := want(1)
		if err != nil {
			return nil, err
		}
		return NewLinearRegression(v[0], o)
	case "mlp":
		if len(parts) < 3 {
			return nil, fmt.Errorf("architecture %q: want in, widths…, out, activation", arch)
		}
		v, err := ints(parts[:len(parts)-1])
		if err != nil {
			return nil, err
		}
		return NewMLP(v[0], v[1:len(v)-1], v[len(v)-1], parts[len(parts)-1], o)
	case "mnistcnn":
		if len(parts) == 0 {
			return NewMNISTCNN(o)
		}
		v, err := want(1)
		if err != nil {
			return nil, err
		}
		return NewMNISTCNNClasses(v[0], o)
	case "scatcnn":
		v, err := want(4)
		if err != nil {
			return nil, err
		}
		return NewScatterCNN(nn.Shape{C: v[0], H: v[1], W: v[2]}, v[3], o)
	case "resnet20gn", "resnet22gn":
		v, err := want(1)
		if err != nil {
			return nil, err
		}
		if name == "resnet20gn" {
			return NewResNet20GN(v[0], o)
		}
		return NewResNet22(v[0], o)
	}
	return nil, fmt.Errorf("%q: %w (load its parameters with ReadParams into your own model)", arch, ErrUnknownArch)
}

// LoadNet reads a parameter file (a run's model.bin) and rebuilds its model:
// from the layers its metadata describes (version 2), or from its
// architecture name (version 1, zoo models only).
func LoadNet(path string, o Options) (*Net, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return ReadNet(fh, path, o)
}

// ReadNet is LoadNet from a reader; name appears in errors.
func ReadNet(r io.Reader, name string, o Options) (*Net, error) {
	f, err := ReadParams(r, MaxFileParams)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var m *Net
	if f.Meta != nil && len(f.Meta.Layers) > 0 {
		// A version-2 file describes its layers: zoo and custom stacks alike.
		if m, err = fromMeta(*f.Meta, len(f.Params), o); err != nil {
			return nil, fmt.Errorf("%s: rebuilding %s: %w", name, f.Arch, err)
		}
	} else if m, err = FromArch(f.Arch, o); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Meta != nil {
		m.usage = Meta{Input: f.Meta.Input, Classes: f.Meta.Classes, Preprocess: f.Meta.Preprocess}
	}
	if !slices.Equal(f.Groups, m.groups) || len(f.Params) != m.NumParams() {
		return nil, fmt.Errorf("%s: %s holds %d parameters in %d groups, this version builds %d in %d: %w",
			name, f.Arch, len(f.Params), len(f.Groups), m.NumParams(), len(m.groups), ErrArchMismatch)
	}
	copy(m.Params(), f.Params)
	return m, nil
}

// Predict returns the model's outputs for num examples x (row-major): class
// probabilities (softmax of the logits) for a classifier, the prediction for
// a regression. A binary classifier with one logit z (logistic regression on
// two classes) gives two columns, 1 − σ(z) and σ(z), so that row i's argmax
// is its predicted label for every classifier.
func (m *Net) Predict(x []float32, num int) ([]float32, error) {
	in := m.InputSize()
	if len(x) != num*in {
		return nil, fmt.Errorf("predict: %d values for %d examples of %d features", len(x), num, in)
	}
	m.SetTraining(false)
	var out []float32
	for lo := 0; lo < num; lo += m.MaxBatch() {
		hi := min(num, lo+m.MaxBatch())
		z, err := m.net.Forward(x[lo*in:hi*in], hi-lo)
		if err != nil {
			return nil, err
		}
		out = append(out, z...)
	}
	if !m.classifier {
		return out, nil
	}
	k := len(out) / max(num, 1)
	if k == 1 {
		two := make([]float32, 2*num)
		for i, z := range out {
			p := 1 / (1 + math.Exp(-float64(z)))
			two[2*i], two[2*i+1] = float32(1-p), float32(p)
		}
		return two, nil
	}
	for i := range num {
		row := out[i*k : (i+1)*k]
		top := slices.Max(row)
		var s float64
		for j, v := range row {
			e := math.Exp(float64(v - top))
			row[j] = float32(e)
			s += e
		}
		for j := range row {
			row[j] = float32(float64(row[j]) / s)
		}
	}
	return out, nil
}
