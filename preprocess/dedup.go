package preprocess

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Cluster is a good η-cluster (docs/srdp.md#deduplication-and-quantisation):
// the records within η of a center record that has no record at distance in
// (η, 3η].
type Cluster struct {
	Center  int   // smallest-index good center with this member set
	Members []int // ascending, includes Center
}

// GoodClusters returns the good η-clusters among the rows of X that are not
// removed, largest first (ties by center index). Two good clusters are either
// the same member set or disjoint, so the result is a partition of part of
// the rows. Cost O(n²d).
func GoodClusters(X *mat.Dense, removed []bool, eta float64) []Cluster {
	n, _ := X.Dims()
	kept := keptRows(n, removed)
	byKey := map[string]int{} // member set -> index in out
	var out []Cluster
	for _, i := range kept {
		xi := X.RawRowView(i)
		var members []int
		good := true
		for _, j := range kept {
			d := dist(xi, X.RawRowView(j))
			if d <= eta {
				members = append(members, j)
			} else if d <= 3*eta {
				good = false
				break
			}
		}
		if !good {
			continue
		}
		key := fmt.Sprint(members)
		if k, ok := byKey[key]; ok {
			if i < out[k].Center {
				out[k].Center = i
			}
			continue
		}
		byKey[key] = len(out)
		out = append(out, Cluster{Center: i, Members: members})
	}
	sort.Slice(out, func(a, b int) bool {
		if len(out[a].Members) != len(out[b].Members) {
			return len(out[a].Members) > len(out[b].Members)
		}
		return out[a].Center < out[b].Center
	})
	return out
}

func dist(a, b []float64) float64 {
	var s float64
	for k := range a {
		d := a[k] - b[k]
		s += d * d
	}
	return math.Sqrt(s)
}

// clusterSensitivity is Δ_∞ of dedup and quantization.
//
// [DERIVED, ERRATUM to Proposition 3] The paper's Δ_∞ = 2·b_max assumes the
// records that change lie in B(z, η), but a replaced record z can sit in the
// (η, 3η] annulus of several good clusters at once and break all of them
// (TestProposition3Counterexample: 3 clusters of 5 change 12 > 2·5 records).
// What does hold: every changed record lies in a cluster with a good centre
// within 3η of z_1 or z_2, hence within 4η of one of them. So the default is
// Δ_∞ = 2·m_4η (m_4η under add/remove), m_4η the declared largest number of
// records of any dataset in 𝓛 within 4η of one of its records
// (MaxBall4Eta). PaperBound reports Proposition 3's 2·b_max instead.
func clusterSensitivity(name string, b Bounds, l2 float64, paper bool) (Sensitivity, error) {
	k := 2.0
	if b.AddRemove {
		k = 1
	}
	if paper {
		if b.MaxGoodCluster < 1 {
			return Sensitivity{}, notAccounted(name, "declare MaxGoodCluster (b_max ≥ 1)")
		}
		return Sensitivity{L2: l2, LInf: k * float64(b.MaxGoodCluster), Formula: fmt.Sprintf("Prop 3: Δ∞ = %g·b_max", k)}, nil
	}
	if b.MaxBall4Eta < 1 {
		return Sensitivity{}, notAccounted(name, "declare MaxBall4Eta (records within 4η of a record, ≥ 1)")
	}
	linf := k * float64(b.MaxBall4Eta)
	if b.N > 0 {
		linf = math.Min(linf, float64(b.N))
	}
	return Sensitivity{L2: l2, LInf: linf, Formula: fmt.Sprintf("Δ∞ = %g·max|B(x,4η)|", k)}, nil
}

// Dedup is η-approximate deduplication π^d_η: in every good η-cluster all
// members but the center are removed (∅). Δ_2 = 1 (the ∅ convention) and
// Δ_∞ as in clusterSensitivity (Proposition 3's 2·b_max is not safe). New rows (the test
// set) pass through unchanged: deduplication is about the training records.
type Dedup struct {
	Eta        float64
	PaperBound bool // Proposition 3's Δ_∞ = 2·b_max (not safe, see clusterSensitivity)
}

// Name implements Step.
func (Dedup) Name() string { return "dedup" }

// FitTransform implements Step.
func (s Dedup) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	if err := checkEta("dedup", s.Eta, X, removed); err != nil {
		return nil, Result{}, err
	}
	n, d := X.Dims()
	rem := copyRemoved(removed)
	if rem == nil {
		rem = make([]bool, n)
	}
	for _, c := range GoodClusters(X, removed, s.Eta) {
		for _, j := range c.Members {
			if j != c.Center {
				rem[j] = true
			}
		}
	}
	return &identityFitted{D: d}, Result{X: mat.DenseCopyOf(X), Removed: rem}, nil
}

// Sensitivity implements Step.
func (s Dedup) Sensitivity(b Bounds) (Sensitivity, error) {
	sens, err := clusterSensitivity("dedup", b, 1, s.PaperBound)
	sens.Removes = true
	return sens, err
}

// Quantize is η-quantization π^q_η: every member of a good η-cluster is
// replaced by the cluster's center record (not the arithmetic mean, which
// could move a member by up to 2η). Δ_2 = η (Proposition 3), Δ_∞ as for Dedup.
// New rows within η of a fitted center map to it (good centers are more than
// 3η apart, so the center is unique).
type Quantize struct {
	Eta        float64
	PaperBound bool // Proposition 3's Δ_∞ = 2·b_max (not safe, see clusterSensitivity)
}

// Name implements Step.
func (Quantize) Name() string { return "quantize" }

// FitTransform implements Step.
func (s Quantize) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	if err := checkEta("quantize", s.Eta, X, removed); err != nil {
		return nil, Result{}, err
	}
	_, d := X.Dims()
	out := mat.DenseCopyOf(X)
	f := &quantizeFitted{Eta: s.Eta, D: d}
	for _, c := range GoodClusters(X, removed, s.Eta) {
		center := X.RawRowView(c.Center)
		if len(c.Members) > 1 {
			f.Centers = append(f.Centers, append([]float64(nil), center...))
		}
		for _, j := range c.Members {
			copy(out.RawRowView(j), center)
		}
	}
	return f, Result{X: out, Removed: copyRemoved(removed)}, nil
}

// Sensitivity implements Step.
func (s Quantize) Sensitivity(b Bounds) (Sensitivity, error) {
	return clusterSensitivity("quantize", b, s.Eta, s.PaperBound)
}

func checkEta(step string, eta float64, X *mat.Dense, removed []bool) error {
	if !finitePositive(eta) {
		return fmt.Errorf("%s: threshold eta must be positive and finite, got %v", step, eta)
	}
	if err := checkRemoved(step, X, removed); err != nil {
		return err
	}
	return checkFinite(step, X, removed)
}

func checkFinite(step string, X *mat.Dense, removed []bool) error {
	n, _ := X.Dims()
	for _, i := range keptRows(n, removed) {
		for j, v := range X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: feature %d has a missing or infinite value (impute missing values first)", step, j)
			}
		}
	}
	return nil
}

// identityFitted passes rows through (dedup on new rows).
type identityFitted struct {
	D int `json:"d"`
}

func (*identityFitted) Kind() string      { return "dedup" }
func (f *identityFitted) InDim() int      { return f.D }
func (f *identityFitted) OutDim(int) int  { return f.D }
func (f *identityFitted) validate() error { return checkDim(f.D) }
func (f *identityFitted) Transform(X *mat.Dense) *mat.Dense {
	checkDims("dedup", f, X)
	return mat.DenseCopyOf(X)
}

type quantizeFitted struct {
	Eta     float64     `json:"eta"`
	D       int         `json:"d"`
	Centers [][]float64 `json:"centers"`
}

func (*quantizeFitted) Kind() string     { return "quantize" }
func (f *quantizeFitted) InDim() int     { return f.D }
func (f *quantizeFitted) OutDim(int) int { return f.D }
func (f *quantizeFitted) validate() error {
	if err := checkDim(f.D); err != nil {
		return err
	}
	if !finitePositive(f.Eta) {
		return fmt.Errorf("quantize: eta must be positive and finite, got %v", f.Eta)
	}
	for i, c := range f.Centers {
		if len(c) != f.D {
			return fmt.Errorf("quantize: center %d has %d features, want %d", i, len(c), f.D)
		}
		if err := checkFiniteVec(c); err != nil {
			return fmt.Errorf("quantize: center %d: %w", i, err)
		}
	}
	return nil
}

func (f *quantizeFitted) Transform(X *mat.Dense) *mat.Dense {
	checkDims("quantize", f, X)
	out := mat.DenseCopyOf(X)
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		row := out.RawRowView(i)
		for _, c := range f.Centers {
			if dist(row, c) <= f.Eta {
				copy(row, c)
				break
			}
		}
	}
	return out
}

func checkDim(d int) error {
	if d < 1 || d > 1<<24 {
		return fmt.Errorf("feature dimension %d out of range", d)
	}
	return nil
}

func checkFiniteVec(v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("entry %d is %v", i, x)
		}
	}
	return nil
}
