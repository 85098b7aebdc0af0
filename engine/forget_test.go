package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

// forgetMarker is in the erased memories' content, titles, tags and
// entity names; no read path may return it after the erase.
const forgetMarker = "zqxmarker"

// noForgetMarker fails when v, as JSON, holds the marker.
func noForgetMarker(t *testing.T, what string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(string(b)), forgetMarker, "%s returns erased content", what)
}

// TestEraseLeavesNothingToRead erases a memory written directly and one
// written through the librarian's queue, and then reads through every path
// an agent has — search in each mode, get, list, read_context, citation
// verification, the gate queue, audit, the vector index and the outbox — as
// the owner and as an admin who reads every user, and finds none of their
// content. The same paths find it before the erase.
func TestEraseLeavesNothingToRead(t *testing.T) {
	f := newIngFixture(t, ingOpts{vectors: true})
	ctx := ingCtx(t)
	alice := who("alice", "", t1, "writer")
	admin := who("admin-1", "", t1, "admin")
	content := "Zqxmarker Quill met Oskar at the harbour; the zqxmarker code is 7731."
	direct, err := f.eng.Ingest(ctx, alice, engine.IngestRequest{Type: "note", Title: "zqxmarker meeting",
		Content: content, Tags: []string{"zqxmarker-tag"}})
	require.NoError(t, err)
	require.Equal(t, engine.StatusApproved, direct.Status)
	queued, err := f.eng.Ingest(ctx, alice, engine.IngestRequest{Type: "note", Content: "Zqxmarker Quill proposes a harbour festival.",
		SourceKind: graph.SourceProposed})
	require.NoError(t, err)
	require.Equal(t, engine.StatusPending, queued.Status)
	approved, err := f.eng.ApproveGateRequest(ctx, admin, queued.RequestID, "fine")
	require.NoError(t, err)
	require.NotNil(t, approved.Result)
	kept, err := f.eng.Ingest(ctx, alice, engine.IngestRequest{Type: "note", Content: "Oskar repaired the harbour crane."})
	require.NoError(t, err)
	_, err = f.eng.DrainOutbox(ctx, 100)
	require.NoError(t, err)
	erased := []string{direct.ID, approved.Result.ID}

	before, err := f.eng.ReadContext(ctx, alice, engine.ContextRequest{Query: "zqxmarker Quill harbour"})
	require.NoError(t, err)
	require.NotEmpty(t, before.Items)
	reads := func(t *testing.T, p graph.Principal) map[string]any {
		got := map[string]any{}
		for _, mode := range accessModes {
			res, err := f.eng.Search(ctx, p, engine.SearchRequest{Query: "zqxmarker Quill harbour code", Mode: mode,
				IncludeArchived: true, IncludeSuperseded: true})
			require.NoError(t, err)
			got["search "+mode] = res.Results // the response echoes the query
		}
		l, err := f.eng.List(ctx, p, engine.ListRequest{Statuses: []graph.Status{graph.StatusActive, graph.StatusArchived,
			graph.StatusSuperseded, graph.StatusRetracted, graph.StatusErased}})
		require.NoError(t, err)
		got["list"] = l
		c, err := f.eng.ReadContext(ctx, p, engine.ContextRequest{Query: "zqxmarker Quill harbour"})
		require.NoError(t, err)
		got["read_context"] = c.Items
		c, err = f.eng.ReadContext(ctx, p, engine.ContextRequest{ElementID: kept.ID})
		require.NoError(t, err)
		got["read_context element (neighbours)"] = c.Items
		v, err := f.eng.VerifyCitations(ctx, p, engine.VerifyRequest{ContextID: before.ContextID, Citations: before.Items[0].Citations})
		require.NoError(t, err)
		got["verify"] = v
		return got
	}
	t.Run("Before", func(t *testing.T) {
		res := reads(t, alice)
		b, _ := json.Marshal(res["search hybrid"])
		require.Contains(t, strings.ToLower(string(b)), forgetMarker, "the marker is findable before the erase")
		require.Contains(t, pointIDs(t, f), direct.ID)
	})

	_, err = f.eng.Erase(ctx, who("bob", "", t1, "writer"), direct.ID, "")
	require.ErrorIs(t, err, graph.ErrNotFound, "bob does not read alice's private note")
	_, err = f.eng.Erase(ctx, who("reader-1", "alice", t1, "reader"), direct.ID, "")
	require.ErrorIs(t, err, graph.ErrForbidden, "reading is not erasing")
	res, err := f.eng.Erase(ctx, alice, direct.ID, "ticket 42")
	require.NoError(t, err, "alice erases her own note")
	assert.Equal(t, []string{direct.ID}, res.IDs)
	assert.Equal(t, 1, res.Memories)
	res, err = f.eng.Erase(ctx, admin, approved.Result.ID, "ticket 42")
	require.NoError(t, err)
	assert.Equal(t, 1, res.Memories)
	res, err = f.eng.Erase(ctx, admin, approved.Result.ID, "again")
	require.NoError(t, err, "erasing twice succeeds")
	assert.Empty(t, res.IDs)
	_, err = f.eng.DrainOutbox(ctx, 100)
	require.NoError(t, err)

	for _, p := range []graph.Principal{alice, admin} {
		t.Run("After/"+p.ID, func(t *testing.T) {
			for what, v := range reads(t, p) {
				noForgetMarker(t, what, v)
			}
			for _, id := range erased {
				_, err := f.eng.Get(ctx, p, id)
				assert.ErrorIs(t, err, graph.ErrNotFound, "get")
			}
			v, err := f.eng.VerifyCitations(ctx, p, engine.VerifyRequest{ContextID: before.ContextID, Citations: before.Items[0].Citations})
			require.NoError(t, err)
			assert.False(t, v.Valid, "a citation of an erased memory is backed by nothing any more")
		})
	}
	t.Run("After/stores", func(t *testing.T) {
		g, err := f.eng.GetGateRequest(ctx, admin, queued.RequestID)
		require.NoError(t, err)
		noForgetMarker(t, "gate request", g)
		evs, _, err := f.store.ListAudit(ctx, graph.Filter{Scope: t1, Reader: graph.System}, graph.AuditQuery{}, graph.Page{Limit: 1000})
		require.NoError(t, err)
		noForgetMarker(t, "audit", evs)
		assert.Len(t, f.audits(t, engine.AuditErase), 2, "each erase is audited")
		ids := pointIDs(t, f)
		for _, id := range erased {
			assert.NotContains(t, ids, id, "vector index")
		}
		assert.Contains(t, ids, kept.ID)
		st, err := f.store.OutboxStatus(ctx, time.Now().Add(1000*time.Hour), 100)
		require.NoError(t, err)
		assert.Zero(t, st.Pending, "the queued deletes were delivered")
	})
}

// pointIDs lists the vector index's points of the fixture's tenant.
func pointIDs(t *testing.T, f *ingFixture) []string {
	t.Helper()
	var ids []string
	require.NoError(t, f.index.Scan(context.Background(), vector.Filter{TenantID: "t1", AllUsers: true, Subscopes: true},
		func(p vector.Payload) error {
			ids = append(ids, p.MemoryID)
			return nil
		}))
	return ids
}

// TestArchiveRestoreAndEraseUser: archive hides and restore brings back;
// erasing a user takes every memory of theirs the principal reaches and
// no one else's, needs the erase permission for another user, and is
// audited once more as a whole.
func TestArchiveRestoreAndEraseUser(t *testing.T) {
	f := newIngFixture(t, ingOpts{vectors: true})
	ctx := ingCtx(t)
	alice := who("alice", "", t1, "writer")
	bob := who("bob", "", t1, "writer")
	admin := who("admin-1", "", t1, "admin")
	var aliceIDs []string
	for _, c := range []string{"zqxmarker one about Lisbon", "zqxmarker two about Porto", "zqxmarker three about Braga"} {
		r, err := f.eng.Ingest(ctx, alice, engine.IngestRequest{Type: "note", Content: c})
		require.NoError(t, err)
		aliceIDs = append(aliceIDs, r.ID)
	}
	bobs, err := f.eng.Ingest(ctx, bob, engine.IngestRequest{Type: "note", Content: "bob's note about Lisbon"})
	require.NoError(t, err)

	_, err = f.eng.Archive(ctx, bob, aliceIDs[0], "")
	require.ErrorIs(t, err, graph.ErrNotFound, "bob does not see alice's note")
	a, err := f.eng.Archive(ctx, alice, aliceIDs[0], "done with it")
	require.NoError(t, err)
	assert.Equal(t, graph.StatusArchived, a.Memory.Status)
	l, err := f.eng.List(ctx, alice, engine.ListRequest{})
	require.NoError(t, err)
	assert.NotContains(t, listIDs(l), aliceIDs[0])
	r, err := f.eng.Restore(ctx, alice, aliceIDs[0], "")
	require.NoError(t, err)
	assert.Equal(t, graph.StatusActive, r.Memory.Status)
	_, err = f.eng.Restore(ctx, alice, aliceIDs[0], "")
	assert.ErrorIs(t, err, graph.ErrConflict, "only an archived memory is restored")
	assert.Len(t, f.audits(t, engine.AuditArchive), 1)
	assert.Len(t, f.audits(t, engine.AuditRestore), 1)
	_, err = f.eng.Archive(ctx, alice, aliceIDs[1], "")
	require.NoError(t, err, "an archived memory is erased with the rest")

	_, err = f.eng.EraseUser(ctx, bob, "alice", "")
	require.ErrorIs(t, err, graph.ErrForbidden, "another user's memories need the erase permission")
	res, err := f.eng.EraseUser(ctx, admin, "alice", "request 7")
	require.NoError(t, err)
	assert.ElementsMatch(t, aliceIDs, res.IDs)
	assert.Equal(t, 3, res.Memories)
	assert.Len(t, f.audits(t, engine.AuditEraseUser), 1)
	assert.Equal(t, bobs.ID, stored(t, f, bobs.ID).ID, "bob's memory stays")
	ids := pointIDs(t, f)
	assert.Equal(t, []string{bobs.ID}, ids, "only bob's point is left")
	for _, mode := range accessModes {
		s, err := f.eng.Search(ctx, admin, engine.SearchRequest{Query: "zqxmarker Lisbon Porto Braga", Mode: mode, IncludeArchived: true})
		require.NoError(t, err)
		noForgetMarker(t, "search "+mode, s.Results)
	}
	again, err := f.eng.EraseUser(ctx, bob, "bob", "")
	require.NoError(t, err, "a user erases themselves with write")
	assert.Equal(t, []string{bobs.ID}, again.IDs)
}
