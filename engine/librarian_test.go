package engine_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

func TestLibrarian(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w, lib := f.as("writer"), f.as("librarian")

	queued, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Content: "We decided to use PostgreSQL for billing."})
	require.NoError(t, err)
	require.Equal(t, engine.StatusPending, queued.Status)

	t.Run("list and show", func(t *testing.T) {
		reqs, _, err := f.eng.ListGateRequests(ctx, lib, "", graph.Page{})
		require.NoError(t, err)
		require.Len(t, reqs, 1)
		assert.Equal(t, queued.RequestID, reqs[0].ID)
		v, err := f.eng.GetGateRequest(ctx, lib, queued.RequestID)
		require.NoError(t, err)
		require.NotNil(t, v.Write)
		assert.Equal(t, "We decided to use PostgreSQL for billing.", v.Write.Content)
		_, err = f.eng.GetGateRequest(ctx, w, queued.RequestID)
		require.NoError(t, err, "the author sees their own request")
		_, err = f.eng.GetGateRequest(ctx, f.as("reader"), queued.RequestID)
		require.ErrorIs(t, err, graph.ErrNotFound, "neither author nor librarian: not found")
		_, _, err = f.eng.ListGateRequests(ctx, w, "", graph.Page{})
		require.ErrorIs(t, err, graph.ErrForbidden)
		_, _, err = f.eng.ListGateRequests(ctx, lib, "maybe", graph.Page{})
		require.ErrorIs(t, err, graph.ErrInvalid)
	})
	t.Run("approve needs the approve permission", func(t *testing.T) {
		_, err := f.eng.ApproveGateRequest(ctx, w, queued.RequestID, "")
		require.ErrorIs(t, err, graph.ErrForbidden)
		assert.Empty(t, f.memories(t))
	})
	t.Run("approve replays the write", func(t *testing.T) {
		d, err := f.eng.ApproveGateRequest(ctx, lib, queued.RequestID, "fine")
		require.NoError(t, err)
		require.NotNil(t, d.Result)
		assert.Equal(t, engine.StatusApproved, d.Result.Status)
		assert.Equal(t, graph.GateApproved, d.Request.Status)
		assert.Equal(t, d.Result.ID, d.Request.MemoryID)
		m := f.memory(t, d.Result.ID)
		assert.Equal(t, w.ID, m.UserID, "written as its author")
		assert.Equal(t, "Decision", m.Sublayer)
		evs, _, err := f.store.ListAudit(ctx, graph.Filter{Scope: f.scope, Reader: graph.System}, graph.AuditQuery{SubjectID: m.ID, Action: engine.AuditGateApprove}, graph.Page{})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, lib.ID, evs[0].ActorID)
		assert.Equal(t, "rules-and-decisions-need-review", evs[0].Rule)
		assert.Len(t, f.audits(t, engine.AuditLibrarianApprove), 1)

		_, err = f.eng.ApproveGateRequest(ctx, lib, queued.RequestID, "")
		require.ErrorIs(t, err, graph.ErrConflict, "a settled request cannot be approved twice")
	})
	t.Run("reject suggests updating the duplicate", func(t *testing.T) {
		dup, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Content: "We decided to use PostgreSQL for billing and invoices."})
		require.NoError(t, err)
		require.Equal(t, engine.StatusPending, dup.Status)
		d, err := f.eng.RejectGateRequest(ctx, lib, dup.RequestID, "already decided")
		require.NoError(t, err)
		assert.Equal(t, graph.GateRejected, d.Request.Status)
		assert.Equal(t, "already decided", d.Reason)
		first := f.memories(t)[0]
		assert.Contains(t, d.Fix, "duplicate of active memory "+first.ID)
		assert.Contains(t, d.Fix, "update it instead")
		assert.Len(t, f.audits(t, engine.AuditLibrarianReject), 1)
		assert.Len(t, f.memories(t), 1)
	})
}

// TestNoWriteWithoutGate runs a mixed workload through every exported
// entry point that writes memories and checks that every memory has
// exactly one approving audit event written with it.
func TestNoWriteWithoutGate(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w, lib := f.as("writer"), f.as("librarian")
	var pending []string
	collect := func(rs ...engine.IngestResult) {
		for _, r := range rs {
			if r.Status == engine.StatusPending {
				pending = append(pending, r.RequestID)
			}
		}
	}
	for _, c := range []string{
		"Grafana runs on host mon-1.", "Grafana runs on host mon-1.", "Grafana runs on host mon-2.",
		"We decided to adopt trunk-based development.", "Never commit secrets to the repository.",
		"I prefer tabs over spaces.",
	} {
		r, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Content: c})
		require.NoError(t, err)
		collect(r)
	}
	rs, err := f.eng.IngestBatch(ctx, w, []engine.IngestRequest{
		{Type: "episode", Content: "User asked for the on-call rota."},
		{Type: "episode", Content: "User asked for the on-call rota."},
		{Type: "note", Content: "Loki keeps logs for 14 days."},
		{Type: "note", Content: "Loki keeps logs for 30 days.", SourceKind: graph.SourceProposed},
		{Type: "note", Content: "Bad channel.", Channel: "quarantine"},
		{Content: "We decided to drop Jenkins."},
	})
	require.NoError(t, err)
	collect(rs...)
	require.GreaterOrEqual(t, len(pending), 3)
	for i, id := range pending {
		if i%2 == 0 {
			_, err = f.eng.ApproveGateRequest(ctx, lib, id, "")
		} else {
			_, err = f.eng.RejectGateRequest(ctx, lib, id, "no")
		}
		require.NoError(t, err)
	}
	files := fstest.MapFS{
		"README.md":      {Data: []byte("# Readme\n\nmnemo stores memories in Neo4j.\n")},
		"docs/ops.md":    {Data: []byte("# Ops\n\n## Backup\n\nBack up SQLite nightly.\n")},
		".git/HEAD.md":   {Data: []byte("# skipped\n")},
		"docs/empty.md":  {Data: []byte("   \n")},
		"docs/notes.txt": {Data: []byte("not markdown")},
	}
	_, err = f.eng.IngestBacklog(ctx, w, engine.BacklogRequest{Files: files, SourceRepo: "example/repo"})
	require.NoError(t, err)
	files["README.md"] = &fstest.MapFile{Data: []byte("# Readme\n\nmnemo stores memories in SQLite too.\n")}
	_, err = f.eng.IngestBacklog(ctx, w, engine.BacklogRequest{Files: files, SourceRepo: "example/repo"})
	require.NoError(t, err)

	mems := f.memories(t)
	approvals := f.audits(t, engine.AuditGateApprove)
	require.NotEmpty(t, mems)
	assert.Equal(t, len(mems), len(approvals), "every memory was approved by the gate exactly once")
	byMemory := map[string]int{}
	for _, ev := range approvals {
		byMemory[ev.SubjectID]++
	}
	for _, m := range mems {
		assert.Equal(t, 1, byMemory[m.ID], "memory %s (%s) approvals", m.ID, m.Title)
	}
}
