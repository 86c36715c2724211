package models

import (
	"strings"
	"testing"
)

func TestNewFromSpec(t *testing.T) {
	tests := []struct {
		spec    Spec
		arch    string
		params  int
		wantErr string
	}{
		{Spec{Arch: "logreg", InputSize: 784, Classes: 10}, "logreg(784,10)", 7850, ""},
		{Spec{Arch: "linreg", InputSize: 3}, "linreg(3)", 4, ""},
		{Spec{Arch: "mlp", InputSize: 784, Classes: 10, Widths: []int{256}}, "mlp(784,256,10,relu)", 203530, ""},
		{Spec{Arch: "mnistcnn"}, "mnistcnn", 26010, ""},
		{Spec{Arch: "mnistcnn", Classes: 10}, "mnistcnn", 26010, ""},
		// The last layer 32→k: 26,010 − 33·10 + 33·k.
		{Spec{Arch: "mnistcnn", Classes: 2}, "mnistcnn(2)", 26010 - 330 + 66, ""},
		{Spec{Arch: "mnistcnn", Classes: 3}, "mnistcnn(3)", 26010 - 330 + 99, ""},
		{Spec{Arch: "mnistcnn", Classes: 1}, "", 0, "at least 2 classes"},
		{Spec{Arch: "resnet20gn", Classes: 2}, "resnet20gn(2)", 464 + 14016 + 51648 + 205696 + 64*2 + 2, ""},
		{Spec{Arch: "resnet22", Norm: "groupnorm"}, "resnet22gn(10)", 291034, ""},
		{Spec{Arch: "resnet20gn", Norm: "batchnorm"}, "", 0, "GroupNorm"},
		{Spec{Arch: "resnet20gn", Norm: "weird"}, "", 0, "unknown normalisation"},
		{Spec{Arch: "mlp", InputSize: 4, Classes: 3, Activation: "sigmoid"}, "", 0, "activation"},
		{Spec{Arch: "logreg", InputSize: 4, Classes: 1}, "", 0, "classes"},
		{Spec{Arch: "vgg"}, "", 0, "unknown model"},
		{Spec{Arch: "scatcnn", Shape: []int{81, 7, 7}, Classes: 10}, "scatcnn(81,7,7,10)", 64*81*9 + 64 + 64*64*9 + 64 + 64*3*3*10 + 10, ""},
		{Spec{Arch: "scatcnn", Classes: 10}, "", 0, "feature shape"},
	}
	for _, tc := range tests {
		m, err := New(tc.spec, Options{})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%+v: error %v, want one mentioning %q", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.spec, err)
			continue
		}
		if m.Arch() != tc.arch || m.NumParams() != tc.params {
			t.Errorf("%+v: %s with %d params, want %s with %d", tc.spec, m.Arch(), m.NumParams(), tc.arch, tc.params)
		}
	}
	_, err := New(Spec{Arch: "resnet22", Norm: "bn"}, Options{})
	if !IsBatchNorm(err) {
		t.Errorf("bn: %v is not the BatchNorm refusal", err)
	}
}
