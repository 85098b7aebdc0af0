package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/mnemo-dev/mnemo/vector"
)

const (
	snapshotName  = "snapshot"
	snapshotMagic = "MNEMOVEC"
	// formatVersion is the payload layout of snapshots and upsert log
	// records. 1: tenant, org, repo, type, created_at. 2 (this one): also
	// user, visibility, tags, subject, project, session, which the access
	// rule needs; a format-1 index is refused with vector.ErrOldFormat.
	formatVersion = 2
)

// errFormat reports a snapshot or log record in format v, not
// formatVersion.
func errFormat(v uint64) error {
	if v < formatVersion {
		return fmt.Errorf("%w: format %d, this mnemo reads format %d (points now carry the owner, visibility, tags, subject, project and session the access filter needs)",
			vector.ErrOldFormat, v, formatVersion)
	}
	return fmt.Errorf("vector index format %d is newer than this mnemo's %d: run the mnemo that wrote it", v, formatVersion)
}

// writeSnapshot writes s to dir atomically: a temporary file, fsync,
// rename over the previous snapshot, fsync of the directory. nextSeq is the
// first log sequence the snapshot does not cover.
func writeSnapshot(dir string, s *state, nextSeq uint64) error {
	tmp := filepath.Join(dir, snapshotName+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("create vector snapshot: %w", err)
	}
	defer os.Remove(tmp) // no-op after the rename
	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	if err := encodeState(bw, s, nextSeq); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write vector snapshot: %w", err)
	}
	if err := binary.Write(f, binary.LittleEndian, h.Sum32()); err != nil {
		f.Close()
		return fmt.Errorf("write vector snapshot: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync vector snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close vector snapshot: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, snapshotName)); err != nil {
		return fmt.Errorf("install vector snapshot: %w", err)
	}
	return syncDir(dir)
}

func encodeState(w io.Writer, s *state, nextSeq uint64) error {
	e := encoder{b: make([]byte, 0, 1<<16)}
	flush := func() error {
		_, err := w.Write(e.b)
		e.b = e.b[:0]
		if err != nil {
			return fmt.Errorf("write vector snapshot: %w", err)
		}
		return nil
	}
	e.b = append(e.b, snapshotMagic...)
	e.u32(formatVersion)
	e.u32(uint32(s.vs.dim))
	e.u64(nextSeq)
	e.u64(uint64(len(s.meta)))
	for slot, m := range s.meta {
		if m.dead {
			e.byte(1)
		} else {
			e.byte(0)
			e.payload(s.payload(&s.meta[slot]))
		}
		e.vec(s.vs.at(int32(slot)))
		if len(e.b) > 1<<15 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	g := s.graph
	if g == nil {
		e.byte(0)
		return flush()
	}
	e.byte(1)
	e.u32(uint32(g.m))
	e.u32(uint32(g.efC))
	e.u32(uint32(g.entry))
	e.u32(uint32(g.top))
	e.u64(uint64(g.len()))
	for n := range g.len() {
		lvl := int(g.levels[n])
		e.byte(byte(lvl))
		for l := 0; l <= lvl; l++ {
			ls := g.links(int32(n), l)
			e.byte(byte(len(ls)))
			for _, x := range ls {
				e.u32(uint32(x))
			}
		}
		if len(e.b) > 1<<15 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// readSnapshot loads the snapshot in dir, or returns (nil, 0, nil) when there
// is none, with room for extra more points (those the log may add). A
// snapshot is installed by rename only after fsync, so a bad one is damage,
// not a torn write, and is reported rather than ignored.
func readSnapshot(dir string, dim int, seed uint64, extra int) (*state, uint64, error) {
	f, err := os.Open(filepath.Join(dir, snapshotName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("open vector snapshot: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("stat vector snapshot: %w", err)
	}
	cr := &crcReader{r: bufio.NewReaderSize(f, 1<<20), h: crc32.New(castagnoli)}
	d := decoder{r: cr}
	s, seq, err := decodeState(&d, dim, seed, fi.Size(), extra)
	if err != nil {
		return nil, 0, fmt.Errorf("vector snapshot: %w", err)
	}
	sum := cr.h.Sum32()
	var want [4]byte
	if _, err := io.ReadFull(cr.r, want[:]); err != nil || binary.LittleEndian.Uint32(want[:]) != sum {
		return nil, 0, fmt.Errorf("vector snapshot: %w: checksum mismatch", errCorrupt)
	}
	return s, seq, nil
}

// decodeState reads a snapshot of size bytes. The slot count in its header
// sizes the state (plus extra), once checked against size: every slot takes
// at least 1+4*dim bytes, so a damaged count cannot allocate more than the
// file could hold.
func decodeState(d *decoder, dim int, seed uint64, size int64, extra int) (_ *state, _ uint64, err error) {
	if string(d.full(len(snapshotMagic))) != snapshotMagic {
		return nil, 0, fmt.Errorf("%w: not a vector snapshot", errCorrupt)
	}
	if v := d.u32(); d.err == nil && v != formatVersion {
		return nil, 0, errFormat(uint64(v))
	}
	if got := int(d.u32()); d.err == nil && got != dim {
		return nil, 0, fmt.Errorf("index has %d dimensions, options say %d", got, dim)
	}
	seq := d.u64()
	n := d.u64()
	if d.err != nil {
		return nil, 0, d.err
	}
	if n > uint64(size)/uint64(1+4*dim) {
		return nil, 0, fmt.Errorf("%w: %d slots cannot fit in %d bytes", errCorrupt, n, size)
	}
	s := newState(dim, int(n)+extra)
	defer func() {
		if err != nil {
			s.vs.release()
		}
	}()
	d.strs = s.strs
	vec := make([]float32, 0, dim)
	for range n {
		dead := d.byte()
		if dead == 0 {
			p := d.payload()
			vec = d.vec(vec[:0], dim)
			if d.err != nil {
				return nil, 0, d.err
			}
			s.put(p, vec)
			continue
		}
		vec = d.vec(vec[:0], dim)
		if d.err != nil {
			return nil, 0, d.err
		}
		s.appendDead(vec)
	}
	if d.byte() == 1 {
		g, err := decodeGraph(d, len(s.meta), cap(s.meta), seed)
		if err != nil {
			return nil, 0, err
		}
		s.graph = g
	}
	return s, seq, d.err
}

// decodeGraph reads the graph of a snapshot of slots slots, with room for
// capacity nodes in all (those the log adds are linked after it: growing
// the level-0 links by append would copy them whole, 128 MB at 1M).
func decodeGraph(d *decoder, slots, capacity int, seed uint64) (*hnsw, error) {
	m := int(d.u32())
	efC := int(d.u32())
	entry := int32(d.u32())
	top := int(d.u32())
	n := d.u64()
	if d.err != nil {
		return nil, d.err
	}
	if m < 2 || m > 127 || n > uint64(slots) || int(entry) >= int(n) || top > maxLevel {
		return nil, fmt.Errorf("%w: graph header", errCorrupt)
	}
	g := newHNSW(m, efC, seed)
	g.entry, g.top = entry, top
	capacity = max(capacity, int(n))
	g.levels = make([]uint8, n, capacity)
	g.l0 = make([]int32, int(n)*g.m0, capacity*g.m0)
	g.l0n = make([]uint8, n, capacity)
	g.upper = make([][][]int32, n, capacity)
	buf := make([]int32, 0, g.m0)
	for node := range int32(n) {
		lvl := int(d.byte())
		if lvl > maxLevel {
			return nil, fmt.Errorf("%w: graph level %d", errCorrupt, lvl)
		}
		g.levels[node] = uint8(lvl)
		if lvl > 0 {
			g.upper[node] = make([][]int32, lvl)
		}
		for l := 0; l <= lvl; l++ {
			c := int(d.byte())
			if c > g.maxLinks(l) {
				return nil, fmt.Errorf("%w: graph degree %d", errCorrupt, c)
			}
			buf = buf[:0]
			for range c {
				x := int32(d.u32())
				if x < 0 || uint64(x) >= n {
					return nil, fmt.Errorf("%w: graph link %d", errCorrupt, x)
				}
				buf = append(buf, x)
			}
			g.setLinks(node, l, buf)
		}
		if d.err != nil {
			return nil, d.err
		}
	}
	return g, nil
}
