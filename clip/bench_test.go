package clip

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
)

// Benchmarks: per-sample clip + sum for B = 256 examples per op, processed
// as 8 physical chunks of 32 (as a model's MaxBatch would), at D = 26,010
// (MNIST CNN) and D ≈ 272k (ResNet-20).
//
//	go test -run XXX -bench . -benchtime 3x ./clip
const (
	benchB     = 256
	benchChunk = 32
)

var benchDims = []int{26010, 272474}

// benchGroups splits d into 8 layer-like groups.
func benchGroups(d int) []models.Group {
	var gs []models.Group
	off := 0
	for k := 0; k < 8; k++ {
		n := d / 8
		if k == 7 {
			n = d - off
		}
		gs = append(gs, models.Group{Name: fmt.Sprint("layer", k), Offset: off, Len: n})
		off += n
	}
	return gs
}

func benchRows(d int) []float32 {
	g := make([]float32, benchChunk*d)
	rng.New(1).FillNormal(g, 2/math.Sqrt(float64(d)))
	return g
}

// spreadBasis is an orthonormal basis of blocks with disjoint, interleaved
// supports (dense storage, so the cost is that of a general basis).
func spreadBasis(d int, sizes []int) *Basis {
	k := 0
	for _, r := range sizes {
		k += r
	}
	var blocks []*mat.Dense
	row := 0
	for _, r := range sizes {
		u := mat.NewDense(r, d, nil)
		for p := 0; p < r; p++ {
			n := 0
			for j := row; j < d; j += k {
				n++
			}
			for j := row; j < d; j += k {
				u.Set(p, j, 1/math.Sqrt(float64(n)))
			}
			row++
		}
		blocks = append(blocks, u)
	}
	b, err := NewBasis(d, blocks, 1e-9)
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkClipSum(b *testing.B) {
	for _, d := range benchDims {
		gs := benchGroups(d)
		l2, _ := NewL2(1, d, gs)
		pl, _ := NewPerLayer(1, d, gs, nil)
		li, _ := NewLInf(0.01, d)
		hy, _ := NewL2LInf(1, 100, d)
		variants := []struct {
			name string
			c    Clipper
		}{{"L2", l2}, {"PerLayer", pl}, {"LInf", li}, {"L2LInf", hy}}
		for _, k := range []int{64, 256} {
			ss, _ := NewSubspace(spreadBasis(d, []int{k / 2, k / 2}), []float64{1, 1, 1}, DefaultD0(2))
			variants = append(variants, struct {
				name string
				c    Clipper
			}{fmt.Sprintf("Subspace_k%d", k), ss})
		}
		rows := benchRows(d)
		for _, v := range variants {
			sum := make([]float32, v.c.OutDim())
			b.Run(fmt.Sprintf("%s/D=%d", v.name, d), func(b *testing.B) {
				for it := 0; it < b.N; it++ {
					for c := 0; c < benchB/benchChunk; c++ {
						v.c.ClipSum(rows, benchChunk, nil, sum)
					}
				}
				b.ReportMetric(float64(b.N*benchB)/b.Elapsed().Seconds(), "samples/s")
			})
		}
		// Norm-only path: the clipper's share is Scales over B×K norms; the
		// scaled accumulation is the model's (here a dense stand-in that
		// reads materialised rows, an upper bound for AccumulateScaled).
		for _, v := range []struct {
			name string
			c    NormClipper
		}{{"L2", l2}, {"PerLayer", pl}} {
			k := len(gs)
			norms := make([]float64, benchChunk*k)
			for i := range norms {
				norms[i] = 0.5 + float64(i%7)/5
			}
			scales := make([]float32, benchChunk*k)
			sum := make([]float32, d)
			b.Run(fmt.Sprintf("NormOnlyScales_%s/D=%d", v.name, d), func(b *testing.B) {
				for it := 0; it < b.N; it++ {
					for c := 0; c < benchB/benchChunk; c++ {
						v.c.Scales(norms, benchChunk, scales)
					}
				}
				b.ReportMetric(float64(b.N*benchB)/b.Elapsed().Seconds(), "samples/s")
			})
			b.Run(fmt.Sprintf("NormOnlyScalesAccumulate_%s/D=%d", v.name, d), func(b *testing.B) {
				for it := 0; it < b.N; it++ {
					for c := 0; c < benchB/benchChunk; c++ {
						v.c.Scales(norms, benchChunk, scales)
						for i := 0; i < benchChunk; i++ {
							row := rows[i*d : (i+1)*d]
							for gi, g := range gs {
								s := scales[i*k+gi]
								for j := g.Offset; j < g.Offset+g.Len; j++ {
									sum[j] += float32(s * row[j])
								}
							}
						}
					}
				}
				b.ReportMetric(float64(b.N*benchB)/b.Elapsed().Seconds(), "samples/s")
			})
		}
	}
}

func BenchmarkNoise(b *testing.B) {
	for _, d := range benchDims {
		g, _ := NewIsotropic(d, 1)
		v := make([]float32, d)
		s := rng.New(1)
		b.Run(fmt.Sprintf("Isotropic/D=%d", d), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				g.Add(v, s)
			}
		})
	}
}

// BenchmarkEngineMNISTCNN compares, on the real engine's MNIST CNN, one
// B = 256 step's gradient work: materialised (PerSampleGrads + ClipSum)
// against norm-only (PerSampleNormsSq + Scales + AccumulateScaled), flat L2.
func BenchmarkEngineMNISTCNN(b *testing.B) {
	m, err := models.NewMNISTCNN(models.Options{Seed: 1})
	if err != nil {
		b.Skipf("model zoo unavailable: %v", err)
	}
	chunk := m.MaxBatch()
	d, k := m.NumParams(), len(m.Groups())
	s := rng.New(2)
	batch := models.Batch{N: chunk, X: make([]float32, chunk*m.InputSize()), Y: make([]int, chunk)}
	s.FillNormal(batch.X, 1)
	for i := range batch.Y {
		batch.Y[i] = s.IntN(10)
	}
	l2, _ := NewL2(1, d, m.Groups())
	grads := make([]float32, chunk*d)
	losses := make([]float32, chunk)
	normsSq := make([]float64, chunk*k)
	scales := make([]float32, chunk*k)
	sum := make([]float32, d)
	b.Run(fmt.Sprintf("materialised/D=%d", d), func(b *testing.B) {
		for it := 0; it < b.N; it++ {
			for c := 0; c < benchB/chunk; c++ {
				if err := m.PerSampleGrads(batch, grads, losses); err != nil {
					b.Fatal(err)
				}
				l2.ClipSum(grads, chunk, nil, sum)
			}
		}
		b.ReportMetric(float64(b.N*benchB)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run(fmt.Sprintf("norm-only/D=%d", d), func(b *testing.B) {
		for it := 0; it < b.N; it++ {
			for c := 0; c < benchB/chunk; c++ {
				if err := m.PerSampleNormsSq(batch, normsSq, losses); err != nil {
					b.Fatal(err)
				}
				l2.Scales(normsSq, chunk, scales)
				if err := m.AccumulateScaled(scales, sum); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*benchB)/b.Elapsed().Seconds(), "samples/s")
	})
}
