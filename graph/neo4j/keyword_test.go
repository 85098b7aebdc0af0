package neo4j_test

import (
	"sync"
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
// properties (nor the keyword groups of the search in Cypher).
const asBeforeKeywordGroups = `
MATCH (m:Memory)-[:HAS_VERSION]->(v:Version) WHERE v.id = m.current_version_id
SET m.search_text = CASE WHEN trim(v.index_text) = '' THEN v.content ELSE v.index_text END
REMOVE m.kw_tf, m.kw_len, m.kw_text, m.kw_group
WITH count(*) AS n
MATCH (k:KeywordGroup) DELETE k`

// TestKeywordBackfill: Open gives the memories of an earlier database their
// keyword properties, so search finds them again with the scores a fresh
// write gives.
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

	runCypher(t, cfg, asBeforeKeywordGroups)
	runCypher(t, cfg, asUnmarked)
	tr.Zero(t, countCypher(t, cfg, `MATCH (m:Memory) WHERE m.kw_len IS NOT NULL RETURN count(m) AS n`),
		"an earlier database has nothing the keyword index covers")
	assertScoresAfterOpen(t, cfg, search, want)
	tr.EqualValues(t, 1, countCypher(t, cfg, countMarks), "the backfill marks the database done")
}

// asUnmarked takes away the backfill's mark, as on a database no mnemo
// with the mark has opened.
const asUnmarked = `MATCH (x:Migration) DELETE x`

// countMarks counts the keyword backfill's marks.
const countMarks = `MATCH (x:Migration {id: 'keyword_properties'}) RETURN count(x) AS n`

// TestKeywordBackfillMark: Open runs the backfill once. A database it has
// marked is not probed again (the probe read every memory), and one without
// the mark is, and is marked.
func TestKeywordBackfillMark(t *testing.T) {
	cfg := neo4jtest.Config(t)
	s := neo4jtest.Open(t, cfg)
	tr.EqualValues(t, 1, countCypher(t, cfg, countMarks), "a new database is marked at its first Open")
	_, err := s.CreateMemories(t.Context(), storetest.Corpus(graph.Scope{TenantID: "mark"}, 3, 50).Inputs)
	tr.NoError(t, err)
	const withKeywords = `MATCH (m:Memory) WHERE m.kw_len IS NOT NULL RETURN count(m) AS n`
	tr.EqualValues(t, 50, countCypher(t, cfg, withKeywords))

	// Stripped behind the mark's back (an older mnemo writing after an
	// upgrade, which docs/graph.md rules out): Open trusts the mark.
	runCypher(t, cfg, asBeforeKeywordGroups)
	r, err := neo4j.Open(t.Context(), cfg)
	tr.NoError(t, err)
	tr.NoError(t, r.Close())
	tr.Zero(t, countCypher(t, cfg, withKeywords), "Open probed the memories of a marked database")

	runCypher(t, cfg, asUnmarked)
	r, err = neo4j.Open(t.Context(), cfg)
	tr.NoError(t, err)
	tr.NoError(t, r.Close())
	tr.EqualValues(t, 50, countCypher(t, cfg, withKeywords), "Open backfills a database without the mark")
	tr.EqualValues(t, 1, countCypher(t, cfg, countMarks))

	// Replicas starting at once on an unmarked database all open, and leave
	// one mark.
	runCypher(t, cfg, asUnmarked)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			r, err := neo4j.Open(t.Context(), cfg)
			if assert.NoError(t, err) {
				assert.NoError(t, r.Close())
			}
		})
	}
	wg.Wait()
	tr.EqualValues(t, 1, countCypher(t, cfg, countMarks))
}

// runCypher runs statement q on the database of cfg, outside any store.
func runCypher(t *testing.T, cfg neo4j.Config, q string) {
	t.Helper()
	_, err := neo4jdrv.ExecuteQuery(t.Context(), neo4jtest.Driver(t, cfg), q, nil, neo4jdrv.EagerResultTransformer,
		neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
	tr.NoError(t, err)
}

// countCypher runs statement q, which returns one row with n, on the
// database of cfg and returns n.
func countCypher(t *testing.T, cfg neo4j.Config, q string) int64 {
	t.Helper()
	res, err := neo4jdrv.ExecuteQuery(t.Context(), neo4jtest.Driver(t, cfg), q, nil, neo4jdrv.EagerResultTransformer,
		neo4jdrv.ExecuteQueryWithDatabase(cfg.Database))
	tr.NoError(t, err)
	tr.Len(t, res.Records, 1)
	n, _ := res.Records[0].Get("n")
	return n.(int64)
}

// assertScoresAfterOpen opens the database of cfg again, as a restart
// does, and checks that search gives there the scores of want.
func assertScoresAfterOpen(t *testing.T, cfg neo4j.Config, search func(graph.Store) map[string]float64, want map[string]float64) {
	t.Helper()
	r, err := neo4j.Open(t.Context(), cfg)
	tr.NoError(t, err)
	defer r.Close()
	got := search(r)
	tr.Len(t, got, len(want))
	for k, w := range want {
		assert.InEpsilon(t, w, got[k], 1e-9, k)
	}
}

// TestKeywordReopenAfterErase: an erased memory stays out of the keyword
// statistics when the store is opened again. The backfill at Open
// is for memories written before keyword groups existed, not for erased
// ones, whose keyword properties the erase removed: counting them again
// would move every score of the group (SQLite's index drops them too).
func TestKeywordReopenAfterErase(t *testing.T) {
	cfg := neo4jtest.Config(t)
	s := neo4jtest.Open(t, cfg)
	sc := graph.Scope{TenantID: "erase-reopen"}
	c := storetest.Corpus(sc, 7, 200)
	created, err := s.CreateMemories(t.Context(), c.Inputs)
	tr.NoError(t, err)
	ids := make([]string, 0, 50)
	for _, m := range created[:50] {
		ids = append(ids, m.Memory.ID)
	}
	_, err = s.Erase(t.Context(), sc, graph.EraseInput{IDs: ids})
	tr.NoError(t, err)
	queries := c.KeywordQueries(10)
	search := func(s graph.Store) map[string]float64 {
		out := map[string]float64{}
		for _, q := range queries {
			got, err := s.KeywordSearch(t.Context(), graph.Filter{Scope: sc, Reader: graph.System}, q, 20)
			tr.NoError(t, err)
			for _, g := range got {
				out[q+" "+g.Memory.ID] = g.Score
			}
		}
		return out
	}
	want := search(s)
	tr.NotEmpty(t, want)

	assertScoresAfterOpen(t, cfg, search, want)

	// A database an earlier backfill went through gave its erased
	// memories keyword properties again; Open takes them away.
	runCypher(t, cfg, asAfterErasedBackfill)
	runCypher(t, cfg, asUnmarked)
	tr.EqualValues(t, 50, countCypher(t, cfg, `MATCH (m:Memory {tenant_id: 'erase-reopen', status: 'erased'}) WHERE m.kw_len IS NOT NULL RETURN count(m) AS n`),
		"the erased memories have keyword properties again")
	tr.NotZero(t, countCypher(t, cfg, `MATCH (k:KeywordGroup) RETURN count(k) AS n`))
	assertScoresAfterOpen(t, cfg, search, want)
	tr.Zero(t, countCypher(t, cfg, `MATCH (k:KeywordGroup) RETURN count(k) AS n`), "Open deletes the groups nothing reads")
}

// asAfterErasedBackfill gives erased memories the keyword properties of an
// empty text and counts them in their keyword groups (the search in Cypher's
// statistics, which Open deletes), as the backfill at Open did before it
// told erased memories from old ones.
const asAfterErasedBackfill = `
MATCH (m:Memory {status: 'erased'})
SET m.kw_len = 0, m.kw_tf = ' ', m.kw_text = '',
    m.kw_group = m.org_id + '\u001f' + m.repo_id + '\u001f' + CASE WHEN m.scope IN ['user', 'session'] AND m.user_id <> '' THEN m.user_id ELSE '' END
WITH count(*) AS n
MATCH (m:Memory)
WITH m.tenant_id AS tenant_id, m.org_id AS org_id, m.repo_id AS repo_id,
     CASE WHEN m.scope IN ['user', 'session'] AND m.user_id <> '' THEN m.user_id ELSE '' END AS owner,
     count(*) AS docs, sum(m.kw_len) AS len
MERGE (k:KeywordGroup {tenant_id: tenant_id, org_id: org_id, repo_id: repo_id, owner: owner})
SET k.docs = docs, k.len = len`
