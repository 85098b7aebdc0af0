package neo4j_test

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/vector"
	vecneo4j "github.com/mnemo-dev/mnemo/vector/neo4j"
)

// planCache is neo4jtest.PlanCache on cfg's server.
func planCache(t *testing.T, cfg vecneo4j.Config) int {
	t.Helper()
	return neo4jtest.PlanCache(t, neo4j.Config{URI: cfg.URI, Username: cfg.Username, Password: cfg.Password, Database: cfg.Database})
}

// TestWarmCoversSearch: after Warm, searches under several filters (none,
// every narrowing, a reader's own), on a tenant under the exact threshold
// and, with the vector index asked first, above it, and Score and Count,
// add no plan to Neo4j's cache: every statement they ran, with its
// parameter types, is one Warm planned. A filter whose parameter types
// differ (a null time, an empty list) adds an entry and fails the test.
func TestWarmCoversSearch(t *testing.T) {
	ctx := t.Context()
	base := server(t)
	for _, threshold := range []int{0, -1} {
		cfg := base
		cfg.Dimensions, cfg.ExactThreshold = 4, threshold
		idx, cfg := openFresh(t, cfg)
		dropAfter(t, cfg)
		now := time.Now().UTC()
		var pts []vector.Point
		for i := range 20 {
			pts = append(pts, vector.Point{ID: "p" + strconv.Itoa(i), Vector: []float32{1, float32(i), 0, 1},
				Payload: vector.Payload{TenantID: "t1", OrgID: "o", UserID: "u1", Visibility: "org", Type: "note",
					Tags: []string{"a"}, CreatedAt: now.Add(-time.Duration(i) * time.Hour)}})
		}
		require.NoError(t, idx.Upsert(ctx, pts))

		planCache(t, cfg)
		planned, err := idx.Warm(ctx)
		require.NoError(t, err)
		require.Len(t, planned, 4)
		q := []float32{1, 2, 0, 1}
		for _, f := range []vector.Filter{
			{TenantID: "t1", AllUsers: true, Subscopes: true},
			{TenantID: "t1", OrgID: "o", ReaderUserID: "u1"},
			{TenantID: "t1", OrgID: "o", ReaderUserID: "u2", UserID: "u1", Types: []string{"note", "doc"},
				Visibility: []string{"org"}, Tags: []string{"a"}, SubjectType: "s", SubjectID: "i", ProjectID: "p",
				SessionID: "x", CreatedAfter: now.Add(-48 * time.Hour), CreatedBefore: now},
		} {
			_, err := idx.Search(ctx, q, f, 5)
			require.NoError(t, err)
			_, err = idx.Score(ctx, q, f, []string{"p1", "p2"})
			require.NoError(t, err)
			_, err = idx.Count(ctx, f)
			require.NoError(t, err)
		}
		assert.Equal(t, len(planned), planCache(t, cfg),
			"threshold %d: the searches added plans to Neo4j's cache that Warm did not make", threshold)
	}
}

// TestWarmInBackground: Open with a WarmUp warms in the background and logs
// it; Close during a warm-up waits for it and returns.
func TestWarmInBackground(t *testing.T) {
	cfg := server(t)
	cfg.Dimensions = 4
	var buf neo4jtest.LogBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.WarmUp = time.Minute
	idx, _ := openFresh(t, cfg)
	require.Eventually(t, func() bool { return strings.Contains(string(buf.Bytes()), "warm-up planned the search statements") },
		time.Minute, 50*time.Millisecond)
	require.NoError(t, idx.Close())
	again, err := vecneo4j.Open(t.Context(), cfg)
	require.NoError(t, err)
	require.NoError(t, again.Close()) // at once: cancels the warm-up and waits for it
}
