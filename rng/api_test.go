package rng_test

import (
	"testing"

	"github.com/dptrain/dptrain/rng"
)

func TestNewIsReproducibleAndChildrenDiffer(t *testing.T) {
	a, b := make([]float32, 8), make([]float32, 8)
	rng.New(7).FillNormal(a, 1)
	rng.New(7).FillNormal(b, 1)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 gave %v then %v", a, b)
		}
	}
	c := make([]float32, 8)
	rng.New(7).Child("noise").FillNormal(c, 1)
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Fatalf("child stream repeats its parent: %v", c)
	}
	s, err := rng.NewCrypto()
	if err != nil {
		t.Fatal(err)
	}
	s.FillNormal(c, 1)
}
