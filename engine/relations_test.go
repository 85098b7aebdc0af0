package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// relationFixture is editFixture (pool: u1's shared note on postgres;
// priv: u2's private one) plus cache, a shared note of u1 that shares no
// entity with pool: only a relation links them.
func newRelationFixture(t *testing.T) (*editFixture, string) {
	fx := newEditFixture(t)
	c, err := graphtest.CreateMemory(context.Background(), fx.store, graph.MemoryInput{
		Memory: graph.Memory{Scope: fx.scope, UserID: "u1", Type: "note", Title: "cache eviction", Importance: 0.5,
			Visibility: graph.VisibilityProject, CreatedAt: now.Add(-30 * time.Minute)},
		Version: graph.VersionInput{Content: "the cache evicts after an hour",
			Entities: []graph.EntityRef{{Name: "Memcached", Type: "tool"}}},
		Audit: []graph.AuditEvent{{Scope: fx.scope, Action: engine.AuditGateApprove, ActorID: "u1", CreatedAt: now}},
	})
	require.NoError(t, err)
	return fx, c.Memory.ID
}

func TestRelateRules(t *testing.T) {
	fx, cache := newRelationFixture(t)
	ctx := context.Background()
	writer := fx.as("w1", "writer")
	cases := []struct {
		name string
		p    graph.Principal
		r    engine.RelationRequest
		want error
	}{
		{"reader may not", fx.as("r1", "reader"), engine.RelationRequest{From: fx.pool, To: cache, Type: graph.DependsOn}, graph.ErrForbidden},
		{"self", writer, engine.RelationRequest{From: fx.pool, To: fx.pool, Type: graph.RelatesTo}, graph.ErrInvalid},
		{"unknown type", writer, engine.RelationRequest{From: fx.pool, To: cache, Type: "FOLLOWS"}, graph.ErrInvalid},
		{"unreadable end", writer, engine.RelationRequest{From: fx.pool, To: fx.priv, Type: graph.RelatesTo}, graph.ErrNotFound},
		{"missing end", writer, engine.RelationRequest{From: graph.NewID(), To: cache, Type: graph.RelatesTo}, graph.ErrNotFound},
		{"another tenant", graph.Principal{ID: "x", UserID: "u1", Roles: []string{"writer"}, Scope: graph.Scope{TenantID: "t2"}},
			engine.RelationRequest{From: fx.pool, To: cache, Type: graph.RelatesTo}, graph.ErrNotFound},
		// u2 reads cache (shared) but may not write under u1's memories.
		{"another user's memories", graph.Principal{ID: "w2", UserID: "u2", Roles: []string{"writer"}, Scope: fx.scope},
			engine.RelationRequest{From: fx.pool, To: cache, Type: graph.RelatesTo}, graph.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := fx.eng.Relate(ctx, c.p, c.r)
			assert.ErrorIs(t, err, c.want)
		})
	}
	rels, err := fx.eng.ListRelations(ctx, writer, fx.pool, 0)
	require.NoError(t, err)
	assert.Empty(t, rels, "nothing written")
}

func TestRelateLifecycle(t *testing.T) {
	fx, cache := newRelationFixture(t)
	ctx := context.Background()
	writer := fx.as("w1", "writer")
	res, err := fx.eng.Relate(ctx, writer, engine.RelationRequest{From: fx.pool, To: cache, Type: graph.DependsOn, Reason: "pool sizing follows the cache"})
	require.NoError(t, err)
	assert.True(t, res.Created)
	again, err := fx.eng.Relate(ctx, writer, engine.RelationRequest{From: fx.pool, To: cache, Type: graph.DependsOn})
	require.NoError(t, err)
	assert.False(t, again.Created, "idempotent")
	assert.Equal(t, res.Relation.ID, again.Relation.ID)

	rels, err := fx.eng.ListRelations(ctx, fx.as("r1", "reader"), cache, 0)
	require.NoError(t, err)
	require.Len(t, rels, 1)
	assert.Equal(t, graph.DependsOn, rels[0].Type)

	for _, id := range []string{fx.pool, cache} {
		evs, _, err := fx.eng.ListAudit(ctx, fx.as("lib", "librarian"), engine.AuditRequest{MemoryID: id, Action: engine.AuditRelationCreate})
		require.NoError(t, err)
		assert.Len(t, evs, 1, "one create event about %s", id)
	}

	// Search shows cache beside pool, with the relation as its reason.
	resp, err := fx.eng.Search(ctx, fx.as("r1", "reader"), engine.SearchRequest{Query: "postgres pool size", Mode: policy.ModeKeyword})
	require.NoError(t, err)
	nb, ok := neighbourOf(resp, fx.pool, cache)
	require.True(t, ok, "cache appended to pool")
	assert.Equal(t, "DEPENDS_ON", nb.Reason)
	assert.Equal(t, engine.DirectionOut, nb.Direction)
	assert.Equal(t, res.Relation.ID, nb.RelationID)

	// The graph signal walks the relation: cache, which no entity of the
	// query reaches, comes back from a graph search for postgres.
	resp, err = fx.eng.Search(ctx, fx.as("r1", "reader"), engine.SearchRequest{Query: "PostgreSQL", Mode: policy.ModeGraph})
	require.NoError(t, err)
	assert.Contains(t, resultIDs(resp), cache, "the walk crosses the relation")

	del, err := fx.eng.Unrelate(ctx, fx.as("r1", "reader"), res.Relation.ID, "")
	assert.ErrorIs(t, err, graph.ErrForbidden, "a reader may not unrelate")
	assert.Empty(t, del.ID)
	_, err = fx.eng.Unrelate(ctx, graph.Principal{ID: "w2", UserID: "u2", Roles: []string{"writer"}, Scope: fx.scope}, res.Relation.ID, "")
	assert.ErrorIs(t, err, graph.ErrNotFound, "another user may not unrelate u1's memories")
	del, err = fx.eng.Unrelate(ctx, writer, res.Relation.ID, "wrong")
	require.NoError(t, err)
	assert.Equal(t, res.Relation.ID, del.ID)
	_, err = fx.eng.Unrelate(ctx, writer, res.Relation.ID, "")
	assert.ErrorIs(t, err, graph.ErrNotFound)
	resp, err = fx.eng.Search(ctx, fx.as("r1", "reader"), engine.SearchRequest{Query: "postgres pool size", Mode: policy.ModeKeyword})
	require.NoError(t, err)
	_, ok = neighbourOf(resp, fx.pool, cache)
	assert.False(t, ok, "gone with the relation")
	resp, err = fx.eng.Search(ctx, fx.as("r1", "reader"), engine.SearchRequest{Query: "PostgreSQL", Mode: policy.ModeGraph})
	require.NoError(t, err)
	assert.NotContains(t, resultIDs(resp), cache)
}

// TestRelatedNeighbourForgotten: archiving the related memory hides it
// from the appendix; erasing it removes the relation.
func TestRelatedNeighbourForgotten(t *testing.T) {
	fx, cache := newRelationFixture(t)
	ctx := context.Background()
	writer := fx.as("w1", "writer")
	_, err := fx.eng.Relate(ctx, writer, engine.RelationRequest{From: cache, To: fx.pool, Type: graph.DerivedFrom})
	require.NoError(t, err)
	appended := func() (engine.Neighbour, bool) {
		resp, err := fx.eng.Search(ctx, fx.as("r1", "reader"), engine.SearchRequest{Query: "postgres pool size", Mode: policy.ModeKeyword})
		require.NoError(t, err)
		return neighbourOf(resp, fx.pool, cache)
	}
	nb, ok := appended()
	require.True(t, ok)
	assert.Equal(t, engine.DirectionIn, nb.Direction)
	_, err = fx.eng.Archive(ctx, writer, cache, "stale")
	require.NoError(t, err)
	_, ok = appended()
	assert.False(t, ok, "archived")
	_, err = fx.eng.Restore(ctx, writer, cache, "back")
	require.NoError(t, err)
	_, ok = appended()
	assert.True(t, ok, "restored")
	_, err = fx.eng.Erase(ctx, writer, cache, "gdpr")
	require.NoError(t, err)
	rels, err := fx.eng.ListRelations(ctx, writer, fx.pool, 0)
	require.NoError(t, err)
	assert.Empty(t, rels, "erased with its memory")
}

func neighbourOf(resp engine.SearchResponse, result, id string) (engine.Neighbour, bool) {
	for _, r := range resp.Results {
		if r.Memory.ID != result {
			continue
		}
		for _, nb := range r.Neighbours {
			if nb.ID == id {
				return nb, true
			}
		}
	}
	return engine.Neighbour{}, false
}

func resultIDs(resp engine.SearchResponse) []string {
	var out []string
	for _, r := range resp.Results {
		out = append(out, r.Memory.ID)
	}
	return out
}
