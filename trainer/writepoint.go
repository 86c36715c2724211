package trainer

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Write points: named places in a run's writes where a crash test stops the
// process to kill it there (docs/architecture.md#crash-testing). The
// environment variable DPTRAIN_STALL_AT=POINT#N stalls the process the Nth
// time it reaches POINT (N defaults to 1): it prints
//
//	dptrain: stalled at POINT#N (DPTRAIN_STALL_AT)
//
// to stderr and waits for a line (or end of file) on stdin before going on.
// DPTRAIN_STALL_AT=list prints "dptrain: write point POINT#N" at every point
// instead, without stopping. A stall only delays the run: it changes
// nothing it writes.
//
// The points are
//
//	half:DIR/FILE    an atomic write has written half of FILE's temporary
//	                 file in DIR (private, .staging, .work)
//	rename:DIR/FILE  the temporary file is complete and synced, not yet renamed
//	step             a step's record has been written
//	final            training is over; nothing of the final write is done
//	publish          .staging/ holds the complete release, not yet swapped in
//	published        release/ is the new set; the old one, the work log and
//	                 the checkpoint are not yet removed
const stallEnv = "DPTRAIN_STALL_AT"

// stallSpec is DPTRAIN_STALL_AT, parsed once.
var stallSpec = sync.OnceValue(func() (s struct {
	point string
	nth   int
	list  bool
}) {
	v := os.Getenv(stallEnv)
	if v == "list" {
		s.list = true
		return s
	}
	p, n, ok := strings.Cut(v, "#")
	s.point, s.nth = p, 1
	if ok {
		if k, err := strconv.Atoi(n); err == nil && k > 0 {
			s.nth = k
		}
	}
	return s
})

var (
	pointMu     sync.Mutex
	pointCounts = map[string]int{}
	// testPointHook, when set (tests of this package only), is called at
	// every write point with its name and occurrence.
	testPointHook func(point string, nth int)
)

// writePoint marks that the run reached point (see stallEnv).
func writePoint(point string) {
	spec := stallSpec()
	if spec.point == "" && !spec.list && testPointHook == nil {
		return
	}
	pointMu.Lock()
	pointCounts[point]++
	n := pointCounts[point]
	pointMu.Unlock()
	if testPointHook != nil {
		testPointHook(point, n)
	}
	switch {
	case spec.list:
		fmt.Fprintf(os.Stderr, "dptrain: write point %s#%d\n", point, n)
	case point == spec.point && n == spec.nth:
		fmt.Fprintf(os.Stderr, "dptrain: stalled at %s#%d (%s)\n", point, n, stallEnv)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	}
}
