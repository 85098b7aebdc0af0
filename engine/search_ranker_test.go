package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
)

// TestGraphModeSeedsFromTheRanker: graph mode gives the same response
// whether the store names its keyword seeds before the keyword hits load
// (graph.KeywordRanker: the walk runs beside the keyword search) or the
// walk waits for the hits. Two engines read one store: one on the store
// itself, one through graphtest.Faulty, which passes on the store's
// capabilities but not its read-path accelerators (KeywordRanker,
// WalkWarmer). On Neo4j (MNEMO_TEST_STORE=neo4j) this compares the two
// paths; on SQLite, which ranks no keywords early, both engines wait.
func TestGraphModeSeedsFromTheRanker(t *testing.T) {
	ctx := context.Background()
	store := graphtest.Open(t)
	scope := graph.Scope{TenantID: "t1"}
	c := storetest.Corpus(scope, 21, 400)
	for lo := 0; lo < len(c.Inputs); lo += 100 {
		_, err := store.CreateMemories(ctx, c.Inputs[lo:lo+100])
		require.NoError(t, err)
	}
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	open := func(s graph.Store) *engine.Engine {
		holder, err := policy.NewHolder(pol)
		require.NoError(t, err)
		eng, err := engine.New(engine.Options{Store: s, Policy: holder, Now: func() time.Time { return now }})
		require.NoError(t, err)
		return eng
	}
	early, waits := open(store), open(graphtest.NewFaulty(store))
	_, ranks := graph.Store(store).(graph.KeywordRanker)
	t.Logf("store %s ranks keywords early: %t", graphtest.Backend(), ranks)

	users := []graph.Principal{
		{ID: "admin", Roles: []string{"admin"}, Scope: scope},
		{ID: "u1", UserID: c.Inputs[0].Memory.UserID, Roles: []string{"reader"}, Scope: scope},
	}
	ents, words := c.EntityQueries(30), c.KeywordQueries(30)
	found := 0
	for i := range ents {
		q := strings.Join(ents[i], " ") + " " + words[i]
		for _, p := range users {
			r := engine.SearchRequest{Query: q, Mode: policy.ModeGraph, Limit: 10}
			want, err := waits.Search(ctx, p, r)
			require.NoError(t, err)
			got, err := early.Search(ctx, p, r)
			require.NoError(t, err)
			require.Equal(t, want, got, "query %q as %s", q, p.ID)
			if len(want.Results) > 0 {
				found++
			}
		}
	}
	require.Greater(t, found, 30, "searches that found something, of 60")
}
