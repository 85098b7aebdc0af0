package sqlite

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestMemoryCountsMaintained: the counts migration 17's triggers keep
// equal a count of the memories table after every kind of status change
// (create, supersede, archive, restore, erase), so /metrics can read them
// instead of scanning; and the migration seeds them from the memories a
// database already holds.
func TestMemoryCountsMaintained(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, t.TempDir(), Options{})
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	scope := graph.Scope{TenantID: "t1"}
	corpus := storetest.Corpus(scope, 7, 60)
	created, err := s.CreateMemories(ctx, corpus.Inputs[:50])
	require.NoError(t, err)
	scanned := func() map[graph.Status]int {
		got := map[graph.Status]int{}
		rows, err := s.r.QueryContext(ctx, `SELECT status, count(*) FROM memories GROUP BY status`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var st string
			var n int
			require.NoError(t, rows.Scan(&st, &n))
			got[graph.Status(st)] = n
		}
		require.NoError(t, rows.Err())
		return got
	}
	check := func(step string) {
		c, err := s.Counts(ctx)
		require.NoError(t, err)
		assert.Equal(t, scanned(), c.Memories, step)
	}
	check("created")
	next := corpus.Inputs[50]
	next.Supersedes = created[0].Memory.ID
	_, err = s.CreateMemories(ctx, []graph.MemoryInput{next})
	require.NoError(t, err)
	check("superseded")
	for _, c := range created[1:6] {
		require.NoError(t, s.Archive(ctx, scope, c.Memory.ID))
	}
	require.NoError(t, s.Restore(ctx, scope, created[1].Memory.ID))
	check("archived and restored")
	_, err = s.Erase(ctx, scope, graph.EraseInput{IDs: []string{created[2].Memory.ID, created[7].Memory.ID}})
	require.NoError(t, err)
	check("erased")
	c, err := s.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[graph.Status]int{graph.StatusActive: 45, graph.StatusSuperseded: 1,
		graph.StatusArchived: 3, "erased": 2}, c.Memories)

	// Seeding: undo the migration (and those after it, which run again)
	// and open the database again, as one migrated with memories in it is.
	version := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "CREATE TABLE memory_counts") }) + 1
	require.Positive(t, version)
	_, err = s.w.ExecContext(ctx, `DROP TRIGGER memory_counts_insert; DROP TRIGGER memory_counts_delete;
		DROP TRIGGER memory_counts_status; DROP TABLE memory_counts; DELETE FROM schema_migrations WHERE version >= ?`,
		version)
	require.NoError(t, err)
	dir := s.dir
	require.NoError(t, s.Close())
	s, err = Open(ctx, dir, Options{})
	require.NoError(t, err)
	check("seeded by the migration")
}
