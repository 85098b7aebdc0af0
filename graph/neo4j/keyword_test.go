package neo4j_test

import (
	"testing"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/assert"
	tr "github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// asBeforeKeywordGroups turns the database into one an earlier mnemo wrote:
// memories carry their current text in search_text and no keyword
// properties, and there are no keyword groups.
const asBeforeKeywordGroups = `
MATCH (m:Memory)-[:HAS_VERSION]->(v:Version) WHERE v.id = m.current_version_id
SET m.search_text = CASE WHEN trim(v.index_text) = '' THEN v.content ELSE v.index_text END
REMOVE m.kw_tf, m.kw_len, m.kw_text, m.kw_group
WITH count(*) AS n
MATCH (k:KeywordGroup) DELETE k`

// TestKeywordBackfill: Open gives the memories of an earlier database their
// keyword properties and groups, so search finds them again with the scores
// a fresh write gives.
func TestKeywordBackfill(t *testing.T) {
	cfg := neo4jtest.Config(t)
	s := neo4jtest.Open(t, cfg)
	scopes := []graph.Scope{{TenantID: "a"}, {TenantID: "a", OrgID: "o1"}, {TenantID: "b"}}
	var queries []string
	for i, sc := range scopes {
		c := storetest.Corpus(sc, uint64(i+1), 200)
		_, err := s.CreateMemories(t.Context(), c.Inputs)
		tr.NoError(t, err)
		queries = append(queries, c.KeywordQueries(5)...)
	}
	search := func(s graph.Store) map[string]float64 {
		out := map[string]float64{}
		for _, sc := range scopes {
			for _, q := range queries {
				got, err := s.KeywordSearch(t.Context(), graph.Filter{Scope: sc, Reader: graph.System}, q, 20)
				tr.NoError(t, err)
				for _, g := range got {
					out[sc.TenantID+"/"+sc.OrgID+" "+q+" "+g.Memory.ID] = g.Score
				}
			}
		}
		return out
	}
	want := search(s)
	tr.NotEmpty(t, want)

	_, err := neo4jdrv.ExecuteQuery(t.Context(), neo4jtest.Driver(t, cfg), asBeforeKeywordGroups, nil, neo4jdrv.EagerResultTransformer,
		neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
	tr.NoError(t, err)
	tr.Empty(t, search(s), "an earlier database has nothing the keyword index covers")

	r, err := neo4j.Open(t.Context(), cfg)
	tr.NoError(t, err)
	defer r.Close()
	got := search(r)
	tr.Len(t, got, len(want))
	for k, w := range want {
		assert.InEpsilon(t, w, got[k], 1e-9, k)
	}
}
