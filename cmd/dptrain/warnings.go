package main

import (
	"fmt"
	"io"
	"math"
)

// maxUsefulLR is the learning rate above which no run of this framework
// trains: DP-SGD's useful range is about 0.01 to 10 (the noisy sum is
// divided by the expected batch size), and a thousand times beyond it the
// parameters only grow until they overflow.
const maxUsefulLR = 1e3

// warnLearningRate warns (stderr) of a learning rate far beyond any that
// trains. It reads the flag alone, nothing of the data, so the warning
// says nothing ε does not cover.
func warnLearningRate(w io.Writer, lr float64) {
	if lr > maxUsefulLR {
		fmt.Fprintf(w, "warning: --lr %v is far above any step size that trains (DP-SGD's useful range is about 0.01 to 10): the parameters will grow until they overflow, and the released model will be useless\n", lr)
	}
}

// warnNonFinite warns (stderr) when a model's parameters hold NaN or ±Inf:
// every output of the model is then meaningless. It reads the released
// parameters only (post-processing of the release).
func warnNonFinite(w io.Writer, path string, params []float32) {
	bad := 0
	for _, v := range params {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(w, "warning: %s has %d non-finite parameters (NaN or ±Inf) of %d: its outputs are meaningless (the run that released it diverged; retrain with a smaller --lr)\n", path, bad, len(params))
	}
}
