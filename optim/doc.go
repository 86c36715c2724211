// Package optim turns a noisy clipped gradient SUM into a parameter update:
// SGD (optionally with momentum, Nesterov, coupled weight decay or the
// hidden-state paper's shrinkage w ← (1−λ)w), Adam/AdamW, learning-rate
// schedules, projection onto an L2 ball, and an exponential moving average
// of the iterates ([EMA]).
//
// The caller passes the noisy sum and the sampler's EXPECTED batch size
// (q·n for Poisson, n·q1·q2 for twice sampling), never the realised one:
// dividing by a realised count would make the update's sensitivity depend on
// the data. Everything here acts on the noisy gradient (EMA: on the
// iterates) only, so it is post-processing and costs no privacy;
// hidden-state accounting, however, requires plain SGD with projection
// that releases its last iterate, not an average
// (docs/hidden-state.md#conditions, A2 and A5), and the trainer must enforce
// that.
//
// The package does not clip, add noise or account for privacy.
package optim
