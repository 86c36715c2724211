//go:build !unix

package trainer

// lockOutDir is a no-op where flock is not available: the run directory is
// not protected against a second writer there.
func lockOutDir(string) (func(), error) { return func() {}, nil }
