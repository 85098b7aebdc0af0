package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// walkFixture is a real store (SQLite, or Neo4j with MNEMO_TEST_STORE)
// filled through the engine's write path, drawn as the graph the walk
// sees (memories in boxes, entities in parentheses; every memory is user
// u1's and readable by u1 unless marked):
//
//	[song] -- (Hello Love) , (Hank Snow) -- [bio] -- (Nashville)
//	[ballet] -- (Aschenbrodel) -- [private: u2 only] -- (Vienna Walzer) -- [orchestra]
//	[market] -- (Publix)            (a distractor)
//
// "bio" and "orchestra" share no word with the questions asked below:
// only a walk through an entity reaches them — "bio" through "song",
// "orchestra" only through a memory u1 may not read.
type walkFixture struct {
	store graph.Store
	ids   map[string]string // fixture name -> memory id
	names map[string]string // memory id -> fixture name
}

func newWalkFixture(t *testing.T) *walkFixture {
	t.Helper()
	ctx := context.Background()
	fx := &walkFixture{store: graphtest.Open(t), ids: map[string]string{}, names: map[string]string{}}
	eng := walkEngine(t, fx.store, "{graph: 1.0, vector: 1.0, keyword: 0.7}")
	admin := graph.Principal{ID: "p", UserID: "u1", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: "t1"}}
	for _, m := range []struct {
		name, user, content string
		entities            []string
	}{
		{"song", "u1", "Hello Love is a 1974 country single, a number one on the chart.", []string{"Hello Love", "Hank Snow"}},
		{"bio", "u1", "Hank Snow moved to Nashville in 1949 and recorded for RCA Victor.", []string{"Hank Snow", "Nashville"}},
		{"ballet", "u1", "Aschenbrodel is a ballet whose orchestration was finished after its composer died.", []string{"Aschenbrodel"}},
		{"private", "u2", "The composer of Aschenbrodel founded a waltz ensemble.", []string{"Aschenbrodel", "Vienna Walzer"}},
		{"orchestra", "u1", "The Vienna Walzer plays traditional polkas and marches in Austria.", []string{"Vienna Walzer"}},
		{"market", "u1", "Publix is a supermarket chain headquartered in Lakeland, Florida.", []string{"Publix"}},
	} {
		res, err := eng.Ingest(ctx, admin, engine.IngestRequest{Type: "note", Content: m.content, UserID: m.user,
			Visibility: graph.VisibilityUser, Entities: m.entities})
		require.NoError(t, err, m.name)
		require.Equal(t, engine.StatusApproved, res.Status, m.name)
		fx.ids[m.name], fx.names[res.ID] = res.ID, m.name
	}
	return fx
}

// walkEngine is an engine on store under the default policy with the
// given fusion weights (no vectors).
func walkEngine(t *testing.T, store graph.Store, weights string) *engine.Engine {
	t.Helper()
	yaml := string(config.DefaultPolicy())
	i := strings.Index(yaml, "fusion_weights: {")
	require.GreaterOrEqual(t, i, 0)
	j := i + strings.Index(yaml[i:], "}") + 1
	pol, err := policy.Parse("policy.yaml", []byte(yaml[:i]+"fusion_weights: "+weights+yaml[j:]))
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	eng, err := engine.New(engine.Options{Store: store, Policy: holder})
	require.NoError(t, err)
	return eng
}

// search returns the fixture names of the results and the results.
func (fx *walkFixture) search(t *testing.T, eng *engine.Engine, user string, roles []string, mode, query string) ([]string, []engine.SearchResult) {
	t.Helper()
	p := graph.Principal{ID: "reader-" + user, UserID: user, Roles: roles, Scope: graph.Scope{TenantID: "t1"}}
	resp, err := eng.Search(context.Background(), p, engine.SearchRequest{Query: query, Mode: mode, Limit: 10})
	require.NoError(t, err)
	var names []string
	for _, r := range resp.Results {
		names = append(names, fx.names[r.Memory.ID])
	}
	return names, resp.Results
}

func TestGraphSignalReachesTwoHops(t *testing.T) {
	fx := newWalkFixture(t)
	const question = "Where did the performer of Hello Love live?"
	for _, mode := range []string{"hybrid", "graph"} {
		t.Run(mode, func(t *testing.T) {
			eng := walkEngine(t, fx.store, "{graph: 1.0, vector: 1.0, keyword: 0.7}")
			got, results := fx.search(t, eng, "u1", []string{"reader"}, mode, question)
			require.Contains(t, got, "song", "the keyword hit and linked entity")
			require.Contains(t, got, "bio", "two hops away: song -> Hank Snow -> bio")
			bio := results[slices.Index(got, "bio")]
			assert.Equal(t, []string{engine.WhyRelationship}, bio.WhyIncluded, "only the graph found it")
			assert.Contains(t, bio.Path, "hank snow", "the entity that carried the walk")
			assert.Positive(t, bio.Signals["graph"].Score)
			assert.NotContains(t, got, "market", "nothing links the distractor")
		})
	}
	t.Run("graph weight 0 does not walk", func(t *testing.T) {
		eng := walkEngine(t, fx.store, "{graph: 0.0, vector: 1.0, keyword: 0.7}")
		got, _ := fx.search(t, eng, "u1", []string{"reader"}, "hybrid", question)
		assert.Contains(t, got, "song")
		assert.NotContains(t, got, "bio")
	})
}

func TestGraphSignalNeverCrossesAnUnreadableMemory(t *testing.T) {
	fx := newWalkFixture(t)
	const question = "Which ensemble did the composer of Aschenbrodel found?"
	eng := walkEngine(t, fx.store, "{graph: 1.0, vector: 1.0, keyword: 0.7}")
	for _, mode := range []string{"hybrid", "graph"} {
		t.Run(mode, func(t *testing.T) {
			// The control: a reader of every user's memories walks through
			// u2's memory to the orchestra.
			all, _ := fx.search(t, eng, "u1", []string{"admin"}, mode, question)
			require.Contains(t, all, "private")
			require.Contains(t, all, "orchestra", "reached through u2's memory")

			got, results := fx.search(t, eng, "u1", []string{"reader"}, mode, question)
			require.Contains(t, got, "ballet")
			assert.NotContains(t, got, "private", "u2's memory is never returned")
			assert.NotContains(t, got, "orchestra", "nor used as a bridge")
			for _, r := range results {
				assert.NotContains(t, r.Path, "vienna walzer", "no path leads through it: %s", fx.names[r.Memory.ID])
			}
		})
	}
}

// TestGraphSignalLinksNamesWithoutTheirAccents: an entity written with
// diacritics ("Aschenbrödel") carries its folded name as an alias, so a
// query that writes it without them seeds the walk there; the memory's
// text shares no other word with the query, so the keyword signal cannot
// find it.
func TestGraphSignalLinksNamesWithoutTheirAccents(t *testing.T) {
	store := graphtest.Open(t)
	eng := walkEngine(t, store, "{graph: 1.0, vector: 1.0, keyword: 0.7}")
	admin := graph.Principal{ID: "p", UserID: "u1", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: "t1"}}
	res, err := eng.Ingest(context.Background(), admin, engine.IngestRequest{Type: "note", UserID: "u1",
		Content: "Its orchestration was finished after the composer died.", Entities: []string{"Aschenbrödel"}})
	require.NoError(t, err)
	p := graph.Principal{ID: "r", UserID: "u1", Roles: []string{"reader"}, Scope: graph.Scope{TenantID: "t1"}}
	for _, q := range []string{"Who wrote Aschenbrodel?", "Who wrote Aschenbrödel?"} {
		resp, err := eng.Search(context.Background(), p, engine.SearchRequest{Query: q, Mode: "graph", Limit: 5})
		require.NoError(t, err)
		require.NotEmpty(t, resp.Results, q)
		assert.Equal(t, res.ID, resp.Results[0].Memory.ID, q)
		assert.Contains(t, resp.Results[0].Path, "aschenbrödel", q)
	}
}
