package datasets

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func sha(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// fileServer serves named byte slices with Range support and records the
// Range header of every request. interrupt[name] > 0 makes the next request
// for name send only that many bytes of a full-length response and then
// abort the connection.
type fileServer struct {
	mu        sync.Mutex
	files     map[string][]byte
	interrupt map[string]int
	noRange   bool
	requests  []string // "name range"
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	s.mu.Lock()
	b, ok := s.files[name]
	cut := s.interrupt[name]
	delete(s.interrupt, name)
	s.requests = append(s.requests, name+" "+r.Header.Get("Range"))
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if cut > 0 {
		w.Header().Set("Content-Length", itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	if s.noRange {
		r.Header.Del("Range")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}

func itoa(n int) string { return strconv.Itoa(n) }

func (s *fileServer) reqs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// fixtureSpec returns a two-file IDX spec whose checksums match files.
func fixtureSpec(t *testing.T) (*Spec, map[string][]byte) {
	im := gzBytes(t, idxBytes([]int{50, 8, 8}, tinyImages(50, 8, 8)))
	lb := gzBytes(t, idxBytes([]int{50}, labelsMod(50)))
	files := map[string][]byte{"imgs.gz": im, "lbls.gz": lb}
	spec := &Spec{Name: "fixture", Files: []RemoteFile{
		{Name: "imgs.gz", SHA256: sha(im), Size: int64(len(im))},
		{Name: "lbls.gz", SHA256: sha(lb), Size: int64(len(lb))},
	}}
	return spec, files
}

func assertNoPart(t *testing.T, dir string) {
	t.Helper()
	parts, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	if len(parts) != 0 {
		t.Errorf("leftover partial files %v", parts)
	}
}

func TestFetchVerifiesAndSkipsPresent(t *testing.T) {
	spec, files := fixtureSpec(t)
	fs := &fileServer{files: files}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	var progress, log bytes.Buffer
	dir, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: t.TempDir(), BaseURL: srv.URL, Progress: &progress, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, content equal %v", n, err, bytes.Equal(got, want))
		}
	}
	assertNoPart(t, dir)
	if !strings.Contains(progress.String(), "imgs.gz") {
		t.Errorf("no progress bar for imgs.gz in %q", progress.String())
	}
	// A second fetch verifies and downloads nothing.
	before := len(fs.reqs())
	if _, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: filepath.Dir(dir), BaseURL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	if after := len(fs.reqs()); after != before {
		t.Errorf("second fetch made %d requests", after-before)
	}
}

func TestFetchRejectsCorruptFile(t *testing.T) {
	spec, files := fixtureSpec(t)
	bad := bytes.Clone(files["lbls.gz"])
	bad[len(bad)/2] ^= 0xff
	files["lbls.gz"] = bad
	srv := httptest.NewServer(&fileServer{files: files})
	defer srv.Close()
	root := t.TempDir()
	_, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: root, BaseURL: srv.URL})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "lbls.gz") {
		t.Fatalf("err %v, want a checksum error naming lbls.gz", err)
	}
	dir := filepath.Join(root, "fixture")
	if _, err := os.Stat(filepath.Join(dir, "lbls.gz")); !os.IsNotExist(err) {
		t.Errorf("corrupt file kept under its final name (stat err %v)", err)
	}
	assertNoPart(t, dir)
}

func TestFetchResumesInterruptedDownload(t *testing.T) {
	for _, noRange := range []bool{false, true} {
		spec, files := fixtureSpec(t)
		half := len(files["imgs.gz"]) / 2
		fs := &fileServer{files: files, interrupt: map[string]int{"imgs.gz": half}, noRange: noRange}
		srv := httptest.NewServer(fs)
		root := t.TempDir()
		dir := filepath.Join(root, "fixture")
		_, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: root, BaseURL: srv.URL})
		if err == nil {
			t.Fatal("interrupted download reported success")
		}
		if _, err := os.Stat(filepath.Join(dir, "imgs.gz")); !os.IsNotExist(err) {
			t.Fatal("partial download under the final name")
		}
		st, err := os.Stat(filepath.Join(dir, "imgs.gz.part"))
		if err != nil || st.Size() != int64(half) {
			t.Fatalf("part file: %v, size %v, want %d", err, st, half)
		}
		if _, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: root, BaseURL: srv.URL}); err != nil {
			t.Fatalf("resume (server ignores Range: %v): %v", noRange, err)
		}
		srv.Close()
		got, _ := os.ReadFile(filepath.Join(dir, "imgs.gz"))
		if !bytes.Equal(got, files["imgs.gz"]) {
			t.Errorf("resumed file differs (noRange %v)", noRange)
		}
		reqs := fs.reqs()
		wantRange := "imgs.gz bytes=" + itoa(half) + "-"
		found, imgReqs := false, 0
		for _, r := range reqs {
			found = found || r == wantRange
			if strings.HasPrefix(r, "imgs.gz ") {
				imgReqs++
			}
		}
		// Interrupted + resumed; a third request would mean the resumed file
		// failed its checksum and was downloaded again from scratch.
		if imgReqs != 2 {
			t.Errorf("%d requests for imgs.gz, want 2: %q", imgReqs, reqs)
		}
		if !found {
			t.Errorf("no Range request in %q", reqs)
		}
		assertNoPart(t, dir)
	}
}

func TestFetchResumeOfCorruptPartRestartsOnce(t *testing.T) {
	spec, files := fixtureSpec(t)
	srv := httptest.NewServer(&fileServer{files: files})
	defer srv.Close()
	root := t.TempDir()
	dir := filepath.Join(root, "fixture")
	writeFile(t, filepath.Join(dir, "imgs.gz.part"), []byte("garbage that is not the start of the file"))
	if _, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: root, BaseURL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "imgs.gz"))
	if !bytes.Equal(got, files["imgs.gz"]) {
		t.Error("file differs after restarting a corrupt resume")
	}
}

func TestFetchMirrorFallback(t *testing.T) {
	spec, files := fixtureSpec(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	defer dead.Close()
	live := httptest.NewServer(&fileServer{files: files})
	defer live.Close()
	spec.Mirrors = []string{dead.URL, live.URL + "/"}
	t.Setenv(EnvFetchURL, "")
	if _, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	spec.Mirrors = []string{dead.URL}
	_, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("all mirrors dead: %v", err)
	}
}

func tarGz(t *testing.T, members map[string][]byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "cifar-10-batches-bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	for _, n := range []string{"readme.html", "data_batch_1.bin", "test_batch.bin"} {
		c, ok := members[n]
		if !ok {
			continue
		}
		tw.WriteHeader(&tar.Header{Name: "cifar-10-batches-bin/" + n, Size: int64(len(c)), Mode: 0o644, Typeflag: tar.TypeReg})
		tw.Write(c)
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

func TestFetchArchive(t *testing.T) {
	train, test := cifarBytes(1, 2, 3), cifarBytes(4)
	arc := tarGz(t, map[string][]byte{"readme.html": []byte("hi"), "data_batch_1.bin": train, "test_batch.bin": test})
	srv := httptest.NewServer(&fileServer{files: map[string][]byte{"c.tar.gz": arc}})
	defer srv.Close()
	spec := &Spec{Name: "cifar-fixture", Archive: &RemoteFile{Name: "c.tar.gz", SHA256: sha(arc)},
		Members: []RemoteFile{{Name: "data_batch_1.bin", SHA256: sha(train)}, {Name: "test_batch.bin", SHA256: sha(test)}}}
	root := t.TempDir()
	dir, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: root, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadCIFAR10Files("c", filepath.Join(dir, "data_batch_1.bin"))
	if err != nil || d.N() != 3 || d.Y[2] != 3 {
		t.Errorf("extracted batch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.tar.gz")); !os.IsNotExist(err) {
		t.Error("archive not removed after extraction")
	}
	if _, err := os.Stat(filepath.Join(dir, "readme.html")); !os.IsNotExist(err) {
		t.Error("unlisted member extracted")
	}
	// A member whose checksum does not match is rejected and not kept.
	spec.Members[1].SHA256 = sha([]byte("something else"))
	root2 := t.TempDir()
	_, err = FetchSpec(context.Background(), spec, FetchOptions{Dir: root2, BaseURL: srv.URL})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "test_batch.bin") {
		t.Errorf("bad member: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root2, "cifar-fixture", "test_batch.bin")); !os.IsNotExist(err) {
		t.Error("member with a bad checksum kept under its final name")
	}
	assertNoPart(t, filepath.Join(root2, "cifar-fixture"))
}

func TestCatalogChecksums(t *testing.T) {
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, s := range catalog {
		files := append(append([]RemoteFile(nil), s.Files...), s.Members...)
		if s.Archive != nil {
			files = append(files, *s.Archive)
		}
		if len(s.Mirrors) == 0 || len(files) == 0 || s.TrainN == 0 {
			t.Errorf("%s: incomplete spec", s.Name)
		}
		for _, f := range files {
			if !hex64.MatchString(f.SHA256) || f.Size <= 0 {
				t.Errorf("%s/%s: SHA-256 %q size %d", s.Name, f.Name, f.SHA256, f.Size)
			}
			if f.ContentSHA256 != "" && !hex64.MatchString(f.ContentSHA256) {
				t.Errorf("%s/%s: content SHA-256 %q", s.Name, f.Name, f.ContentSHA256)
			}
		}
	}
	// CIFAR-10 members are 10,000 records of 3,073 bytes.
	c, _ := Lookup("cifar10")
	for _, m := range c.Members {
		if m.Size != 10000*cifarRecord {
			t.Errorf("%s: size %d", m.Name, m.Size)
		}
	}
}

func TestFetchAcceptsRecompressedCopyByContent(t *testing.T) {
	raw := idxBytes([]int{3}, []byte{1, 2, 3})
	upstream := gzBytes(t, raw)
	var b bytes.Buffer // the same content, recompressed with a file name in the header
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	zw.Name = "other"
	zw.Write(raw)
	zw.Close()
	recompressed := b.Bytes()
	if bytes.Equal(upstream, recompressed) {
		t.Fatal("fixture: recompression produced identical bytes")
	}
	srv := httptest.NewServer(&fileServer{files: map[string][]byte{"l.gz": recompressed}})
	defer srv.Close()
	spec := &Spec{Name: "r", Files: []RemoteFile{{Name: "l.gz", SHA256: sha(upstream), ContentSHA256: sha(raw)}}}
	var log bytes.Buffer
	if _, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: t.TempDir(), BaseURL: srv.URL, Log: &log}); err != nil {
		t.Errorf("recompressed copy with matching content rejected: %v", err)
	}
	if !strings.Contains(log.String(), "downloaded, content sha256 ok (recompressed copy)") {
		t.Errorf("log does not say the content checksum matched: %q", log.String())
	}
	spec.Files[0].ContentSHA256 = sha([]byte("other content"))
	if _, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: t.TempDir(), BaseURL: srv.URL}); !errors.Is(err, ErrChecksum) {
		t.Errorf("recompressed copy with other content: %v", err)
	}
}

func TestCheckFile(t *testing.T) {
	raw := idxBytes([]int{2}, []byte{4, 5})
	gz := gzBytes(t, raw)
	dir := t.TempDir()
	gzPath, rawPath := filepath.Join(dir, "l.gz"), filepath.Join(dir, "l")
	writeFile(t, gzPath, gz)
	writeFile(t, rawPath, raw)
	tests := []struct {
		name   string
		path   string
		rf     RemoteFile
		status string // "" means an ErrChecksum is expected
	}{
		{"upstream gz", gzPath, RemoteFile{Name: "l.gz", SHA256: sha(gz)}, "sha256 ok"},
		{"content of gz", gzPath, RemoteFile{Name: "l.gz", SHA256: sha([]byte("x")), ContentSHA256: sha(raw)}, "content sha256 ok"},
		{"content of raw copy", rawPath, RemoteFile{Name: "l.gz", SHA256: sha(gz), ContentSHA256: sha(raw)}, "content sha256 ok"},
		{"wrong gz", gzPath, RemoteFile{Name: "l.gz", SHA256: sha([]byte("x"))}, ""},
		{"wrong content", gzPath, RemoteFile{Name: "l.gz", SHA256: sha([]byte("x")), ContentSHA256: sha([]byte("y"))}, ""},
		{"no checksum", gzPath, RemoteFile{Name: "l.gz"}, "unverified: no known checksum"},
		{"raw copy, gz sum only", rawPath, RemoteFile{Name: "l.gz", SHA256: sha(gz)}, "unverified: uncompressed copy, only the .gz checksum is known"},
	}
	for _, tc := range tests {
		c := CheckFile(tc.path, tc.rf)
		if tc.status == "" {
			if !errors.Is(c.Err, ErrChecksum) {
				t.Errorf("%s: %+v, want a checksum error", tc.name, c)
			}
			continue
		}
		if c.Err != nil || c.Status != tc.status {
			t.Errorf("%s: status %q err %v, want %q", tc.name, c.Status, c.Err, tc.status)
		}
	}
}

func TestFetchCompletePartIsRenamed(t *testing.T) {
	// A download that finished but was interrupted before its rename: the
	// server answers the Range request with 416 and the part is verified.
	spec, files := fixtureSpec(t)
	fs := &fileServer{files: files}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	root := t.TempDir()
	dir := filepath.Join(root, "fixture")
	writeFile(t, filepath.Join(dir, "imgs.gz.part"), files["imgs.gz"])
	if _, err := FetchSpec(context.Background(), spec, FetchOptions{Dir: root, BaseURL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "imgs.gz"))
	if !bytes.Equal(got, files["imgs.gz"]) {
		t.Error("file differs")
	}
	if r := fs.reqs()[0]; r != "imgs.gz bytes="+itoa(len(files["imgs.gz"]))+"-" {
		t.Errorf("first request %q", r)
	}
	if n := len(fs.reqs()); n != 2 {
		t.Errorf("%d requests, want 2 (one 416 for imgs.gz, one for lbls.gz)", n)
	}
}
