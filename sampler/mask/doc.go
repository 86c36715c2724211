// Package mask is the coordinate mask of twice sampling: a bitset over the
// coordinates of one example's clipped vector, with the masked additions
// the clippers make (some with an AVX2 kernel). It is a leaf, so that
// package sampler draws masks and package clip applies them without clip
// importing the sampler.
package mask
