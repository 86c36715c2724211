// Package audit checks a run's privacy claim empirically: it trains with
// canaries, scores them from what the run released (release/ only), and
// turns the attacker's guesses into a statistically valid LOWER bound on ε
// (Steinke, Nasr & Jagielski 2023, "Privacy Auditing with One (1) Training
// Run"). A lower bound above the accounted ε is a bug in the mechanism or
// the accounting; a lower bound below it is expected (one run, final model
// only: the gap is wide for a correct implementation) and proves nothing
// about how tight the accounted ε is.
//
// The statistics live in package audit/lowerbound (OneRunEpsilon, Scores,
// ClopperPearson, ManyRunEpsilon), which imports nothing of the module so
// that package trainer's tests can use it; the canaries in package trainer.
package audit
