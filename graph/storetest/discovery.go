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

func testCandidates(t *testing.T, x *suite) {
	fx := x.buildFixture(t, newScope(t))
	f := in(fx.scope)
	withType := func(types ...string) graph.Filter { g := f; g.Types = types; return g }
	withUser := func(u string) graph.Filter { g := f; g.UserID = u; return g }
	for _, c := range []struct {
		name   string
		f      graph.Filter
		names  []string
		limit  int
		want   []string
		sorted bool // want is ordered
	}{
		{"OneEntity", f, []string{"postgres"}, 10, []string{"m7", "m4", "m2", "m1"}, true},
		{"MostMatchedFirst", f, []string{"Go", "PG"}, 10, []string{"m7", "m1", "m4", "m3", "m2"}, true},
		{"Limit", f, []string{"go", "pg"}, 2, []string{"m7", "m1"}, true},
		{"AliasCaseInsensitive", f, []string{"K8S"}, 10, []string{"m5", "m3"}, true},
		{"NameCaseInsensitive", f, []string{"KUBERNETES"}, 10, []string{"m5", "m3"}, true},
		{"AliasWithCapitals", f, []string{"postgresql"}, 10, []string{"m7", "m4", "m2", "m1"}, true},
		{"UnknownEntity", f, []string{"cobol"}, 10, nil, true},
		{"NoNames", f, nil, 10, nil, true},
		{"FilterBeforeLimit", withType("doc"), []string{"postgres"}, 1, []string{"m2"}, true},
		{"FilterUser", withUser("u1"), []string{"postgres"}, 10, []string{"m7", "m4", "m1"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := x.s.Candidates(ctx(t), c.f, c.names, c.limit)
			require.NoError(t, err)
			assert.Equal(t, c.want, nilIfEmpty(fx.names(candIDs(got))))
		})
	}
	t.Run("Matched", func(t *testing.T) {
		got, err := x.s.Candidates(ctx(t), f, []string{"Go", "PG"}, 10)
		require.NoError(t, err)
		require.NotEmpty(t, got)
		assert.ElementsMatch(t, []string{"go", "postgres"}, got[0].Matched, "norm names, not the alias asked for")
		assert.Equal(t, []string{"postgres"}, got[len(got)-1].Matched)
		assert.NotEmpty(t, got[0].Memory.Title, "candidates carry the whole memory")
	})
}

func testNeighbours(t *testing.T, x *suite) {
	fx := x.buildFixture(t, newScope(t))
	f := in(fx.scope)
	docs := f
	docs.Types = []string{"doc"}
	for _, c := range []struct {
		name    string
		f       graph.Filter
		seeds   []string
		perSeed int
		want    map[string][]string
	}{
		{"OneSeed", f, []string{"m1"}, 10, map[string][]string{"m1": {"m7", "m3", "m4", "m2"}}},
		{"PerSeedLimit", f, []string{"m1"}, 2, map[string][]string{"m1": {"m7", "m3"}}},
		{"SeedsNeverNeighbours", f, []string{"m1", "m3"}, 10, map[string][]string{"m1": {"m7", "m4", "m2"}, "m3": {"m5", "m7"}}},
		{"DuplicateSeed", f, []string{"m3", "m3"}, 10, map[string][]string{"m3": {"m5", "m7", "m1"}}},
		{"Filter", docs, []string{"m1"}, 10, map[string][]string{"m1": {"m2"}}},
		{"NoEntities", f, []string{"m6"}, 10, map[string][]string{}},
		{"UnknownSeed", f, []string{"missing"}, 10, map[string][]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := x.s.Neighbours(ctx(t), c.f, fx.id(c.seeds...), c.perSeed)
			require.NoError(t, err)
			byName := map[string][]string{}
			for seed, ids := range neighbourIDs(got) {
				byName[fx.names([]string{seed})[0]] = fx.names(ids)
			}
			assert.Equal(t, c.want, byName)
		})
	}
	t.Run("Shared", func(t *testing.T) {
		got, err := x.s.Neighbours(ctx(t), f, fx.id("m1"), 1)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, fx.ids["m1"], got[0].SeedID)
		assert.Equal(t, []string{"go", "postgres"}, got[0].Shared)
		assert.InDelta(t, graph.EntityWeight(3)+graph.EntityWeight(4), got[0].Weight, 1e-9)
	})
	t.Run("Fanout", func(t *testing.T) { testNeighbourFanout(t, x) })
	t.Run("MentionsFollowWrites", func(t *testing.T) { testNeighbourMentions(t, x) })
}

// testNeighbourMentions: a neighbour's weight counts the memories that
// mention the shared entity as of the search, after a create, a new version
// and an erase by this client or another (another process on the store).
func testNeighbourMentions(t *testing.T, x *suite) {
	sc := newScope(t)
	f := in(sc)
	seed := x.create(t, memIn(sc, "seed", "about Heron", "Heron")).Memory.ID
	var others []string
	for i := range 3 {
		others = append(others, x.create(t, memIn(sc, fmt.Sprintf("heron %d", i), "about Heron", "Heron")).Memory.ID)
	}
	weight := func(want int64, msg string) {
		t.Helper()
		got, err := x.s.Neighbours(ctx(t), f, []string{seed}, 1)
		require.NoError(t, err)
		require.Len(t, got, 1, msg)
		assert.InDelta(t, graph.EntityWeight(want), got[0].Weight, 1e-9, msg)
	}
	weight(4, "four memories mention heron")
	weight(4, "again, unchanged")
	x.create(t, memIn(sc, "heron 3", "about Heron", "Heron"))
	weight(5, "after this client's create")
	stores, eraser := map[string]graph.Store{"this client": x.s}, x.s
	if x.cfg.OpenSecond != nil {
		eraser = x.cfg.OpenSecond(t, x.s)
		stores["another client"] = eraser
	}
	for name, w := range stores {
		_, err := w.AddVersion(ctx(t), sc, others[0], graph.VersionInput{Content: "about nothing"})
		require.NoError(t, err)
		weight(4, "after "+name+"'s new version without heron")
		_, err = w.AddVersion(ctx(t), sc, others[0], graph.VersionInput{Content: "about Heron again",
			Entities: []graph.EntityRef{{Name: "Heron"}}})
		require.NoError(t, err)
		weight(5, "after "+name+"'s new version with heron")
	}
	_, err := eraser.Erase(ctx(t), sc, graph.EraseInput{IDs: others[1:]})
	require.NoError(t, err)
	weight(3, "after the erase of two")
}

// testNeighbourFanout checks that a popular entity contributes only its
// graph.NeighbourFanout newest memories, that the filter applies inside that
// walk (older memories passing it are still found), and that a rare shared
// entity outranks a popular one.
func testNeighbourFanout(t *testing.T, x *suite) {
	s := newScope(t)
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	mem := func(i int, user string, ents ...string) graph.MemoryInput {
		in := memIn(s, fmt.Sprintf("m%03d", i), "content", ents...)
		in.Memory.UserID, in.Memory.CreatedAt = user, at(i)
		return in
	}
	// Oldest first: the rare neighbour (u1), five hub memories of u1, then
	// NeighbourFanout+10 hub memories of u2, then the seed.
	ins := []graph.MemoryInput{mem(0, "u1", "rare")}
	for i := 1; i <= 5; i++ {
		ins = append(ins, mem(i, "u1", "hub"))
	}
	n := graph.NeighbourFanout + 10
	for i := 6; i < 6+n; i++ {
		ins = append(ins, mem(i, "u2", "hub"))
	}
	ins = append(ins, mem(6+n, "u3", "hub", "rare"))
	created, err := x.s.CreateMemories(ctx(t), ins)
	require.NoError(t, err)
	id := func(i int) string { return created[i].Memory.ID }
	seed := id(len(created) - 1)

	got, err := x.s.Neighbours(ctx(t), in(s), []string{seed}, 1000)
	require.NoError(t, err)
	want := []string{id(0)} // rare first
	for i := 5 + n; len(want) < 1+graph.NeighbourFanout; i-- {
		want = append(want, id(i)) // then the newest hub memories only
	}
	assert.Equal(t, want, neighbourIDs(got)[seed], "fan-out")
	require.NotEmpty(t, got)
	assert.Equal(t, []string{"rare"}, got[0].Shared)
	assert.Greater(t, got[0].Weight, got[1].Weight, "a rare entity outweighs a popular one")

	u1 := in(s)
	u1.UserID = "u1"
	got, err = x.s.Neighbours(ctx(t), u1, []string{seed}, 1000)
	require.NoError(t, err)
	assert.Equal(t, []string{id(0), id(5), id(4), id(3), id(2), id(1)}, neighbourIDs(got)[seed],
		"the filter applies inside the walk, not after it")
}

func testKeywordSearch(t *testing.T, x *suite) {
	fx := x.buildFixture(t, newScope(t))
	f := in(fx.scope)
	for _, c := range []struct {
		name  string
		f     graph.Filter
		query string
		limit int
		want  []string // as a set
		first string   // expected best hit, if any
	}{
		{"Title", f, "postgres", 10, []string{"m1", "m2", "m4", "m7"}, ""},
		{"CaseInsensitive", f, "POSTGRES", 10, []string{"m1", "m2", "m4", "m7"}, ""},
		{"AnyTermMoreTermsRankHigher", f, "postgres tuning", 10, []string{"m1", "m2", "m4", "m7"}, "m2"},
		{"IndexText", f, "rollout", 10, []string{"m3"}, "m3"},
		{"ContentNotIndexedWhenIndexTextSet", f, "sauce", 10, nil, ""},
		{"ContentWhenNoIndexText", f, "tacos", 10, []string{"m6"}, "m6"},
		{"Limit", f, "postgres", 2, nil, ""},
		{"Filter", func() graph.Filter { g := f; g.Types = []string{"doc"}; return g }(), "postgres", 1, []string{"m2"}, "m2"},
		{"NoMatch", f, "zebra", 10, nil, ""},
		{"Punctuation", f, `"postgres" (tuning) * -`, 10, []string{"m1", "m2", "m4", "m7"}, "m2"},
		{"Empty", f, "", 10, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := x.s.KeywordSearch(ctx(t), c.f, c.query, c.limit)
			require.NoError(t, err)
			names := fx.names(scoredIDs(got))
			if c.name == "Limit" {
				assert.Len(t, names, 2)
				return
			}
			assert.ElementsMatch(t, c.want, names)
			if c.first != "" && assert.NotEmpty(t, names) {
				assert.Equal(t, c.first, names[0])
			}
			for i := 1; i < len(got); i++ {
				assert.GreaterOrEqual(t, got[i-1].Score, got[i].Score, "best first")
			}
		})
	}
	t.Run("FollowsCurrentVersion", func(t *testing.T) {
		_, err := x.s.AddVersion(ctx(t), fx.scope, fx.ids["m6"], graph.VersionInput{Content: "burritos on monday"})
		require.NoError(t, err)
		got, err := x.s.KeywordSearch(ctx(t), f, "tacos", 10)
		require.NoError(t, err)
		assert.Empty(t, got, "old version text is no longer indexed")
		got, err = x.s.KeywordSearch(ctx(t), f, "burritos", 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"m6"}, fx.names(scoredIDs(got)))
	})
	t.Run("FilterDropsBestMatches", func(t *testing.T) {
		// Another tenant's memories match far better and outnumber ours:
		// the filter must apply before the limit, however many it drops.
		theirs, ours := newScope(t), newScope(t)
		var ins []graph.MemoryInput
		for i := range 60 {
			ins = append(ins, memIn(theirs, fmt.Sprintf("zebra zebra %d", i), "zebra zebra zebra"))
		}
		for i := range 3 {
			ins = append(ins, memIn(ours, fmt.Sprintf("note %d", i), "a long note that mentions a zebra once among many other words"))
		}
		_, err := x.s.CreateMemories(ctx(t), ins)
		require.NoError(t, err)
		got, err := x.s.KeywordSearch(ctx(t), in(ours), "zebra", 2)
		require.NoError(t, err)
		require.Len(t, got, 2)
		for _, g := range got {
			assert.Equal(t, ours.TenantID, g.Memory.Scope.TenantID)
		}
	})
}

// testKeywordAnotherClient: the keyword index of a client that has
// searched a tenant follows another client's writes there (another
// process on the same store): a new memory, a new version and an erase
// reach its next search, with the scores of a client opened after them.
func testKeywordAnotherClient(t *testing.T, x *suite) {
	if x.cfg.OpenSecond == nil {
		t.Skip("backend has no Config.OpenSecond")
	}
	sc := newScope(t)
	f := in(sc)
	var ins []graph.MemoryInput
	for i := range 6 {
		ins = append(ins, memIn(sc, fmt.Sprintf("walrus note %d", i), fmt.Sprintf("the walrus sleeps %s", strings.Repeat("long ", i))))
	}
	for i := range 10 { // so that the query's terms are rare enough to weigh
		ins = append(ins, memIn(sc, fmt.Sprintf("penguin note %d", i), "the penguin swims"))
	}
	created, err := x.s.CreateMemories(ctx(t), ins)
	require.NoError(t, err)
	before, err := x.s.KeywordSearch(ctx(t), f, "walrus sleeps", 10)
	require.NoError(t, err)
	require.Len(t, before, 6, "this client has read the tenant")

	second := x.cfg.OpenSecond(t, x.s)
	_, err = second.CreateMemories(ctx(t), []graph.MemoryInput{memIn(sc, "walrus", "a walrus sleeps on the ice")})
	require.NoError(t, err)
	_, err = second.AddVersion(ctx(t), sc, created[0].Memory.ID, graph.VersionInput{Content: "the seal swims"})
	require.NoError(t, err)
	_, err = second.Erase(ctx(t), sc, graph.EraseInput{IDs: []string{created[1].Memory.ID}})
	require.NoError(t, err)

	fresh := x.cfg.OpenSecond(t, x.s)
	want, err := fresh.KeywordSearch(ctx(t), f, "walrus sleeps", 10)
	require.NoError(t, err)
	require.Len(t, want, 6, "5 of the first 6 (one erased; the rewritten one by its title), and the new one")
	got, err := x.s.KeywordSearch(ctx(t), f, "walrus sleeps", 10)
	require.NoError(t, err)
	require.Equal(t, scoredIDs(want), scoredIDs(got), "this client sees the other's writes")
	for i := range want {
		assert.InDelta(t, want[i].Score, got[i].Score, 1e-9, "with the statistics after them")
	}
	seal, err := x.s.KeywordSearch(ctx(t), f, "seal", 10)
	require.NoError(t, err)
	assert.Equal(t, []string{created[0].Memory.ID}, scoredIDs(seal), "the new version's text")
}

func testListFilters(t *testing.T, x *suite) {
	fx := x.buildFixture(t, newScope(t))
	f := func(edit func(f *graph.Filter)) graph.Filter { g := in(fx.scope); edit(&g); return g }
	for _, c := range []struct {
		name string
		f    graph.Filter
		want []string // newest first
	}{
		{"All", f(func(*graph.Filter) {}), []string{"m7", "m6", "m5", "m4", "m3", "m2", "m1"}},
		{"Type", f(func(f *graph.Filter) { f.Types = []string{"doc"} }), []string{"m2"}},
		{"Types", f(func(f *graph.Filter) { f.Types = []string{"doc", "decision"} }), []string{"m5", "m2"}},
		{"User", f(func(f *graph.Filter) { f.UserID = "u2" }), []string{"m6", "m5", "m2"}},
		{"Tag", f(func(f *graph.Filter) { f.Tags = []string{"backend"} }), []string{"m7", "m4", "m3", "m1"}},
		{"EveryTag", f(func(f *graph.Filter) { f.Tags = []string{"backend", "db"} }), []string{"m4"}},
		{"EntityType", f(func(f *graph.Filter) { f.EntityTypes = []string{"person"} }), []string{"m5"}},
		{"EntityTypes", f(func(f *graph.Filter) { f.EntityTypes = []string{"database", "person"} }), []string{"m7", "m5", "m4", "m2", "m1"}},
		{"CreatedRange", f(func(f *graph.Filter) {
			f.CreatedAfter, f.CreatedBefore = base.Add(2*time.Minute), base.Add(4*time.Minute)
		}), []string{"m4", "m3"}},
		{"Visibility", f(func(f *graph.Filter) { f.Visibility = []graph.Visibility{graph.VisibilityProject} }), []string{"m4", "m2"}},
		{"Subject", f(func(f *graph.Filter) { f.SubjectType, f.SubjectID = "team", "platform" }), []string{"m5"}},
		{"Project", f(func(f *graph.Filter) { f.ProjectID = "p1" }), []string{"m4", "m2"}},
		{"Session", f(func(f *graph.Filter) { f.SessionID = "s1" }), []string{"m6"}},
		{"StatusArchivedNone", f(func(f *graph.Filter) { f.Statuses = []graph.Status{graph.StatusArchived} }), nil},
		{"Combined", f(func(f *graph.Filter) { f.UserID, f.Tags, f.Types = "u1", []string{"backend"}, []string{"note"} }), []string{"m7", "m4", "m3", "m1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, nilIfEmpty(fx.names(x.listAll(t, c.f, 3))))
		})
	}
	t.Run("Statuses", func(t *testing.T) {
		require.NoError(t, x.s.Archive(ctx(t), fx.scope, fx.ids["m6"]))
		assert.Equal(t, []string{"m6"}, fx.names(x.listAll(t, f(func(f *graph.Filter) { f.Statuses = []graph.Status{graph.StatusArchived} }), 3)))
		assert.NotContains(t, fx.names(x.listAll(t, f(func(*graph.Filter) {}), 3)), "m6")
		got := x.listAll(t, f(func(f *graph.Filter) { f.Statuses = []graph.Status{graph.StatusArchived, graph.StatusActive} }), 3)
		assert.Len(t, got, 7)
	})
	t.Run("GetMemories", func(t *testing.T) {
		ms, err := x.s.GetMemories(ctx(t), in(fx.scope), []string{fx.ids["m3"], "missing", fx.ids["m1"]})
		require.NoError(t, err)
		assert.Equal(t, []string{"m3", "m1"}, fx.names(memIDs(ms)), "order of ids, missing skipped")
	})
}

func testValidAt(t *testing.T, x *suite) {
	s := newScope(t)
	mk := func(title string, from, to time.Time) string {
		in := memIn(s, title, "validity "+title)
		in.Memory.ValidFrom, in.Memory.ValidTo = from, to
		return x.create(t, in).Memory.ID
	}
	early := mk("early", base, base.Add(time.Hour))
	late := mk("late", base.Add(time.Hour), time.Time{})
	always := mk("always", time.Time{}, time.Time{})
	for _, c := range []struct {
		name string
		at   time.Time
		want []string
	}{
		{"BeforeAll", base.Add(-time.Second), []string{always}},
		{"FromInclusive", base, []string{early, always}},
		{"ToExclusive", base.Add(time.Hour), []string{late, always}},
		{"Later", base.Add(100 * time.Hour), []string{late, always}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := in(s)
			f.ValidAt = c.at
			assert.ElementsMatch(t, c.want, x.listAll(t, f, 10))
		})
	}
	f := in(s)
	assert.Len(t, x.listAll(t, f, 10), 3, "no ValidAt: no temporal restriction")
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
