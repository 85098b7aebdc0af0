package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testSessionNext: a memory of a session follows the session's newest
// memory (graph.EventTime, then created_at, then write order) by a NEXT
// edge, which the walk follows; never across users, sessions or scopes.
// Every memory mentions an entity of its own, so only NEXT links them.
//
//	session s1, u1:  a1 ─NEXT─> a2 ─NEXT─> a3     (a1, a2 in one batch; a3 later)
//	s1, u2: b   s2, u1: c   s1, u1 in repo o/r: d  (times between a2's and a3's)
//	session s3, u1:  x (t+5) ─NEXT─> y (t+4), x ─NEXT─> z (t+6): z follows the
//	                 newest by event time, x, not the last written, y
func testSessionNext(t *testing.T, x *suite) {
	s := newScope(t)
	repo := graph.Scope{TenantID: s.TenantID, OrgID: "o", RepoID: "r"}
	mk := func(name, session, user string, sc graph.Scope, minute int) graph.MemoryInput {
		in := memIn(sc, name, "turn "+name, "Only"+name)
		in.Memory.SessionID, in.Memory.UserID, in.Memory.Visibility = session, user, graph.VisibilityUser
		in.Memory.ValidFrom = base.Add(time.Duration(minute) * time.Minute)
		return in
	}
	ids := map[string]string{}
	write := func(ins ...graph.MemoryInput) {
		t.Helper()
		got, err := x.s.CreateMemories(ctx(t), ins)
		require.NoError(t, err)
		for i, c := range got {
			ids[ins[i].Memory.Title] = c.Memory.ID
		}
	}
	write(mk("a1", "s1", "u1", s, 1), mk("a2", "s1", "u1", s, 2))
	write(mk("b", "s1", "u2", s, 3), mk("c", "s2", "u1", s, 3), mk("d", "s1", "u1", repo, 3))
	write(mk("a3", "s1", "u1", s, 4))
	write(mk("x", "s3", "u1", s, 5), mk("y", "s3", "u1", s, 4))
	write(mk("z", "s3", "u1", s, 6))
	f := graph.Filter{Scope: s, Reader: graph.Reader{AllUsers: true, Subscopes: true}}
	names := func(seed string) ([]string, []graph.Walked) {
		t.Helper()
		got, err := x.s.Walk(ctx(t), f, graph.WalkRequest{Memories: map[string]float64{ids[seed]: 1}, Limit: 20})
		require.NoError(t, err)
		rev := map[string]string{}
		for n, id := range ids {
			rev[id] = n
		}
		var out []string
		for _, w := range got {
			out = append(out, rev[w.Memory.ID])
		}
		return out, got
	}
	t.Run("Chain", func(t *testing.T) {
		got, ws := names("a1")
		assert.Equal(t, []string{"a1", "a2", "a3"}, got, "a chain in session order, nothing of other users, sessions or scopes")
		require.Len(t, ws, 3)
		assert.Greater(t, ws[1].Score, ws[2].Score, "a3 is two steps from a1, through a2")
	})
	t.Run("BothWays", func(t *testing.T) {
		got, ws := names("a2")
		require.Len(t, got, 3)
		assert.Equal(t, "a2", got[0])
		assert.ElementsMatch(t, []string{"a1", "a3"}, got[1:])
		assert.InDelta(t, ws[1].Score, ws[2].Score, 1e-9, "a2's neighbours on either side")
	})
	t.Run("Alone", func(t *testing.T) {
		for _, n := range []string{"b", "c", "d"} {
			got, _ := names(n)
			assert.Empty(t, got, "%s has no other memory in its session, nor an entity another shares: nothing is reached, and the seed gets back only what it sent", n)
		}
	})
	t.Run("EventTime", func(t *testing.T) {
		got, ws := names("z")
		require.Equal(t, []string{"z", "x", "y"}, got, "z follows x, the newest by event time, and y hangs off x")
		assert.Greater(t, ws[1].Score, ws[2].Score)
	})
}

// testCoOccurs: CO_OCCURS counts the memories mentioning both entities of
// a pair (among each memory's first graph.MaxCoOccurEntities by norm
// name), follows a new version's entities, and MENTIONS count the chunks
// that mention their entity.
func testCoOccurs(t *testing.T, x *suite) {
	ec, ok := x.s.(graph.EdgeCounter)
	if !ok {
		t.Skip("the store has no graph.EdgeCounter")
	}
	s := newScope(t)
	x.create(t, memIn(s, "m1", "one", "Alpha", "Beta", "Gamma"))
	m2 := x.create(t, memIn(s, "m2", "two", "Beta", "alpha")).Memory.ID
	var many []string
	for i := range graph.MaxCoOccurEntities + 2 {
		many = append(many, fmt.Sprintf("E%02d", i))
	}
	x.create(t, memIn(s, "m3", "many", many...))
	counts := func(e string) map[string]int64 {
		t.Helper()
		got, err := ec.CoOccurrences(ctx(t), s.TenantID, e)
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, map[string]int64{"beta": 2, "gamma": 1}, counts("alpha"))
	assert.Equal(t, map[string]int64{"alpha": 2, "gamma": 1}, counts("beta"))
	assert.Len(t, counts("e00"), graph.MaxCoOccurEntities-1, "the first 12 entities pair up")
	assert.Empty(t, counts(fmt.Sprintf("e%02d", graph.MaxCoOccurEntities)), "the 13th does not")

	_, err := x.s.AddVersion(ctx(t), s, m2, graph.VersionInput{Content: "two again",
		Entities: []graph.EntityRef{{Name: "Alpha"}, {Name: "Delta"}}})
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"beta": 1, "gamma": 1, "delta": 1}, counts("alpha"), "the new version's pairs replace the old")

	other, err := ec.CoOccurrences(ctx(t), newScope(t).TenantID, "alpha")
	require.NoError(t, err)
	assert.Empty(t, other, "another tenant")

	in := memIn(s, "chunked", "# a\nx\n# b\nx y\n# c\nz", "X", "Y", "Z", "W")
	in.Version.Chunks = []graph.ChunkInput{
		{Key: "a", Start: 0, End: 5, Entities: []graph.EntityRef{{Name: "X"}}},
		{Key: "b", Start: 6, End: 13, Entities: []graph.EntityRef{{Name: "X"}, {Name: "Y"}}},
		{Key: "c", Start: 14, End: 19, Entities: []graph.EntityRef{{Name: "Z"}}},
	}
	id := x.create(t, in).Memory.ID
	got, err := ec.MentionCounts(ctx(t), s.TenantID, id)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"x": 2, "y": 1, "z": 1, "w": 1}, got, "chunks mentioning each entity, at least 1")
}
