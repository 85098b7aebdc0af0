package main

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// TestCheckVectorModel runs the guard on a real embedded index in a temp
// data directory.
func TestCheckVectorModel(t *testing.T) {
	const model, other = "BAAI/bge-small-en-v1.5@test", "sentence-transformers/all-MiniLM-L6-v2@test"
	open := func(t *testing.T, dataDir string, points int) *local.Index {
		t.Helper()
		idx, err := local.Open(filepath.Join(dataDir, "vectors"), local.Options{Dimensions: 2})
		require.NoError(t, err)
		t.Cleanup(func() { idx.Close() })
		for i := range points {
			require.NoError(t, idx.Upsert(context.Background(), []vector.Point{{
				ID: string(rune('a' + i)), Vector: []float32{1, float32(i + 1)}, Payload: vector.Payload{TenantID: "t"},
			}}))
		}
		return idx
	}
	recorded := func(t *testing.T, dataDir string) string {
		t.Helper()
		b, err := os.ReadFile(vectorModelFile(dataDir))
		if os.IsNotExist(err) {
			return ""
		}
		require.NoError(t, err)
		return string(b)
	}

	tests := []struct {
		name       string
		record     string // "" means no vectors.model file
		points     int
		reindexing bool
		wantErr    bool
		wantRecord string // the file afterwards
	}{
		{"new empty index records the model", "", 0, false, false, model + "\n"},
		{"same model passes", model + "\n", 3, false, false, model + "\n"},
		{"other model is refused", other + "\n", 3, false, true, other + "\n"},
		{"an empty index takes the model", other + "\n", 0, false, false, model + "\n"},
		{"unrecorded index with points is refused", "", 3, false, true, ""},
		{"reindex may open another model's index", other + "\n", 3, true, false, other + "\n"},
		{"reindex may open an unrecorded index", "", 3, true, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			idx := open(t, dir, tc.points)
			if tc.record != "" {
				require.NoError(t, os.WriteFile(vectorModelFile(dir), []byte(tc.record), 0o644))
			}
			err := checkVectorModel(dir, idx, model, tc.reindexing)
			if tc.wantErr {
				require.ErrorIs(t, err, errVectorModel)
				assert.Contains(t, err.Error(), "mnemo reindex")
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantRecord, recorded(t, dir))
		})
	}

	t.Run("a reindex records the model, then it passes", func(t *testing.T) {
		dir := t.TempDir()
		idx := open(t, dir, 3)
		require.ErrorIs(t, checkVectorModel(dir, idx, model, false), errVectorModel)
		require.NoError(t, recordVectorModel(dir, model))
		require.NoError(t, checkVectorModel(dir, idx, model, false))
		assert.Equal(t, model+"\n", recorded(t, dir))
	})
}

// TestVectorFormatRefused opens an embedded index whose snapshot is in
// format 1 (points without owner, visibility, tags, subject, project,
// session): it is refused with the way out, and opened empty only for a
// rebuild.
func TestVectorFormatRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vectors")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	snapshot := append([]byte("MNEMOVEC"), binary.LittleEndian.AppendUint32(nil, 1)...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "snapshot"), append(snapshot, make([]byte, 32)...), 0o644))

	_, err := local.Open(dir, local.Options{Dimensions: 2})
	err = explainVectorFormat(err, dir)
	require.ErrorIs(t, err, vector.ErrOldFormat)
	assert.Contains(t, err.Error(), "mnemo reindex")
	assert.Contains(t, err.Error(), dir)

	idx, err := local.Open(dir, local.Options{Dimensions: 2, DiscardOldFormat: true})
	require.NoError(t, explainVectorFormat(err, dir))
	assert.Zero(t, idx.Stats().Points)
	require.NoError(t, idx.Close())

	assert.NoError(t, explainVectorFormat(nil, dir))
	other := errors.New("disk on fire")
	assert.Equal(t, other, explainVectorFormat(other, dir), "other errors pass unchanged")
}
