package sysmem

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestParseMeminfo(t *testing.T) {
	text := "MemTotal:       24684084 kB\nMemFree:        22033632 kB\nMemAvailable:   23366336 kB\nHugePages_Total:       0\n"
	for _, tc := range []struct {
		text, key string
		want      float64
		ok        bool
	}{
		{text, "MemAvailable", 23366336 * 1024, true},
		{text, "MemTotal", 24684084 * 1024, true},
		{text, "HugePages_Total", 0, true},
		{text, "Missing", 0, false},
		{"MemAvailable: lots kB\n", "MemAvailable", 0, false},
		{"MemAvailable: 5 MB\n", "MemAvailable", 0, false},
		{"MemAvailable:\n", "MemAvailable", 0, false},
	} {
		got, ok := ParseMeminfo(tc.text, tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q in %q: %v %v, want %v %v", tc.key, tc.text, got, ok, tc.want, tc.ok)
		}
	}
}

// read takes the smallest figure among the sources it can open, and falls
// back to the address space when it can open none.
func TestReadCombinesSources(t *testing.T) {
	meminfo := "MemAvailable: 1000 kB\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  float64
		src   string
	}{
		{"nothing readable", nil, AddressSpace, "address space"},
		{"meminfo only", map[string]string{"/proc/meminfo": meminfo}, 1024000, "MemAvailable"},
		{"cgroup v2 tighter", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "600000\n", "/sys/fs/cgroup/memory.current": "100000\n"}, 500000, "memory.max"},
		{"cgroup v2 unlimited", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "max\n", "/sys/fs/cgroup/memory.current": "100000\n"}, 1024000, "MemAvailable"},
		{"cgroup v1 no limit", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n", "/sys/fs/cgroup/memory/memory.usage_in_bytes": "2350579712\n"}, 1024000, "MemAvailable"},
		{"cgroup v1 over its limit", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "100\n", "/sys/fs/cgroup/memory/memory.usage_in_bytes": "200\n"}, 0, "limit_in_bytes"},
	} {
		l := read(func(p string) ([]byte, error) {
			if s, ok := tc.files[p]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		})
		if l.Bytes != tc.want || !strings.Contains(l.Source, tc.src) {
			t.Errorf("%s: %v from %q, want %v from %s", tc.name, l.Bytes, l.Source, tc.want, tc.src)
		}
	}
}

func TestCheck(t *testing.T) {
	l := Limit{Bytes: 8 << 30, Source: "test"}
	for _, tc := range []struct {
		need float64
		want string // "" = accepted
	}{
		{1 << 30, ""},
		{8 << 30, ""},
		{12e12, "--hidden 2000000000 needs about 10.9 TiB of memory; 8 GiB is available (test)"},
	} {
		err := check("--hidden 2000000000", tc.need, l)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v bytes refused: %v", tc.need, err)
		case tc.want != "" && (!errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v bytes: %v, want %q", tc.need, err, tc.want)
		}
	}
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add("MemAvailable:   23366336 kB\n")
	f.Add("MemAvailable: 18446744073709551615 kB\n")
	f.Add("MemAvailable:1\nMemAvailable:2\n")
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := ParseMeminfo(s, "MemAvailable"); ok && !(v >= 0) {
			t.Fatalf("%q: negative or NaN %v", s, v)
		}
		if v, ok := CgroupLeft(s, "0"); ok && !(v >= 0) {
			t.Fatalf("%q: negative or NaN %v", s, v)
		}
	})
}
