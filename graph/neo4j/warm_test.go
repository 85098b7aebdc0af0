package neo4j_test

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/assert"
	tr "github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestWarmCoversReads: after Warm, the reads a search makes (and the other
// reads readStatements lists), under several filters, add no plan to
// Neo4j's cache — every statement they ran, with its parameter types, is
// one Warm planned. A read whose statement or parameter types the table
// misses adds an entry and fails the test.
func TestWarmCoversReads(t *testing.T) {
	cfg := neo4jtest.Config(t)
	cfg.WarmUp = -1
	s := neo4jtest.Open(t, cfg)
	ctx := t.Context()

	// Parameter sizes must not fork the cache (docs/graph.md, "Neo4j plan
	// cache"), or the count below measures them instead.
	neo4jtest.PlanCache(t, cfg)
	for _, x := range []string{"a", "a longer string than the first"} {
		_, err := neo4jdrv.ExecuteQuery(ctx, neo4jtest.Driver(t, cfg), "RETURN $x AS x", map[string]any{"x": x}, neo4jdrv.EagerResultTransformer)
		tr.NoError(t, err)
	}
	tr.Equal(t, 1, neo4jtest.PlanCache(t, cfg), "this Neo4j plans per parameter size: "+
		"set internal.cypher.use_parameter_size=false (docs/scale.md; testdata/neo4j and neo4jtest's container do)")

	scope := graph.Scope{TenantID: "warm", OrgID: "o", RepoID: "r"}
	c := storetest.Corpus(scope, 42, 60)
	out, err := s.CreateMemories(ctx, c.Inputs)
	tr.NoError(t, err)
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = o.Memory.ID
	}
	_, _, err = s.CreateRelation(ctx, graph.Relation{ID: graph.NewID(), Scope: scope, FromID: ids[0], ToID: ids[1],
		Type: graph.RelationTypes[0], CreatedBy: "u1", CreatedAt: time.Now().UTC()})
	tr.NoError(t, err)

	filters := []graph.Filter{
		{Scope: scope, Reader: graph.System},
		{Scope: scope, Reader: graph.Reader{UserID: "u1"}},
		{Scope: graph.Scope{TenantID: "warm"}, Reader: graph.Reader{UserID: "u2", Subscopes: true}, Types: []string{"note", "doc"},
			Tags: []string{"tag1"}, CreatedAfter: time.Now().Add(-24 * time.Hour), EntityTypes: []string{"person"}},
	}
	names := c.EntityQueries(3)
	// Each filter's reads start from a cache Warm alone filled: a
	// statement run more than ~10 times is compiled again when hot, which
	// adds an entry that is no missing plan. (After the first round Warm's
	// count can come out one lower, a plan it reuses from elsewhere: the
	// reads must add none to it.)
	for _, f := range filters {
		neo4jtest.PlanCache(t, cfg)
		planned, err := s.Warm(ctx)
		tr.NoError(t, err)
		tr.Len(t, planned, neo4j.ReadStatements())
		_, err = s.KeywordSearch(ctx, f, c.KeywordQueries(1)[0], 50)
		tr.NoError(t, err)
		for _, r := range []graph.WalkRequest{
			{Entities: map[string]float64{names[0][0]: 1, names[1][0]: 1}, Memories: map[string]float64{ids[0]: 1, ids[5]: 1}},
			{Entities: map[string]float64{names[2][0]: 1}},
			{Memories: map[string]float64{ids[3]: 1}},
		} {
			r.Limit, r.Damping = 20, 0.5
			_, err = s.Walk(ctx, f, r)
			tr.NoError(t, err)
		}
		_, err = s.Neighbours(ctx, f, ids[:5], 6)
		tr.NoError(t, err)
		_, err = s.GetMemories(ctx, f, ids[:10])
		tr.NoError(t, err)
		_, err = s.GetMemory(ctx, f, ids[0])
		if f.Reader.AllUsers {
			tr.NoError(t, err)
		}
		_, err = s.GetVersions(ctx, f, []string{out[0].Version.ID, out[1].Version.ID})
		tr.NoError(t, err)
		_, err = s.ListEdits(ctx, f, graph.EditQuery{MemoryIDs: ids[:4], Statuses: []graph.EditStatus{graph.EditApproved}})
		tr.NoError(t, err)
		_, err = s.RelationsOf(ctx, f, ids[:3], 4)
		tr.NoError(t, err)
		l, err := s.ListMemories(ctx, f, graph.Page{Limit: 20})
		tr.NoError(t, err)
		if l.NextCursor != "" {
			_, err = s.ListMemories(ctx, f, graph.Page{Limit: 20, Cursor: l.NextCursor})
			tr.NoError(t, err)
		}
		_, _ = s.ListVersions(ctx, f, ids[0]) // not found for some readers: the statement ran
		_, _ = s.GetChunks(ctx, f, out[0].Version.ID)
		assert.LessOrEqual(t, neo4jtest.PlanCache(t, cfg), len(planned),
			"the reads added plans to Neo4j's cache that Warm did not make (a statement or parameter type missing from readStatements)")
	}
}

// TestWarmFails: a statement that does not plan stops the warm-up with an
// error naming it, after those before it; a cancelled context stops it too.
func TestWarmFails(t *testing.T) {
	cfg := neo4jtest.Config(t)
	cfg.WarmUp = -1
	s := neo4jtest.Open(t, cfg)
	planned, err := s.WarmWith(t.Context(), "broken statement", "MATCH (m:Memory WHERE m.tenant_id = $f_tenant RETURN m")
	tr.Error(t, err)
	assert.Contains(t, err.Error(), "broken statement")
	assert.Len(t, planned, neo4j.ReadStatements(), "every statement of the table planned before the broken one")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	planned, err = s.Warm(ctx)
	tr.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, planned)
}

// TestWarmInBackground: Open starts the warm-up, which logs how many
// statements it planned and how long it took; Close during a warm-up stops
// it without a warning.
func TestWarmInBackground(t *testing.T) {
	cfg := neo4jtest.Config(t)
	var buf neo4jtest.LogBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.WarmUp = 5 * time.Minute
	s := neo4jtest.Open(t, cfg)
	want := "statements=" + strconv.Itoa(neo4j.ReadStatements())
	for !bytes.Contains(buf.Bytes(), []byte(want)) {
		select {
		case <-t.Context().Done():
			t.Fatalf("no warm-up line; log: %s", buf.Bytes())
		case <-time.After(50 * time.Millisecond):
		}
	}
	assert.Contains(t, string(buf.Bytes()), "neo4j: warm-up planned the read statements")
	tr.NoError(t, s.Close())

	buf.Reset()
	r, err := neo4j.Open(t.Context(), cfg)
	tr.NoError(t, err)
	tr.NoError(t, r.Close()) // at once: the warm-up has barely started
	assert.NotContains(t, string(buf.Bytes()), "level=WARN")
}
