package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// sciInt lets an integer flag take scientific notation (--steps 1e6): a
// value whose decimal text is exactly an integer is passed on as its
// digits. The text is read exactly (not through float64), so 1e18 is
// 1000000000000000000 and 1.5e0 is refused; the flag itself still refuses
// what its type cannot hold.
type sciInt struct{ flag.Value }

func (v sciInt) Set(s string) error {
	if _, err := strconv.Atoi(s); err == nil {
		return v.Value.Set(s)
	}
	// The float bound keeps big.Rat from expanding an exponent like 1e999999999.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || len(s) > 40 || !(math.Abs(f) <= 1<<64) || strings.Contains(s, "/") {
		return v.Value.Set(s) // the flag package's own error
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return v.Value.Set(s) // the flag package's own error
	}
	return v.Value.Set(r.Num().String())
}

func (v sciInt) Get() any { return v.Value.(flag.Getter).Get() }

// acceptScientific wraps every int flag of fs in sciInt; the returned
// function unwraps them (so that help shows their types).
func acceptScientific(fs *flag.FlagSet) (restore func()) {
	orig := map[*flag.Flag]flag.Value{}
	fs.VisitAll(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case int, int64, uint, uint64:
				orig[f] = f.Value
				f.Value = sciInt{f.Value}
			}
		}
	})
	return func() {
		for f, v := range orig {
			f.Value = v
		}
	}
}

// didYouMean returns " (did you mean --x?)" for the defined flag closest
// to the unknown one in err, or "".
func didYouMean(fs *flag.FlagSet, err error) string {
	const prefix = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return ""
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, prefix), "-")
	best, bestD := "", 3 // at most two edits
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean --%s?)", best)
}

// closest returns the candidate nearest to s (at most two edits), or "".
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// version is the module version and VCS commit of this binary.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dptrain (unknown version)"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev == "" {
		// go run and go test do not stamp the commit; the source tree this
		// binary was compiled from may still be a git checkout.
		rev, modified = sourceCommit()
	}
	if rev != "" {
		v += " commit " + rev + modified
	} else {
		v += " (commit unknown: build with go build inside a git checkout)"
	}
	return "dptrain " + v + " " + bi.GoVersion
}

// sourceCommit asks git for the commit of the directory this file was
// compiled from, when it still exists; "" when it does not or git fails.
func sourceCommit() (rev, modified string) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", ""
	}
	dir := filepath.Dir(file)
	if _, err := os.Stat(dir); err != nil {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", ""
	}
	rev = strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		modified = " (modified)"
	}
	return rev + " (source tree)", modified
}
