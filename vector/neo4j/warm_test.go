package neo4j_test

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	vecneo4j "github.com/mnemo-dev/mnemo/vector/neo4j"
)

// planCache clears Neo4j's query caches and returns how many statements
// (text and parameter types) they held; server's lock keeps other test
// binaries off the database meanwhile.
func planCache(t *testing.T, cfg vecneo4j.Config) int {
	t.Helper()
	auth := neo4jdrv.NoAuth()
	if cfg.Username != "" {
		auth = neo4jdrv.BasicAuth(cfg.Username, cfg.Password, "")
	}
	d, err := neo4jdrv.NewDriverWithContext(cfg.URI, auth)
	require.NoError(t, err)
	defer d.Close(context.Background())
	res, err := neo4jdrv.ExecuteQuery(t.Context(), d, "CALL db.clearQueryCaches()", nil, neo4jdrv.EagerResultTransformer,
		neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
	require.NoError(t, err)
	require.Len(t, res.Records, 1)
	msg, _ := res.Records[0].Values[0].(string)
	if msg == "Query cache already empty." {
		return 0
	}
	m := regexp.MustCompile(`cleared of (\d+) quer`).FindStringSubmatch(msg)
	require.NotNil(t, m, "db.clearQueryCaches said %q", msg)
	n, _ := strconv.Atoi(m[1])
	return n
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
	var buf lockedBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.WarmUp = time.Minute
	idx, _ := openFresh(t, cfg)
	require.Eventually(t, func() bool { return strings.Contains(buf.String(), "warm-up planned the search statements") },
		time.Minute, 50*time.Millisecond)
	require.NoError(t, idx.Close())
	again, err := vecneo4j.Open(t.Context(), cfg)
	require.NoError(t, err)
	require.NoError(t, again.Close()) // at once: cancels the warm-up and waits for it
}

// lockedBuffer is a log sink the warm-up's goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
