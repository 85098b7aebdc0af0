package sqlite_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestPrefetchWalk: a walk after PrefetchWalk returns exactly what the
// same walk returns on an empty cache (the same memories, scores to the
// bit, paths), whatever part of its seeds was prefetched and under which
// filter; and the prefetch did fill the cache, so the equality is not that
// of two uncached walks.
func TestPrefetchWalk(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, t.TempDir(), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	scope := graph.Scope{TenantID: "t"}
	corpus := storetest.Corpus(scope, 7, 3000)
	var ids []string
	for i := 0; i < len(corpus.Inputs); i += 1000 {
		cs, err := s.CreateMemories(ctx, corpus.Inputs[i:i+1000])
		require.NoError(t, err)
		for _, c := range cs {
			ids = append(ids, c.Memory.ID)
		}
	}
	// A write in another tenant: ends the walk cache, changes no walk here.
	forget := func() {
		in := graph.MemoryInput{Memory: graph.Memory{Scope: graph.Scope{TenantID: "other"}, Type: "note", Title: "a write"},
			Version: graph.VersionInput{Content: "between walks"}}
		_, err := s.CreateMemories(ctx, []graph.MemoryInput{in})
		require.NoError(t, err)
	}
	ents := corpus.EntityQueries(40)
	entities := func(i int) map[string]float64 {
		out := map[string]float64{}
		for _, n := range ents[i] {
			out[n] = 1
		}
		return out
	}
	mems := func(picks ...int) map[string]float64 {
		out := map[string]float64{}
		for k, p := range picks {
			out[ids[p]] = 1 / float64(k+1)
		}
		return out
	}
	admin := graph.Filter{Scope: scope, Reader: graph.Reader{AllUsers: true}}
	u3 := graph.Filter{Scope: scope, Reader: graph.Reader{UserID: "u3"}}
	mid := corpus.Inputs[len(corpus.Inputs)/2].Memory.CreatedAt
	validAt := graph.Filter{Scope: scope, Reader: graph.Reader{AllUsers: true}, ValidAt: mid}
	for _, tc := range []struct {
		name            string
		prefetchF, walk graph.Filter
		prefetch, full  graph.WalkRequest
	}{
		{"entities prefetched, then entities and memories", admin, admin,
			graph.WalkRequest{Entities: entities(0), Limit: 100},
			graph.WalkRequest{Entities: entities(0), Memories: mems(10, 2000, 2500), Damping: 0.7, Limit: 100}},
		{"entities and keyword hits prefetched, then the vector hits' too", admin, admin,
			graph.WalkRequest{Entities: entities(1), Memories: mems(5, 6), Limit: 100},
			graph.WalkRequest{Entities: entities(1), Memories: mems(5, 6, 1200, 2999), Damping: 0.7, Limit: 100}},
		{"every seed prefetched", admin, admin,
			graph.WalkRequest{Entities: entities(2), Memories: mems(100), Limit: 100},
			graph.WalkRequest{Entities: entities(2), Memories: mems(100), Damping: 0.7, Limit: 100}},
		{"one user's filter", u3, u3,
			graph.WalkRequest{Entities: entities(3), Limit: 100},
			graph.WalkRequest{Entities: entities(3), Memories: mems(7, 8), Damping: 0.7, Limit: 100}},
		{"prefetched for every user, walked for one", admin, u3,
			graph.WalkRequest{Entities: entities(4), Limit: 100},
			graph.WalkRequest{Entities: entities(4), Memories: mems(9), Damping: 0.7, Limit: 100}},
		{"valid at an instant", validAt, validAt,
			graph.WalkRequest{Entities: entities(5), Limit: 100},
			graph.WalkRequest{Entities: entities(5), Memories: mems(1400, 1600), Damping: 0.7, Limit: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forget()
			want, err := s.Walk(ctx, tc.walk, tc.full)
			require.NoError(t, err)
			require.NotEmpty(t, want, "a walk that finds nothing checks nothing")
			forget()
			require.NoError(t, s.PrefetchWalk(ctx, tc.prefetchF, tc.prefetch))
			require.Positive(t, sqlite.WalkCacheLists(s), "the prefetch read no posting list into the cache")
			got, err := s.Walk(ctx, tc.walk, tc.full)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}
