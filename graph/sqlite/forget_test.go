package sqlite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
)

// TestEraseLeavesNoBytes: after an erase, the erased text is nowhere in the
// store's files — not in free pages (secure_delete) nor in the WAL
// (checkpointed and truncated).
func TestEraseLeavesNoBytes(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	sc := graph.Scope{TenantID: "t1"}
	marker := []byte("zqxmarkerbytes")
	var ids []string
	for range 50 { // enough rows to span pages
		c, err := graphtest.CreateMemory(t.Context(), s, graph.MemoryInput{
			Memory:  graph.Memory{Scope: sc, Type: "note", Title: "title " + string(marker)},
			Version: graph.VersionInput{Content: "the " + string(marker) + " content, long enough to fill a page or two of the table"},
		})
		require.NoError(t, err)
		ids = append(ids, c.Memory.ID)
	}
	files := func() []byte {
		var all []byte
		for _, name := range []string{sqlite.FileName, sqlite.FileName + "-wal"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err == nil {
				all = append(all, b...)
			}
		}
		return all
	}
	require.True(t, bytes.Contains(files(), marker), "precondition: the text is in the files")
	_, err := s.Erase(t.Context(), sc, graph.EraseInput{IDs: ids})
	require.NoError(t, err)
	assert.False(t, bytes.Contains(files(), marker), "the erased text is gone from the files")
}
