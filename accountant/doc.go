// Package accountant turns a description of what ran into a privacy bound.
//
// What ran is data: an [Event] is an immutable value naming one mechanism
// (a Gaussian of noise multiplier σ, a Poisson-subsampled event, an event
// composed with itself T times, ...). An [Accountant] composes the events it
// supports and refuses the rest with an error wrapping [ErrUnsupported]; it
// never guesses. Every bound names its neighbouring relation (add/remove-one
// or replace-one), and a [Tracker] runs several accountants side by side,
// one event per training step.
//
// The package does not run mechanisms and does not add noise; the training
// loop describes what it did and the accountants answer.
package accountant
