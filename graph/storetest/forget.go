package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testArchiveRestore: an archived memory is hidden from listings and comes
// back whole with Restore; Restore refuses what is not archived and a
// memory whose canonical key another active memory took meanwhile.
func testArchiveRestore(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	id := x.create(t, memIn(s, "kept for later", "content", "alpha")).Memory.ID
	require.NoError(t, x.s.Archive(ctx(t), s, id))
	assert.Empty(t, x.listAll(t, f, 10), "archived memories are not listed")

	require.NoError(t, x.s.Restore(ctx(t), s, id))
	m := x.getMemory(t, f, id)
	assert.Equal(t, graph.StatusActive, m.Status)
	assert.Equal(t, []string{id}, x.listAll(t, f, 10))
	got, err := x.s.Candidates(ctx(t), f, []string{"alpha"}, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{id}, candIDs(got), "a restored memory keeps its entities")

	assert.ErrorIs(t, x.s.Restore(ctx(t), s, id), graph.ErrConflict, "only archived memories are restored")
	assert.ErrorIs(t, x.s.Restore(ctx(t), newScope(t), id), graph.ErrNotFound, "another tenant's memory")
	assert.ErrorIs(t, x.s.Restore(ctx(t), s, "missing"), graph.ErrNotFound)

	keyed := func(title string) graph.MemoryInput {
		in := memIn(s, title, title)
		in.Memory.CanonicalKey = "Alice-Home-City"
		in.ExclusiveKey = true
		return in
	}
	old := x.create(t, keyed("lives in Paris")).Memory.ID
	require.NoError(t, x.s.Archive(ctx(t), s, old))
	x.create(t, keyed("lives in Rome"))
	assert.ErrorIs(t, x.s.Restore(ctx(t), s, old), graph.ErrConflict, "the key is held by an active memory")
	assert.Equal(t, graph.StatusArchived, x.getMemory(t, f, old).Status)
}

// eraseMarker is in every piece of content the erase cases write; nothing
// a store returns after the erase may hold it.
const eraseMarker = "zqxmarker"

// testErase: an erased memory leaves a tombstone without content, and no
// read (direct, listing, keyword, entity, neighbour, versions, chunks,
// audit, outbox) finds any of its content.
func testErase(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	all := f
	all.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived,
		graph.StatusRetracted, graph.StatusErased}

	secret := memIn(s, "title "+eraseMarker, "the "+eraseMarker+" content about Shared", eraseMarker+"ent", "Shared")
	secret.Memory.Tags = []string{eraseMarker + "tag"}
	secret.Memory.CanonicalKey = "Zq-Marker-Key"
	secret.Memory.SubjectType, secret.Memory.SubjectID = "person", eraseMarker+"subject"
	secret.Version.Index = true
	secret.Version.Chunks = []graph.ChunkInput{{Key: eraseMarker + " heading", Start: 0, End: 5,
		Entities: []graph.EntityRef{{Name: eraseMarker + "chunkent"}}}}
	secret.Audit = []graph.AuditEvent{{Scope: s, Action: "gate.approve", ActorID: "tester", Outcome: "approved",
		Reason: "because " + eraseMarker}}
	c := x.create(t, secret)
	id := c.Memory.ID
	v2, err := x.s.AddVersion(ctx(t), s, id, graph.VersionInput{Content: "second " + eraseMarker, Index: true,
		Entities: []graph.EntityRef{{Name: eraseMarker + "ent"}, {Name: "Shared"}}})
	require.NoError(t, err)
	other := x.create(t, memIn(s, "other note", "about Shared", "Shared")).Memory.ID
	// Preconditions: every index finds the memory before the erase.
	got, err := x.s.KeywordSearch(ctx(t), f, eraseMarker, 10)
	require.NoError(t, err)
	require.Equal(t, []string{id}, scoredIDs(got))
	cands, err := x.s.Candidates(ctx(t), f, []string{eraseMarker + "ent"}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{id}, candIDs(cands))
	ns, err := x.s.Neighbours(ctx(t), f, []string{other}, 10)
	require.NoError(t, err)
	require.Equal(t, []string{id}, neighbourIDs(ns)[other])

	erasure, err := x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{id}, Index: true,
		Audit: []graph.AuditEvent{{Scope: s, Action: "memory.erase", SubjectKind: "Memory", SubjectID: id,
			ActorID: "tester", Outcome: "erased"}}})
	require.NoError(t, err)
	assert.Equal(t, graph.Erasure{Memories: 1, Versions: 2, Chunks: 1, Entities: 2, Outbox: 2}, erasure,
		"two versions emptied, one chunk, the two entities only it mentioned, two pending upserts")

	t.Run("Tombstone", func(t *testing.T) {
		_, err := x.s.GetMemory(ctx(t), f, id)
		assert.ErrorIs(t, err, graph.ErrNotFound, "a direct fetch does not see an erased memory")
		m, err := x.s.GetMemory(ctx(t), all, id)
		require.NoError(t, err, "unless it asks for erased ones")
		assert.Equal(t, graph.StatusErased, m.Status)
		assert.Equal(t, id, m.ID)
		assert.Equal(t, s, m.Scope)
		x.sameTime(t, c.Memory.CreatedAt, m.CreatedAt, "created_at")
		assert.Empty(t, m.Title)
		assert.Empty(t, m.Tags)
		assert.Empty(t, m.CanonicalKey)
		assert.Empty(t, m.SubjectID)
		noMarker(t, m)
		_, err = x.s.GetVersion(ctx(t), f, v2.ID)
		assert.ErrorIs(t, err, graph.ErrNotFound)
		vs, err := x.s.GetVersions(ctx(t), all, []string{c.Version.ID, v2.ID})
		require.NoError(t, err)
		assert.Len(t, vs, 2, "the versions stay, emptied")
		for _, v := range vs {
			assert.Empty(t, v.Content)
			assert.Empty(t, v.ContentHash)
			noMarker(t, v)
		}
		cs, err := x.s.GetChunks(ctx(t), all, c.Version.ID)
		require.NoError(t, err)
		assert.Empty(t, cs)
	})
	t.Run("Indexes", func(t *testing.T) {
		for _, ff := range []graph.Filter{f, all} {
			got, err := x.s.KeywordSearch(ctx(t), ff, eraseMarker+" content second", 10)
			require.NoError(t, err)
			assert.Empty(t, got, "keyword search")
			cands, err := x.s.Candidates(ctx(t), ff, []string{eraseMarker + "ent", eraseMarker + "chunkent", "Shared"}, 10)
			require.NoError(t, err)
			assert.Equal(t, []string{other}, candIDs(cands), "entities")
			ns, err := x.s.Neighbours(ctx(t), ff, []string{other}, 10)
			require.NoError(t, err)
			assert.Empty(t, ns, "neighbours")
			shared, err := x.s.Candidates(ctx(t), ff, []string{"shared"}, 10)
			require.NoError(t, err)
			assert.Equal(t, []string{other}, candIDs(shared), "a shared entity stays, with the other memory's mention only")
			l, err := x.s.ListMemories(ctx(t), ff, graph.Page{Limit: 10})
			require.NoError(t, err)
			for _, m := range l.Memories {
				noMarker(t, m)
			}
		}
		list, err := x.s.ListMemories(ctx(t), f, graph.Page{Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, []string{other}, memIDs(list.Memories))
	})
	t.Run("KeywordStatistics", func(t *testing.T) {
		// The erased memory counts no more in BM25's statistics: the
		// other memory scores as it does alone in a fresh tenant.
		alone := newScope(t)
		x.create(t, memIn(alone, "other note", "about Shared", "Shared"))
		want, err := x.s.KeywordSearch(ctx(t), in(alone), "shared note", 10)
		require.NoError(t, err)
		got, err := x.s.KeywordSearch(ctx(t), f, "shared note", 10)
		require.NoError(t, err)
		require.Len(t, want, 1)
		require.Len(t, got, 1)
		assert.InDelta(t, want[0].Score, got[0].Score, 1e-9)
	})
	t.Run("KeywordStatisticsAnotherClient", func(t *testing.T) {
		// Nor in another client's opened after the erase (another process,
		// a restart), nor in this one's after that client opened.
		if x.cfg.OpenSecond == nil {
			t.Skip("backend has no Config.OpenSecond")
		}
		want, err := x.s.KeywordSearch(ctx(t), f, "shared note", 10)
		require.NoError(t, err)
		require.Len(t, want, 1)
		second := x.cfg.OpenSecond(t, x.s)
		for name, c := range map[string]graph.Store{"the other client": second, "this client": x.s} {
			got, err := c.KeywordSearch(ctx(t), f, "shared note", 10)
			require.NoError(t, err)
			require.Len(t, got, 1, name)
			assert.InDelta(t, want[0].Score, got[0].Score, 1e-9, name)
		}
	})
	t.Run("Audit", func(t *testing.T) {
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{}, graph.Page{Limit: 100})
		require.NoError(t, err)
		require.Len(t, evs, 2, "the write's event, without its reason, and the erase's")
		for _, ev := range evs {
			noMarker(t, ev)
		}
	})
	t.Run("Outbox", func(t *testing.T) {
		items := x.outboxFor(t, id)
		require.Len(t, items, 1, "the pending upserts are gone, a delete is queued")
		assert.Equal(t, "delete", items[0].Op)
		require.NoError(t, x.s.AckOutbox(ctx(t), []string{items[0].ID}))
	})
	t.Run("Again", func(t *testing.T) {
		again, err := x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{id}})
		require.NoError(t, err)
		assert.Equal(t, graph.Erasure{}, again, "erasing twice erases nothing more")
		_, err = x.s.AddVersion(ctx(t), s, id, graph.VersionInput{Content: "back " + eraseMarker})
		assert.ErrorIs(t, err, graph.ErrConflict, "an erased memory takes no new version")
		assert.ErrorIs(t, x.s.Restore(ctx(t), s, id), graph.ErrConflict, "nor comes back")
	})
	t.Run("AllOrNothing", func(t *testing.T) {
		keep := x.create(t, memIn(s, "keep "+eraseMarker, "kept")).Memory.ID
		foreign := x.create(t, memIn(newScope(t), "foreign", "x")).Memory.ID
		_, err := x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{keep, foreign}})
		assert.ErrorIs(t, err, graph.ErrNotFound, "another tenant's memory")
		assert.Equal(t, graph.StatusActive, x.getMemory(t, f, keep).Status, "nothing of the batch was erased")
		_, err = x.s.Erase(ctx(t), s, graph.EraseInput{})
		assert.ErrorIs(t, err, graph.ErrInvalid)
	})
}

// testEraseChain: erasing a memory of a supersession chain leaves the chain's
// shape and every other memory's status as they were.
func testEraseChain(t *testing.T, x *suite) {
	s := newScope(t)
	all := in(s)
	all.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusErased}
	a := x.create(t, memIn(s, "a", "first "+eraseMarker)).Memory.ID
	bIn := memIn(s, "b", "second "+eraseMarker)
	bIn.Supersedes = a
	b := x.create(t, bIn).Memory.ID
	cIn := memIn(s, "c", "third")
	cIn.Supersedes = b
	c := x.create(t, cIn).Memory.ID

	_, err := x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{b}})
	require.NoError(t, err)
	assert.Equal(t, graph.StatusSuperseded, x.getMemory(t, all, a).Status, "a stays superseded")
	assert.Equal(t, b, x.getMemory(t, all, a).SupersededBy, "by the tombstone")
	assert.Equal(t, c, x.getMemory(t, all, b).SupersededBy, "the tombstone keeps its place")
	assert.Equal(t, graph.StatusActive, x.getMemory(t, all, c).Status)
	head, err := x.s.Resolve(ctx(t), all, a)
	require.NoError(t, err)
	assert.Equal(t, c, head.ID, "the chain still resolves through the tombstone")
	live := in(s)
	live.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded}
	head, err = x.s.Resolve(ctx(t), live, a)
	require.NoError(t, err)
	assert.Equal(t, a, head.ID, "a read that does not admit erased memories stops before the tombstone")

	_, err = x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{c}})
	require.NoError(t, err)
	assert.Equal(t, graph.StatusSuperseded, x.getMemory(t, all, a).Status, "erasing the head brings no old value back")
	got, err := x.s.KeywordSearch(ctx(t), in(s), "first", 10)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// noMarker asserts that v, printed with its field names, holds nothing of
// the erased content.
func noMarker(t *testing.T, v any) {
	t.Helper()
	assert.NotContains(t, strings.ToLower(fmt.Sprintf("%+v", v)), eraseMarker)
}

// testEraseEdges: an erase takes memories out of the write-time edges. A
// session's NEXT chain is re-linked around the erased memories (a1 -> a4
// after a2 and a3 go, so the walk still crosses the session), CO_OCCURS
// counts drop by the erased memory's pairs, and the walk finds nothing
// from an erased memory's entities.
//
//	before: a1 ─NEXT─> a2 ─NEXT─> a3 ─NEXT─> a4     after: a1 ─NEXT─> a4
func testEraseEdges(t *testing.T, x *suite) {
	s := newScope(t)
	f := graph.Filter{Scope: s, Reader: graph.Reader{AllUsers: true}}
	ids := map[string]string{}
	for i, name := range []string{"a1", "a2", "a3", "a4"} {
		in := memIn(s, name, "turn "+name+" "+eraseMarker, "Only"+name)
		in.Memory.SessionID = "s1"
		in.Memory.ValidFrom = base.Add(time.Duration(i) * time.Minute)
		ids[name] = x.create(t, in).Memory.ID
	}
	walk := func(req graph.WalkRequest) []string {
		t.Helper()
		req.Limit = 10
		got, err := x.s.Walk(ctx(t), f, req)
		require.NoError(t, err)
		var out []string
		for _, w := range got {
			out = append(out, w.Memory.ID)
		}
		return out
	}
	require.Contains(t, walk(graph.WalkRequest{Memories: map[string]float64{ids["a1"]: 1}}), ids["a2"], "precondition: NEXT")
	p := x.create(t, memIn(s, "p", "alpha beta", "Alpha", "Beta")).Memory.ID
	q := x.create(t, memIn(s, "q", "alpha beta gamma "+eraseMarker, "Alpha", "Beta", "Gamma")).Memory.ID

	_, err := x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{ids["a2"], ids["a3"], q}})
	require.NoError(t, err)
	got := walk(graph.WalkRequest{Memories: map[string]float64{ids["a1"]: 1}})
	assert.Contains(t, got, ids["a4"], "the session's chain is re-linked around the erased turns")
	assert.NotContains(t, got, ids["a2"])
	assert.NotContains(t, got, ids["a3"])
	assert.Empty(t, walk(graph.WalkRequest{Entities: map[string]float64{"onlya2": 1, "gamma": 1}}),
		"an erased memory's entities seed nothing")
	assert.Equal(t, []string{p}, walk(graph.WalkRequest{Entities: map[string]float64{"alpha": 1}}))

	if ec, ok := x.s.(graph.EdgeCounter); ok {
		co, err := ec.CoOccurrences(ctx(t), s.TenantID, "alpha")
		require.NoError(t, err)
		assert.Equal(t, map[string]int64{"beta": 1}, co, "q's pairs are taken off; gamma is gone")
	}

	// A new turn of the session follows a4, the newest that is left.
	in := memIn(s, "a5", "turn a5", "Onlya5")
	in.Memory.SessionID = "s1"
	in.Memory.ValidFrom = base.Add(10 * time.Minute)
	a5 := x.create(t, in).Memory.ID
	assert.Contains(t, walk(graph.WalkRequest{Memories: map[string]float64{ids["a4"]: 1}}), a5)
}
