package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
)

// inputKinds of predict's --input.
const (
	inputCSV = iota
	inputNPY
	inputImage
	inputImages
)

// acceptedInputs says what predict reads, for its errors.
const acceptedInputs = "predict reads a CSV table (.csv, .tsv, .txt), a NumPy array (.npy), one image (.png, .jpg) or a directory of images"

// inputKind tells predict's input apart by its first bytes (a NumPy or
// image file named anything), then its extension.
func inputKind(path string) (int, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if st.IsDir() {
		return inputImages, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	head := make([]byte, 8)
	k, _ := io.ReadFull(fh, head)
	head = head[:k]
	switch {
	case bytes.HasPrefix(head, []byte("\x93NUMPY")):
		return inputNPY, nil
	case bytes.HasPrefix(head, []byte("\x89PNG")), bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return inputImage, nil
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return 0, fmt.Errorf("%s is a zip archive (a spreadsheet?): export it as CSV; %s", path, acceptedInputs)
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".npy":
		return 0, fmt.Errorf("%s is named .npy but is not a NumPy array (no \\x93NUMPY header); %s", path, acceptedInputs)
	case ".png", ".jpg", ".jpeg":
		return 0, fmt.Errorf("%s is named %s but is not a PNG or JPEG image; %s", path, ext, acceptedInputs)
	case ".csv", ".tsv", ".txt", "":
		return inputCSV, nil
	}
	if bytes.ContainsRune(head, 0) {
		return 0, fmt.Errorf("%s is a binary file of an unknown kind; %s", path, acceptedInputs)
	}
	return inputCSV, nil // text under another name: read as CSV, whose errors say what is wrong
}

// readModelNPY reads a .npy array of examples for m: each example of the
// model's input shape (a table model: D values; an image model: C×H×W, or
// H×W for one channel).
func readModelNPY(path string, m *models.Net) (*datasets.NPYFeatures, error) {
	f, err := datasets.LoadNPYFeatures(path)
	if err != nil {
		return nil, err
	}
	s := m.Network().InputShape()
	want := []int{m.InputSize()}
	if s.C > 0 && s.H > 1 && s.W > 1 {
		want = []int{s.C, s.H, s.W}
	}
	if !slices.Equal(f.Shape, want) {
		f.Close()
		shape := strings.Trim(strings.ReplaceAll(fmt.Sprint(append([]int{f.N}, f.Shape...)), " ", ", "), "[]")
		return nil, fmt.Errorf("npy %s: examples of shape (%s); %s takes examples of shape %v (the array must be N×%s)", path, shape, m.Arch(), want, strings.Trim(strings.ReplaceAll(fmt.Sprint(want), " ", "×"), "[]"))
	}
	return f, nil
}
