// Package vec holds the float reductions that the engine (models/nn) and the
// clippers (clip) must compute identically: one implementation, summed in
// one fixed order, so that a per-sample norm computed without materialising
// the gradient and the norm of the materialised gradient agree bit for bit.
package vec
