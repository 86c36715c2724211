package models

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/internal/gemm"
)

// rooflineRow is one workload of BenchmarkRoofline.
type rooflineRow struct {
	name    string
	gflops  float64 // per wall-clock second
	gfCPU   float64 // per process CPU second (both cores' work)
	samples float64
}

// BenchmarkRoofline measures the float32 GEMM (1024³) and then every DP and
// non-DP step workload in the same run, reporting each workload's achieved
// GFLOP/s (from the per-sample FLOP counts of nn.Network.FLOPs) and its
// fraction of that run's GEMM GFLOP/s, and prints the table with the load
// average, so the figures are ratios even on a shared machine:
//
//	go test -run '^$' -bench Roofline -benchtime 3x ./models
func BenchmarkRoofline(b *testing.B) {
	var rows []rooflineRow
	var peak, peakCPU float64
	b.Run("gemm1024", func(b *testing.B) {
		const n = 1024
		rnd := rand.New(rand.NewPCG(1, 2))
		x, y, z := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		for i := range x {
			x[i], y[i] = rnd.Float32(), rnd.Float32()
		}
		gemm.Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n) // warm-up
		b.ResetTimer()
		cpu := cputime.Process()
		for range b.N {
			gemm.Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
		}
		work := 2 * n * n * n * float64(b.N) / 1e9
		peak = work / b.Elapsed().Seconds()
		b.ReportMetric(peak, "GFLOP/s")
		if c := cputime.Process() - cpu; c > 0 {
			peakCPU = work / c
			b.ReportMetric(peakCPU, "GFLOP/cpu-s")
		}
	})
	for _, w := range []struct {
		model string
		batch int
	}{{"logreg", 256}, {"mlp", 256}, {"cnn", 64}, {"resnet8", 64}, {"resnet20", 64}} {
		for _, dp := range []bool{true, false} {
			name := "nondp-" + w.model
			if dp {
				name = "dp-" + w.model
			}
			var last rooflineRow
			b.Run(name, func(b *testing.B) {
				m, _ := benchModel(b, w.model, w.batch)
				f := m.Network().FLOPs()
				perSample := f.NonDP()
				var cpu float64
				if dp {
					cpu = benchDPStep(b, w.model, w.batch)
					perSample = f.DP()
				} else {
					cpu = benchNonDPStep(b, w.model, w.batch)
				}
				cpuGF := float64(w.batch*b.N) * float64(perSample) / 1e9 / cpu
				sps := float64(w.batch*b.N) / b.Elapsed().Seconds()
				gf := sps * float64(perSample) / 1e9
				b.ReportMetric(gf, "GFLOP/s")
				if peak > 0 {
					b.ReportMetric(gf/peak, "of-gemm")
				}
				if peakCPU > 0 {
					b.ReportMetric(cpuGF/peakCPU, "of-gemm-cpu")
				}
				last = rooflineRow{name, gf, cpuGF, sps} // the final b.N's run is the one reported
			})
			if last.name != "" {
				rows = append(rows, last)
			}
		}
	}
	if peak == 0 || len(rows) == 0 {
		return
	}
	load, _ := os.ReadFile("/proc/loadavg")
	var s strings.Builder
	f := strings.Fields(string(load))
	fmt.Fprintf(&s, "\nroofline (load average %s): GEMM 1024³ %.1f GFLOP/s wall, %.1f GFLOP/cpu-s\n",
		strings.Join(f[:min(3, len(f))], " "), peak, peakCPU)
	fmt.Fprintf(&s, "%-16s %12s %10s %8s %12s %12s\n", "workload", "samples/s", "GFLOP/s", "of GEMM", "GFLOP/cpu-s", "of GEMM cpu")
	for _, r := range rows {
		fmt.Fprintf(&s, "%-16s %12.0f %10.2f %7.1f%% %12.2f %11.1f%%\n",
			r.name, r.samples, r.gflops, 100*r.gflops/peak, r.gfCPU, 100*r.gfCPU/peakCPU)
	}
	fmt.Print(s.String())
}
