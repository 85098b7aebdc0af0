package local_test

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// formatOneLog is a log holding one upsert record as format 1 wrote it: op
// 'U', a count, then per point the payload without the access fields
// (memory, version, tenant, org, repo, type, created_at) and the vector.
func formatOneLog(dim int) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	body := []byte{'U'}
	body = binary.AppendUvarint(body, 1)
	for _, s := range []string{"m1", "v1", "t", "", "", "note"} {
		body = str(body, s)
	}
	body = append(body, 0) // zero created_at
	for i := range dim {
		x := float32(0)
		if i == 0 {
			x = 1
		}
		body = binary.LittleEndian.AppendUint32(body, math.Float32bits(x))
	}
	rec := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	rec = binary.LittleEndian.AppendUint32(rec, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	return append(rec, body...)
}

// snapshotHeader is the start of a snapshot of the given format version.
func snapshotHeader(version uint32) []byte {
	b := append([]byte("MNEMOVEC"), binary.LittleEndian.AppendUint32(nil, version)...)
	return append(b, make([]byte, 64)...)
}

// TestOldFormatRefused checks that an index written in format 1 (points
// without owner, visibility, tags, subject, project, session) is refused
// with vector.ErrOldFormat, never opened with empty access fields, and that
// DiscardOldFormat (what a rebuild sets) opens it empty instead.
func TestOldFormatRefused(t *testing.T) {
	const dim = 4
	ctx := context.Background()
	tests := []struct {
		name  string
		files map[string][]byte
		old   bool // ErrOldFormat (else another refusal)
	}{
		{"format 1 log", map[string][]byte{"wal-00000000000000000000.log": formatOneLog(dim)}, true},
		{"format 1 snapshot", map[string][]byte{"snapshot": snapshotHeader(1)}, true},
		{"format 1 snapshot and log", map[string][]byte{"snapshot": snapshotHeader(1), "wal-00000000000000000001.log": formatOneLog(dim)}, true},
		{"a newer format", map[string][]byte{"snapshot": snapshotHeader(99)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, b := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
			}
			_, err := local.Open(dir, local.Options{Dimensions: dim})
			require.Error(t, err)
			assert.Equal(t, tc.old, errors.Is(err, vector.ErrOldFormat), "%v", err)
			assert.ErrorContains(t, err, dir, "the error names the directory")
			for name, b := range tc.files {
				got, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.Equal(t, b, got, "a refused index is left untouched")
			}

			idx, err := local.Open(dir, local.Options{Dimensions: dim, DiscardOldFormat: true})
			if !tc.old {
				assert.Error(t, err, "only an older format may be discarded")
				return
			}
			require.NoError(t, err)
			all := vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}
			n, err := idx.Count(ctx, all)
			require.NoError(t, err)
			assert.Zero(t, n, "the old points are gone, to be rebuilt from the graph")
			p := vector.Point{ID: "m2", Vector: []float32{0, 1, 0, 0}, Payload: vector.Payload{
				TenantID: "t", UserID: "u1", Visibility: "user", Tags: []string{"a"}}}
			require.NoError(t, idx.Upsert(ctx, []vector.Point{p}))
			require.NoError(t, idx.Close())

			idx, err = local.Open(dir, local.Options{Dimensions: dim})
			require.NoError(t, err, "what the rebuild wrote opens without the option")
			defer idx.Close()
			hits, err := idx.Search(ctx, p.Vector, all, 5)
			require.NoError(t, err)
			require.Len(t, hits, 1)
			assert.Equal(t, "u1", hits[0].Payload.UserID)
			assert.Equal(t, "user", hits[0].Payload.Visibility)
			assert.Equal(t, []string{"a"}, hits[0].Payload.Tags)
		})
	}
}

// TestSnapshotCountBounded checks that a snapshot whose header claims more
// slots than its size can hold is refused as corrupt before anything is
// sized from that count (Open preallocates the slots it names).
func TestSnapshotCountBounded(t *testing.T) {
	const dim = 4
	b := append([]byte("MNEMOVEC"), binary.LittleEndian.AppendUint32(nil, 2)...)
	b = binary.LittleEndian.AppendUint32(b, dim)
	b = binary.LittleEndian.AppendUint64(b, 1)     // next log sequence
	b = binary.LittleEndian.AppendUint64(b, 1<<40) // slots: terabytes of vectors
	b = append(b, make([]byte, 64)...)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "snapshot"), b, 0o644))
	_, err := local.Open(dir, local.Options{Dimensions: dim})
	require.Error(t, err)
	assert.ErrorContains(t, err, "corrupt vector data")
	assert.ErrorContains(t, err, "slots cannot fit")
}
