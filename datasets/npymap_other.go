//go:build !unix

package datasets

import (
	"errors"
	"os"
)

// mapFile is unavailable here: LoadNPY reads the features instead.
func mapFile(*os.File, int64) ([]byte, error) {
	return nil, errors.New("no memory map on this platform")
}

func unmapFile([]byte) error { return nil }
