package sqlite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// TestWalkCacheByWriteKind: each kind of write ends the cached walk reads
// it may change and no other (store.go, writeKind). A graph write starts
// every list over; Touch (a read counted: every read_context) keeps the
// posting lists and mentions but not the memory rows, which hold the
// counters; a context receipt, an audit event or the outbox's writes keep
// everything. A write or a read counted in another tenant keeps every
// list and row of this one (writeIn); a write that names no tenant (a
// curation write) ends them wherever it writes. A walk after each answers
// as the store is (storetest Walk/Repeated checks the rows' counters,
// Walk/SecondClient another client's writes).
func TestWalkCacheByWriteKind(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	sc := graph.Scope{TenantID: "t"}
	in := func(title string) graph.MemoryInput {
		return graph.MemoryInput{
			Memory:  graph.Memory{Scope: sc, UserID: "u1", Type: "note", Title: title, CreatedAt: time.Now().UTC()},
			Version: graph.VersionInput{Content: title + " about Epoch", Entities: []graph.EntityRef{{Name: "Epoch", Type: "concept"}}},
		}
	}
	created, err := s.CreateMemories(ctx, []graph.MemoryInput{in("first"), in("second")})
	require.NoError(t, err)
	f := graph.Filter{Scope: sc, Reader: graph.Reader{UserID: "u1"}}
	req := graph.WalkRequest{Entities: map[string]float64{"epoch": 1}, Limit: 10}
	// walk walks and returns the sequences the cache's lists and rows are
	// held at afterwards, and the first memory's access count as walked.
	walk := func() (lists, rows uint64, count int64) {
		t.Helper()
		ws, err := s.Walk(ctx, f, req)
		require.NoError(t, err)
		require.Len(t, ws, 2)
		for _, w := range ws {
			if w.Memory.ID == created[0].Memory.ID {
				count = int64(w.Memory.AccessCount)
			}
		}
		return s.walks.postings.parts["t"].at, s.walks.mems.parts["t"].at, count
	}
	lists0, rows0, count0 := walk()
	require.NotZero(t, lists0)

	_, err = s.CreateContextReceipt(ctx, graph.ContextReceipt{Scope: sc, PrincipalID: "u1", Query: "q", CreatedAt: time.Now().UTC()})
	require.NoError(t, err)
	require.NoError(t, s.AppendAudit(ctx, graph.AuditEvent{Scope: sc, Action: "ingest", SubjectKind: "Memory",
		SubjectID: created[0].Memory.ID, ActorID: "u1", Outcome: "rejected", CreatedAt: time.Now().UTC()}))
	_, err = s.DueOutbox(ctx, time.Now().UTC(), time.Minute, 10) // a claim, as a server makes every 5 s
	require.NoError(t, err)
	require.NoError(t, s.AckOutbox(ctx, []string{"no-such-item"}))
	lists, rows, count := walk()
	assert.Equal(t, lists0, lists, "a receipt, an audit event and the outbox's writes keep the lists")
	assert.Equal(t, rows0, rows, "and the rows")
	assert.Equal(t, count0, count)

	require.NoError(t, s.Touch(ctx, sc, []string{created[0].Memory.ID}, time.Now().UTC()))
	lists, rows, count = walk()
	assert.Equal(t, lists0, lists, "a read counted keeps the lists")
	assert.Greater(t, rows, rows0, "a read counted ends the rows")
	assert.Equal(t, count0+1, count, "the walk shows the counted read")

	other := graph.Scope{TenantID: "other"}
	elsewhere, err := s.CreateMemories(ctx, []graph.MemoryInput{{
		Memory:  graph.Memory{Scope: other, Type: "note", Title: "elsewhere", CreatedAt: time.Now().UTC()},
		Version: graph.VersionInput{Content: "another tenant's write about Epoch", Entities: []graph.EntityRef{{Name: "Epoch", Type: "concept"}}},
	}})
	require.NoError(t, err)
	_, err = s.AddVersion(ctx, other, elsewhere[0].Memory.ID, graph.VersionInput{Content: "and its second version"})
	require.NoError(t, err)
	require.NoError(t, s.Touch(ctx, other, []string{elsewhere[0].Memory.ID}, time.Now().UTC()))
	lists1, rows1, _ := walk()
	assert.Equal(t, lists, lists1, "another tenant's writes keep the lists")
	assert.Equal(t, rows, rows1, "and the rows")

	_, err = s.AddVersion(ctx, sc, created[1].Memory.ID, graph.VersionInput{Content: "second about Epoch, again",
		Entities: []graph.EntityRef{{Name: "Epoch", Type: "concept"}}})
	require.NoError(t, err)
	lists2, rows2, _ := walk()
	assert.Greater(t, lists2, lists1, "a write in the tenant ends the lists")
	assert.Greater(t, rows2, rows1, "and the rows")

	require.NoError(t, s.Archive(ctx, other, elsewhere[0].Memory.ID))
	lists3, rows3, _ := walk()
	assert.Greater(t, lists3, lists2, "a write naming no tenant ends the lists")
	assert.Greater(t, rows3, rows2, "and the rows")
}

// TestPostingValid: the first n memories valid at an instant, and whether
// they are what the store would read under ValidAt. The result may share
// the cached list's array; appending to it must not write into the cache.
func TestPostingValid(t *testing.T) {
	m := func(rid, from, to int64) postingMem { return postingMem{rid: rid, from: from, to: to} }
	open := []postingMem{m(1, 0, 0), m(2, 5, 0), m(3, 0, 20), m(4, 0, 0)}
	windowed := []postingMem{m(1, 0, 0), m(2, 50, 0), m(3, 0, 20), m(4, 0, 0)}
	for _, tc := range []struct {
		name     string
		p        posting
		at       int64
		n        int
		want     []int64
		complete bool
	}{
		{"no instant: the first n", posting{mems: open}, 0, 2, []int64{1, 2}, true},
		{"all valid: the first n", posting{mems: open}, 10, 3, []int64{1, 2, 3}, true},
		{"one not yet valid is skipped", posting{mems: windowed}, 10, 3, []int64{1, 3, 4}, true},
		{"one expired is skipped", posting{mems: open}, 30, 3, []int64{1, 2, 4}, true},
		{"fewer than n in a partial list: read again", posting{mems: windowed}, 30, 3, []int64{1, 4}, false},
		{"fewer than n in a complete list: all there is", posting{mems: windowed, complete: true}, 30, 3, []int64{1, 4}, true},
		{"a partial list shorter than n", posting{mems: open[:2]}, 10, 3, []int64{1, 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]postingMem(nil), tc.p.mems...)
			got, ok := tc.p.valid(tc.at, tc.n)
			var rids []int64
			for _, x := range got {
				rids = append(rids, x.rid)
			}
			assert.Equal(t, tc.want, rids)
			assert.Equal(t, tc.complete, ok)
			_ = append(got, m(99, 0, 0))
			assert.Equal(t, before, tc.p.mems, "the cached list is unchanged")
		})
	}
}
