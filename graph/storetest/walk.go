package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// The walk's fixture: a chain two hops long from the entity alpha, a rare
// and a common entity shared with the first hop, and a memory no path
// reaches. Every memory is u1's, readable by u1 (created a minute apart,
// w1 oldest).
//
//	alpha ── w1 ── bridge ── w2 ── gamma
//	         │ ╲
//	       rare  common ── c1, c2, c3, c4, c5
//	         │
//	         w3
//	                          w4 ── delta (unreached)
//
// Known answers: from alpha, w1 first, then w2 and w3 (one hop further
// through an entity two memories mention) above every c (through an entity
// six mention); w4 never.
type walkFixture struct {
	fixture
}

func (x *suite) buildWalkFixture(t *testing.T, s graph.Scope) walkFixture {
	t.Helper()
	rows := []struct {
		name string
		ents []string
	}{
		{"w1", []string{"Alpha", "Bridge", "Rare", "Common"}},
		{"w2", []string{"Bridge", "Gamma"}},
		{"w3", []string{"Rare"}},
		{"w4", []string{"Delta"}},
		{"c1", []string{"Common"}},
		{"c2", []string{"Common"}},
		{"c3", []string{"Common"}},
		{"c4", []string{"Common"}},
		{"c5", []string{"Common"}},
	}
	fx := walkFixture{fixture{scope: s, ids: map[string]string{}}}
	for i, r := range rows {
		in := memIn(s, "walk "+r.name, "content of "+r.name, r.ents...)
		in.Memory.UserID = "u1"
		in.Memory.CreatedAt = base.Add(time.Duration(i) * time.Minute)
		if r.name == "w1" {
			in.Version.Entities[0].Aliases = []string{"Alef"}
		}
		fx.ids[r.name] = x.create(t, in).Memory.ID
	}
	return fx
}

// walkNames runs a walk and returns the fixture names reached, in order.
func (x *suite) walkNames(t *testing.T, fx fixture, f graph.Filter, r graph.WalkRequest) ([]string, []graph.Walked) {
	t.Helper()
	got, err := x.s.Walk(ctx(t), f, r)
	require.NoError(t, err)
	ids := make([]string, len(got))
	for i, w := range got {
		ids[i] = w.Memory.ID
	}
	return nilIfEmpty(fx.names(ids)), got
}

func seedEntities(names ...string) map[string]float64 {
	out := map[string]float64{}
	for _, n := range names {
		out[n] = 1
	}
	return out
}

func testWalk(t *testing.T, x *suite) {
	fx := x.buildWalkFixture(t, newScope(t))
	u1 := graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}}
	t.Run("MultiHop", func(t *testing.T) {
		names, got := x.walkNames(t, fx.fixture, u1, graph.WalkRequest{Entities: seedEntities("alpha"), Limit: 20})
		require.Len(t, names, 8, "every memory a path reaches: %v", names)
		assert.Equal(t, "w1", names[0], "the memory the seed names first")
		assert.ElementsMatch(t, []string{"w2", "w3"}, names[1:3], "two hops through rare entities before the common one")
		assert.NotContains(t, names, "w4", "no path reaches w4")
		assert.ElementsMatch(t, []string{"c1", "c2", "c3", "c4", "c5"}, names[3:])
		for i := 1; i < len(got); i++ {
			assert.GreaterOrEqual(t, got[i-1].Score, got[i].Score, "scores descend")
		}
		assert.Greater(t, got[len(got)-1].Score, 0.0)
		assert.NotEmpty(t, got[0].Memory.Title, "walked memories are whole")
		w2 := got[fxIndex(fx.fixture, got, "w2")]
		assert.Equal(t, []string{"bridge"}, w2.Via, "w2 is reached through bridge")
		assert.LessOrEqual(t, len(got[0].Via), graph.WalkVia)
	})
	t.Run("Specificity", func(t *testing.T) {
		// From w1 itself: w3 shares a rare entity, the c's a common one.
		names, got := x.walkNames(t, fx.fixture, u1, graph.WalkRequest{Memories: map[string]float64{fx.ids["w1"]: 1}, Limit: 20})
		require.Contains(t, names, "w3")
		require.Contains(t, names, "c1")
		assert.Greater(t, got[fxIndex(fx.fixture, got, "w3")].Score, got[fxIndex(fx.fixture, got, "c1")].Score)
		assert.Equal(t, "w1", names[0], "a seed the graph confirms keeps its place")
	})
	t.Run("Seeds", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			r     graph.WalkRequest
			first string
		}{
			{"ByNormName", graph.WalkRequest{Entities: seedEntities("gamma"), Limit: 1}, "w2"},
			{"CaseInsensitive", graph.WalkRequest{Entities: seedEntities("GAMMA"), Limit: 1}, "w2"},
			{"ByAlias", graph.WalkRequest{Entities: seedEntities("ALEF"), Limit: 1}, "w1"},
			// From w3, its rare entity leads to w1.
			{"ByMemory", graph.WalkRequest{Memories: map[string]float64{fx.ids["w3"]: 1}, Limit: 1}, "w1"},
			// w4's one entity is its own: what reaches w4 is what it sent.
			{"ByMemoryAlone", graph.WalkRequest{Memories: map[string]float64{fx.ids["w4"]: 1}, Limit: 1}, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				names, _ := x.walkNames(t, fx.fixture, u1, c.r)
				if c.first == "" {
					assert.Empty(t, names)
					return
				}
				assert.Equal(t, []string{c.first}, names)
			})
		}
	})
	t.Run("Limit", func(t *testing.T) {
		names, _ := x.walkNames(t, fx.fixture, u1, graph.WalkRequest{Entities: seedEntities("alpha"), Limit: 3})
		require.Len(t, names, 3)
		assert.Equal(t, "w1", names[0])
		names, _ = x.walkNames(t, fx.fixture, u1, graph.WalkRequest{Entities: seedEntities("alpha")})
		assert.Nil(t, names, "limit 0 asks for nothing")
	})
	t.Run("Empty", func(t *testing.T) {
		for _, c := range []struct {
			name string
			r    graph.WalkRequest
		}{
			{"NoSeeds", graph.WalkRequest{Limit: 10}},
			{"UnknownEntity", graph.WalkRequest{Entities: seedEntities("cobol"), Limit: 10}},
			{"UnknownMemory", graph.WalkRequest{Memories: map[string]float64{"missing": 1}, Limit: 10}},
			{"ZeroWeight", graph.WalkRequest{Entities: map[string]float64{"alpha": 0}, Limit: 10}},
		} {
			t.Run(c.name, func(t *testing.T) {
				names, _ := x.walkNames(t, fx.fixture, u1, c.r)
				assert.Nil(t, names)
			})
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, r := range []graph.WalkRequest{
			{Entities: map[string]float64{"alpha": -1}, Limit: 1},
			{Entities: seedEntities("alpha"), Damping: 1, Limit: 1},
			{Entities: seedEntities("alpha"), Limit: -1},
		} {
			_, err := x.s.Walk(ctx(t), u1, r)
			assert.ErrorIs(t, err, graph.ErrInvalid, "%+v", r)
		}
		_, err := x.s.Walk(ctx(t), graph.Filter{Scope: fx.scope}, graph.WalkRequest{Entities: seedEntities("alpha"), Limit: 1})
		assert.ErrorIs(t, err, graph.ErrInvalid, "a read names its reader")
	})
	t.Run("OtherTenant", func(t *testing.T) {
		other := graph.Filter{Scope: newScope(t), Reader: graph.System}
		got, err := x.s.Walk(ctx(t), other, graph.WalkRequest{Entities: seedEntities("alpha"),
			Memories: map[string]float64{fx.ids["w1"]: 1}, Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, got)
	})
	t.Run("Bridges", func(t *testing.T) { testWalkBridges(t, x) })
	t.Run("Status", func(t *testing.T) { testWalkStatus(t, x) })
	t.Run("AdmittedCounts", func(t *testing.T) { testWalkAdmittedCounts(t, x) })
	t.Run("CommonEntity", func(t *testing.T) { testWalkCommonEntity(t, x) })
	t.Run("Repeated", func(t *testing.T) { testWalkRepeated(t, x) })
	t.Run("SecondClient", func(t *testing.T) { testWalkSecondClient(t, x) })
	t.Run("Warm", func(t *testing.T) { testWalkWarm(t, x) })
}

// fxIndex is the position of the fixture memory name in got (-1: absent).
func fxIndex(fx fixture, got []graph.Walked, name string) int {
	for i, w := range got {
		if w.Memory.ID == fx.ids[name] {
			return i
		}
	}
	return -1
}

// testWalkBridges: the walk traverses only the memories the filter admits.
// In each case a bridge memory B (mentioning the seed entity "seed" and
// "secret") is the only path to a readable memory R (mentioning
// "secret"); a filter that does not admit B must not reach R, and one that
// does (the control) must.
func testWalkBridges(t *testing.T, x *suite) {
	for _, c := range []struct {
		name    string
		bridge  func(m *graph.Memory)
		denied  func(f *graph.Filter) // makes the filter refuse B (not R)
		control func(f *graph.Filter) // makes it admit B
	}{
		{"OtherUsersPrivate",
			func(m *graph.Memory) { m.UserID, m.Visibility = "u2", graph.VisibilityUser },
			func(f *graph.Filter) {},
			func(f *graph.Filter) { f.Reader = graph.Reader{UserID: "u2"} }},
		{"OtherUsersSession",
			func(m *graph.Memory) { m.UserID, m.Visibility, m.SessionID = "u2", graph.VisibilitySession, "s2" },
			func(f *graph.Filter) {},
			func(f *graph.Filter) { f.Reader = graph.Reader{AllUsers: true} }},
		{"OtherRepo",
			func(m *graph.Memory) { m.Scope.OrgID, m.Scope.RepoID = "o", "r2" },
			func(f *graph.Filter) { f.Scope.OrgID, f.Scope.RepoID = "o", "r1" },
			func(f *graph.Filter) { f.Scope.OrgID, f.Scope.RepoID = "o", "r2" }},
		{"Visibility",
			func(m *graph.Memory) { m.Visibility = graph.VisibilityProject },
			func(f *graph.Filter) { f.Visibility = []graph.Visibility{graph.VisibilityGlobal} },
			func(f *graph.Filter) {
				f.Visibility = []graph.Visibility{graph.VisibilityGlobal, graph.VisibilityProject}
			}},
		{"UserFilter",
			func(m *graph.Memory) { m.UserID = "u2" },
			func(f *graph.Filter) { f.UserID = "u1" },
			func(f *graph.Filter) {}},
		{"Types",
			func(m *graph.Memory) { m.Type = "doc" },
			func(f *graph.Filter) { f.Types = []string{"note"} },
			func(f *graph.Filter) { f.Types = []string{"note", "doc"} }},
		{"Archived",
			func(m *graph.Memory) { m.Status = graph.StatusArchived },
			func(f *graph.Filter) {},
			func(f *graph.Filter) { f.Statuses = []graph.Status{graph.StatusActive, graph.StatusArchived} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScope(t)
			b := memIn(s, "bridge", "the bridge", "Seed", "Secret")
			b.Memory.UserID, b.Memory.Visibility = "u1", graph.VisibilityGlobal
			c.bridge(&b.Memory)
			r := memIn(s, "readable", "the readable one", "Secret")
			r.Memory.UserID, r.Memory.Visibility = "u1", graph.VisibilityGlobal
			bid, rid := x.create(t, b).Memory.ID, x.create(t, r).Memory.ID
			req := graph.WalkRequest{Entities: seedEntities("seed"), Limit: 10}
			f := graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u1"}}
			denied, control := f, f
			c.denied(&denied)
			c.control(&control)

			got, err := x.s.Walk(ctx(t), denied, req)
			require.NoError(t, err)
			assert.Empty(t, got, "nothing is reached without the bridge")
			// Nor from the bridge as a seed memory.
			got, err = x.s.Walk(ctx(t), denied, graph.WalkRequest{Memories: map[string]float64{bid: 1}, Limit: 10})
			require.NoError(t, err)
			assert.Empty(t, got, "an unadmitted seed memory seeds nothing")

			got, err = x.s.Walk(ctx(t), control, req)
			require.NoError(t, err)
			var ids []string
			for _, w := range got {
				ids = append(ids, w.Memory.ID)
			}
			assert.Equal(t, []string{bid, rid}, ids, "control: the bridge admitted, R is reached")
		})
	}
}

// testWalkStatus: superseded and archived memories are neither returned
// nor walked through unless the filter admits them; then a SUPERSEDES
// link carries the walk.
func testWalkStatus(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	old := x.create(t, memIn(s, "old", "the old one", "Topic", "Oldname")).Memory.ID
	newIn := memIn(s, "new", "the new one", "Topic")
	newIn.Supersedes = old
	newer := x.create(t, newIn).Memory.ID
	arch := x.create(t, memIn(s, "archived", "archived", "Topic")).Memory.ID
	require.NoError(t, x.s.Archive(ctx(t), s, arch))
	req := graph.WalkRequest{Entities: seedEntities("topic"), Limit: 10}

	got, err := x.s.Walk(ctx(t), f, req)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, newer, got[0].Memory.ID, "active only by default")

	all := f
	all.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}
	got, err = x.s.Walk(ctx(t), all, req)
	require.NoError(t, err)
	var ids []string
	for _, w := range got {
		ids = append(ids, w.Memory.ID)
		if w.Memory.ID == old {
			assert.Equal(t, graph.StatusSuperseded, w.Memory.Status)
		}
	}
	assert.ElementsMatch(t, []string{old, newer, arch}, ids)

	// From the old memory's own entity, the SUPERSEDES link reaches the
	// new memory ahead of the archived one (which only shares "topic").
	got, err = x.s.Walk(ctx(t), all, graph.WalkRequest{Entities: seedEntities("oldname"), Limit: 10})
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, []string{old, newer, arch}, []string{got[0].Memory.ID, got[1].Memory.ID, got[2].Memory.ID})
}

// testWalkAdmittedCounts: an entity's specificity counts only the memories
// the reader may read. S mentions x and y; X mentions x, Y mentions y; four
// private memories of u2 also mention x. For u1, x and y are equally rare
// and X and Y score alike; for a reader of every user, x is common and Y
// wins.
func testWalkAdmittedCounts(t *testing.T, x *suite) {
	s := newScope(t)
	mk := func(title, user string, vis graph.Visibility, ents ...string) string {
		in := memIn(s, title, title, ents...)
		in.Memory.UserID, in.Memory.Visibility = user, vis
		return x.create(t, in).Memory.ID
	}
	sid := mk("s", "u1", graph.VisibilityUser, "Ex", "Why")
	xid := mk("x", "u1", graph.VisibilityUser, "Ex")
	yid := mk("y", "u1", graph.VisibilityUser, "Why")
	for i := range 4 {
		mk(title("hidden", i), "u2", graph.VisibilityUser, "Ex")
	}
	req := graph.WalkRequest{Memories: map[string]float64{sid: 1}, Limit: 10}
	score := func(got []graph.Walked, id string) float64 {
		for _, w := range got {
			if w.Memory.ID == id {
				return w.Score
			}
		}
		require.Failf(t, "not reached", "memory %s", id)
		return 0
	}

	got, err := x.s.Walk(ctx(t), graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u1"}}, req)
	require.NoError(t, err)
	require.Len(t, got, 3, "u1 reads s, x and y only")
	assert.InDelta(t, score(got, xid), score(got, yid), 1e-9, "u2's private memories do not make x common for u1")

	got, err = x.s.Walk(ctx(t), in(s), req)
	require.NoError(t, err)
	assert.Greater(t, score(got, yid), score(got, xid), "for a reader of every user x is common")
}

// testWalkCommonEntity: an entity more than graph.WalkMaxDF admitted
// memories mention is not expanded, counted over what the reader may read:
// WalkMaxDF+1 memories mention "everywhere", all but one private to u2.
// (the one is u1's, global). For u2 the seed leads nowhere; for u1 it
// reaches its one memory.
func testWalkCommonEntity(t *testing.T, x *suite) {
	s := newScope(t)
	ins := make([]graph.MemoryInput, graph.WalkMaxDF+1)
	for i := range ins {
		ins[i] = memIn(s, title("common", i), "everywhere", "Everywhere")
		ins[i].Memory.UserID, ins[i].Memory.Visibility = "u2", graph.VisibilityUser
		ins[i].Memory.CreatedAt = base.Add(time.Duration(i) * time.Second)
	}
	ins[0].Memory.UserID, ins[0].Memory.Visibility = "u1", graph.VisibilityGlobal
	created, err := x.s.CreateMemories(ctx(t), ins)
	require.NoError(t, err)
	req := graph.WalkRequest{Entities: seedEntities("everywhere"), Limit: 10}

	got, err := x.s.Walk(ctx(t), graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u2"}}, req)
	require.NoError(t, err)
	assert.Empty(t, got, "u2 reads WalkMaxDF+1 memories of the entity: too common to expand")

	got, err = x.s.Walk(ctx(t), graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u1"}}, req)
	require.NoError(t, err)
	require.Len(t, got, 1, "u1 reads one memory of the entity")
	assert.Equal(t, created[0].Memory.ID, got[0].Memory.ID)
}
