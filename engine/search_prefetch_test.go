package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/embed/embedtest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// countingPrefetcher counts the prefetches it passes on.
type countingPrefetcher struct {
	inner graph.WalkPrefetcher
	n     atomic.Int64
}

func (c *countingPrefetcher) PrefetchWalk(ctx context.Context, f graph.Filter, r graph.WalkRequest) error {
	c.n.Add(1)
	return c.inner.PrefetchWalk(ctx, f, r)
}

// TestHybridWalkPrefetch: default (hybrid) search answers exactly the same
// with the walk's neighbourhood read ahead while the vector side runs
// (retrieveHybrid's prefetchWalk) as without, on a real store and index
// (a synthetic corpus, hash-bag vectors), for queries naming entities and
// words; each search starts on an empty walk cache (a write in another
// tenant before it). Graph mode and hybrid without vectors do not prefetch.
func TestHybridWalkPrefetch(t *testing.T) {
	ctx := context.Background()
	st := graphtest.Open(t)
	pf, ok := graph.Store(st).(graph.WalkPrefetcher)
	if graphtest.Backend() != "sqlite" {
		require.False(t, ok, "a store that prefetches walks: this test should check it")
		return // Neo4j reads no walk ahead: search is the walk alone
	}
	require.True(t, ok, "the embedded store prefetches walks")
	scope := graph.Scope{TenantID: "t"}
	corpus := storetest.Corpus(scope, 11, 1500)
	emb := embedtest.Bag{Dim: 64}
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: emb.Dim})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	cs, err := st.CreateMemories(ctx, corpus.Inputs)
	require.NoError(t, err)
	pts := make([]vector.Point, len(cs))
	for i, c := range cs {
		pts[i] = vector.Point{ID: c.Memory.ID, Vector: emb.Vector(c.Memory.Title + "\n" + corpus.Inputs[i].Version.Content),
			Payload: VectorPayload(c.Memory, c.Version.ID)}
	}
	require.NoError(t, idx.Upsert(ctx, pts))
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	// Hash-bag vectors match words, not meaning: the calibrated
	// abstention would answer nothing, and compare nothing.
	pol.Retrieval.AbstentionThreshold = 0
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	withVectors, err := New(Options{Store: st, Index: idx, Embedder: emb, Policy: holder})
	require.NoError(t, err)
	noVectors, err := New(Options{Store: st, Policy: holder})
	require.NoError(t, err)
	counter := &countingPrefetcher{inner: pf}
	forget := func() { // ends the walk cache; changes nothing tenant t reads
		_, err := st.CreateMemories(ctx, []graph.MemoryInput{{Memory: graph.Memory{Scope: graph.Scope{TenantID: "other"}, Type: "note", Title: "w"},
			Version: graph.VersionInput{Content: "a write between searches"}}})
		require.NoError(t, err)
	}
	ents, words := corpus.EntityQueries(12), corpus.KeywordQueries(12)
	for _, tc := range []struct {
		mode     string
		vectors  bool
		prefetch int64 // prefetches per search
	}{
		{"hybrid", true, 1},
		{"hybrid", false, 0},
		{"graph", true, 0},
	} {
		e := noVectors
		if tc.vectors {
			e = withVectors
		}
		for i := range ents {
			p := graph.Principal{ID: "reader", Roles: []string{"admin"}, Scope: scope}
			if i%2 == 1 {
				p = graph.Principal{ID: "u3", Roles: []string{"reader"}, Scope: scope} // one user's memories
			}
			r := SearchRequest{Query: "what about " + strings.Join(ents[i], " and ") + " " + words[i], Mode: tc.mode}
			e.caps.prefetch = nil
			forget()
			want, err := e.Search(ctx, p, r)
			require.NoError(t, err)
			e.caps.prefetch = counter
			before := counter.n.Load()
			forget()
			got, err := e.Search(ctx, p, r)
			require.NoError(t, err)
			assert.Equal(t, tc.prefetch, counter.n.Load()-before, "%s vectors=%v: prefetches", tc.mode, tc.vectors)
			// Fusion sums its signals in map order, so a fused score may
			// differ in its last bit between two identical searches: the
			// results, their order, signals and neighbours must not.
			require.Equal(t, len(want.Results), len(got.Results), r.Query)
			for k := range want.Results {
				w, g := want.Results[k], got.Results[k]
				require.InEpsilon(t, w.Score, g.Score, 1e-12, "%s: result %d", r.Query, k)
				w.Score = g.Score
				require.Equal(t, w, g, "%s vectors=%v, %q: result %d", tc.mode, tc.vectors, r.Query, k)
			}
			want.Results = got.Results
			require.Equal(t, want, got)
			if tc.mode == "hybrid" && tc.vectors && i == 0 {
				require.NotEmpty(t, got.Results, "a search that finds nothing checks nothing")
			}
		}
	}
}
