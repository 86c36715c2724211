package trainer

import (
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
)

// describeModel records in m what using it needs, all of it public: the
// class names (the public class set), the input (a table's columns from the
// test file's header, an image's channels and scaling) and the
// preprocessing (public constants or privately released statistics).
func (s *state) describeModel(m *models.Net) error {
	if s.data == nil || s.data.test == nil {
		return nil
	}
	cfg, test := s.cfg, s.data.test
	classes := test.ClassNames
	if classes == nil {
		classes = cfg.Classes
	}
	m.SetClasses(classes)
	m.SetPreprocess(s.data.transforms)
	var in models.Input
	switch {
	case cfg.Dataset == DatasetCSV:
		var err error
		if in, err = tableInput(cfg.TestFile, cfg.LabelColumn); err != nil {
			return fmt.Errorf("model input: %w", err)
		}
	case len(test.Shape) == 3 && cfg.Features == FeaturesRaw:
		// Every image loader divides 8-bit values by 255 (datasets/doc.go).
		in = models.Input{Kind: "image", Image: slices.Clone(test.Shape), Layout: "CHW", Scale: 1.0 / 255}
		switch test.Shape[0] {
		case 1:
			in.Channels = "gray"
		case 3:
			in.Channels = "rgb"
		}
	case len(test.Shape) == 1:
		in.Kind = "table"
	}
	m.SetInput(in)
	return nil
}

// tableInput describes a CSV table's feature columns and label column: the
// header's names when the file has a header line (label given by name,
// 0-based index, negative from the end, or "" for the last column).
func tableInput(path, label string) (models.Input, error) {
	in := models.Input{Kind: "table"}
	li := -1
	if label != "" {
		if i, err := strconv.Atoi(label); err == nil {
			li = i
		}
	}
	header, err := datasets.SniffCSVHeader(path, li)
	if err != nil {
		return in, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return in, err
	}
	defer fh.Close()
	rec, err := csv.NewReader(fh).Read()
	if err != nil {
		return in, fmt.Errorf("csv %s: %w", path, err)
	}
	if li < 0 {
		li += len(rec)
	}
	if label != "" && header {
		for j, h := range rec {
			if strings.TrimSpace(h) == label {
				li = j
			}
		}
	}
	if li < 0 || li >= len(rec) {
		return in, fmt.Errorf("csv %s: label column %q outside its %d columns", path, label, len(rec))
	}
	in.LabelColumn, in.LabelIndex = strconv.Itoa(li), li
	if header {
		in.LabelColumn = strings.TrimSpace(rec[li])
		for j, h := range rec {
			if j != li {
				in.Columns = append(in.Columns, strings.TrimSpace(h))
			}
		}
	}
	return in, nil
}
