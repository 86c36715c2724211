package models

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

func TestReadNetRebuildsEveryLinearZooModel(t *testing.T) {
	for _, build := range []func() (*Net, error){
		func() (*Net, error) { return NewLogisticRegression(5, 3, Options{Seed: 1}) },
		func() (*Net, error) { return NewLinearRegression(4, Options{Seed: 1}) },
		func() (*Net, error) { return NewMLP(6, []int{7, 5}, 4, "tanh", Options{Seed: 2}) },
	} {
		m, err := build()
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Params() {
			m.Params()[i] = float32(i%11) / 10
		}
		var buf bytes.Buffer
		if err := m.Save(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := ReadNet(&buf, "model.bin", Options{})
		if err != nil {
			t.Fatalf("%s: %v", m.Arch(), err)
		}
		if got.Arch() != m.Arch() || !slices.Equal(got.Params(), m.Params()) {
			t.Fatalf("%s: read back %s with other parameters", m.Arch(), got.Arch())
		}
		x := make([]float32, 3*m.InputSize())
		for i := range x {
			x[i] = float32(i%5) - 2
		}
		p, err := got.Predict(x, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Classifier() {
			continue
		}
		k := len(p) / 3
		for i := range 3 {
			var s float64
			for _, v := range p[i*k : (i+1)*k] {
				s += float64(v)
			}
			if math.Abs(s-1) > 1e-5 {
				t.Errorf("%s: probabilities of row %d sum to %v", m.Arch(), i, s)
			}
		}
	}
}

func TestReadNetErrors(t *testing.T) {
	for _, tc := range []struct {
		f    ParamFile
		want error
	}{
		{ParamFile{Arch: "custom", Groups: []Group{{Name: "w", Offset: 0, Len: 2}}, Params: []float32{1, 2}}, ErrUnknownArch},
		{ParamFile{Arch: "logreg(2,2)", Groups: []Group{{Name: "w", Offset: 0, Len: 2}}, Params: []float32{1, 2}}, ErrArchMismatch},
	} {
		var buf bytes.Buffer
		if err := WriteParams(&buf, tc.f); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadNet(&buf, "m.bin", Options{}); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.f.Arch, err, tc.want)
		}
	}
	for _, arch := range []string{"logreg(2)", "mlp(3,x,2,relu)", "logreg(0,2)"} {
		if _, err := FromArch(arch, Options{}); err == nil {
			t.Errorf("FromArch(%q) accepted", arch)
		}
	}
}

// A two-class logistic regression has one logit; Predict still gives two
// columns, σ(z) for class 1, and their argmax agrees with Evaluate's count
// of correct predictions.
func TestPredictBinary(t *testing.T) {
	m, err := NewLogisticRegression(2, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	copy(m.Params(), []float32{2, -1, 0.5}) // z = 2·x0 − x1 + 0.5
	x := []float32{1, 0, 0, 3, -1, -1, 0, 0.5}
	y := []int{1, 0, 0, 1}
	p, err := m.Predict(x, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 8 {
		t.Fatalf("%d outputs for 4 examples, want 8", len(p))
	}
	correct := 0
	for i := range 4 {
		z := 2*float64(x[2*i]) - float64(x[2*i+1]) + 0.5
		want := 1 / (1 + math.Exp(-z))
		if math.Abs(float64(p[2*i+1])-want) > 1e-6 || math.Abs(float64(p[2*i]+p[2*i+1])-1) > 1e-6 {
			t.Errorf("row %d: %v, want [%v %v]", i, p[2*i:2*i+2], 1-want, want)
		}
		pred := 0
		if p[2*i+1] > p[2*i] {
			pred = 1
		}
		if pred == y[i] {
			correct++
		}
	}
	_, evalCorrect, err := m.Evaluate(Batch{X: x, Y: y, N: 4})
	if err != nil {
		t.Fatal(err)
	}
	if correct != evalCorrect {
		t.Errorf("Predict's argmax gets %d right, Evaluate %d", correct, evalCorrect)
	}
}

// The MNIST CNN of any class count is rebuilt from its architecture name,
// with the same weights a fresh build from the same seed has.
func TestMNISTCNNClassesFromArch(t *testing.T) {
	for _, k := range []int{2, 3, 10, 26} {
		m, err := NewMNISTCNNClasses(k, Options{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		r, err := FromArch(m.Arch(), Options{Seed: 7})
		if err != nil {
			t.Fatalf("%d classes (%s): %v", k, m.Arch(), err)
		}
		if r.Arch() != m.Arch() || !slices.Equal(r.Params(), m.Params()) || r.NumParams() != 26010-330+33*k {
			t.Errorf("%d classes: rebuilt %s with %d parameters", k, r.Arch(), r.NumParams())
		}
	}
	old, _ := NewMNISTCNN(Options{Seed: 7})
	ten, _ := NewMNISTCNNClasses(10, Options{Seed: 7})
	if old.Arch() != "mnistcnn" || !slices.Equal(old.Params(), ten.Params()) {
		t.Errorf("10 classes: %s, weights differ from NewMNISTCNN's", ten.Arch())
	}
}
