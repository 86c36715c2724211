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
	// The image models count each example's input and output only: 2·4
	// bytes per value, (784 + 10) values per example of the CNN.
	if params, bytes, ok := (Spec{Arch: "mnistcnn"}).footprint(64); !ok || params != 0 || bytes != 8*64*(784+10) {
		t.Errorf("CNN: %v parameters, %v bytes (%v); want 0 and %v", params, bytes, ok, 8*64*(784+10))
	}
	for _, tc := range []struct {
		s        Spec
		maxBatch int
	}{
		{Spec{Arch: "mlp", InputSize: 784, Classes: 10, Widths: []int{2000000000}}, 0},
		{Spec{Arch: "logreg", InputSize: 1 << 50, Classes: 10}, 0},
		{Spec{Arch: "mnistcnn"}, 1e12},
		{Spec{Arch: "resnet20gn"}, 1e12},
	} {
		if _, err := New(tc.s, Options{MaxBatch: tc.maxBatch}); !errors.Is(err, sysmem.ErrTooLarge) {
			t.Errorf("%+v, max batch %d: %v, want a refusal for memory", tc.s, tc.maxBatch, err)
		}
	}
}
