package neo4j_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/indextest"
	vecneo4j "github.com/mnemo-dev/mnemo/vector/neo4j"
)

// server finds the test Neo4j (neo4jtest: NEO4J_URI, else a container,
// else skip, or fail under MNEMO_REQUIRE_NEO4J=1) and holds the database
// lock, so no graph test wipes the database under this package's nodes.
func server(tb testing.TB) vecneo4j.Config {
	tb.Helper()
	gc := neo4jtest.Config(tb)
	neo4jtest.Lock(tb, gc)
	// No background warm-up (WarmUp -1): each test plans what it runs;
	// TestWarmCoversSearch runs Warm itself.
	return vecneo4j.Config{URI: gc.URI, Username: gc.Username, Password: gc.Password, Database: gc.Database, WarmUp: -1}
}

// testLabel is the label of the tests' indexes of dim dimensions: one per
// dimension, emptied before each case and dropped when the test function
// ends, so that Neo4j plans each query text once for the whole suite (a
// new label is a new text, and planning one takes about a second on a
// loaded machine).
func testLabel(dim int) string { return fmt.Sprintf("MnemoVectorTest%d", dim) }

// openFresh empties cfg's test label and opens an index on it, returning
// the config with the label.
func openFresh(t *testing.T, cfg vecneo4j.Config) (*vecneo4j.Index, vecneo4j.Config) {
	t.Helper()
	cfg.Label = testLabel(cfg.Dimensions)
	ctx := context.Background()
	require.NoError(t, cypher(ctx, cfg, emptyCypher(cfg.Label)))
	idx, err := vecneo4j.Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	return idx, cfg
}

// dropAfter drops the nodes, constraint and indexes of cfg.Label when t
// ends.
func dropAfter(t testing.TB, cfg vecneo4j.Config) {
	t.Cleanup(func() {
		require.NoError(t, cypher(context.Background(), cfg, emptyCypher(cfg.Label),
			fmt.Sprintf("DROP CONSTRAINT `%s_id` IF EXISTS", cfg.Label),
			fmt.Sprintf("DROP INDEX `%s_tenant` IF EXISTS", cfg.Label),
			fmt.Sprintf("DROP INDEX `%s_embedding` IF EXISTS", cfg.Label)))
	})
}

func emptyCypher(label string) string {
	return fmt.Sprintf("MATCH (n:`%s`) CALL { WITH n DELETE n } IN TRANSACTIONS OF 5000 ROWS", label)
}

// cypher runs each query in an auto-commit transaction (CALL IN
// TRANSACTIONS needs one) on the server cfg names.
func cypher(ctx context.Context, cfg vecneo4j.Config, queries ...string) error {
	auth := neo4jdrv.NoAuth()
	if cfg.Username != "" {
		auth = neo4jdrv.BasicAuth(cfg.Username, cfg.Password, "")
	}
	d, err := neo4jdrv.NewDriverWithContext(cfg.URI, auth)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	for _, q := range queries {
		sess := d.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: cfg.Database})
		res, err := sess.Run(ctx, q, nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		sess.Close(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// TestConformance runs vector/indextest with the default strategy (the
// suite's small fixtures are under the exact threshold, its 200- and
// 500-point tenants above it) and again with the vector index always asked
// first (ExactThreshold -1: the approximate path and its exact fallback
// under every one of the suite's filters).
//
// Reopen closes the handle and opens a new one on the same label: what a
// restarted server sees.
func TestConformance(t *testing.T) {
	base := server(t)
	base.Label = testLabel(indextest.Dim)
	dropAfter(t, base)
	for _, tc := range []struct {
		name      string
		threshold int
	}{{"default", 0}, {"vector index first", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			configs := map[vector.Index]vecneo4j.Config{}
			open := func(t *testing.T, dim int) vector.Index {
				t.Helper()
				cfg := base
				cfg.Dimensions, cfg.ExactThreshold = dim, tc.threshold
				idx, cfg := openFresh(t, cfg)
				mu.Lock()
				defer mu.Unlock()
				configs[idx] = cfg
				return idx
			}
			reopen := func(t *testing.T, idx vector.Index) vector.Index {
				t.Helper()
				require.NoError(t, idx.Close())
				mu.Lock()
				cfg := configs[idx]
				mu.Unlock()
				again, err := vecneo4j.Open(context.Background(), cfg)
				require.NoError(t, err)
				t.Cleanup(func() { _ = again.Close() })
				return again
			}
			indextest.Run(t, open, indextest.Config{Reopen: reopen})
		})
	}
}

// TestSizeAndSchema checks vector.Sizer across tenants, that a second
// handle on the same label sees the same points, and that an existing
// vector index of other dimensions is refused.
func TestSizeAndSchema(t *testing.T) {
	ctx := context.Background()
	cfg := server(t)
	cfg.Dimensions = 4
	idx, cfg := openFresh(t, cfg)
	dropAfter(t, cfg)
	pts := []vector.Point{
		{ID: "a", Vector: []float32{1, 0, 0, 0}, Payload: vector.Payload{TenantID: "t1"}},
		{ID: "b", Vector: []float32{0, 1, 0, 0}, Payload: vector.Payload{TenantID: "t2"}},
		{ID: "c", Vector: []float32{0, 0, 1, 0}, Payload: vector.Payload{TenantID: "t2"}},
	}
	require.NoError(t, idx.Upsert(ctx, pts))
	n, err := idx.Size(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)

	again, err := vecneo4j.Open(ctx, cfg)
	require.NoError(t, err)
	defer again.Close()
	n, err = again.Count(ctx, vector.Filter{TenantID: "t2", AllUsers: true})
	require.NoError(t, err)
	require.Equal(t, 2, n)

	cfg.Dimensions = 8
	_, err = vecneo4j.Open(ctx, cfg)
	require.ErrorIs(t, err, vecneo4j.ErrSchema)
}
