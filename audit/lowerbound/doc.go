// Package lowerbound computes statistically valid LOWER bounds on ε from
// what an attacker achieved against a run: the one-run audit of Steinke,
// Nasr & Jagielski 2023 (OneRunPValue, OneRunEpsilon, Scores) and the
// many-run audit with Clopper–Pearson intervals (ManyRunEpsilon). An
// accounted upper bound that falls below such a lower bound is a bug in the
// mechanism or the accounting.
//
// It imports nothing else of the module: package audit, which trains with
// canaries, imports package trainer, whose own tests use these statistics.
package lowerbound
