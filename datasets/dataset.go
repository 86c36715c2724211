package datasets

import (
	"errors"
	"fmt"
	"math"

	"github.com/dptrain/dptrain/rng"
)

// Dataset is a labelled dataset held in memory.
type Dataset struct {
	Name string
	// X holds N examples of Dim() features each, row-major.
	X []float32
	// Y holds the class label of each example, in [0, NumClasses).
	Y []int
	// Shape is the per-example shape: [1,28,28] for MNIST, [3,32,32] for
	// CIFAR-10 (channel planes R, G, B), [d] for tabular data.
	Shape      []int
	NumClasses int
	// ClassNames, when known, names each class index.
	ClassNames []string
	// Columns, for a table read with a header line, names each feature in
	// the order of X; LabelColumn is the label column's name (its 0-based
	// index, as text, without a header) and LabelIndex its position in the
	// file. They are the table's public schema, never its values.
	Columns     []string
	LabelColumn string
	LabelIndex  int

	mapped []byte // the file mapping X views ([LoadNPY]), nil if X is on the heap
}

// ErrBadData is wrapped by every error that is the data's fault rather than
// the program's: a dataset not found or incomplete, a truncated or corrupt
// file, a wrong magic number, mismatched image and label counts, a label out
// of range, an undecodable image, a missing or non-finite value where none is
// allowed. The CLI maps it to the bad-input exit status (2). The message of
// the wrapped error is unchanged.
var ErrBadData = errors.New("bad data")

// badDataError marks err as the data's fault (see ErrBadData).
type badDataError struct{ err error }

func (e *badDataError) Error() string   { return e.err.Error() }
func (e *badDataError) Unwrap() []error { return []error{e.err, ErrBadData} }

// badData wraps err (if non-nil) so that errors.Is(err, ErrBadData) holds.
func badData(err error) error {
	if err == nil || errors.Is(err, ErrBadData) {
		return err
	}
	return &badDataError{err}
}

// Loaded is a train/test pair.
type Loaded struct {
	Train, Test *Dataset
}

// N returns the number of examples.
func (d *Dataset) N() int { return len(d.Y) }

// Dim returns the number of features per example (the product of Shape).
func (d *Dataset) Dim() int {
	p := 1
	for _, s := range d.Shape {
		p *= s
	}
	return p
}

// Validate checks that X, Y, Shape and NumClasses agree and that every label
// is in range. Readers call it; it is exported for data built by hand.
func (d *Dataset) Validate() error {
	return badData(d.validate())
}

func (d *Dataset) validate() error {
	dim := d.Dim()
	if len(d.Shape) == 0 || dim <= 0 {
		return fmt.Errorf("dataset %s: bad shape %v", d.Name, d.Shape)
	}
	if len(d.X) != len(d.Y)*dim {
		return fmt.Errorf("dataset %s: %d feature values for %d examples of dimension %d", d.Name, len(d.X), len(d.Y), dim)
	}
	if d.NumClasses <= 0 {
		return fmt.Errorf("dataset %s: NumClasses %d must be positive", d.Name, d.NumClasses)
	}
	for _, y := range d.Y {
		if y < 0 || y >= d.NumClasses {
			// Neither the label nor the example: they may be a training
			// record's.
			return fmt.Errorf("dataset %s: a label is outside [0,%d)", d.Name, d.NumClasses)
		}
	}
	return nil
}

// Row returns example i's features (a view into X, not a copy).
func (d *Dataset) Row(i int) []float32 {
	dim := d.Dim()
	return d.X[i*dim : (i+1)*dim : (i+1)*dim]
}

// Gather copies the examples idx into the caller's buffers: x receives
// len(idx)×Dim() values and y len(idx) labels. It allocates nothing, so a
// training loop can reuse its batch buffers. Buffers that are too small or an
// index out of range are programmer errors and panic.
func (d *Dataset) Gather(idx []int, x []float32, y []int) {
	dim := d.Dim()
	if len(x) < len(idx)*dim || len(y) < len(idx) {
		panic(fmt.Sprintf("datasets: Gather of %d examples of dim %d into buffers of %d and %d", len(idx), dim, len(x), len(y)))
	}
	for k, i := range idx {
		copy(x[k*dim:(k+1)*dim], d.X[i*dim:(i+1)*dim])
		y[k] = d.Y[i]
	}
}

// Subset returns a new dataset holding copies of the examples idx, in order.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := d.emptyLike(len(idx))
	d.Gather(idx, s.X, s.Y)
	return s
}

// emptyLike returns a dataset with d's metadata and room for n examples.
func (d *Dataset) emptyLike(n int) *Dataset {
	return &Dataset{
		Name:       d.Name,
		X:          make([]float32, n*d.Dim()),
		Y:          make([]int, n),
		Shape:      append([]int(nil), d.Shape...),
		NumClasses: d.NumClasses,
		ClassNames: append([]string(nil), d.ClassNames...),
		Columns:    append([]string(nil), d.Columns...),

		LabelColumn: d.LabelColumn,
		LabelIndex:  d.LabelIndex,
	}
}

// Split shuffles the examples with a stream seeded by seed and returns the
// first round(frac·N) as train and the rest as test. frac must be in [0,1].
func (d *Dataset) Split(frac float64, seed uint64) (train, test *Dataset) {
	if !(frac >= 0 && frac <= 1) {
		panic(fmt.Sprintf("datasets: Split fraction %v outside [0,1]", frac))
	}
	perm := rng.New(seed).Child("datasets.Split").Perm(d.N())
	k := int(math.Round(frac * float64(d.N())))
	return d.Subset(perm[:k]), d.Subset(perm[k:])
}

// Stats holds per-feature statistics. NaN entries (missing values) are
// skipped: Count[j] is the number of non-NaN values of feature j, and a
// feature with no values has NaN statistics.
type Stats struct {
	Count               []int
	Mean, Std, Min, Max []float64
}

// FeatureStats computes per-feature count, mean, population standard
// deviation (divisor Count), min and max, ignoring NaNs. It uses Welford's
// update so that large offsets do not cancel.
func (d *Dataset) FeatureStats() Stats {
	dim := d.Dim()
	s := Stats{
		Count: make([]int, dim),
		Mean:  make([]float64, dim),
		Std:   make([]float64, dim),
		Min:   make([]float64, dim),
		Max:   make([]float64, dim),
	}
	m2 := make([]float64, dim)
	for j := range dim {
		s.Min[j], s.Max[j] = math.Inf(1), math.Inf(-1)
	}
	for i := range d.N() {
		row := d.X[i*dim : (i+1)*dim]
		for j, v32 := range row {
			v := float64(v32)
			if math.IsNaN(v) {
				continue
			}
			s.Count[j]++
			delta := v - s.Mean[j]
			s.Mean[j] += delta / float64(s.Count[j])
			m2[j] += delta * (v - s.Mean[j])
			s.Min[j] = math.Min(s.Min[j], v)
			s.Max[j] = math.Max(s.Max[j], v)
		}
	}
	for j := range dim {
		if s.Count[j] == 0 {
			s.Mean[j], s.Std[j], s.Min[j], s.Max[j] = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			continue
		}
		s.Std[j] = math.Sqrt(m2[j] / float64(s.Count[j]))
	}
	return s
}

// CountMissing returns the number of NaN feature values and the number of
// examples with at least one NaN.
func (d *Dataset) CountMissing() (values, examples int) {
	dim := d.Dim()
	for i := range d.N() {
		miss := 0
		for _, v := range d.X[i*dim : (i+1)*dim] {
			if v != v {
				miss++
			}
		}
		values += miss
		if miss > 0 {
			examples++
		}
	}
	return values, examples
}

// CheckFinite returns an error naming the first feature (column) that holds
// a NaN or infinite value, never the value or its example (they may be a
// training record's); trainers call it on data that must not have missing
// values.
func (d *Dataset) CheckFinite() error {
	if d.mapped != nil { // one sequential pass over a mapped file
		adviseMapping(d.mapped, true)
		defer adviseMapping(d.mapped, false)
	}
	dim := d.Dim()
	for k, v := range d.X {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return badData(fmt.Errorf("dataset %s: feature %d has a missing or non-finite value (not allowed here)", d.Name, k%dim))
		}
	}
	return nil
}

// Signs returns the labels of a binary dataset as ±1 (class 1 → +1, class
// 0 → −1), the convention of hinge and logistic losses in the papers.
func (d *Dataset) Signs() []float64 {
	if d.NumClasses != 2 {
		panic(fmt.Sprintf("datasets: Signs of a %d-class dataset", d.NumClasses))
	}
	s := make([]float64, d.N())
	for i, y := range d.Y {
		s[i] = float64(2*y - 1)
	}
	return s
}
