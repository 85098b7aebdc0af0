package sqlite_test

import (
	"context"
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
	t.Run("Proposals", func(t *testing.T) { storetest.RunProposals(t, fresh, storetest.Config{}) })
	t.Run("Edits", func(t *testing.T) { storetest.RunEdits(t, fresh, storetest.Config{}) })
	t.Run("Capsules", func(t *testing.T) { storetest.RunCapsules(t, fresh, storetest.Config{}) })
	storetest.Run(t, fresh, storetest.Config{
		Reopen: func(t *testing.T, s graph.Store) graph.Store {
			closed.Store(s, true)
			require.NoError(t, s.Close())
			return open(t, s.(*sqlite.Store).Dir())
		},
		OpenSecond: func(t *testing.T, s graph.Store) graph.Store {
			return open(t, s.(*sqlite.Store).Dir())
		},
	})
}
