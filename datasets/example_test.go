package datasets_test

import (
	"fmt"

	"github.com/dptrain/dptrain/datasets"
)

func ExampleLoad() {
	// With nothing installed, Load falls back to the embedded subset.
	ld, src, err := datasets.Load("fashion-mnist", datasets.Options{NoEnv: true, NoSystem: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(src.Kind, ld.Train.N(), ld.Test.N(), ld.Train.Shape, ld.Train.ClassNames[ld.Train.Y[0]])
	// Output: embedded 5000 1000 [1 28 28] Ankle boot
}

func ExampleDataset_Gather() {
	d, _ := datasets.DPSGDFCounterexample(4, 100, false)
	x := make([]float32, 2*d.Dim()) // batch buffers, reused every step
	y := make([]int, 2)
	d.Gather([]int{1, 2}, x, y)
	fmt.Println(x, y)
	// Output: [100 -1 100 1] [0 1]
}
