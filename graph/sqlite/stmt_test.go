package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStmtCache: the cache holds at most max statements, evicting the least
// recently used; a statement evicted while held stays usable until its last
// holder releases it and is closed then; rows read through a statement
// outlive its closing.
func TestStmtCache(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "stmts.db"))
	require.NoError(t, err)
	defer db.Close()
	c := newStmtCache(db, 2)
	defer c.close()
	q := func(n int) string { return "SELECT " + string(rune('0'+n)) }
	use := func(n int) *sql.Stmt { // get, read one row, release
		st, release, err := c.get(ctx, q(n))
		require.NoError(t, err)
		defer release()
		var got int
		require.NoError(t, st.QueryRowContext(ctx).Scan(&got))
		require.Equal(t, n, got)
		return st
	}
	cached := func() []string { return slices.Sorted(maps.Keys(c.m)) }

	first := use(1)
	second := use(2)
	assert.Same(t, first, use(1), "a cached text is prepared once")
	use(3) // full: 2 is the least recently used, and nobody holds it
	assert.Equal(t, []string{q(1), q(3)}, cached())
	var n int
	assert.ErrorContains(t, second.QueryRowContext(ctx).Scan(&n), "closed", "an evicted statement nobody holds is closed")

	held, release, err := c.get(ctx, q(4)) // evicts 1
	require.NoError(t, err)
	rows, err := held.QueryContext(ctx) // left unread across the close
	require.NoError(t, err)
	defer rows.Close()
	use(3)
	use(5) // 4 is now the least recently used, and held
	assert.Equal(t, []string{q(3), q(5)}, cached())
	require.NoError(t, held.QueryRowContext(ctx).Scan(&n), "a held statement stays open after its eviction")
	assert.Equal(t, 4, n)
	release()
	assert.ErrorContains(t, held.QueryRowContext(ctx).Scan(&n), "closed", "the last holder's release closes it")
	require.True(t, rows.Next(), "rows read through a closed statement outlive it")
	require.NoError(t, rows.Scan(&n))
	assert.Equal(t, 4, n)
}
