// Package repro holds the small pieces every paper-reproduction program under
// scripts/internal shares: writing a CSV file, saving a gonum plot as PNG and
// SVG, a log-spaced grid, and formatting numbers and differences for the
// markdown tables that put our values beside a paper's.
//
// It is not a plotting or reporting library: each program builds its own
// plots and tables; this package only removes the boilerplate around them.
package repro
