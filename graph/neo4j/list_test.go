package neo4j_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	tr "github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestListMemoriesPlan: a page of ListMemories seeks the tenant's memories
// in memory_tenant_created's order and stops at the page (PartialSort for
// the id tie, then Limit), the first page and the next ones alike. A label
// scan with a full Sort read every memory of the store for each page
// (about 0.85 s at 100k: docs/benchmarks.md).
func TestListMemoriesPlan(t *testing.T) {
	cfg := neo4jtest.Config(t)
	s := neo4jtest.Open(t, cfg)
	scope := graph.Scope{TenantID: "plan"}
	_, err := s.CreateMemories(t.Context(), storetest.Corpus(scope, 7, 50).Inputs)
	tr.NoError(t, err)
	for _, f := range []graph.Filter{
		{Scope: scope, Reader: graph.System},
		{Scope: scope, Reader: graph.Reader{UserID: "u1"}, Types: []string{"note"}},
	} {
		for _, after := range []bool{false, true} {
			ops, err := s.ListPlan(t.Context(), f, after)
			tr.NoError(t, err)
			assert.Contains(t, ops, "PartialSort", "after %v, %+v: %v", after, f.Reader, ops)
			for _, bad := range []string{"Sort", "Top", "NodeByLabelScan", "AllNodesScan"} {
				assert.NotContains(t, ops, bad, "after %v, %+v: %v", after, f.Reader, ops)
			}
		}
	}
}
