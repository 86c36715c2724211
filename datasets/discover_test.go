package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadSearchOrder(t *testing.T) {
	explicit, env, sys := t.TempDir(), t.TempDir(), t.TempDir()
	writeIDXDir(t, explicit, 3, 1, true)                             // --data DIR itself
	writeIDXDir(t, filepath.Join(env, "fashion-mnist"), 4, 2, false) // $DPTRAIN_DATA/NAME, raw IDX
	writeIDXDir(t, filepath.Join(sys, "fashion-mnist"), 5, 3, true)
	t.Setenv(EnvData, env)

	tests := []struct {
		name     string
		opts     Options
		kind     SourceKind
		path     string
		nTrain   int
		notFound bool
	}{
		{"explicit first", Options{Dir: explicit, SystemDir: sys}, FromDir, explicit, 3, false},
		{"env next", Options{SystemDir: sys}, FromEnv, filepath.Join(env, "fashion-mnist"), 4, false},
		{"system next", Options{NoEnv: true, SystemDir: sys}, FromSystem, filepath.Join(sys, "fashion-mnist"), 5, false},
		{"embedded last", Options{NoEnv: true, SystemDir: t.TempDir()}, FromEmbedded, "embedded:fashion-mnist", EmbeddedTrainN, false},
		{"nothing", Options{NoEnv: true, NoSystem: true, NoEmbedded: true}, "", "", 0, true},
	}
	for _, tc := range tests {
		ld, src, err := Load("fmnist", tc.opts)
		if tc.notFound {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: err %v, want ErrNotFound", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if src.Kind != tc.kind || src.Path != tc.path || ld.Train.N() != tc.nTrain {
			t.Errorf("%s: got %v with %d train, want %s %s with %d", tc.name, src, ld.Train.N(), tc.kind, tc.path, tc.nTrain)
		}
	}
	// MNIST has no embedded fallback; the error says where it looked.
	_, _, err := Load("mnist", Options{SystemDir: sys})
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrBadData) ||
		!strings.Contains(err.Error(), "looked in $"+EnvData+"="+env+", "+sys+";") {
		t.Errorf("mnist with nothing installed: %v", err)
	}
	// A named directory that is missing or holds no copy is an error even
	// when another location has one: never a silent fallback.
	empty := t.TempDir()
	for _, dir := range []string{empty, filepath.Join(empty, "nonexistent")} {
		_, _, err := Load("fmnist", Options{Dir: dir, SystemDir: sys})
		if !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), "--data "+dir) {
			t.Errorf("--data %s: err %v, want a bad-data error naming it", dir, err)
		}
	}
	if _, _, err := Load("imagenet", Options{}); err == nil || !strings.Contains(err.Error(), "unknown dataset") {
		t.Errorf("unknown name: %v", err)
	}
}

func TestLoadIncompleteOrCorruptIsAnError(t *testing.T) {
	dir := t.TempDir()
	writeIDXDir(t, dir, 3, 1, true)
	writeFile(t, filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"), []byte("\x1f\x8bgarbage"))
	_, _, err := Load("fashion-mnist", Options{Dir: dir, NoEnv: true})
	if err == nil || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte.gz") || !errors.Is(err, ErrBadData) {
		t.Errorf("corrupt file: %v", err)
	}
	inc := t.TempDir()
	writeIDXDir(t, inc, 3, 1, true)
	if err := removeFile(filepath.Join(inc, "t10k-images-idx3-ubyte.gz")); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load("fashion-mnist", Options{Dir: inc, NoEnv: true})
	if err == nil || !strings.Contains(err.Error(), "missing [t10k-images-idx3-ubyte.gz]") || !errors.Is(err, ErrBadData) {
		t.Errorf("incomplete: %v", err)
	}
	// Fixture labels match no known checksum, so the bare directory is a
	// candidate for both MNIST and Fashion-MNIST, and both report it.
	found := List(Options{Dir: inc, NoEnv: true, NoSystem: true, NoEmbedded: true})
	if len(found) != 2 || found[0].Err == nil || found[1].Err == nil {
		t.Errorf("List of an incomplete copy: %+v", found)
	}
}

func TestListProbes(t *testing.T) {
	dir := t.TempDir()
	writeIDXDir(t, filepath.Join(dir, "mnist"), 7, 2, true)
	found := List(Options{Dir: dir, NoEnv: true, NoSystem: true})
	var names []string
	for _, f := range found {
		names = append(names, f.Name+"@"+string(f.Source.Kind))
		if f.Err != nil {
			t.Errorf("%s: %v", f.Name, f.Err)
		}
		if f.Name == "mnist" && (f.TrainN != 7 || f.TestN != 2 || f.Shape[1] != 2 || f.Shape[2] != 3) {
			t.Errorf("mnist probe %+v", f.Summary)
		}
	}
	// The bare --data dir holds MNIST-named files, so fashion-mnist does not
	// match there (its files live in dir/mnist); the embedded subset does.
	if strings.Join(names, " ") != "mnist@dir fashion-mnist@embedded" {
		t.Errorf("List found %v", names)
	}
}

func TestIdentifyByLabelChecksum(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	// The real Fashion-MNIST labels in a bare --data directory are not
	// offered as MNIST.
	dir := t.TempDir()
	for _, n := range idxNames {
		src := filepath.Join(debianFashion, n+".gz")
		b, err := os.ReadFile(src)
		if err != nil {
			t.Skipf("real Fashion-MNIST not installed: %v", err)
		}
		writeFile(t, filepath.Join(dir, n+".gz"), b)
	}
	locs, _ := Locate("mnist", Options{Dir: dir, NoEnv: true, NoSystem: true})
	if len(locs) != 0 {
		t.Errorf("Fashion-MNIST files located as MNIST: %v", locs[0].Source)
	}
	locs, _ = Locate("fashion-mnist", Options{Dir: dir, NoEnv: true, NoSystem: true, NoEmbedded: true})
	if len(locs) != 1 || locs[0].Source.Path != dir {
		t.Errorf("Fashion-MNIST not located in %s: %v", dir, locs)
	}
}
