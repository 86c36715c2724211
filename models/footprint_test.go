package models

import (
	"errors"
	"testing"

	"github.com/dptrain/dptrain/internal/sysmem"
)

// The estimate's parameter count is the built model's, and a model whose
// size cannot fit is refused before any allocation (it would have died
// with "out of memory").
func TestFootprint(t *testing.T) {
	for _, s := range []Spec{
		{Arch: "logreg", InputSize: 784, Classes: 10},
		{Arch: "linreg", InputSize: 13},
		{Arch: "mlp", InputSize: 784, Classes: 10, Widths: []int{256}},
		{Arch: "mlp", InputSize: 20, Classes: 3, Widths: []int{7, 5, 9}},
	} {
		m, err := New(s, Options{Seed: 1})
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		params, bytes, ok := s.footprint(256)
		if !ok || params != float64(m.NumParams()) || bytes < 8*params {
			t.Errorf("%+v: estimate %v parameters, %v bytes (%v); the model has %d", s, params, bytes, ok, m.NumParams())
		}
	}
	if _, _, ok := (Spec{Arch: "mnistcnn"}).footprint(64); ok {
		t.Error("the CNN's fixed size has an estimate")
	}
	for _, s := range []Spec{
		{Arch: "mlp", InputSize: 784, Classes: 10, Widths: []int{2000000000}},
		{Arch: "logreg", InputSize: 1 << 50, Classes: 10},
	} {
		if _, err := New(s, Options{}); !errors.Is(err, sysmem.ErrTooLarge) {
			t.Errorf("%+v: %v, want a refusal for memory", s, err)
		}
	}
}
