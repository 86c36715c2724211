// Package mechanism describes one training step's privacy mechanism as a
// single value: how the batch is sampled, how each example's gradient is
// clipped, what noise the clipped sum receives, and which event the
// accountant charges for it.
//
// A privacy guarantee holds only when the noise a step adds and the event
// its accountant composes describe the same mechanism. The trainer therefore
// builds neither: it asks a Mechanism for the sampler, the noise to add at a
// noise multiplier σ and the event to charge for step t at σ, so that the
// sensitivity, the noise scale and the sampling rate are each derived in one
// place. Spec.Validate refuses, with the reason, every combination that no
// accountant supports.
//
// The neighbouring relation follows from the sampler: Poisson and twice
// sampling are accounted under add/remove-one, shuffling under replace-one
// (one Gaussian of multiplier σ/2 per epoch, charged at the epoch's first
// step).
package mechanism
