// Package cputime reads the process's CPU time, for benchmarks that report
// throughput per CPU-second: on a shared machine other load distorts wall
// time far more than the CPU time the benchmark itself used.
package cputime
