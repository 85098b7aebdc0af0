package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

func TestOutbox(t *testing.T) {
	var flaky *flakyIndex
	f := newIngFixture(t, ingOpts{vectors: true, index: func(idx vector.Index) vector.Index {
		flaky = &flakyIndex{Index: idx}
		return flaky
	}})
	ctx := ingCtx(t)
	w := f.as("writer")
	tenant := vector.Filter{TenantID: f.scope.TenantID, AllUsers: true, Subscopes: true}
	pointVersion := func(t *testing.T, id string) string {
		t.Helper()
		hits, err := f.index.Score(ctx, []float32{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, tenant, []string{id})
		require.NoError(t, err)
		if len(hits) == 0 {
			return ""
		}
		return hits[0].Payload.VersionID
	}

	t.Run("upserted at once, drained without embedding again", func(t *testing.T) {
		r, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: "Vault runs on host sec-1."})
		require.NoError(t, err)
		assert.Equal(t, r.VersionID, pointVersion(t, r.ID))
		calls := f.emb.calls.Load()
		st, err := f.eng.DrainOutbox(ctx, 100)
		require.NoError(t, err)
		assert.Equal(t, engine.DrainStats{Seen: 1, Current: 1}, st)
		assert.Equal(t, calls, f.emb.calls.Load(), "no second embedding")
		items, err := f.store.PendingOutbox(ctx, 100)
		require.NoError(t, err)
		assert.Empty(t, items)
	})
	t.Run("a batch is embedded in one call beside the write", func(t *testing.T) {
		calls, texts := f.emb.calls.Load(), f.emb.texts.Load()
		rs, err := f.eng.IngestBatch(ctx, w, []engine.IngestRequest{
			{Type: "note", Content: "Nomad runs on host sched-1."},
			{Type: "note", Content: "Vault runs on host sec-1."}, // a reinforcement: embedded ahead, not written
			{Type: "note", Content: "Kafka runs on host mq-1."},
		})
		require.NoError(t, err)
		require.Len(t, rs, 3)
		assert.Equal(t, calls+1, f.emb.calls.Load(), "one Embed call for the batch")
		assert.Equal(t, texts+3, f.emb.texts.Load())
		assert.Equal(t, engine.StatusReinforced, rs[1].Status)
		for _, i := range []int{0, 2} {
			assert.Equal(t, rs[i].VersionID, pointVersion(t, rs[i].ID), "item %d indexed at its version", i)
		}
		st, err := f.eng.DrainOutbox(ctx, 100)
		require.NoError(t, err)
		assert.Equal(t, engine.DrainStats{Seen: 2, Current: 2}, st)
	})
	t.Run("failed upsert stays in the outbox until drained", func(t *testing.T) {
		flaky.down.Store(true)
		r, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: "Consul runs on host sd-1."})
		require.NoError(t, err, "a vector failure never fails the graph write")
		assert.Equal(t, engine.StatusApproved, r.Status)
		assert.Empty(t, pointVersion(t, r.ID))

		st, err := f.eng.DrainOutbox(ctx, 100)
		require.NoError(t, err)
		assert.Equal(t, 1, st.Failed)
		items, err := f.store.PendingOutbox(ctx, 100)
		require.NoError(t, err)
		require.Len(t, items, 1)
		assert.Equal(t, 1, items[0].Attempts)

		flaky.down.Store(false)
		st, err = f.eng.DrainOutbox(ctx, 100)
		require.NoError(t, err)
		assert.Equal(t, engine.DrainStats{Seen: 1, Embedded: 1}, st)
		assert.Equal(t, r.VersionID, pointVersion(t, r.ID))
	})
	t.Run("an old item never overwrites a newer version", func(t *testing.T) {
		f.emb.fail.Store(true)
		doc := engine.IngestRequest{Type: "document", Title: "Runbook", Content: "# Runbook\n\nStep one.\n", SourceKind: graph.SourceIngestedEvidence}
		a, err := f.eng.Ingest(ctx, w, doc)
		require.NoError(t, err)
		require.Equal(t, engine.StatusApproved, a.Status)
		doc.Content = "# Runbook\n\nStep one, then two.\n"
		b, err := f.eng.Ingest(ctx, w, doc)
		require.NoError(t, err)
		require.Equal(t, engine.StatusUpdated, b.Status)
		f.emb.fail.Store(false)
		st, err := f.eng.DrainOutbox(ctx, 100)
		require.NoError(t, err)
		assert.Equal(t, engine.DrainStats{Seen: 2, Embedded: 1}, st)
		assert.Equal(t, b.VersionID, pointVersion(t, a.ID))
	})
	t.Run("vectors off", func(t *testing.T) {
		off := newIngFixture(t, ingOpts{})
		_, err := off.eng.DrainOutbox(ctx, 10)
		require.ErrorIs(t, err, engine.ErrVectorsOff)
		_, err = off.eng.Ingest(ctx, off.as("writer"), engine.IngestRequest{Type: "note", Content: "No vectors here."})
		require.NoError(t, err)
		items, err := off.store.PendingOutbox(ctx, 10)
		require.NoError(t, err)
		assert.Empty(t, items, "no outbox entry without a vector index")
	})
}
