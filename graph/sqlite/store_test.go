package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

func open(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), dir, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		// Cleanups run last-in first-out: check before the store closes.
		if _, reopened := closed.Load(s); !reopened {
			require.NoError(t, s.IntegrityCheck(context.Background()), "after the case")
		}
		_ = s.Close()
	})
	return s
}

// closed holds the stores Reopen closed on purpose.
var closed sync.Map

func TestConformance(t *testing.T) {
	fresh := func(t *testing.T) graph.Store { return open(t, t.TempDir()) }
	second := func(t *testing.T, s graph.Store) graph.Store { return open(t, s.(*sqlite.Store).Dir()) }
	conf := storetest.Config{OpenSecond: second}
	t.Run("Proposals", func(t *testing.T) { storetest.RunProposals(t, fresh, conf) })
	t.Run("Edits", func(t *testing.T) { storetest.RunEdits(t, fresh, conf) })
	t.Run("Capsules", func(t *testing.T) { storetest.RunCapsules(t, fresh, conf) })
	storetest.Run(t, fresh, storetest.Config{
		Reopen: func(t *testing.T, s graph.Store) graph.Store {
			closed.Store(s, true)
			require.NoError(t, s.Close())
			return open(t, s.(*sqlite.Store).Dir())
		},
		OpenSecond: second,
	})
}

func TestRelations(t *testing.T) {
	storetest.RunRelations(t, func(t *testing.T) graph.Store { return open(t, t.TempDir()) }, storetest.Config{})
}

// TestOpenURIPath: a directory whose name holds characters special in an
// SQLite URI ('#', '?', '%', as a subtest's t.TempDir() does for "case#1")
// opens a store in that directory, not in a file named after the part of
// the path before them.
func TestOpenURIPath(t *testing.T) {
	for _, name := range []string{"case#1", "what?", "100%", "a%23b"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, name)
			require.NoError(t, os.Mkdir(dir, 0o700))
			s, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
			require.NoError(t, err)
			require.NoError(t, s.Close())
			_, err = os.Stat(filepath.Join(dir, sqlite.FileName))
			require.NoError(t, err, "the database is in the directory")
			entries, err := os.ReadDir(parent)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing beside the directory")
		})
	}
}
