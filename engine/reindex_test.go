package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

func TestDoctorAndReindex(t *testing.T) {
	ctx := context.Background()
	f := newIngFixture(t, ingOpts{vectors: true})
	admin := f.as("admin")
	var ids []string
	for _, text := range []string{
		"The API server listens on port 8080.",
		"Deployments go out on Tuesdays after the freeze.",
		"The billing service stores invoices in Postgres.",
	} {
		r, err := f.eng.Ingest(ctx, admin, engine.IngestRequest{Type: "note", Content: text})
		require.NoError(t, err)
		ids = append(ids, r.ID)
	}

	rep, err := f.eng.Doctor(ctx, admin, 10)
	require.NoError(t, err)
	assert.True(t, rep.Healthy(), "%+v", rep)
	assert.Equal(t, 3, rep.Memories)
	assert.Equal(t, 3, rep.Points)

	// Break the index: lose one point, add one for a memory the graph
	// does not have.
	require.NoError(t, f.index.Delete(ctx, []string{ids[0]}))
	vec := make([]float32, f.index.Dimensions())
	vec[0] = 1
	require.NoError(t, f.index.Upsert(ctx, []vector.Point{{ID: "ghost", Vector: vec, Payload: vector.Payload{
		VersionID: "v-ghost", TenantID: f.scope.TenantID, Type: "note", CreatedAt: time.Now(),
	}}}))
	rep, err = f.eng.Doctor(ctx, admin, 10)
	require.NoError(t, err)
	assert.False(t, rep.Healthy())
	assert.Equal(t, []string{ids[0]}, rep.Missing)
	assert.Equal(t, []string{"ghost"}, rep.Orphans)

	// Another tenant's doctor sees none of it.
	other := graph.Principal{ID: "admin-2", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: "t2"}}
	rep2, err := f.eng.Doctor(ctx, other, 10)
	require.NoError(t, err)
	assert.Zero(t, rep2.Memories)
	assert.Zero(t, rep2.Points)

	st, err := f.eng.Reindex(ctx, admin, nil)
	require.NoError(t, err)
	assert.Equal(t, engine.ReindexStats{Memories: 3, Removed: 1}, st)
	rep, err = f.eng.Doctor(ctx, admin, 10)
	require.NoError(t, err)
	assert.True(t, rep.Healthy(), "%+v", rep)
	assert.Equal(t, 3, rep.Points)

	_, err = f.eng.Doctor(ctx, f.as("writer"), 10)
	assert.ErrorIs(t, err, graph.ErrForbidden)
	_, err = f.eng.Reindex(ctx, f.as("writer"), nil)
	assert.ErrorIs(t, err, graph.ErrForbidden)

	off := newIngFixture(t, ingOpts{})
	_, err = off.eng.Doctor(ctx, off.as("admin"), 10)
	assert.ErrorIs(t, err, engine.ErrVectorsOff)
}
