package local

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/mnemo-dev/mnemo/vector"
)

// Log record operations. An upsert record names the payload format after
// its op byte; format 1 wrote 'U' with no version and is refused.
const (
	opUpsertV1 byte = 'U'
	opUpsert   byte = 'P'
	opDelete   byte = 'D'
)

// recordHeader is the length and CRC-32C of a record body.
const recordHeader = 8

// minPointBytes is the least an upsert record can spend on one point: a
// length byte for each of its twelve strings, the created_at tag, the tag
// count and the vector. Open sizes the state for the log from it.
func minPointBytes(dim int) int { return 14 + 4*dim }

// maxRecord bounds a record body so a damaged length is seen as corrupt.
const maxRecord = 1 << 30

// wal is the append-only log of acknowledged batches since the snapshot.
type wal struct {
	f    *os.File
	seq  uint64
	size int64
}

func walName(seq uint64) string { return fmt.Sprintf("wal-%020d.log", seq) }

// encodeUpsert builds the body of an upsert record; vectors are already
// unit length.
func encodeUpsert(pts []vector.Payload, vecs [][]float32) []byte {
	e := encoder{b: make([]byte, 0, 64+len(pts)*(96+4*len(vecs[0])))}
	e.byte(opUpsert)
	e.uvarint(formatVersion)
	e.uvarint(uint64(len(pts)))
	for i, p := range pts {
		e.payload(p)
		e.vec(vecs[i])
	}
	return e.b
}

func encodeDelete(ids []string) []byte {
	e := encoder{}
	e.byte(opDelete)
	e.uvarint(uint64(len(ids)))
	for _, id := range ids {
		e.str(id)
	}
	return e.b
}

// append writes one record and fsyncs it: when it returns nil the batch
// survives a crash.
func (w *wal) append(body []byte) error {
	rec := make([]byte, recordHeader, recordHeader+len(body))
	binary.LittleEndian.PutUint32(rec[0:], uint32(len(body)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(body, castagnoli))
	rec = append(rec, body...)
	if _, err := w.f.Write(rec); err != nil {
		// A partial write leaves a torn tail; cut it so the next record
		// does not sit behind garbage.
		_ = w.f.Truncate(w.size)
		_, _ = w.f.Seek(w.size, io.SeekStart)
		return fmt.Errorf("append vector log: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync vector log: %w", err)
	}
	w.size += int64(len(rec))
	return nil
}

// replay applies every whole record of the log file at path to s, then
// truncates a torn or corrupt tail (bytes of a batch that was never
// acknowledged) and returns the good length and the number of points the
// records named.
func replay(path string, s *state, log *slog.Logger) (good int64, points int, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("open vector log: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr [recordHeader]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if !errors.Is(err, io.EOF) {
				log.Warn("vector log: torn record header ignored", "path", path, "offset", good)
			}
			break
		}
		n := binary.LittleEndian.Uint32(hdr[0:])
		sum := binary.LittleEndian.Uint32(hdr[4:])
		if n == 0 || n > maxRecord {
			log.Warn("vector log: bad record length, tail ignored", "path", path, "offset", good, "length", n)
			break
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			log.Warn("vector log: torn record ignored", "path", path, "offset", good)
			break
		}
		if crc32.Checksum(body, castagnoli) != sum {
			log.Warn("vector log: record checksum mismatch, tail ignored", "path", path, "offset", good)
			break
		}
		k, err := applyRecord(body, s)
		if err != nil {
			// The CRC matched, so this is not a torn write but a bug or a
			// different format: refuse rather than drop data.
			return 0, 0, fmt.Errorf("vector log %s at %d: %w", path, good, err)
		}
		good += recordHeader + int64(n)
		points += k
	}
	st, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("stat vector log: %w", err)
	}
	if st.Size() != good {
		if err := f.Truncate(good); err != nil {
			return 0, 0, fmt.Errorf("truncate vector log tail: %w", err)
		}
		if err := f.Sync(); err != nil {
			return 0, 0, fmt.Errorf("sync vector log: %w", err)
		}
	}
	return good, points, nil
}

// applyRecord applies one record body to s and returns the number of
// points it names.
func applyRecord(body []byte, s *state) (int, error) {
	d := decoder{r: bytes.NewReader(body), strs: s.strs}
	op := d.byte()
	switch op {
	case opUpsertV1:
		return 0, errFormat(1)
	case opUpsert:
		if v := d.uvarint(); d.err == nil && v != formatVersion {
			return 0, errFormat(v)
		}
	}
	n := d.uvarint()
	if n > uint64(len(body)) {
		return 0, fmt.Errorf("%w: count %d", errCorrupt, n)
	}
	switch op {
	case opUpsert:
		vec := make([]float32, 0, s.vs.dim)
		for range n {
			p := d.payload()
			vec = d.vec(vec[:0], s.vs.dim)
			if d.err != nil {
				return 0, d.err
			}
			s.put(p, vec)
		}
	case opDelete:
		for range n {
			id := d.str()
			if d.err != nil {
				return 0, d.err
			}
			s.remove(id)
		}
	default:
		return 0, fmt.Errorf("%w: unknown op %q", errCorrupt, op)
	}
	return int(n), d.err
}

// logSeqs lists the sequence numbers of the log files in dir, ascending.
func logSeqs(dir string) ([]uint64, error) {
	names, err := filepath.Glob(filepath.Join(dir, "wal-*.log"))
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, n := range names {
		var seq uint64
		if _, err := fmt.Sscanf(filepath.Base(n), "wal-%d.log", &seq); err == nil {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// openWAL opens (creating if needed) log seq for appending at size.
func openWAL(dir string, seq uint64, size int64) (*wal, error) {
	path := filepath.Join(dir, walName(seq))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open vector log: %w", err)
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek vector log: %w", err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return &wal{f: f, seq: seq, size: size}, nil
}

// syncDir makes a file creation, rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	return nil
}
