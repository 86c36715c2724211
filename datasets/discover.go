package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvData is the environment variable naming a data directory.
const EnvData = "DPTRAIN_DATA"

// DefaultSystemDir is where Debian's dataset packages install data
// (apt-get install dataset-fashion-mnist → /usr/share/datasets/fashion-mnist).
const DefaultSystemDir = "/usr/share/datasets"

// Options controls where Load and List look.
type Options struct {
	// Dir is an explicit data directory (the --data flag), searched first,
	// as Dir/NAME and then Dir itself.
	Dir string
	// NoEnv skips $DPTRAIN_DATA; NoSystem skips SystemDir; NoEmbedded
	// skips the embedded Fashion-MNIST subset.
	NoEnv, NoSystem, NoEmbedded bool
	// SystemDir overrides DefaultSystemDir (tests).
	SystemDir string
}

// SourceKind says which search location a dataset came from.
type SourceKind string

const (
	FromDir      SourceKind = "dir"      // --data DIR
	FromEnv      SourceKind = "env"      // $DPTRAIN_DATA
	FromSystem   SourceKind = "system"   // /usr/share/datasets
	FromEmbedded SourceKind = "embedded" // the subset compiled into the binary
)

// Source says where a dataset was found.
type Source struct {
	Kind SourceKind
	// Path is the directory holding the files ("embedded:" + name for the
	// embedded subset).
	Path string
}

func (s Source) String() string { return fmt.Sprintf("%s (%s)", s.Path, s.Kind) }

// ErrNotFound is returned (wrapped) when no location holds the dataset.
var ErrNotFound = errors.New("dataset not found")

// searchRoot is one place to look, before expanding to NAME subdirectories.
type searchRoot struct {
	kind SourceKind
	dir  string
}

func (o Options) roots() []searchRoot {
	var r []searchRoot
	if o.Dir != "" {
		r = append(r, searchRoot{FromDir, o.Dir})
	}
	if env := os.Getenv(EnvData); env != "" && !o.NoEnv {
		r = append(r, searchRoot{FromEnv, env})
	}
	if !o.NoSystem {
		sys := o.SystemDir
		if sys == "" {
			sys = DefaultSystemDir
		}
		// Only NAME subdirectories: the system root itself holds many datasets.
		r = append(r, searchRoot{FromSystem, sys})
	}
	return r
}

// candidateDirs lists the directories under root that may hold spec, in
// order of preference.
func candidateDirs(spec *Spec, root searchRoot) []string {
	var dirs []string
	for _, n := range append([]string{spec.Name}, spec.Aliases...) {
		dirs = append(dirs, filepath.Join(root.dir, n))
		if spec.Format == FormatCIFAR10 {
			dirs = append(dirs, filepath.Join(root.dir, n, "cifar-10-batches-bin"))
		}
	}
	if spec.Format == FormatCIFAR10 {
		dirs = append(dirs, filepath.Join(root.dir, "cifar-10-batches-bin"))
	}
	if root.kind != FromSystem {
		dirs = append(dirs, root.dir)
	}
	return dirs
}

// layout holds the resolved file paths of one local copy.
type layout struct {
	spec         *Spec
	dir          string
	train, test  []string // CIFAR batches, or [images, labels] for IDX
	missing      []string // expected files not present
	presentFiles int
}

// resolve looks for spec's files in dir.
func resolve(spec *Spec, dir string) layout {
	l := layout{spec: spec, dir: dir}
	find := func(names ...string) string {
		for _, n := range names {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				l.presentFiles++
				return p
			}
		}
		l.missing = append(l.missing, names[0])
		return ""
	}
	switch spec.Format {
	case FormatIDX:
		var p [4]string
		for i, n := range idxNames {
			p[i] = find(n+".gz", n)
		}
		l.train, l.test = []string{p[0], p[1]}, []string{p[2], p[3]}
	case FormatCIFAR10:
		for _, n := range cifarTrain {
			l.train = append(l.train, find(n))
		}
		for _, n := range cifarTest {
			l.test = append(l.test, find(n))
		}
	}
	return l
}

func (l layout) complete() bool { return len(l.missing) == 0 }

// Location is one place a dataset was found.
type Location struct {
	Name   string
	Source Source
	// Missing lists expected files that are absent (an incomplete copy).
	Missing []string
	layout  layout
}

// Locate returns every location holding at least one file of the named
// dataset, in search order; the embedded subset comes last when the name is
// fashion-mnist and it is not disabled.
func Locate(name string, opts Options) ([]Location, error) {
	spec, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	var locs []Location
	seen := map[string]bool{}
	for _, root := range opts.roots() {
		for _, dir := range candidateDirs(spec, root) {
			abs, err := filepath.Abs(dir)
			if err != nil || seen[abs] {
				continue
			}
			seen[abs] = true
			l := resolve(spec, dir)
			if l.presentFiles == 0 {
				continue
			}
			if other := identifyIDX(l); other != nil && other != spec {
				continue // e.g. MNIST files when asked for Fashion-MNIST: same file names
			}
			locs = append(locs, Location{Name: spec.Name, Source: Source{root.kind, dir}, Missing: l.missing, layout: l})
		}
	}
	if spec.Name == "fashion-mnist" && !opts.NoEmbedded {
		locs = append(locs, Location{Name: spec.Name, Source: embeddedSource})
	}
	return locs, nil
}

// Load finds the named dataset ("mnist", "fashion-mnist", "cifar10" or an
// alias) and loads its train and test splits. It uses the first location in
// search order (Options.Dir, $DPTRAIN_DATA, the system directory, then for
// Fashion-MNIST the embedded subset). A copy that is incomplete or corrupt is
// an error, not a reason to fall back silently to the next location.
func Load(name string, opts Options) (*Loaded, Source, error) {
	locs, err := Locate(name, opts)
	if err != nil {
		return nil, Source{}, err
	}
	// A directory the user named must hold the data: falling back to
	// another copy would train on something they did not ask for.
	if opts.Dir != "" && (len(locs) == 0 || locs[0].Source.Kind != FromDir) {
		if _, err := os.Stat(opts.Dir); err != nil {
			return nil, Source{}, badData(fmt.Errorf("--data %s: %w", opts.Dir, err))
		}
		return nil, Source{}, badData(fmt.Errorf("--data %s holds no %s (%w; 'dptrain data list --data %s' shows what it holds)", opts.Dir, name, ErrNotFound, opts.Dir))
	}
	if len(locs) == 0 {
		var where []string
		for _, r := range opts.roots() {
			switch r.kind {
			case FromDir:
				where = append(where, "--data "+r.dir)
			case FromEnv:
				where = append(where, "$"+EnvData+"="+r.dir)
			default:
				where = append(where, r.dir)
			}
		}
		if len(where) == 0 {
			where = append(where, "nowhere: every location disabled")
		}
		return nil, Source{}, badData(fmt.Errorf("%s: %w (looked in %s; try 'dptrain data fetch %s')",
			name, ErrNotFound, strings.Join(where, ", "), name))
	}
	ld, err := locs[0].Load()
	return ld, locs[0].Source, err
}

// Load reads the dataset at this location.
func (loc Location) Load() (*Loaded, error) {
	if loc.Source.Kind == FromEmbedded {
		return Embedded()
	}
	l := loc.layout
	if !l.complete() {
		return nil, badData(fmt.Errorf("%s in %s: incomplete, missing %v", loc.Name, l.dir, l.missing))
	}
	spec := l.spec
	var tr, te *Dataset
	var err error
	switch spec.Format {
	case FormatIDX:
		if tr, err = LoadIDX(spec.Name, l.train[0], l.train[1], 10); err != nil {
			return nil, err
		}
		if te, err = LoadIDX(spec.Name, l.test[0], l.test[1], 10); err != nil {
			return nil, err
		}
		tr.ClassNames, te.ClassNames = spec.ClassNames, spec.ClassNames
	case FormatCIFAR10:
		if tr, err = LoadCIFAR10Files(spec.Name, l.train...); err != nil {
			return nil, err
		}
		if te, err = LoadCIFAR10Files(spec.Name, l.test...); err != nil {
			return nil, err
		}
	}
	return &Loaded{Train: tr, Test: te}, nil
}

// Summary describes a located dataset without loading its pixels.
type Summary struct {
	TrainN, TestN int
	Shape         []int
}

// Probe reads only headers (IDX) or file sizes (CIFAR-10) to count the
// examples at this location.
func (loc Location) Probe() (Summary, error) {
	if loc.Source.Kind == FromEmbedded {
		return probeEmbedded()
	}
	l := loc.layout
	if !l.complete() {
		return Summary{}, fmt.Errorf("incomplete, missing %v", l.missing)
	}
	switch l.spec.Format {
	case FormatIDX:
		return probeIDXPair(l.train, l.test, ProbeIDXFile)
	default:
		var s Summary
		s.Shape = []int{3, 32, 32}
		for i, set := range [][]string{l.train, l.test} {
			for _, p := range set {
				st, err := os.Stat(p)
				if err != nil {
					return Summary{}, err
				}
				if st.Size()%cifarRecord != 0 {
					return Summary{}, fmt.Errorf("cifar10 %s: size %d is not a multiple of %d", p, st.Size(), cifarRecord)
				}
				n := int(st.Size() / cifarRecord)
				if i == 0 {
					s.TrainN += n
				} else {
					s.TestN += n
				}
			}
		}
		return s, nil
	}
}

// probeIDXPair checks image/label counts from headers.
func probeIDXPair(train, test []string, probe func(string) ([]int, error)) (Summary, error) {
	var s Summary
	for i, pair := range [][]string{train, test} {
		im, err := probe(pair[0])
		if err != nil {
			return Summary{}, err
		}
		lb, err := probe(pair[1])
		if err != nil {
			return Summary{}, err
		}
		if len(im) != 3 || len(lb) != 1 {
			return Summary{}, fmt.Errorf("idx %s / %s: dims %v and %v, want N×H×W images and N labels", pair[0], pair[1], im, lb)
		}
		if im[0] != lb[0] {
			return Summary{}, fmt.Errorf("idx %s has %d images but %s has %d labels", pair[0], im[0], pair[1], lb[0])
		}
		if i == 0 {
			s.TrainN = im[0]
		} else {
			s.TestN = im[0]
		}
		s.Shape = []int{1, im[1], im[2]}
	}
	return s, nil
}

// Found is one row of List.
type Found struct {
	Location
	Summary
	Err error
}

// List probes every known dataset in every location.
func List(opts Options) []Found {
	var out []Found
	for _, n := range Names() {
		locs, _ := Locate(n, opts)
		for _, loc := range locs {
			s, err := loc.Probe()
			if err == nil {
				err = loc.CheckSizes(s)
			}
			out = append(out, Found{Location: loc, Summary: s, Err: err})
		}
	}
	return out
}

// identifyIDX recognises which known dataset an IDX copy is from by the
// checksum of its training labels (small, so cheap to hash). MNIST and
// Fashion-MNIST use the same file names, so the name alone cannot tell.
// It returns nil when the labels match no known checksum.
func identifyIDX(l layout) *Spec {
	if l.spec.Format != FormatIDX || l.train[1] == "" {
		return nil
	}
	for _, s := range catalog {
		if s.Format != FormatIDX {
			continue
		}
		rf := remoteFor(s, filepath.Base(l.train[1]))
		if rf.SHA256 == "" && rf.ContentSHA256 == "" {
			continue
		}
		if c := CheckFile(l.train[1], rf); c.Err == nil && c.Status != "" && !strings.HasPrefix(c.Status, "unverified") {
			return s
		}
	}
	return nil
}
