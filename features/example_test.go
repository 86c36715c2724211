package features_test

import (
	"fmt"

	"github.com/dptrain/dptrain/features"
)

// ExampleScatterNet turns CIFAR-sized images (channel planes, pixels in
// [0,1]) into Tramèr & Boneh's 243×8×8 ScatterNet features, then
// normalises each example on its own (no privacy cost).
func ExampleScatterNet() {
	const n = 2
	x := make([]float32, n*3*32*32)
	for i := range x {
		x[i] = float32(i%32) / 31 // a horizontal ramp
	}
	feats, shape, err := features.ScatterNet(x, n, [3]int{3, 32, 32})
	if err != nil {
		panic(err)
	}
	fmt.Println(shape, len(feats)/n)
	if err := features.GroupNormalize(feats, n, shape, 27, 1e-5); err != nil {
		panic(err)
	}
	// Output: [243 8 8] 15552
}
