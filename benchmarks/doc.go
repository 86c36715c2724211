// Package benchmarks measures the DP-SGD variants side by side: a harness
// that trains one model under every combination of clipping rule × sampler
// (through trainer.Run) and tables samples/s, peak memory, the per-step
// noise variance E‖e‖², ε after the run and test accuracy; and Go
// benchmarks of the kernels those runs spend their time in.
//
// Harness (Run over a Grid, one Row per cell; WriteTable, WriteCSV,
// WriteMarkdown print the rows). Each cell is a full trainer run with the
// same base configuration, so the rows differ only in clip and sampler.
// Samples/s is Summary.Samples / Summary.Seconds: the wall time of the whole
// run, so set-up (data loading, σ calibration, the subspace basis) and the
// final evaluation are included — compare rows with each other, not with
// the kernel benchmarks. Peak memory is sampled from runtime.MemStats every
// ~20 ms after a GC: HeapInuse is the cell's peak heap (a lower bound on the
// true peak between samples; it includes what earlier cells left live, e.g.
// cached data); Sys, kept in the CSV and JSON only, is memory obtained from
// the OS, which the runtime rarely returns, so it only grows from cell to
// cell. A combination the trainer refuses becomes a row carrying the
// trainer's error and nothing measured.
//
// Hybrid subspace clipping ("subspace", paper 003) runs through the trainer
// like the other variants, with Base's subspace ranks, public_n, power_iters
// and subspace_refresh (DefaultGrid: ranks 16, 32; it is not among
// DefaultClips). Its cells differ from the others in ways the rows show:
// public_n training examples are declared public for the basis and leave
// the private set (Row.TrainN, so a larger sampling rate q); the released
// vector has K + D coordinates (Row.Dim, K the largest rank) with per-block
// noise of effective multiplier σ shaped by Theorem 4.6, so E‖e‖² is at most
// the isotropic σ²C²(K+D); and ε comes from the twice-sampling accountant
// for Poisson (q2 = 1) and twice sampling alike. The trainer refuses it with
// shuffling, so subspace × shuffle is an error row.
//
// Go benchmarks (go test -run XXX -bench . ./benchmarks):
//
//   - BenchmarkClipSum: per-sample clip + sum of B = 64 rows for each clip
//     variant at D = 26,010 (MNIST CNN) and D = 272,474 (ResNet-20, GroupNorm),
//     with the models' real parameter groups for per-layer clipping, and for
//     the subspace clip a rank-16+16 basis of random "public" gradients
//     (NewClipKernel; the clip alone, no model).
//   - BenchmarkSamplerNext: one step of Poisson sampling, of shuffling and
//     of twice sampling (with the selected examples' coordinate masks) over
//     n = 60,000.
//
// One whole trainer step (per-sample gradients + clip + noise + update) is
// measured by the models package's BenchmarkDPStepLogreg, BenchmarkDPStepMLP,
// BenchmarkDPStepCNN and BenchmarkDPStepResNet20; they are not duplicated
// here.
//
// The package measures; it does not tune, and its numbers are not privacy
// guarantees beyond what the trainer's accountant reports.
package benchmarks
