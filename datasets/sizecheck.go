package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckSizes compares the size of every file at loc with what it must be:
// the distributed size for a file under its distributed name (a .gz), or
// the size its header implies for an uncompressed IDX file (16 + N·H·W for
// images, 8 + N for labels). It is what 'data list' runs: cheap (no
// hashing), and it catches a truncated download that a header probe alone
// reports as fine. Files of unknown size pass.
func (loc Location) CheckSizes(s Summary) error {
	if loc.Source.Kind == FromEmbedded {
		return nil
	}
	l := loc.layout
	if l.spec == nil {
		return nil
	}
	pix := 1
	for _, d := range s.Shape {
		pix *= d
	}
	for split, files := range map[int][]string{s.TrainN: l.train, -1 - s.TestN: l.test} {
		n := split
		if n < 0 {
			n = -1 - n
		}
		for i, p := range files {
			if p == "" {
				continue
			}
			fi, err := os.Stat(p)
			if err != nil {
				return badData(err)
			}
			var want int64
			rf := remoteFor(l.spec, filepath.Base(p))
			switch {
			case rf.Size > 0 && rf.Name == filepath.Base(p) && s.TrainN == l.spec.TrainN && s.TestN == l.spec.TestN:
				// The distributed file (its header claims the full counts).
				want = rf.Size
			case l.spec.Format == FormatIDX && !strings.HasSuffix(p, ".gz") && i == 0:
				want = 16 + int64(n)*int64(pix)
			case l.spec.Format == FormatIDX && !strings.HasSuffix(p, ".gz") && i == 1:
				want = 8 + int64(n)
			}
			if want > 0 && fi.Size() != want {
				return badData(fmt.Errorf("%s: %d bytes, want %d (truncated or corrupt; 'dptrain data verify' checks the checksums)", p, fi.Size(), want))
			}
		}
	}
	return nil
}
