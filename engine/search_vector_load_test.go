package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// loadCounter wraps a real store and counts the memories GetMemories is
// asked for.
type loadCounter struct {
	graph.Store
	mu    sync.Mutex
	asked int
}

func (s *loadCounter) GetMemories(ctx context.Context, f graph.Filter, ids []string) ([]graph.Memory, error) {
	s.mu.Lock()
	s.asked += len(ids)
	s.mu.Unlock()
	return s.Store.GetMemories(ctx, f, ids)
}

func (s *loadCounter) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.asked
	s.asked = 0
	return n
}

// TestVectorHitsLoadUntilThePoolIsFull: the vector hits load in batches
// until vectorPool of them are admitted, not all that the index returned,
// and the pool is what loading them all gave: the vectorPool nearest
// admitted hits, ranked 1 to vectorPool; a hit past the pool that another
// signal found keeps its vector rank, the hits not read before it counted
// as admitted.
//
// 250 memories of one user, nearest first (mem-000 the nearest); the 10
// nearest are archived, so the active-only filter hides them; mem-150 alone
// holds the query's words, so the keyword signal finds it too.
func TestVectorHitsLoadUntilThePoolIsFull(t *testing.T) {
	ctx := context.Background()
	inner := graphtest.Open(t)
	st := &loadCounter{Store: inner}
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: vecDim})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	const query = "where did the orca pod travel"
	emb := tableEmbedder{query: axis(1, 0)}
	e, err := New(Options{Store: st, Index: idx, Embedder: emb, Policy: holder})
	require.NoError(t, err)

	const n, hidden, both = 250, 10, 150
	tenant := graph.Scope{TenantID: "t1"}
	at := time.Now().UTC().Add(-time.Hour)
	in := make([]graph.MemoryInput, n)
	for i := range in {
		content := fmt.Sprintf("zebra crossing memo %d", i)
		if i == both {
			content = "the orca pod did travel north"
		}
		in[i] = graph.MemoryInput{
			Memory:  graph.Memory{Scope: tenant, UserID: "u1", Visibility: graph.VisibilityUser, Type: "note", Title: fmt.Sprintf("mem-%03d", i), CreatedAt: at},
			Version: graph.VersionInput{Content: content},
		}
	}
	created, err := inner.CreateMemories(ctx, in)
	require.NoError(t, err)
	names := map[string]string{}
	pts := make([]vector.Point, n)
	for i, c := range created {
		names[c.Memory.ID] = c.Memory.Title
		pts[i] = point(c.Memory, c.Version.ID, axis(1, 0.004*float32(i+1)))
		if i < hidden {
			require.NoError(t, inner.Archive(ctx, tenant, c.Memory.ID))
		}
	}
	require.NoError(t, idx.Upsert(ctx, pts))
	require.Greater(t, n, vectorPool*vectorOverfetch, "the index returns more hits than the pool keeps")

	plan := func(mode string) searchPlan {
		rt := holder.Current().Retrieval
		return searchPlan{
			f:    graph.Filter{Scope: tenant, Reader: graph.Reader{UserID: "u1"}, Statuses: []graph.Status{graph.StatusActive}},
			text: query, mode: cmpOr(mode, rt.Mode), reranker: rt.Reranker.Kind, limit: 10,
			rt: rt, pol: holder.Current(), now: time.Now().UTC(), withVectors: true,
		}
	}
	// The head (walkSeedHead, all hidden), then the need (vectorPool: 96 of
	// them admitted), then the shortfall of 4 at the pass rate seen,
	// raised to 32: 138 of the 200 hits.
	wantLoaded := walkSeedHead + vectorPool + 32

	for _, mode := range []string{policy.ModeVector, ""} {
		t.Run("mode "+cmpOr(mode, "default"), func(t *testing.T) {
			st.take()
			ranked, _, err := e.rank(ctx, plan(mode))
			require.NoError(t, err)
			loaded := st.take()
			ranks := map[string]int{}
			for _, h := range ranked {
				if r, ok := h.rank(signalVector); ok {
					ranks[names[h.mem.ID]] = r
				}
			}
			for i := hidden; i < hidden+vectorPool; i++ {
				assert.Equal(t, i-hidden+1, ranks[fmt.Sprintf("mem-%03d", i)], "mem-%03d", i)
			}
			if mode == policy.ModeVector {
				assert.Len(t, ranks, vectorPool, "only the pool: no vector-only hit past it")
				// Only the vector signal loads memories here (versions
				// load through GetVersions).
				assert.Equal(t, wantLoaded, loaded, "vector hits read until the pool is full, not all %d", vectorPool*vectorOverfetch)
				return
			}
			// mem-150 follows 150 hits, 10 of them hidden: rank 141, the
			// 12 hits between the last read (mem-137) and it counted as
			// admitted.
			assert.Equal(t, both-hidden+1, ranks[fmt.Sprintf("mem-%03d", both)], "the keyword's hit keeps its vector rank past the pool")
			assert.Len(t, ranks, vectorPool+1)
			assert.LessOrEqual(t, loaded, wantLoaded, "no vector hit past the pool is read")
		})
	}
}
