package engine_test

import (
	"context"
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

// TestGraphModeKeepsSeedsNothingRelates: the walk gives no score to a seed
// whose entities no other memory mentions (graph/walk, alone). With the
// rerank on, graph mode still has the keyword match as a candidate; with
// it off, graph mode is the walk's memories in its order, and a keyword
// seed the walk does not return comes after them, not nowhere.
func TestGraphModeKeepsSeedsNothingRelates(t *testing.T) {
	ctx := context.Background()
	store := graphtest.Open(t)
	scope := graph.Scope{TenantID: "t1"}
	p := graph.Principal{ID: "p", UserID: "u1", Roles: []string{"admin"}, Scope: scope}
	for _, rerank := range []bool{true, false} {
		pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
		require.NoError(t, err)
		pol.Retrieval.Rerank = &rerank
		holder, err := policy.NewHolder(pol)
		require.NoError(t, err)
		eng, err := engine.New(engine.Options{Store: store, Policy: holder, Now: func() time.Time { return now }})
		require.NoError(t, err)
		if rerank {
			for _, in := range []engine.IngestRequest{
				{Type: "note", Title: "Coffee", Content: "Drinks the espresso black, no sugar.", Entities: []string{"Quillon"}},
				{Type: "note", Title: "Tea", Content: "Green tea in the afternoon.", Entities: []string{"Marrow"}},
			} {
				_, err := eng.Ingest(ctx, p, in)
				require.NoError(t, err)
			}
		}
		resp, err := eng.Search(ctx, p, engine.SearchRequest{Query: "espresso", Mode: policy.ModeGraph, Limit: 5})
		require.NoError(t, err, "rerank %t", rerank)
		require.NotEmpty(t, resp.Results, "rerank %t: the keyword match is kept", rerank)
		assert.Equal(t, "Coffee", resp.Results[0].Memory.Title, "rerank %t", rerank)
		assert.NotContains(t, resp.Results[0].WhyIncluded, engine.WhyRelationship, "rerank %t: nothing relates it", rerank)
	}
}
