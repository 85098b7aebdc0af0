package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// now is the fixed clock of the search tests.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// searchFixture is a real SQLite store with an engine on top and a set of
// memories, all about postgres, that differ in one attribute each:
//
//	name        differs by
//	base        -                       (user u1, note, tag db, visibility user)
//	other-user  user u2
//	doc         type document
//	tagged      tags db + ops
//	project     visibility project, project p1
//	session     visibility session, session s1
//	subject     subject team/platform
//	old         created 30 days ago
//	expired     valid_to yesterday
//	archived    archived
//	superseded  superseded by successor
//	successor   supersedes superseded
//	redis       also mentions redis (entity type database)
//
// plus "foreign": the same text in another tenant.
type searchFixture struct {
	t     *testing.T
	store graphtest.Store
	eng   *engine.Engine
	scope graph.Scope
	ids   map[string]string
	names map[string]string
}

func newSearchFixture(t *testing.T) *searchFixture {
	t.Helper()
	ctx := context.Background()
	store := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	eng, err := engine.New(engine.Options{Store: store, Policy: holder, Now: func() time.Time { return now }})
	require.NoError(t, err)
	fx := &searchFixture{t: t, store: store, eng: eng, scope: graph.Scope{TenantID: "t1"},
		ids: map[string]string{}, names: map[string]string{}}
	pg := graph.EntityRef{Name: "PostgreSQL", Type: "tool", Aliases: []string{"postgres"}}
	redis := graph.EntityRef{Name: "Redis", Type: "database"}
	supersedes := "" // the memory the next add supersedes
	add := func(name string, edit func(m *graph.Memory), ents ...graph.EntityRef) {
		t.Helper()
		m := graph.Memory{Scope: fx.scope, UserID: "u1", Type: "note", Title: name, Tags: []string{"db"},
			Importance: 0.5, Visibility: graph.VisibilityUser, CreatedAt: now.Add(-time.Hour)}
		if edit != nil {
			edit(&m)
		}
		c, err := graphtest.CreateMemory(ctx, store, graph.MemoryInput{Memory: m, Supersedes: supersedes, Version: graph.VersionInput{
			Content: "postgres connection pool settings for " + name, Entities: append([]graph.EntityRef{pg}, ents...)}})
		require.NoError(t, err)
		supersedes = ""
		fx.ids[name], fx.names[c.Memory.ID] = c.Memory.ID, name
	}
	add("base", nil)
	add("other-user", func(m *graph.Memory) { m.UserID = "u2" })
	add("doc", func(m *graph.Memory) { m.Type = "document" })
	add("tagged", func(m *graph.Memory) { m.Tags = []string{"db", "ops"} })
	add("project", func(m *graph.Memory) { m.Visibility, m.ProjectID = graph.VisibilityProject, "p1" })
	add("session", func(m *graph.Memory) { m.Visibility, m.SessionID = graph.VisibilitySession, "s1" })
	add("subject", func(m *graph.Memory) { m.SubjectType, m.SubjectID = "team", "platform" })
	add("old", func(m *graph.Memory) { m.CreatedAt = now.AddDate(0, 0, -30) })
	add("expired", func(m *graph.Memory) { m.ValidTo = now.Add(-24 * time.Hour) })
	add("archived", nil)
	add("superseded", nil)
	supersedes = fx.ids["superseded"]
	add("successor", nil)
	add("redis", nil, redis)
	require.NoError(t, store.Archive(ctx, fx.scope, fx.ids["archived"]))
	// The same memory in another tenant.
	c, err := graphtest.CreateMemory(ctx, store, graph.MemoryInput{
		Memory:  graph.Memory{Scope: graph.Scope{TenantID: "t2"}, UserID: "u1", Type: "note", Title: "foreign", CreatedAt: now.Add(-time.Hour)},
		Version: graph.VersionInput{Content: "postgres connection pool settings for foreign", Entities: []graph.EntityRef{pg}}})
	require.NoError(t, err)
	fx.names[c.Memory.ID] = "foreign"
	return fx
}

func (fx *searchFixture) principal(roles ...string) graph.Principal {
	if len(roles) == 0 {
		roles = []string{"reader"}
	}
	return graph.Principal{ID: "p", UserID: "u1", Roles: roles, Scope: fx.scope}
}

// search returns the fixture names of the results, in order.
func (fx *searchFixture) search(r engine.SearchRequest, roles ...string) []string {
	fx.t.Helper()
	resp := fx.searchResp(r, roles...)
	out := make([]string, 0, len(resp.Results))
	for _, res := range resp.Results {
		out = append(out, fx.names[res.Memory.ID])
	}
	return out
}

func (fx *searchFixture) searchResp(r engine.SearchRequest, roles ...string) engine.SearchResponse {
	fx.t.Helper()
	if r.Query == "" {
		r.Query = "postgres connection pool"
	}
	if r.Limit == 0 {
		r.Limit = 50
	}
	resp, err := fx.eng.Search(context.Background(), fx.principal(roles...), r)
	require.NoError(fx.t, err)
	return resp
}

func (fx *searchFixture) edit(kind graph.EditKind, target string, mod func(e *graph.Edit)) {
	fx.t.Helper()
	ctx := context.Background()
	e := graph.Edit{Scope: fx.scope, Kind: kind, TargetMemoryID: fx.ids[target], Reason: "test", CreatedBy: "lib"}
	if mod != nil {
		mod(&e)
	}
	e, err := fx.store.CreateEdit(ctx, e)
	require.NoError(fx.t, err)
	_, err = fx.store.DecideEdit(ctx, fx.scope, e.ID, graph.EditApproved, "lib2", now)
	require.NoError(fx.t, err)
}

// active is every fixture memory a plain search by u1 sees (other-user is
// u2's private memory).
var active = []string{"base", "doc", "tagged", "project", "session", "subject", "old", "successor", "redis"}

func TestSearchFilters(t *testing.T) {
	fx := newSearchFixture(t)
	tests := []struct {
		name  string
		req   engine.SearchRequest
		want  []string
		roles []string
	}{
		{"no filter: active, valid, own tenant, own or shared", engine.SearchRequest{}, active, nil},
		{"read_all_users sees every user's", engine.SearchRequest{}, append(slices.Clone(active), "other-user"), []string{"admin"}},
		{"user", engine.SearchRequest{UserID: "u2"}, []string{"other-user"}, []string{"admin"}},
		{"user narrows, never widens", engine.SearchRequest{UserID: "u2"}, []string{}, nil},
		{"type", engine.SearchRequest{Types: []string{"document"}}, []string{"doc"}, nil},
		{"tags (all required)", engine.SearchRequest{Tags: []string{"db", "ops"}}, []string{"tagged"}, nil},
		{"visibility", engine.SearchRequest{Visibility: []graph.Visibility{graph.VisibilityProject}}, []string{"project"}, nil},
		{"project", engine.SearchRequest{ProjectID: "p1"}, []string{"project"}, nil},
		{"session", engine.SearchRequest{SessionID: "s1"}, []string{"session"}, nil},
		{"subject", engine.SearchRequest{SubjectType: "team", SubjectID: "platform"}, []string{"subject"}, nil},
		{"entity type", engine.SearchRequest{EntityTypes: []string{"database"}}, []string{"redis"}, nil},
		{"days back", engine.SearchRequest{DaysBack: 7}, without(active, "old"), nil},
		{"created before", engine.SearchRequest{CreatedBefore: now.AddDate(0, 0, -7)}, []string{"old"}, nil},
		{"created after", engine.SearchRequest{CreatedAfter: now.AddDate(0, 0, -7)}, without(active, "old"), nil},
		{"include archived", engine.SearchRequest{IncludeArchived: true}, append(slices.Clone(active), "archived"), nil},
		{"include expired", engine.SearchRequest{IncludeExpired: true}, append(slices.Clone(active), "expired"), nil},
		{"keyword mode filters too", engine.SearchRequest{Mode: "keyword", UserID: "u2"}, []string{"other-user"}, []string{"admin"}},
		{"hybrid mode filters too", engine.SearchRequest{Mode: "hybrid", Types: []string{"document"}}, []string{"doc"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ElementsMatch(t, tc.want, fx.search(tc.req, tc.roles...))
		})
	}
	t.Run("superseded only when asked, and after its successor", func(t *testing.T) {
		got := fx.search(engine.SearchRequest{IncludeSuperseded: true})
		require.Contains(t, got, "superseded")
		assert.Less(t, slices.Index(got, "successor"), slices.Index(got, "superseded"))
	})
	t.Run("tenant boundary", func(t *testing.T) {
		for _, mode := range []string{"graph", "keyword", "hybrid"} {
			assert.NotContains(t, fx.search(engine.SearchRequest{Mode: mode}), "foreign", mode)
		}
		_, err := fx.eng.Search(context.Background(), fx.principal(), engine.SearchRequest{
			Query: "postgres", Scope: &graph.Scope{TenantID: "t2"}})
		assert.ErrorIs(t, err, graph.ErrForbidden)
	})
	t.Run("quarantine needs the permission", func(t *testing.T) {
		_, err := fx.eng.Search(context.Background(), fx.principal("reader"), engine.SearchRequest{Query: "postgres", IncludeQuarantined: true})
		assert.ErrorIs(t, err, graph.ErrForbidden)
	})
}

func TestSearchEdits(t *testing.T) {
	fx := newSearchFixture(t)
	imp := 0.0
	// The ranking checks read as admin (every user's memories, as this test
	// did before reads were per user).
	scoreOf := func(name string) float64 {
		for _, r := range fx.searchResp(engine.SearchRequest{}, "admin").Results {
			if fx.names[r.Memory.ID] == name {
				return r.Score
			}
		}
		t.Fatalf("%s not found", name)
		return 0
	}
	before := scoreOf("session")
	fx.edit(graph.EditRetract, "base", nil)
	fx.edit(graph.EditQuarantine, "doc", nil)
	fx.edit(graph.EditBlock, "tagged", func(e *graph.Edit) { e.Channel = "slack" })
	fx.edit(graph.EditAmend, "project", func(e *graph.Edit) { e.Content = "amended text about postgres" })
	fx.edit(graph.EditAttenuate, "session", func(e *graph.Edit) { e.Importance = &imp })

	got := fx.search(engine.SearchRequest{}, "admin")
	assert.NotContains(t, got, "base", "retract hides")
	assert.NotContains(t, got, "doc", "quarantine hides")
	assert.Contains(t, got, "tagged", "block hides on its channel only")
	assert.NotContains(t, fx.search(engine.SearchRequest{Channel: "slack"}), "tagged", "block hides on its channel")
	assert.Contains(t, fx.search(engine.SearchRequest{IncludeQuarantined: true}, "admin"), "doc", "quarantine shows when asked, with the permission")
	assert.Less(t, scoreOf("session"), before, "attenuated to importance 0 scores lower")

	resp := fx.searchResp(engine.SearchRequest{})
	for _, r := range resp.Results {
		switch fx.names[r.Memory.ID] {
		case "project":
			assert.Equal(t, "amended text about postgres", r.Content)
			assert.Equal(t, []string{"amend"}, r.Edits)
		case "session":
			assert.Equal(t, []string{"attenuate"}, r.Edits)
			assert.Zero(t, r.Memory.Importance)
		}
	}
}

func TestSearchResultShape(t *testing.T) {
	fx := newSearchFixture(t)
	// As admin (every user's memories): u1's own memories alone have equal
	// keyword scores, so every fused z-score would be 0.
	resp := fx.searchResp(engine.SearchRequest{Limit: 3, Mode: "graph"}, "admin")
	require.Len(t, resp.Results, 3)
	assert.Equal(t, "graph", resp.Mode)
	assert.False(t, resp.Fallback)
	for i, r := range resp.Results {
		assert.Contains(t, r.WhyIncluded, engine.WhyRelationship)
		assert.Contains(t, r.WhyIncluded, engine.WhyKeyword)
		assert.Positive(t, r.Signals["graph"].Score, "the walk's score")
		if i > 0 {
			assert.Greater(t, r.Signals["graph"].Rank, 0)
		}
		if i > 0 {
			// A z-score sum: below every signal's mean it is negative.
			assert.LessOrEqual(t, r.Score, resp.Results[i-1].Score, "best first")
		}
		assert.InDelta(t, 0.5, r.Confidence, 0.5)
		assert.Equal(t, "t1", r.Citation.RepositoryID)
		assert.Equal(t, r.VersionID, r.Citation.VersionID)
		assert.NotEmpty(t, r.Content)
	}
	assert.Greater(t, resp.Results[0].Score, 0.0)

	// No entity in the query: the walk starts from the keyword hits.
	kw := fx.searchResp(engine.SearchRequest{Query: "connection settings", Mode: "graph"})
	assert.False(t, kw.Fallback, "keyword hits seed the walk")
	require.NotEmpty(t, kw.Results)
	assert.Equal(t, []string{engine.WhyRelationship, engine.WhyKeyword}, kw.Results[0].WhyIncluded)
	// Neither an entity nor a keyword hit: nothing seeds the walk, so graph
	// mode falls back (to vector and keyword search, which find nothing
	// here either: this fixture has no vectors).
	fb := fx.searchResp(engine.SearchRequest{Query: "zebra migration", Mode: "graph"})
	assert.True(t, fb.Fallback, "nothing seeds the walk: fallback")
	assert.Empty(t, fb.Results)

	_, err := fx.eng.Search(context.Background(), fx.principal(), engine.SearchRequest{Query: "x", Mode: "vector"})
	var fe *graph.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "mode", fe.Field, "vector mode without vectors")
}

func without(all []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(all), func(s string) bool { return slices.Contains(drop, s) })
}

// TestSearchHybridSkipsZeroWeightSignals checks that hybrid mode does not
// run a signal whose fusion weight is 0 (it could only add unscored hits):
// "PostgreSQL" is an entity every fixture memory mentions but no text
// contains, so only the graph signal can find them; "connection pool" is in
// every text and names no entity, so only the keyword signal can.
func TestSearchHybridSkipsZeroWeightSignals(t *testing.T) {
	fx := newSearchFixture(t)
	for _, tc := range []struct {
		name    string
		weights string // the policy's fusion_weights
		query   string
		wantHit string // the signal every result is found by; "" means no results
	}{
		{"graph weight 0", "{graph: 0.0, vector: 0.7, keyword: 1.0}", "PostgreSQL", ""},
		{"graph weight 0.5", "{graph: 0.5, vector: 0.7, keyword: 1.0}", "PostgreSQL", "relationship_path"},
		{"keyword weight 1", "{graph: 0.0, vector: 0.7, keyword: 1.0}", "connection pool", "keyword_match"},
		{"keyword weight 0", "{graph: 0.0, vector: 0.7, keyword: 0.0}", "connection pool", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const def = "fusion_weights: {graph: 1.0, vector: 1.0, keyword: 0.7, time: 1.0}"
			require.Contains(t, string(config.DefaultPolicy()), def)
			yaml := strings.Replace(string(config.DefaultPolicy()), def, "fusion_weights: "+tc.weights, 1)
			pol, err := policy.Parse("policy.yaml", []byte(yaml))
			require.NoError(t, err)
			holder, err := policy.NewHolder(pol)
			require.NoError(t, err)
			eng, err := engine.New(engine.Options{Store: fx.store, Policy: holder, Now: func() time.Time { return now }})
			require.NoError(t, err)
			resp, err := eng.Search(context.Background(), fx.principal(), engine.SearchRequest{Query: tc.query, Mode: "hybrid", Limit: 50})
			require.NoError(t, err)
			if tc.wantHit == "" {
				assert.Empty(t, resp.Results)
				return
			}
			require.NotEmpty(t, resp.Results)
			for _, r := range resp.Results {
				assert.Contains(t, r.WhyIncluded, tc.wantHit, fx.names[r.Memory.ID])
			}
		})
	}
}
