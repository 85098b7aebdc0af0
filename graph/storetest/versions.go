package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

func testVersions(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	c := x.create(t, memIn(s, "evolving", "first text", "alpha"))
	id := c.Memory.ID
	assert.Equal(t, 1, c.Version.Number)

	v2, err := x.s.AddVersion(ctx(t), s, id, graph.VersionInput{Content: "second text",
		Entities: []graph.EntityRef{{Name: "beta"}}, Chunks: []graph.ChunkInput{{Key: "all", Start: 0, End: 6}}})
	require.NoError(t, err)
	assert.Equal(t, 2, v2.Number)
	assert.Equal(t, id, v2.MemoryID)
	v3, err := x.s.AddVersion(ctx(t), s, id, graph.VersionInput{Content: "third text", Entities: []graph.EntityRef{{Name: "gamma"}}})
	require.NoError(t, err)
	assert.Equal(t, 3, v3.Number)

	t.Run("AllVersions", func(t *testing.T) {
		vs, err := x.s.GetVersions(ctx(t), f, []string{c.Version.ID, v2.ID, v3.ID})
		require.NoError(t, err)
		require.Len(t, vs, 3)
		for i, want := range []string{"first text", "second text", "third text"} {
			assert.Equal(t, i+1, vs[i].Number, "oldest first")
			assert.Equal(t, want, vs[i].Content, "versions are immutable")
		}
		assert.Equal(t, []string{c.Version.ID, v2.ID, v3.ID}, []string{vs[0].ID, vs[1].ID, vs[2].ID})
	})
	t.Run("CurrentVersion", func(t *testing.T) {
		m := x.getMemory(t, f, id)
		assert.Equal(t, v3.ID, m.CurrentVersionID)
		assert.Equal(t, 3, m.VersionCount)
	})
	t.Run("ChunksPerVersion", func(t *testing.T) {
		cs, err := x.s.GetChunks(ctx(t), f, v2.ID)
		require.NoError(t, err)
		require.Len(t, cs, 1)
		assert.Equal(t, "all", cs[0].Key)
		cs, err = x.s.GetChunks(ctx(t), f, v3.ID)
		require.NoError(t, err)
		assert.Empty(t, cs)
	})
	t.Run("MentionsFollowCurrentVersion", func(t *testing.T) {
		got, err := x.s.Candidates(ctx(t), f, []string{"alpha", "beta"}, 10)
		require.NoError(t, err)
		assert.Empty(t, got, "old version's entities no longer find the memory")
		got, err = x.s.Candidates(ctx(t), f, []string{"gamma"}, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{id}, candIDs(got))
	})
	t.Run("GetVersions", func(t *testing.T) {
		vs, err := x.s.GetVersions(ctx(t), f, []string{v3.ID, "missing", c.Version.ID})
		require.NoError(t, err)
		require.Len(t, vs, 2, "missing ids are skipped")
		assert.Equal(t, v3.ID, vs[0].ID, "order of ids")
		assert.Equal(t, c.Version.ID, vs[1].ID)
	})
	t.Run("MissingMemory", func(t *testing.T) {
		_, err := x.s.AddVersion(ctx(t), s, "no-such-memory", graph.VersionInput{Content: "x"})
		assert.ErrorIs(t, err, graph.ErrNotFound)
	})
	t.Run("NotActive", func(t *testing.T) {
		ac := x.create(t, memIn(s, "to archive", "x"))
		a := ac.Memory.ID
		require.NoError(t, x.s.Archive(ctx(t), s, a))
		_, err := x.s.AddVersion(ctx(t), s, a, graph.VersionInput{Content: "y"})
		assert.ErrorIs(t, err, graph.ErrConflict)
		archived := f
		archived.Statuses = []graph.Status{graph.StatusArchived}
		m := x.getMemory(t, archived, a)
		assert.Equal(t, ac.Version.ID, m.CurrentVersionID, "no version added")
		assert.Equal(t, 1, m.VersionCount)
	})
}

func testSupersession(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	superseding := func(title, old string) graph.MemoryInput {
		in := memIn(s, title, title)
		in.Supersedes = old
		return in
	}
	a := x.create(t, memIn(s, "A", "a")).Memory.ID
	b := x.create(t, superseding("B", a)).Memory.ID
	c := x.create(t, superseding("C", b)).Memory.ID

	t.Run("ResolveChain", func(t *testing.T) {
		for _, id := range []string{a, b, c} {
			r, err := x.s.Resolve(ctx(t), f, id)
			require.NoError(t, err)
			assert.Equal(t, c, r.ID, "resolve %s", id)
		}
	})
	t.Run("States", func(t *testing.T) {
		ma, mb, mc := x.getMemory(t, f, a), x.getMemory(t, f, b), x.getMemory(t, f, c)
		assert.Equal(t, graph.StatusSuperseded, ma.Status)
		assert.Equal(t, b, ma.SupersededBy)
		assert.Equal(t, graph.StatusSuperseded, mb.Status)
		assert.Equal(t, c, mb.SupersededBy)
		assert.Equal(t, graph.StatusActive, mc.Status)
		assert.Equal(t, []string{c}, x.listAll(t, f, 10), "lists show active memories only by default")
		all := in(s)
		all.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded}
		assert.ElementsMatch(t, []string{a, b, c}, x.listAll(t, all, 10))
	})
	t.Run("Self", func(t *testing.T) {
		d := superseding("D", "")
		d.Memory.ID = graph.NewID()
		d.Supersedes = d.Memory.ID
		_, err := createOne(ctx(t), x.s, d)
		assert.Error(t, err, "a memory cannot supersede itself")
		assert.NotContains(t, x.listAll(t, f, 100), d.Memory.ID)
	})
	t.Run("NotActive", func(t *testing.T) {
		n := superseding("N", a) // a is already superseded
		n.Memory.ID = graph.NewID()
		_, err := createOne(ctx(t), x.s, n)
		assert.ErrorIs(t, err, graph.ErrConflict)
		assert.Equal(t, b, x.getMemory(t, f, a).SupersededBy)
		assert.NotContains(t, x.listAll(t, f, 100), n.Memory.ID, "refused write left nothing")
	})
	t.Run("CrossTenant", func(t *testing.T) {
		other := newScope(t)
		o := x.create(t, memIn(other, "O", "o")).Memory.ID
		in2 := memIn(s, "N3", "n3")
		in2.Memory.ID = graph.NewID()
		in2.Supersedes = o
		_, err := createOne(ctx(t), x.s, in2)
		assert.ErrorIs(t, err, graph.ErrNotFound)
		assert.NotContains(t, x.listAll(t, f, 100), in2.Memory.ID)
		assert.Equal(t, graph.StatusActive, x.getMemory(t, in(other), o).Status)
	})
	t.Run("MissingIsNotFound", func(t *testing.T) {
		_, err := x.s.Resolve(ctx(t), f, "missing")
		assert.ErrorIs(t, err, graph.ErrNotFound)
		_, err = x.s.GetMemory(ctx(t), f, "missing")
		assert.ErrorIs(t, err, graph.ErrNotFound)
	})
}

func testFindActiveByKey(t *testing.T, x *suite) {
	s := newScope(t)
	s.OrgID = "o1"
	mk := func(scope graph.Scope, user, typ, key string) string {
		in := memIn(scope, "k "+key, "content "+key)
		in.Memory.UserID, in.Memory.Type, in.Memory.CanonicalKey = user, typ, key
		return x.create(t, in).Memory.ID
	}
	want := mk(s, "u1", "note", "Go-Version-Pinned")
	mk(graph.Scope{TenantID: s.TenantID}, "u1", "note", "Go-Version-Tenant") // broader scope, other key
	wider := mk(graph.Scope{TenantID: s.TenantID}, "u1", "note", "Go-Version-Shared")
	otherTenant := graph.Scope{TenantID: "t" + graph.NewID(), OrgID: "o1"}
	mk(otherTenant, "u1", "note", "Go-Version-Pinned")

	for _, c := range []struct {
		name string
		ns   graph.Namespace
		key  string
		want string // "" means ErrNotFound
	}{
		{"Exact", graph.Namespace{Scope: s, UserID: "u1", Type: "note"}, "Go-Version-Pinned", want},
		{"OtherUser", graph.Namespace{Scope: s, UserID: "u2", Type: "note"}, "Go-Version-Pinned", ""},
		{"OtherType", graph.Namespace{Scope: s, UserID: "u1", Type: "doc"}, "Go-Version-Pinned", ""},
		{"OtherRepo", graph.Namespace{Scope: graph.Scope{TenantID: s.TenantID, OrgID: "o1", RepoID: "r1"}, UserID: "u1", Type: "note"}, "Go-Version-Pinned", ""},
		{"ScopeIsExactNotInherited", graph.Namespace{Scope: s, UserID: "u1", Type: "note"}, "Go-Version-Shared", ""},
		{"BroaderScopeExact", graph.Namespace{Scope: graph.Scope{TenantID: s.TenantID}, UserID: "u1", Type: "note"}, "Go-Version-Shared", wider},
		{"OtherTenantSameKey", graph.Namespace{Scope: graph.Scope{TenantID: "t" + graph.NewID(), OrgID: "o1"}, UserID: "u1", Type: "note"}, "Go-Version-Pinned", ""},
		{"UnknownKey", graph.Namespace{Scope: s, UserID: "u1", Type: "note"}, "Nope", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := x.s.FindActiveByKey(ctx(t), c.ns, c.key)
			if c.want == "" {
				assert.ErrorIs(t, err, graph.ErrNotFound)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, m.ID)
		})
	}
	t.Run("OnlyActive", func(t *testing.T) {
		require.NoError(t, x.s.Archive(ctx(t), s, want))
		_, err := x.s.FindActiveByKey(ctx(t), graph.Namespace{Scope: s, UserID: "u1", Type: "note"}, "Go-Version-Pinned")
		assert.ErrorIs(t, err, graph.ErrNotFound)
	})
}

func testArchiveAndTouch(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	id := x.create(t, memIn(s, "touch me", "content")).Memory.ID
	assert.Equal(t, int64(1), x.getMemory(t, f, id).AccessCount, "new memories start at access_count 1")

	at := base.Add(5 * time.Hour)
	other := newScope(t)
	oid := x.create(t, memIn(other, "other", "content")).Memory.ID
	require.NoError(t, x.s.Touch(ctx(t), s, []string{id, oid, "missing"}, at))
	require.NoError(t, x.s.Touch(ctx(t), s, []string{id}, at))
	m := x.getMemory(t, f, id)
	assert.Equal(t, int64(3), m.AccessCount)
	x.sameTime(t, at, m.LastAccessed, "last_accessed")
	assert.Equal(t, int64(1), x.getMemory(t, in(other), oid).AccessCount, "ids outside the scope are ignored")

	require.NoError(t, x.s.Archive(ctx(t), s, id))
	assert.Equal(t, graph.StatusArchived, x.getMemory(t, f, id).Status, "direct fetch sees archived memories")
	assert.Empty(t, x.listAll(t, f, 10))
	assert.ErrorIs(t, x.s.Archive(ctx(t), s, id), graph.ErrConflict, "only active memories are archived")
	assert.ErrorIs(t, x.s.Archive(ctx(t), s, oid), graph.ErrNotFound)
}
