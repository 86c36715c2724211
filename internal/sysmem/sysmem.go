// Package sysmem says how much memory this process may allocate, so that a
// size given on the command line that cannot fit is refused before
// allocation with the estimate, instead of the runtime dying with "out of
// memory" and a stack dump.
//
// The figure is read once: the smaller of MemAvailable in /proc/meminfo
// and what a cgroup memory limit leaves (v2 memory.max − memory.current,
// v1 memory.limit_in_bytes − memory.usage_in_bytes). Where neither can be
// read (not Linux), the fallback is the 47-bit user address space of the
// 64-bit platforms: no allocation beyond it can succeed anywhere.
package sysmem

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrTooLarge marks a size refused because it needs more memory than the
// machine has available.
var ErrTooLarge = errors.New("needs more memory than is available")

// AddressSpace is the fallback limit: 2^47 bytes (128 TiB).
const AddressSpace = 1 << 47

// Limit is an amount of memory and where the figure came from.
type Limit struct {
	Bytes  float64
	Source string
}

var (
	once   sync.Once
	cached Limit
)

// Available is the memory this process may still allocate (read once).
func Available() Limit {
	once.Do(func() { cached = read(os.ReadFile) })
	return cached
}

// read combines the sources readFile can open.
func read(readFile func(string) ([]byte, error)) Limit {
	l := Limit{Bytes: AddressSpace, Source: "the 47-bit address space (no /proc/meminfo or cgroup limit readable)"}
	if b, err := readFile("/proc/meminfo"); err == nil {
		if v, ok := ParseMeminfo(string(b), "MemAvailable"); ok {
			l = Limit{Bytes: v, Source: "MemAvailable in /proc/meminfo"}
		}
	}
	for _, cg := range []struct{ limit, usage, name string }{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "cgroup memory.max"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes", "cgroup memory.limit_in_bytes"},
	} {
		lim, err1 := readFile(cg.limit)
		use, err2 := readFile(cg.usage)
		if err1 != nil || err2 != nil {
			continue
		}
		if left, ok := CgroupLeft(string(lim), string(use)); ok && left < l.Bytes {
			l = Limit{Bytes: left, Source: cg.name + " less usage"}
		}
	}
	return l
}

// ParseMeminfo returns the field key of /proc/meminfo text in bytes (the
// file gives kB).
func ParseMeminfo(text, key string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != key {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 || len(f) > 2 || (len(f) == 2 && f[1] != "kB") {
			return 0, false
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) == 2 {
			return float64(v) * 1024, true
		}
		return float64(v), true
	}
	return 0, false
}

// CgroupLeft is what a cgroup limit leaves given its usage; false when the
// limit is "max" or one of the values unreadable. v1 writes "no limit" as
// a number near 2^63, which is larger than any machine and so harmless.
func CgroupLeft(limit, usage string) (float64, bool) {
	lim, err := strconv.ParseUint(strings.TrimSpace(limit), 10, 64)
	if err != nil {
		return 0, false
	}
	use, err := strconv.ParseUint(strings.TrimSpace(usage), 10, 64)
	if err != nil {
		return 0, false
	}
	return math.Max(0, float64(lim)-float64(use)), true
}

// Check refuses need bytes (an estimate of what is allocated; what names
// it, as the user gave it) when it exceeds what is available, with both
// figures in the message.
func Check(what string, need float64) error {
	return check(what, need, Available())
}

func check(what string, need float64, l Limit) error {
	if !(need > l.Bytes) {
		return nil
	}
	return &tooLarge{fmt.Sprintf("%s needs about %s of memory; %s is available (%s)", what, Bytes(need), Bytes(l.Bytes), l.Source)}
}

// tooLarge is Check's refusal: its message says it all; errors.Is matches
// ErrTooLarge.
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string        { return e.msg }
func (e *tooLarge) Is(target error) bool { return target == ErrTooLarge }

// Bytes formats a byte count with a binary unit (3 significant figures).
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}
