package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/vector"
)

func TestOutbox(t *testing.T) {
	var flaky *flakyIndex
	clk := newClock()
	f := newIngFixture(t, ingOpts{vectors: true, now: clk.now, index: func(idx vector.Index) vector.Index {
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
		assert.Empty(t, live(t, f.store))
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
		items := live(t, f.store)
		require.Len(t, items, 1)
		assert.Equal(t, 1, items[0].Attempts)
		assert.Contains(t, items[0].LastError, "index down")
		clk.advance(time.Hour) // past any backoff

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
		off := newIngFixture(t, ingOpts{vectorsOff: true})
		_, err := off.eng.DrainOutbox(ctx, 10)
		require.ErrorIs(t, err, engine.ErrVectorsOff)
		_, err = off.eng.Ingest(ctx, off.as("writer"), engine.IngestRequest{Type: "note", Content: "No vectors here."})
		require.NoError(t, err)
		assert.Empty(t, live(t, off.store), "no outbox entry when the deployment keeps no vector index")
	})
}

// live returns every live outbox item, due or not.
func live(t *testing.T, s graph.Store) []graph.OutboxItem {
	t.Helper()
	items, err := s.DueOutbox(t.Context(), time.Now().Add(1000*time.Hour), 0, 1000)
	require.NoError(t, err)
	return items
}

// TestOutboxTwoProcesses: a write made by an engine without the vector
// index (the CLI beside a running server, whose embedded index is locked
// to it) is enqueued in its graph transaction, and the engine that holds
// the index (the server) delivers it; doctor then finds nothing missing.
func TestOutboxTwoProcesses(t *testing.T) {
	server := newIngFixture(t, ingOpts{vectors: true})
	cli := newIngFixture(t, ingOpts{store: graphtest.OpenSecond(t, server.store)})
	ctx := ingCtx(t)

	r, err := cli.eng.Ingest(ctx, cli.as("writer"), engine.IngestRequest{Type: "note", Content: "Etcd runs on host kv-1."})
	require.NoError(t, err)
	require.Equal(t, engine.StatusApproved, r.Status)
	rs, err := cli.eng.IngestBatch(ctx, cli.as("writer"), []engine.IngestRequest{
		{Type: "note", Content: "Zookeeper runs on host zk-1."},
		{Type: "document", Title: "Runbook", Content: "# Runbook\n\nRestart zk-1 first.\n", SourceKind: graph.SourceIngestedEvidence},
	})
	require.NoError(t, err)
	for _, r := range rs {
		require.Equal(t, engine.StatusApproved, r.Status)
	}
	doc := engine.IngestRequest{Type: "document", Title: "Runbook", Content: "# Runbook\n\nRestart zk-1 first, then kv-1.\n", SourceKind: graph.SourceIngestedEvidence}
	up, err := cli.eng.Ingest(ctx, cli.as("writer"), doc)
	require.NoError(t, err)
	require.Equal(t, engine.StatusUpdated, up.Status, "a new version is enqueued too")

	items := live(t, server.store)
	require.Len(t, items, 4, "every write the index-less engine made waits in the outbox")
	_, err = cli.eng.DrainOutbox(ctx, 10)
	require.ErrorIs(t, err, engine.ErrVectorsOff, "only the engine holding the index drains")

	admin := server.as("admin")
	before, err := server.eng.Doctor(ctx, admin, 10)
	require.NoError(t, err)
	assert.Equal(t, 3, before.MissingCount, "not indexed yet")

	st, err := server.eng.DrainOutbox(ctx, 100)
	require.NoError(t, err)
	assert.Equal(t, engine.DrainStats{Seen: 4, Embedded: 3}, st, "the document's two items are one embedding")
	assert.Empty(t, live(t, server.store))
	after, err := server.eng.Doctor(ctx, admin, 10)
	require.NoError(t, err)
	assert.True(t, after.Healthy(), "doctor: %+v", after)
	assert.Equal(t, 3, after.Points)
	hits, err := server.index.Score(ctx, oneHot(16), vector.Filter{TenantID: server.scope.TenantID, AllUsers: true, Subscopes: true}, []string{up.ID})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, up.VersionID, hits[0].Payload.VersionID, "the document is indexed at its newest version")
}

// TestOutboxRetry: failed deliveries back off exponentially, an item that
// keeps failing is dead-lettered after MaxAttempts without holding back
// the items behind it, and a requeued dead letter is delivered.
func TestOutboxRetry(t *testing.T) {
	var flaky *flakyIndex
	clk := newClock()
	f := newIngFixture(t, ingOpts{vectors: true, now: clk.now,
		outbox: engine.OutboxOptions{MaxAttempts: 3, Backoff: time.Minute, MaxBackoff: 3 * time.Minute},
		index: func(idx vector.Index) vector.Index {
			flaky = &flakyIndex{Index: idx}
			return flaky
		}})
	ctx := ingCtx(t)
	w := f.as("writer")
	f.emb.fail.Store(true) // nothing is indexed at write time
	var ids []string
	for _, c := range []string{"Redis runs on host cache-1.", "Postgres runs on host db-1.", "Nginx runs on host web-1."} {
		r, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: c})
		require.NoError(t, err)
		ids = append(ids, r.ID)
	}
	f.emb.fail.Store(false)
	poison := ids[1]
	flaky.poison.Store(poison)

	drain := func(t *testing.T) engine.DrainStats {
		t.Helper()
		st, err := f.eng.DrainOutbox(ctx, 100)
		require.NoError(t, err)
		return st
	}
	// Pass 1: the three new items go together and fail together.
	assert.Equal(t, engine.DrainStats{Seen: 3, Failed: 3}, drain(t))
	assert.Equal(t, engine.DrainStats{}, drain(t), "nothing is due before the backoff")
	clk.advance(time.Minute)
	// Pass 2: retried items go alone; only the poisonous one fails.
	assert.Equal(t, engine.DrainStats{Seen: 3, Embedded: 2, Failed: 1}, drain(t))
	for _, id := range []string{ids[0], ids[2]} {
		hits, err := f.index.Score(ctx, oneHot(16), vector.Filter{TenantID: f.scope.TenantID, AllUsers: true, Subscopes: true}, []string{id})
		require.NoError(t, err)
		assert.Len(t, hits, 1, "%s delivered despite the poisonous item", id)
	}
	clk.advance(time.Minute)
	assert.Equal(t, engine.DrainStats{}, drain(t), "the second backoff is twice the first")
	clk.advance(time.Minute)
	// A new write behind the failing item is delivered at once.
	r, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: "Kafka runs on host mq-9."})
	require.NoError(t, err)
	require.Equal(t, engine.StatusApproved, r.Status)
	// Pass 3 (third failure): dead-lettered.
	assert.Equal(t, engine.DrainStats{Seen: 2, Current: 1, Failed: 1, Dead: 1}, drain(t))
	clk.advance(24 * time.Hour)
	assert.Equal(t, engine.DrainStats{}, drain(t), "a dead letter is not retried")

	st, err := f.eng.OutboxStatus(ctx, 10)
	require.NoError(t, err)
	assert.Zero(t, st.Pending)
	require.Equal(t, 1, st.Dead)
	require.Len(t, st.DeadLetters, 1)
	assert.Equal(t, poison, st.DeadLetters[0].MemoryID)
	assert.Equal(t, 3, st.DeadLetters[0].Attempts)
	assert.Contains(t, st.DeadLetters[0].LastError, "refused")

	flaky.poison.Store("")
	n, err := f.eng.RequeueDeadLetters(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, engine.DrainStats{Seen: 1, Embedded: 1}, drain(t))
	st, err = f.eng.OutboxStatus(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, graph.OutboxStatus{}, st)
	rep, err := f.eng.Doctor(ctx, f.as("admin"), 10)
	require.NoError(t, err)
	assert.True(t, rep.Healthy(), "doctor: %+v", rep)
}

func oneHot(dim int) []float32 {
	v := make([]float32, dim)
	v[0] = 1
	return v
}
