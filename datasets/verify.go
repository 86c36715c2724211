package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FileCheck is the checksum verdict on one file.
type FileCheck struct {
	Path string
	// Status says what matched ("sha256 ok", "content sha256 ok", or
	// "unverified: ..." when no checksum is known). Empty when Err is set.
	Status string
	Got    string // the hex SHA-256 computed (of the file, or of its content)
	Err    error
}

// CheckFile verifies a local file against rf: first its own SHA-256 against
// rf.SHA256, then, when a content checksum is known, the SHA-256 of its
// decompressed content (so recompressed or gunzipped copies verify too).
func CheckFile(p string, rf RemoteFile) FileCheck {
	c := FileCheck{Path: p}
	got, err := sha256File(p)
	if err != nil {
		c.Err = err
		return c
	}
	c.Got = got
	if rf.SHA256 != "" && got == rf.SHA256 {
		c.Status = "sha256 ok"
		return c
	}
	if rf.ContentSHA256 != "" {
		c.Got, err = contentSHA256(p)
		if err != nil {
			c.Err = err
			return c
		}
		if c.Got == rf.ContentSHA256 {
			c.Status = "content sha256 ok"
			return c
		}
		c.Err = fmt.Errorf("%s: %w: content sha256 %s, want %s", p, ErrChecksum, c.Got, rf.ContentSHA256)
		return c
	}
	if rf.SHA256 == "" {
		c.Status = "unverified: no known checksum"
		return c
	}
	if strings.HasSuffix(rf.Name, ".gz") && !strings.HasSuffix(p, ".gz") {
		c.Status = "unverified: uncompressed copy, only the .gz checksum is known"
		return c
	}
	c.Err = fmt.Errorf("%s: %w: sha256 %s, want %s", p, ErrChecksum, got, rf.SHA256)
	return c
}

// Report is the result of verifying one location.
type Report struct {
	Location Location
	Files    []FileCheck
	Summary  Summary
	// Err is set when the data cannot be loaded or its counts or shape are
	// not those of the dataset.
	Err error
}

// OK reports whether every check passed.
func (r Report) OK() bool {
	if r.Err != nil {
		return false
	}
	for _, f := range r.Files {
		if f.Err != nil {
			return false
		}
	}
	return true
}

// Verify checks every file at loc against the known checksums and loads the
// data to check the example counts and shape.
func Verify(loc Location) Report {
	r := Report{Location: loc}
	spec, err := Lookup(loc.Name)
	if err != nil {
		r.Err = err
		return r
	}
	wantTrain, wantTest := spec.TrainN, spec.TestN
	if loc.Source.Kind == FromEmbedded {
		r.Files, r.Err = verifyEmbedded()
		wantTrain, wantTest = EmbeddedTrainN, EmbeddedTestN
	} else {
		if len(loc.Missing) > 0 {
			r.Err = fmt.Errorf("incomplete, missing %v", loc.Missing)
			return r
		}
		_, err := os.Stat(filepath.Join(loc.layout.dir, ImportMarker))
		imported := err == nil
		for _, p := range slices.Concat(loc.layout.train, loc.layout.test) {
			if imported {
				r.Files = append(r.Files, FileCheck{Path: p, Status: "unverified: converted by dptrain data import (see " + ImportMarker + ")"})
				continue
			}
			r.Files = append(r.Files, CheckFile(p, remoteFor(spec, filepath.Base(p))))
		}
	}
	if r.Err != nil {
		return r
	}
	ld, err := loc.Load()
	if err != nil {
		r.Err = err
		return r
	}
	r.Summary = Summary{TrainN: ld.Train.N(), TestN: ld.Test.N(), Shape: ld.Train.Shape}
	switch {
	case ld.Train.N() != wantTrain || ld.Test.N() != wantTest:
		r.Err = fmt.Errorf("%d train + %d test examples, want %d + %d", ld.Train.N(), ld.Test.N(), wantTrain, wantTest)
	case !slices.Equal(ld.Train.Shape, spec.Shape) || !slices.Equal(ld.Test.Shape, spec.Shape):
		r.Err = fmt.Errorf("shape %v / %v, want %v", ld.Train.Shape, ld.Test.Shape, spec.Shape)
	}
	return r
}

// remoteFor finds the checksum entry for a local file name (with or without
// .gz).
func remoteFor(spec *Spec, base string) RemoteFile {
	for _, rf := range spec.localFiles() {
		if rf.Name == base || strings.TrimSuffix(rf.Name, ".gz") == base {
			return rf
		}
	}
	return RemoteFile{Name: base}
}
