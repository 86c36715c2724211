package models

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
)

// The parameter file format (little-endian):
//
//	"DPTRAINP" | uint32 version = 2 | string arch | text meta | uint32 K |
//	K × (string name | uint64 offset | uint64 len) | uint64 D | D × float32 |
//	uint32 CRC-32 (IEEE) of everything before it
//
// where a string is a uint32 length and its bytes (at most 4 KiB), and
// meta is Meta as JSON, a uint32 length (at most 64 MiB; 0: none) and its
// bytes. Version 1 is the same without meta.
const (
	paramMagic   = "DPTRAINP"
	paramVersion = 2
	maxString    = 1 << 12
	maxMeta      = 1 << 26
	maxGroups    = 1 << 16
)

// MaxFileParams is the largest parameter count Load accepts.
const MaxFileParams = 1 << 30

// ParamFile is the content of a parameter file.
type ParamFile struct {
	Arch string
	// Meta describes the model; nil in a version-1 file.
	Meta   *Meta
	Groups []Group
	Params []float32
}

// ErrArchMismatch is returned when loading parameters saved by another
// architecture.
var ErrArchMismatch = errors.New("parameters belong to another architecture")

// WriteParams writes f in the parameter file format (version 2).
func WriteParams(w io.Writer, f ParamFile) error {
	var meta []byte
	if f.Meta != nil {
		var err error
		if meta, err = json.Marshal(f.Meta); err != nil {
			return fmt.Errorf("model metadata: %w", err)
		}
		if len(meta) > maxMeta {
			return fmt.Errorf("model metadata: %d bytes, more than %d", len(meta), maxMeta)
		}
	}
	if len(f.Arch) > maxString {
		return fmt.Errorf("architecture name of %d bytes, more than %d", len(f.Arch), maxString)
	}
	var buf bytes.Buffer
	buf.WriteString(paramMagic)
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, paramVersion))
	putString := func(s string) {
		buf.Write(le.AppendUint32(nil, uint32(len(s))))
		buf.WriteString(s)
	}
	putString(f.Arch)
	buf.Write(le.AppendUint32(nil, uint32(len(meta))))
	buf.Write(meta)
	buf.Write(le.AppendUint32(nil, uint32(len(f.Groups))))
	for _, g := range f.Groups {
		putString(g.Name)
		buf.Write(le.AppendUint64(nil, uint64(g.Offset)))
		buf.Write(le.AppendUint64(nil, uint64(g.Len)))
	}
	buf.Write(le.AppendUint64(nil, uint64(len(f.Params))))
	b := make([]byte, 4*len(f.Params))
	for i, v := range f.Params {
		le.PutUint32(b[4*i:], math.Float32bits(v))
	}
	buf.Write(b)
	buf.Write(le.AppendUint32(nil, crc32.ChecksumIEEE(buf.Bytes())))
	_, err := w.Write(buf.Bytes())
	return err
}

// ReadParams parses a parameter file, refusing files of more than maxParams
// parameters, a bad checksum, or groups that do not partition [0, D) in
// order. Memory grows with the bytes read, never with a header's claim.
func ReadParams(r io.Reader, maxParams int) (ParamFile, error) {
	crc := crc32.NewIEEE()
	br := bufio.NewReader(r)
	tr := io.TeeReader(br, crc)
	var f ParamFile
	le := binary.LittleEndian
	var scratch [8]byte
	u32 := func() (uint32, error) {
		_, err := io.ReadFull(tr, scratch[:4])
		return le.Uint32(scratch[:4]), err
	}
	u64 := func() (uint64, error) {
		_, err := io.ReadFull(tr, scratch[:8])
		return le.Uint64(scratch[:8]), err
	}
	str := func() (string, error) {
		n, err := u32()
		if err != nil {
			return "", err
		}
		if n > maxString {
			return "", fmt.Errorf("string of %d bytes", n)
		}
		b := make([]byte, n)
		_, err = io.ReadFull(tr, b)
		return string(b), err
	}
	fail := func(what string, err error) (ParamFile, error) {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return ParamFile{}, fmt.Errorf("parameter file: %s: %w", what, err)
	}
	magic := make([]byte, len(paramMagic))
	if _, err := io.ReadFull(tr, magic); err != nil || string(magic) != paramMagic {
		return fail("header", errors.New("not a dptrain parameter file"))
	}
	version, err := u32()
	if err != nil || version < 1 || version > paramVersion {
		return fail("version", fmt.Errorf("unsupported version %d (err %v)", version, err))
	}
	if f.Arch, err = str(); err != nil {
		return fail("architecture", err)
	}
	if version >= 2 {
		n, err := u32()
		if err != nil || n > maxMeta {
			return fail("metadata", fmt.Errorf("%d bytes (err %v)", n, err))
		}
		if n > 0 {
			// Read what is there, not what the header claims.
			b, err := io.ReadAll(io.LimitReader(tr, int64(n)))
			if err == nil && len(b) < int(n) {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return fail("metadata", err)
			}
			f.Meta = new(Meta)
			if err := json.Unmarshal(b, f.Meta); err != nil {
				return fail("metadata", err)
			}
		}
	}
	k, err := u32()
	if err != nil || k > maxGroups {
		return fail("groups", fmt.Errorf("%d groups (err %v)", k, err))
	}
	next := uint64(0)
	for range k {
		var g Group
		if g.Name, err = str(); err != nil {
			return fail("group name", err)
		}
		off, err1 := u64()
		n, err2 := u64()
		if err := errors.Join(err1, err2); err != nil {
			return fail("group", err)
		}
		if off != next || n == 0 || n > uint64(maxParams) {
			return fail("group "+g.Name, fmt.Errorf("offset %d length %d does not follow the previous group", off, n))
		}
		next = off + n
		g.Offset, g.Len = int(off), int(n)
		f.Groups = append(f.Groups, g)
	}
	d, err := u64()
	if err != nil {
		return fail("size", err)
	}
	if d > uint64(maxParams) || d != next {
		return fail("size", fmt.Errorf("%d parameters (groups cover %d, limit %d)", d, next, maxParams))
	}
	// Read in blocks, so memory grows only with data actually present.
	const block = 1 << 16
	b := make([]byte, 4*min(d, block))
	for left := d; left > 0; {
		n := min(left, block)
		if _, err := io.ReadFull(tr, b[:4*n]); err != nil {
			return fail("parameters", err)
		}
		for i := range n {
			f.Params = append(f.Params, math.Float32frombits(le.Uint32(b[4*i:])))
		}
		left -= n
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(br, scratch[:4]); err != nil {
		return fail("checksum", err)
	}
	if le.Uint32(scratch[:4]) != sum {
		return fail("checksum", errors.New("mismatch: the file is corrupt"))
	}
	return f, nil
}

// Save writes the model's architecture name, its description (Meta), groups
// and parameters.
func (m *Net) Save(w io.Writer) error {
	md, err := m.Meta()
	if err != nil && !errors.Is(err, ErrUndescribed) {
		return err
	}
	return WriteParams(w, ParamFile{Arch: m.arch, Meta: &md, Groups: m.groups, Params: m.Params()})
}

// Load reads parameters written by Save into the model. Parameters of another
// architecture (name, groups or size) are refused with ErrArchMismatch and
// leave the model unchanged.
func (m *Net) Load(r io.Reader) error {
	f, err := ReadParams(r, MaxFileParams)
	if err != nil {
		return fmt.Errorf("%s: %w", m.arch, err)
	}
	if f.Arch != m.arch || !slices.Equal(f.Groups, m.groups) || len(f.Params) != m.NumParams() {
		return fmt.Errorf("loading %s parameters into %s: %w", f.Arch, m.arch, ErrArchMismatch)
	}
	copy(m.Params(), f.Params)
	return nil
}

// SaveFile saves the parameters to path.
func (m *Net) SaveFile(path string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := m.Save(fh); err != nil {
		fh.Close()
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return fh.Close()
}

// LoadFile loads parameters saved by SaveFile.
func (m *Net) LoadFile(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	if err := m.Load(fh); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
