package trainer

import (
	"fmt"
	"slices"
	"strconv"

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
	// What the caller set on its own model (SetInput, SetClasses) stays
	// where the data names nothing.
	own, _ := m.Meta()
	classes := test.ClassNames
	if classes == nil {
		classes = cfg.Classes
	}
	if classes == nil {
		classes = own.Classes
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
		in = models.Input{Kind: "table", Columns: test.Columns, LabelColumn: test.LabelColumn, LabelIndex: test.LabelIndex}
	}
	if cfg.Dataset == InMemory && test.Columns == nil && own.Input.Kind != "" {
		in = own.Input
	}
	m.SetInput(in)
	return nil
}

// describeReturned records in the caller's model (Options.Model) what
// release/model.bin would record, also when the run writes no files: the
// model Run leaves behind predicts from raw records with PredictRecords.
func (s *state) describeReturned() error {
	if m, ok := s.model.(*models.Net); ok && s.out == nil {
		return s.describeModel(m)
	}
	return nil
}

// tableInput describes a CSV table's feature columns and label column, as
// the one CSV reader reads them for training (loadCSV): the header's names
// when the file has a header line (label given by name, 0-based index,
// negative from the end, or "" for the last column).
func tableInput(path, label string) (models.Input, error) {
	opts := datasets.CSVOptions{SniffHeader: true, LabelIndex: -1}
	if i, err := strconv.Atoi(label); err == nil {
		opts.LabelIndex = i
	} else {
		opts.Label = label
	}
	t, err := datasets.LoadTable(path, opts)
	if err != nil {
		return models.Input{}, err
	}
	return models.Input{Kind: "table", Columns: t.Columns, LabelColumn: t.LabelColumn, LabelIndex: t.LabelIndex}, nil
}
