package datasets

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
)

// EnvFetchURL overrides the mirrors of every dataset with one base URL (a
// file's URL is base + "/" + file name). Tests point it at a local server.
const EnvFetchURL = "DPTRAIN_FETCH_URL"

// FetchOptions controls Fetch.
type FetchOptions struct {
	// Dir is the destination root; files go to Dir/NAME.
	Dir string
	// BaseURL replaces the Spec's mirrors; when empty, $DPTRAIN_FETCH_URL,
	// and when that is empty too, the canonical mirrors in order.
	BaseURL string
	// Client is the HTTP client; nil means http.DefaultClient.
	Client *http.Client
	// Progress receives progress bars (stderr in the CLI); nil: none.
	Progress io.Writer
	// Log receives one line per file (what was done); nil: none.
	Log io.Writer
}

// ErrChecksum is returned (wrapped) when a downloaded file does not match
// its known SHA-256. The file is deleted.
var ErrChecksum = errors.New("checksum mismatch")

// Fetch downloads the named dataset into opts.Dir/NAME and returns that
// directory. Every file is verified against its known SHA-256 before it is
// renamed to its final name, so a final name never holds a partial or
// corrupt file. An interrupted download leaves NAME.part behind, and the next
// Fetch resumes it with an HTTP Range request. Files already present and
// verified are not downloaded again.
func Fetch(ctx context.Context, name string, opts FetchOptions) (string, error) {
	spec, err := Lookup(name)
	if err != nil {
		return "", err
	}
	return FetchSpec(ctx, spec, opts)
}

// FetchSpec is Fetch for an explicit spec (tests use fixture specs).
func FetchSpec(ctx context.Context, spec *Spec, opts FetchOptions) (string, error) {
	if opts.Dir == "" {
		return "", errors.New("fetch: no destination directory")
	}
	dest := filepath.Join(opts.Dir, spec.Name)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	f := fetcher{ctx: ctx, opts: opts, mirrors: spec.Mirrors}
	if opts.Client == nil {
		f.opts.Client = http.DefaultClient
	}
	base := opts.BaseURL
	if base == "" {
		base = os.Getenv(EnvFetchURL)
	}
	if base != "" {
		f.mirrors = []string{base}
	}
	for _, rf := range spec.Files {
		if err := f.file(dest, rf); err != nil {
			return "", err
		}
	}
	if spec.Archive != nil {
		if err := f.archive(dest, *spec.Archive, spec.Members); err != nil {
			return "", err
		}
	}
	return dest, nil
}

type fetcher struct {
	ctx     context.Context
	opts    FetchOptions
	mirrors []string
}

func (f *fetcher) logf(format string, args ...any) {
	if f.opts.Log != nil {
		fmt.Fprintf(f.opts.Log, format+"\n", args...)
	}
}

// file makes dest/rf.Name a verified copy of rf.
func (f *fetcher) file(dest string, rf RemoteFile) error {
	final := filepath.Join(dest, rf.Name)
	if _, err := os.Stat(final); err == nil {
		if c := CheckFile(final, rf); c.Err == nil {
			f.logf("%s: present, %s", final, c.Status)
			return nil
		}
		f.logf("%s: present but fails its checksum; downloading again", final)
	}
	if rf.SHA256 == "" {
		return fmt.Errorf("fetch %s: no known SHA-256, refusing to download unverifiable data", rf.Name)
	}
	part := final + ".part"
	how := "sha256 ok"
	for attempt := 0; ; attempt++ {
		resumed, err := f.download(rf, part)
		if err != nil {
			return err
		}
		got, err := sha256File(part)
		if err != nil {
			return err
		}
		if got == rf.SHA256 {
			break
		}
		// A mirror may serve a recompressed copy; its content can still match.
		if rf.ContentSHA256 != "" {
			if c, err := contentSHA256(part); err == nil && c == rf.ContentSHA256 {
				how = "content sha256 ok (recompressed copy)"
				break
			}
		}
		os.Remove(part)
		// A resumed file may be bad only because its first part was; retry
		// once from scratch before giving up.
		if resumed && attempt == 0 {
			f.logf("%s: checksum mismatch after resuming; downloading from scratch", rf.Name)
			continue
		}
		return fmt.Errorf("fetch %s: %w: sha256 %s, want %s (download deleted)", rf.Name, ErrChecksum, got, rf.SHA256)
	}
	if err := os.Rename(part, final); err != nil {
		return err
	}
	f.logf("%s: downloaded, %s", final, how)
	return nil
}

// download fetches rf into part from the first mirror that answers,
// resuming from part's current size. It reports whether it resumed.
func (f *fetcher) download(rf RemoteFile, part string) (resumed bool, err error) {
	var errs []error
	for _, m := range f.mirrors {
		url := strings.TrimSuffix(m, "/") + "/" + rf.Name
		resumed, err = f.get(url, rf, part)
		if err == nil {
			return resumed, nil
		}
		if f.ctx.Err() != nil {
			return false, fmt.Errorf("fetch %s: %w (partial download kept in %s)", rf.Name, f.ctx.Err(), part)
		}
		errs = append(errs, err)
		f.logf("%v", err)
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	// One line, so the CLI's error stays one line.
	return false, fmt.Errorf("fetch %s: every mirror failed: %s", rf.Name, strings.Join(msgs, "; "))
}

// get downloads url into part, appending after its current size.
func (f *fetcher) get(url string, rf RemoteFile, part string) (resumed bool, err error) {
	var off int64
	if st, err := os.Stat(part); err == nil {
		off = st.Size()
	}
	if rf.Size > 0 && off > rf.Size {
		os.Remove(part)
		off = 0
	}
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
	}
	resp, err := f.opts.Client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	flags := os.O_CREATE | os.O_WRONLY
	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, err := contentRangeStart(resp.Header.Get("Content-Range"))
		if err != nil || start != off {
			return false, fmt.Errorf("%s: server resumed at %q, asked for byte %d", url, resp.Header.Get("Content-Range"), off)
		}
		flags |= os.O_APPEND
		resumed = true
	case resp.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC // no range support: start over
		off = 0
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && off > 0:
		return true, nil // the part is already whole; the checksum decides
	default:
		return false, fmt.Errorf("%s: HTTP %s", url, resp.Status)
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return false, err
	}
	total := rf.Size
	if resp.ContentLength >= 0 {
		total = off + resp.ContentLength
	}
	var w io.Writer = out
	if f.opts.Progress != nil {
		bar := progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(f.opts.Progress),
			progressbar.OptionSetDescription(rf.Name),
			progressbar.OptionShowBytes(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(f.opts.Progress) }),
		)
		_ = bar.Set64(off)
		w = io.MultiWriter(out, bar)
	}
	body := io.Reader(resp.Body)
	if rf.Size > 0 {
		body = io.LimitReader(body, rf.Size-off+1) // a runaway stream cannot fill the disk
	}
	_, cerr := io.Copy(w, body)
	serr := out.Sync()
	if err := errors.Join(cerr, serr, out.Close()); err != nil {
		return resumed, fmt.Errorf("%s: %w (partial download kept in %s)", url, err, part)
	}
	return resumed, nil
}

// contentRangeStart parses "bytes START-END/TOTAL".
func contentRangeStart(h string) (int64, error) {
	s, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, fmt.Errorf("bad Content-Range %q", h)
	}
	s, _, ok = strings.Cut(s, "-")
	if !ok {
		return 0, fmt.Errorf("bad Content-Range %q", h)
	}
	return strconv.ParseInt(s, 10, 64)
}

// archive downloads a .tar.gz, verifies it, extracts members (each verified
// and renamed into place) and deletes the archive.
func (f *fetcher) archive(dest string, arc RemoteFile, members []RemoteFile) error {
	allOK := true
	for _, m := range members {
		if c := CheckFile(filepath.Join(dest, m.Name), m); c.Err != nil {
			allOK = false
			break
		}
	}
	if allOK {
		f.logf("%s: all %d files present, sha256 ok", dest, len(members))
		return nil
	}
	if err := f.file(dest, arc); err != nil {
		return err
	}
	arcPath := filepath.Join(dest, arc.Name)
	if err := extractMembers(arcPath, dest, members); err != nil {
		return err
	}
	f.logf("%s: extracted %d files, sha256 ok", arcPath, len(members))
	return os.Remove(arcPath)
}

// extractMembers writes the tar.gz members whose base names are listed,
// each through a .part file that is verified before the rename.
func extractMembers(arcPath, dest string, members []RemoteFile) error {
	want := map[string]RemoteFile{}
	for _, m := range members {
		want[m.Name] = m
	}
	fh, err := os.Open(arcPath)
	if err != nil {
		return err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return fmt.Errorf("archive %s: %w", arcPath, err)
	}
	tr := tar.NewReader(zr)
	done := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("archive %s: %w", arcPath, err)
		}
		m, ok := want[path.Base(hdr.Name)]
		if !ok || hdr.Typeflag != tar.TypeReg {
			continue
		}
		if err := extractOne(tr, filepath.Join(dest, m.Name), m); err != nil {
			return fmt.Errorf("archive %s: %w", arcPath, err)
		}
		done[m.Name] = true
	}
	for _, m := range members {
		if !done[m.Name] {
			return fmt.Errorf("archive %s: no member %s", arcPath, m.Name)
		}
	}
	return nil
}

func extractOne(r io.Reader, final string, m RemoteFile) error {
	part := final + ".part"
	out, err := os.Create(part)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), r)
	err = errors.Join(err, out.Sync(), out.Close())
	if err != nil {
		os.Remove(part)
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); m.SHA256 != "" && got != m.SHA256 {
		os.Remove(part)
		return fmt.Errorf("member %s: %w: sha256 %s, want %s", m.Name, ErrChecksum, got, m.SHA256)
	}
	return os.Rename(part, final)
}

// sha256File returns the hex SHA-256 of a file.
func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// contentSHA256 returns the hex SHA-256 of a file's content, decompressed
// when the file is gzip.
func contentSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r, err := maybeGunzip(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
