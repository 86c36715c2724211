//go:build race

package nn

// raceEnabled: the race detector allocates, so allocation tests skip.
const raceEnabled = true
