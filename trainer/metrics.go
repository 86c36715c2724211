package trainer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Record is what one step did and what the run has spent so far. Accuracy
// and test fields are set on evaluation steps; with EMA on, the accuracies
// are the averaged parameters' and Loss stays the training iterate's.
//
// Loss, TrainAcc, the gradient-norm statistics, ClippedFrac, BatchSize and
// Elapsed are computed from the private training data without noise (the
// realised Poisson batch size and the step's time move with one record):
// they are written only to private/diagnostics.jsonl, and only when the run
// asks for private diagnostics. release/metrics.jsonl holds the released
// projection (step, ε, test figures): see releasedRecord. ReadMetrics reads
// either file.
type Record struct {
	Step      int     `json:"step"`
	Epoch     float64 `json:"epoch"`
	Loss      float64 `json:"loss"` // mean loss over the step's realised batch
	BatchSize int     `json:"batch_size"`
	LR        float64 `json:"lr"`

	GradNormMean float64 `json:"grad_norm_mean"`
	GradNormMax  float64 `json:"grad_norm_max"`
	ClippedFrac  float64 `json:"clipped_frac"` // fraction of examples whose gradient was clipped

	// With ClippedCountSigma: the clipped count + round(N(0, σ_b²)) and its ratio
	// to the expected batch size, noised and accounted (released).
	ClippedCountNoised *float64 `json:"clipped_count_noised,omitempty"`
	ClippedFracNoised  *float64 `json:"clipped_frac_noised,omitempty"`

	TrainAcc *float64 `json:"train_acc,omitempty"` // on the first min(train N, test N) training examples
	TestAcc  *float64 `json:"test_acc,omitempty"`
	TestLoss *float64 `json:"test_loss,omitempty"`

	Epsilon        map[string]float64 `json:"epsilon"`         // ε per accountant at the run's δ
	EpsilonBest    float64            `json:"epsilon_best"`    // tightest valid bound
	BestAccountant string             `json:"best_accountant"` // who gave it
	Relation       string             `json:"relation"`        // its neighbouring relation
	Elapsed        float64            `json:"elapsed_s"`       // wall time since the run (or resume) began
	Note           string             `json:"note,omitempty"`  // e.g. "budget stop"
	NotApplicable  map[string]string  `json:"not_applicable,omitempty"`
	// Deferred lists accountants computed only at evaluation steps and the
	// end (PLD): absent from this record's epsilon and epsilon_best.
	Deferred []string `json:"deferred,omitempty"`
	// NonFinite names the training statistics above that were not finite
	// (written as 0; private diagnostics only).
	NonFinite []string `json:"non_finite,omitempty"`
}

// metricsLog appends records to a JSON-lines file, flushing every line so
// a crash loses at most the line being written.
type metricsLog struct {
	f *os.File
	w *bufio.Writer
}

func openMetrics(path string, appendTo bool, perm os.FileMode) (*metricsLog, error) {
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", path, err)
	}
	return &metricsLog{f: f, w: bufio.NewWriter(f)}, nil
}

func (m *metricsLog) write(r any) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	m.w.Write(b)
	m.w.WriteByte('\n')
	return m.w.Flush()
}

// sync makes the lines written so far durable.
func (m *metricsLog) sync() error {
	if m == nil {
		return nil
	}
	if err := m.w.Flush(); err != nil {
		return err
	}
	return m.f.Sync()
}

func (m *metricsLog) close() error {
	if m == nil {
		return nil
	}
	err := m.w.Flush()
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadMetrics reads a metrics.jsonl file written by Run.
func ReadMetrics(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", path, err)
	}
	defer f.Close()
	return readMetrics(f, path)
}

func readMetrics(r io.Reader, path string) ([]Record, error) {
	var recs []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return recs, fmt.Errorf("metrics %s line %d: %w", path, line, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return recs, fmt.Errorf("metrics %s: %w", path, err)
	}
	return recs, nil
}
