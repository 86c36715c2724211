//go:build !linux

package trainer

// exchangeDirsOS: no atomic exchange of two directories here; publish
// renames twice and recoverOutDir repairs a crash between the renames.
func exchangeDirsOS(a, b string) error { return errExchange }
