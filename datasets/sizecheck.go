package datasets

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckSizes compares the size of every file at loc with what it must be:
// for an IDX file, the size its header implies (16 + N·H·W for images,
// 8 + N for labels), read from the gzip trailer (ISIZE) when compressed, so
// that a recompressed copy such as Debian's passes and a truncated one does
// not; for another file under its distributed name, the distributed size.
// It is what 'data list' runs: cheap (no hashing, one read at the end of a
// .gz), and it catches a truncated download that a header probe alone
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
			case l.spec.Format == FormatIDX && i == 0:
				want = 16 + int64(n)*int64(pix)
			case l.spec.Format == FormatIDX && i == 1:
				want = 8 + int64(n)
			case rf.Size > 0 && rf.Name == filepath.Base(p) && s.TrainN == l.spec.TrainN && s.TestN == l.spec.TestN:
				// The distributed file (its header claims the full counts).
				want = rf.Size
			}
			if want == 0 {
				continue
			}
			if strings.HasSuffix(p, ".gz") {
				isize, err := gzipISize(p, fi.Size())
				if err != nil {
					return badData(err)
				}
				if isize != uint32(want) { // ISIZE is the length mod 2³²
					return badData(fmt.Errorf("%s: gzip trailer gives %d uncompressed bytes, want %d (truncated or corrupt; 'dptrain data verify' checks the checksums)", p, isize, want))
				}
			} else if fi.Size() != want {
				return badData(fmt.Errorf("%s: %d bytes, want %d (truncated or corrupt; 'dptrain data verify' checks the checksums)", p, fi.Size(), want))
			}
		}
	}
	return nil
}

// gzipISize reads the ISIZE field of a single-member gzip file's trailer
// (RFC 1952: the uncompressed length mod 2³², little-endian, last 4 bytes).
func gzipISize(p string, size int64) (uint32, error) {
	if size < 18 { // 10-byte header + 8-byte trailer
		return 0, fmt.Errorf("%s: %d bytes is too short for a gzip file (truncated)", p, size)
	}
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [4]byte
	if _, err := f.ReadAt(b[:], size-4); err != nil {
		return 0, fmt.Errorf("%s: gzip trailer: %w", p, err)
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}
