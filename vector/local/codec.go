package local

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// castagnoli is the CRC-32C table used by the log and the snapshot.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt reports bytes that do not decode: a torn or damaged record.
var errCorrupt = errors.New("corrupt vector data")

// encoder appends the binary forms used by log records and snapshots.
type encoder struct{ b []byte }

func (e *encoder) byte(x byte)      { e.b = append(e.b, x) }
func (e *encoder) uvarint(x uint64) { e.b = binary.AppendUvarint(e.b, x) }
func (e *encoder) u32(x uint32)     { e.b = binary.LittleEndian.AppendUint32(e.b, x) }
func (e *encoder) u64(x uint64)     { e.b = binary.LittleEndian.AppendUint64(e.b, x) }

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// time keeps seconds and nanoseconds (not the location: decoded times are
// UTC); a zero time is one 0 byte.
func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.byte(0)
		return
	}
	e.byte(1)
	e.b = binary.AppendVarint(e.b, t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
}

func (e *encoder) vec(v []float32) {
	for _, x := range v {
		e.u32(math.Float32bits(x))
	}
}

// payload writes the format-2 payload: the format-1 fields, then the
// access and narrowing fields (user, visibility, tags, subject, project,
// session).
func (e *encoder) payload(p vector.Payload) {
	e.str(p.MemoryID)
	e.str(p.VersionID)
	e.str(p.TenantID)
	e.str(p.OrgID)
	e.str(p.RepoID)
	e.str(p.Type)
	e.time(p.CreatedAt)
	e.str(p.UserID)
	e.str(p.Visibility)
	e.uvarint(uint64(len(p.Tags)))
	for _, t := range p.Tags {
		e.str(t)
	}
	e.str(p.SubjectType)
	e.str(p.SubjectID)
	e.str(p.ProjectID)
	e.str(p.SessionID)
}

// byteSource is what decoder reads from: a bytes.Reader for a log record, a
// crcReader over a file for a snapshot.
type byteSource interface {
	io.Reader
	io.ByteReader
}

// decoder reads what encoder wrote. The first failure sticks in err and
// every later read returns zero values, so callers check err once. With
// strs set, the payload fields that repeat from point to point are looked
// up there first (state.strs, the interned strings), so that loading 1M
// points does not allocate ten strings per point only to drop them.
type decoder struct {
	r    byteSource
	err  error
	buf  []byte
	strs map[string]string
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %w", errCorrupt, err)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	b, err := d.r.ReadByte()
	if err != nil {
		d.fail(err)
	}
	return b
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return x
}

func (d *decoder) full(n int) []byte {
	if d.err != nil {
		return nil
	}
	if cap(d.buf) < n {
		d.buf = make([]byte, n)
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
		return nil
	}
	return b
}

func (d *decoder) u32() uint32 {
	if b := d.full(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.full(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// maxString bounds decoded string lengths so a damaged length cannot ask
// for gigabytes.
const maxString = 1 << 20

// strBytes reads a string's bytes, valid until the next read.
func (d *decoder) strBytes() []byte {
	n := d.uvarint()
	if n > maxString {
		d.fail(fmt.Errorf("string length %d", n))
		return nil
	}
	return d.full(int(n))
}

func (d *decoder) str() string { return string(d.strBytes()) }

// sym reads a string that repeats from point to point: the copy in strs
// when there is one (found without allocating), else a new string.
func (d *decoder) sym() string {
	b := d.strBytes()
	if y, ok := d.strs[string(b)]; ok {
		return y
	}
	return string(b)
}

func (d *decoder) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= 1e9 {
			d.fail(fmt.Errorf("nanoseconds %d", nsec))
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).UTC()
	default:
		d.fail(errors.New("bad time tag"))
		return time.Time{}
	}
}

// vec decodes dim float32s into dst (appending) and returns it.
func (d *decoder) vec(dst []float32, dim int) []float32 {
	b := d.full(4 * dim)
	if b == nil {
		return dst
	}
	for i := 0; i < dim; i++ {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return dst
}

// maxTags bounds a decoded tag count, as maxString bounds a length.
const maxTags = 1 << 16

func (d *decoder) payload() vector.Payload {
	p := vector.Payload{
		MemoryID:  d.str(),
		VersionID: d.str(),
		TenantID:  d.sym(),
		OrgID:     d.sym(),
		RepoID:    d.sym(),
		Type:      d.sym(),
		CreatedAt: d.time(),
	}
	p.UserID = d.sym()
	p.Visibility = d.sym()
	if n := d.uvarint(); n > maxTags {
		d.fail(fmt.Errorf("tag count %d", n))
	} else if n > 0 {
		p.Tags = make([]string, n)
		for i := range p.Tags {
			p.Tags[i] = d.sym()
		}
	}
	p.SubjectType = d.sym()
	p.SubjectID = d.sym()
	p.ProjectID = d.sym()
	p.SessionID = d.sym()
	return p
}

// crcReader feeds every byte read through a running CRC-32C.
type crcReader struct {
	r interface {
		io.Reader
		io.ByteReader
	}
	h hash.Hash32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	return n, err
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.h.Write([]byte{b})
	}
	return b, err
}
