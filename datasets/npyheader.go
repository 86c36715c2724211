package datasets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// NPYHeader is the header of a NumPy .npy file, format version 1.0, 2.0 or
// 3.0 (docs/npy.md).
type NPYHeader struct {
	Major, Minor int
	// Descr is the dtype string as written, e.g. "<f4"; Type decodes it.
	Descr        string
	Type         NPYType
	FortranOrder bool
	Shape        []int
	// DataOffset is where the array's bytes start (the header's length).
	DataOffset int64
}

// NPYType is a simple (non-structured) dtype: a float, an integer or a
// boolean, of Size bytes, in the given byte order.
type NPYType struct {
	Kind      byte // 'f' float, 'i' signed integer, 'u' unsigned integer, 'b' boolean
	Size      int  // bytes per element
	BigEndian bool // only meaningful when Size > 1
}

// String is the dtype as numpy writes it ("<f4", "|u1").
func (t NPYType) String() string {
	order := "<"
	switch {
	case t.Size == 1:
		order = "|"
	case t.BigEndian:
		order = ">"
	}
	return fmt.Sprintf("%s%c%d", order, t.Kind, t.Size)
}

// Count is the number of elements the shape holds (1 for shape ()), or an
// error when that overflows.
func (h *NPYHeader) Count() (int, error) {
	n := 1
	for _, s := range h.Shape {
		if s != 0 && n > math.MaxInt/s {
			return 0, fmt.Errorf("shape %v overflows", h.Shape)
		}
		n *= s
	}
	return n, nil
}

// npyMagic opens every .npy file.
const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds the dictionary's length (numpy's own reader refuses
// more than 10,000 bytes by default); it keeps a corrupt length field from
// asking for gigabytes.
const maxNPYHeader = 1 << 16

// ReadNPYHeader reads the magic, version, header length and header
// dictionary of a .npy stream, leaving r at the first data byte. It accepts
// exactly the keys 'descr', 'fortran_order' and 'shape', and simple dtypes
// of kinds f (4 or 8 bytes), i and u (1, 2, 4 or 8) and b (1); anything else
// is an error.
func ReadNPYHeader(r io.Reader) (*NPYHeader, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("reading magic and version: %w", noEOF(err))
	}
	if string(pre[:6]) != npyMagic {
		return nil, fmt.Errorf("bad magic %q: not a .npy file", pre[:6])
	}
	h := &NPYHeader{Major: int(pre[6]), Minor: int(pre[7])}
	var hlen int64
	switch {
	case h.Minor != 0 || h.Major < 1 || h.Major > 3:
		return nil, fmt.Errorf("unsupported .npy format version %d.%d (known: 1.0, 2.0, 3.0)", h.Major, h.Minor)
	case h.Major == 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("reading header length: %w", noEOF(err))
		}
		hlen = int64(binary.LittleEndian.Uint16(b[:]))
		h.DataOffset = 10 + hlen
	default:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("reading header length: %w", noEOF(err))
		}
		hlen = int64(binary.LittleEndian.Uint32(b[:]))
		h.DataOffset = 12 + hlen
	}
	if hlen > maxNPYHeader {
		return nil, fmt.Errorf("header length %d exceeds %d bytes", hlen, maxNPYHeader)
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("reading the %d-byte header: %w", hlen, noEOF(err))
	}
	if err := h.parseDict(string(buf)); err != nil {
		return nil, fmt.Errorf("header %q: %w", truncateString(string(buf), 200), err)
	}
	return h, nil
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// parseDict parses the header's Python dict literal, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }, followed by
// spaces and a newline.
func (h *NPYHeader) parseDict(s string) error {
	p := &pyLit{s: s}
	if !p.eat('{') {
		return errors.New("not a dictionary")
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return fmt.Errorf("key: %w", err)
		}
		if seen[key] {
			return fmt.Errorf("key %q repeated", key)
		}
		seen[key] = true
		if !p.eat(':') {
			return fmt.Errorf("no ':' after key %q", key)
		}
		switch key {
		case "descr":
			if p.peek() == '[' {
				return errors.New("structured dtypes (a list in 'descr') are not supported")
			}
			if h.Descr, err = p.str(); err != nil {
				return fmt.Errorf("descr: %w", err)
			}
			if h.Type, err = parseNPYDescr(h.Descr); err != nil {
				return err
			}
		case "fortran_order":
			if h.FortranOrder, err = p.boolean(); err != nil {
				return fmt.Errorf("fortran_order: %w", err)
			}
		case "shape":
			if h.Shape, err = p.tuple(); err != nil {
				return fmt.Errorf("shape: %w", err)
			}
		default:
			return fmt.Errorf("unexpected key %q (a .npy header has descr, fortran_order and shape)", key)
		}
		if !p.eat(',') {
			if !p.eat('}') {
				return errors.New("expected ',' or '}'")
			}
			break
		}
	}
	p.space()
	if p.i != len(p.s) {
		return fmt.Errorf("unexpected text after the dictionary at byte %d", p.i)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return fmt.Errorf("key %q missing", k)
		}
	}
	return nil
}

// parseNPYDescr decodes a simple dtype string such as "<f4" or "|u1".
func parseNPYDescr(d string) (NPYType, error) {
	bad := fmt.Errorf("unsupported dtype %q (supported: float32/64 <f4 <f8, integers <i1..<i8 <u1..<u8, bool |b1; little- or big-endian)", d)
	if len(d) < 3 {
		return NPYType{}, bad
	}
	t := NPYType{Kind: d[1]}
	switch d[0] {
	case '<', '|':
	case '>':
		t.BigEndian = true
	default:
		return NPYType{}, bad
	}
	size, err := strconv.Atoi(d[2:])
	if err != nil || d[2] == '+' || d[2] == '-' {
		return NPYType{}, bad
	}
	t.Size = size
	ok := false
	switch t.Kind {
	case 'f':
		ok = size == 4 || size == 8
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'b':
		ok = size == 1
	}
	if !ok || (d[0] == '|' && size != 1) {
		return NPYType{}, bad
	}
	if size == 1 {
		t.BigEndian = false
	}
	return t, nil
}

// pyLit scans the small subset of Python literals a .npy header uses.
type pyLit struct {
	s string
	i int
}

func (p *pyLit) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyLit) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyLit) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *pyLit) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", errors.New("expected a quoted string")
	}
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsRune(v, '\\') {
		return "", errors.New("escapes in strings are not supported")
	}
	p.i += end + 2
	return v, nil
}

func (p *pyLit) boolean() (bool, error) {
	p.space()
	for _, w := range []string{"True", "False"} {
		if strings.HasPrefix(p.s[p.i:], w) {
			p.i += len(w)
			return w == "True", nil
		}
	}
	return false, errors.New("expected True or False")
}

// tuple reads a tuple of non-negative integers: (), (3,), (3, 4) or
// Python 2's (3L, 4L).
func (p *pyLit) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, errors.New("expected a tuple")
	}
	dims := []int{}
	for !p.eat(')') {
		p.space()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i {
			return nil, errors.New("expected a non-negative integer")
		}
		v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil || v > math.MaxInt32*int64(math.MaxInt32) {
			return nil, fmt.Errorf("dimension %q out of range", p.s[p.i:j])
		}
		dims = append(dims, int(v))
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == 'L' {
			p.i++
		}
		if !p.eat(',') {
			if !p.eat(')') {
				return nil, errors.New("expected ',' or ')'")
			}
			break
		}
	}
	if len(dims) > 32 {
		return nil, fmt.Errorf("%d dimensions (numpy allows 32)", len(dims))
	}
	return dims, nil
}

// EncodeNPYHeader returns the header numpy writes for an array of the given
// dtype and shape: version 1.0 when the dictionary fits its 16-bit length,
// else 2.0, padded with spaces and a newline to a multiple of 64 bytes.
func EncodeNPYHeader(t NPYType, fortran bool, shape []int) []byte {
	var sh strings.Builder
	sh.WriteByte('(')
	for i, s := range shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		sh.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	f := "False"
	if fortran {
		f = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", t, f, sh.String())
	for _, v := range []struct {
		major byte
		pre   int
	}{{1, 10}, {2, 12}} {
		total := v.pre + len(dict) + 1
		pad := (64 - total%64) % 64
		hlen := len(dict) + pad + 1
		if v.major == 1 && hlen > math.MaxUint16 {
			continue
		}
		out := make([]byte, 0, v.pre+hlen)
		out = append(out, npyMagic...)
		out = append(out, v.major, 0)
		if v.major == 1 {
			out = binary.LittleEndian.AppendUint16(out, uint16(hlen))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(hlen))
		}
		out = append(out, dict...)
		out = append(out, strings.Repeat(" ", pad)...)
		return append(out, '\n')
	}
	panic("unreachable")
}
