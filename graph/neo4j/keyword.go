package neo4j

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
)

// Keyword search is BM25 computed by mnemo (graph/bm25), not Lucene's
// score: Lucene's statistics (document count, average length, document
// frequencies) are the whole index's, every tenant's, so one tenant's writes
// would move another's scores. mnemo keeps what BM25 needs on each Memory
// and counts the rest per keyword group:
//
//   - Memory.kw_tf, kw_len: the distinct terms of the title and current text
//     (bm25.Index) with each one's title-weighted frequency, as a string
//     " term:f term:f " that Cypher's string functions search (a list would
//     be walked element by element: ten times slower at 2k matches), and the
//     length in tokens;
//   - Memory.kw_group: the memory's keyword group (below) as one string;
//   - Memory.kw_text: the distinct terms, each prefixed with a key of the
//     tenant, which the memory_keyword fulltext index (whitespace analyzer)
//     covers. Lucene only finds the tenant's memories holding a query term;
//     its score is not used;
//   - KeywordGroup nodes {tenant_id, org_id, repo_id, owner}, one per scope
//     and private owner (a user or session memory's user_id; "" for every
//     other memory), with docs and len, the memories and tokens of the group,
//     kept by every write in the write's transaction.
//
// A search reads the tenant's groups and keeps those its filter admits
// (graph.Filter.Admits), which give N and the average length; then one
// query walks the admitted memories holding a query term, counts each
// term's document frequency among them, and scores those that pass the
// whole filter.

// kwTenantKey prefixes a tenant's terms in kw_text: a hash, so that any
// tenant id makes a plain token (a collision only adds candidates that the
// tenant equality then drops).
func kwTenantKey(tenant string) string {
	h := sha256.Sum256([]byte(tenant))
	return hex.EncodeToString(h[:8]) + "_"
}

// keywordProps sets the keyword properties of a memory of group g with
// title and indexed text body on p, stemming with stem, and returns its
// length in tokens.
func keywordProps(p map[string]any, g kwGroup, title, body string, stem func(string) string) int64 {
	d := bm25.IndexWith(title, body, stem)
	key := kwTenantKey(g.scope.TenantID)
	var text, tf strings.Builder
	tf.WriteByte(' ')
	for i, t := range d.Terms {
		if i > 0 {
			text.WriteByte(' ')
		}
		text.WriteString(key)
		text.WriteString(t)
		fmt.Fprintf(&tf, "%s:%d ", t, d.Freqs[i])
	}
	p["kw_tf"], p["kw_len"], p["kw_text"], p["kw_group"] = tf.String(), d.Len, text.String(), g.key()
	return d.Len
}

// kwGroup is a keyword group: a scope and a private owner.
type kwGroup struct {
	scope graph.Scope
	owner string
}

// kwGroupOf is the group of a memory in scope sc owned by user with
// visibility vis.
func kwGroupOf(sc graph.Scope, user string, vis graph.Visibility) kwGroup {
	if vis.Private() && user != "" {
		return kwGroup{scope: sc, owner: user}
	}
	return kwGroup{scope: sc}
}

// key is the group as Memory.kw_group holds it: org, repo and owner,
// joined by a character none of them holds.
func (g kwGroup) key() string {
	return g.scope.OrgID + "\x1f" + g.scope.RepoID + "\x1f" + g.owner
}

// probe is a memory of the group, for graph.Filter.Admits.
func (g kwGroup) probe() graph.Memory {
	if g.owner != "" {
		return graph.Memory{Scope: g.scope, UserID: g.owner, Visibility: graph.VisibilityUser}
	}
	return graph.Memory{Scope: g.scope, Visibility: graph.VisibilityProject}
}

// kwDeltas accumulates a write's changes to keyword groups.
type kwDeltas map[kwGroup]*[2]int64 // docs, tokens

func (d *kwDeltas) add(g kwGroup, docs, tokens int64) {
	if *d == nil {
		*d = kwDeltas{}
	}
	x := (*d)[g]
	if x == nil {
		x = new([2]int64)
		(*d)[g] = x
	}
	x[0] += docs
	x[1] += tokens
}

// rows are the deltas as keywordGroupsCypher's parameter, in one order, so
// that concurrent writes lock groups in the same order.
func (d kwDeltas) rows() []map[string]any {
	out := make([]map[string]any, 0, len(d))
	for g, x := range d {
		out = append(out, map[string]any{"tenant_id": g.scope.TenantID, "org_id": g.scope.OrgID,
			"repo_id": g.scope.RepoID, "owner": g.owner, "docs": x[0], "len": x[1]})
	}
	slices.SortFunc(out, func(a, b map[string]any) int {
		for _, k := range []string{"tenant_id", "org_id", "repo_id", "owner"} {
			if c := cmp.Compare(a[k].(string), b[k].(string)); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

// keywordGroupsCypher adds a write's documents and tokens to its keyword
// groups. Uses keyword_group.
const keywordGroupsCypher = `
UNWIND $groups AS g
MERGE (k:KeywordGroup {tenant_id: g.tenant_id, org_id: g.org_id, repo_id: g.repo_id, owner: g.owner})
  ON CREATE SET k.docs = 0, k.len = 0
SET k.docs = k.docs + g.docs, k.len = k.len + g.len`

// tenantGroupsCypher reads a tenant's keyword groups. Uses keyword_group.
const tenantGroupsCypher = `
MATCH (k:KeywordGroup) WHERE k.tenant_id = $tenant
RETURN k.org_id AS org_id, k.repo_id AS repo_id, k.owner AS owner, k.docs AS docs, k.len AS len`

// keywordSearchExactCypher walks the tenant's memories that hold a query
// term once: those of admitted groups ($groups) give each term's frequency
// in the memory and, from those, the term's document frequency and idf
// (bm25.IDF, in Cypher), and all are scored, Σ over the query's terms of
// idf · bm25.Saturate, in the query's order, as graph/sqlite sums them; then
// the whole filter runs on them best first until $limit pass (the score
// reads two properties of a memory, the filter a dozen, so filtering every
// candidate of a common term first cost the most of the query:
// docs/benchmarks.md). A candidate without any term (Lucene splits tokens
// longer than 255 characters) scores 0 and is dropped. The filter's
// memories are all in admitted groups, since the groups are what
// graph.Filter.Admits lets the reader read. Uses memory_keyword.
// KeywordSearch runs it only when keywordSearchCypher's answer leaves ties
// at the cut undecided.
//
// Each candidate costs property reads (~1 µs apiece at 10k memories), so:
// the group is checked first, in a CASE (the planner keeps its order; in an
// AND it read the tenant first), since most candidates of a reader limited
// to some groups fail it; it is not read at all when $all_groups
// (KeywordSearch sets it when f admits every group of the tenant: every
// memory is in a group of its tenant); kw_tf is read once, and a term's
// frequency parsed only when kw_tf holds the term, from the 24 characters
// after it (a frequency has at most 19 digits), not by splitting the whole
// rest of kw_tf.
var keywordSearchExactCypher = keywordSearchText("score DESC, m.created_at DESC, m.id DESC", "$limit")

// keywordSearchText is the keyword search statement with the order of the
// scored candidates and the number of rows it returns left open.
func keywordSearchText(order, limit string) string {
	return `
CALL db.index.fulltext.queryNodes('memory_keyword', $query) YIELD node AS m
WHERE CASE WHEN $all_groups OR m.kw_group IN $groups THEN m.tenant_id = $f_tenant ELSE false END
WITH m, m.kw_tf AS tf
WITH collect([m, [t IN $terms | CASE WHEN tf CONTAINS ' ' + t + ':'
  THEN toInteger(split(left(split(tf, ' ' + t + ':')[1], 24), ' ')[0]) ELSE 0 END]]) AS rows
WITH rows, [j IN range(0, size($terms) - 1) | size([r IN rows WHERE r[1][j] > 0])] AS df
WITH rows, [d IN df | log(($n - d + 0.5) / (d + 0.5))] AS idf
WITH rows, [x IN idf | CASE WHEN x > 0 THEN x ELSE $min_idf END] AS idf
UNWIND rows AS r
WITH r[0] AS m, r[1] AS f, idf
WITH m, idf, m.kw_len AS len, f
WITH m, reduce(s = 0.0, j IN range(0, size($terms) - 1) | CASE WHEN f[j] = 0 THEN s
  ELSE s + idf[j] * (f[j] * ($k1 + 1) / (f[j] + $k1 * (1 - $b + $b * len / $avgdl))) END) AS score
WHERE score > 0
WITH m, score ORDER BY ` + order + `
WITH collect([m, score]) AS ranked
UNWIND ranked AS r
WITH r[0] AS m, r[1] AS score
WHERE ` + memoryVisible + `
WITH m, score LIMIT ` + limit + `
RETURN ` + memoryProjection + ` AS m, score`
}

// keywordSearchCypher is keywordSearchExactCypher sorting by score alone
// (reading no created_at or id of the thousands of candidates of a common
// term: 18,000 db hits for 24,700 at 10k memories, and ~30% of the time,
// docs/benchmarks.md) and returning $ties more than $limit, in score order;
// KeywordSearch orders them by score, then newest, in Go (keywordCut). The
// answer is the exact one whenever the last row scores below the
// $limit-th, or fewer than $limit + $ties rows pass: no row left out can
// then tie with one kept.
var keywordSearchCypher = keywordSearchText("score DESC", "$limit + $ties")

// keywordTies is how many rows beyond the limit keywordSearchCypher
// returns to settle ties at the cut.
const keywordTies = 8

// KeywordSearch ranks memories by BM25 relevance of query over their title
// and current version's text, with the statistics of the memories f admits
// (see the comment above kwTenantKey). Any query term matches (OR).
func (s *Store) KeywordSearch(ctx context.Context, f graph.Filter, query string, limit int) ([]graph.Scored, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: keyword search: %w", err)
	}
	terms := bm25.QueryTerms(query)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	if !f.KnownAt.IsZero() {
		out, err := s.keywordAsKnown(ctx, f, terms, limit)
		if err != nil {
			return nil, fmt.Errorf("neo4j: keyword search: %w", err)
		}
		return out, nil
	}
	key := kwTenantKey(f.Scope.TenantID)
	keyed := make([]string, len(terms))
	for i, t := range terms {
		keyed[i] = key + t
	}
	q := strings.Join(keyed, " ")
	out, err := read(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]graph.Scored, error) {
		groups, err := admittedGroups(ctx, tx, f)
		if err != nil || groups.n == 0 {
			return nil, err
		}
		params := keywordSearchParams(f, q, terms, groups, limit)
		recs, err := collect(ctx, tx, keywordSearchCypher, params)
		if err != nil {
			return nil, err
		}
		out, ok := keywordCut(scoredOf(recs), limit)
		if ok {
			return out, nil
		}
		if recs, err = collect(ctx, tx, keywordSearchExactCypher, params); err != nil {
			return nil, err
		}
		return scoredOf(recs), nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: keyword search: %w", err)
	}
	return out, nil
}

// scoredOf reads keyword search rows (m, score).
func scoredOf(recs []*neo4jdrv.Record) []graph.Scored {
	out := make([]graph.Scored, 0, len(recs))
	for _, r := range recs {
		score, _ := r.Get("score")
		sc, _ := score.(float64)
		out = append(out, graph.Scored{Memory: memoryOf(r, "m"), Score: sc})
	}
	return out
}

// keywordCut orders keywordSearchCypher's rows (score order, ties in any
// order) by score, then newest (created_at, then id, descending), as
// keywordSearchExactCypher does, and keeps limit of them. It reports false
// when the rows cannot decide the cut: limit + keywordTies of them, the
// last scoring as the limit-th, so an equal one may have been left out.
func keywordCut(rows []graph.Scored, limit int) ([]graph.Scored, bool) {
	if len(rows) >= limit+keywordTies && rows[len(rows)-1].Score >= rows[limit-1].Score {
		return nil, false
	}
	slices.SortStableFunc(rows, func(a, b graph.Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), b.Memory.CreatedAt.Compare(a.Memory.CreatedAt),
			strings.Compare(b.Memory.ID, a.Memory.ID))
	})
	return rows[:min(len(rows), limit)], true
}

// keywordSearchParams binds keywordSearchCypher's parameters: the fulltext
// query q of the keyed terms, the terms, the admitted groups g, and the
// limit.
func keywordSearchParams(f graph.Filter, q string, terms []string, g kwAdmitted, limit int) map[string]any {
	return filterParams(f, map[string]any{
		"query": q, "terms": terms, "groups": g.keys, "all_groups": g.all, "n": float64(g.n), "avgdl": g.avgdl,
		"min_idf": bm25.MinIDF, "k1": bm25.K1, "b": bm25.B, "limit": int64(limit), "ties": int64(keywordTies),
	})
}

// tenantGroupsParams binds tenantGroupsCypher's parameter.
func tenantGroupsParams(tenant string) map[string]any { return map[string]any{"tenant": tenant} }

// kwAdmitted is what a keyword search reads of the keyword groups its
// filter admits: their keys, whether they are all the tenant's groups, and
// their memories n and average length in tokens avgdl.
type kwAdmitted struct {
	keys  []string
	all   bool
	n     int64
	avgdl float64
}

// admittedGroups reads f's tenant's keyword groups and returns those f
// admits (n is 0 when they hold no memory).
func admittedGroups(ctx context.Context, tx neo4jdrv.ManagedTransaction, f graph.Filter) (kwAdmitted, error) {
	recs, err := collect(ctx, tx, tenantGroupsCypher, tenantGroupsParams(f.Scope.TenantID))
	if err != nil {
		return kwAdmitted{}, err
	}
	var (
		g      kwAdmitted
		tokens int64
	)
	for _, r := range recs {
		p := r.AsMap()
		k := kwGroup{scope: graph.Scope{TenantID: f.Scope.TenantID, OrgID: str(p, "org_id"), RepoID: str(p, "repo_id")},
			owner: str(p, "owner")}
		if f.Admits(k.probe()) {
			g.keys = append(g.keys, k.key())
			g.n += i64(p, "docs")
			tokens += i64(p, "len")
		}
	}
	if g.n == 0 {
		return kwAdmitted{}, nil
	}
	g.all = len(g.keys) == len(recs)
	g.avgdl = float64(tokens) / float64(g.n)
	return g, nil
}

// Backfill of the keyword properties and groups for memories written before
// they existed (their text is in search_text, which memory_search_en
// covered). An erased memory has none (the erase removes them and takes it
// out of its group); one that has them was given them by an earlier
// backfill, which took erased memories for old ones, and loses them again.
const (
	kwMissingCypher = `
MATCH (m:Memory) WHERE (m.kw_len IS NULL) = (m.status <> 'erased')
RETURN m.id AS id, m.tenant_id AS tenant_id, m.org_id AS org_id, m.repo_id AS repo_id, m.user_id AS user_id,
       m.scope AS visibility, m.title AS title, coalesce(m.search_text, '') AS body, m.status = 'erased' AS erased
LIMIT 500`
	kwBackfillCypher = `
UNWIND $rows AS r
MATCH (m:Memory {id: r.id})
SET m += r.props
REMOVE m.search_text`
	// kwRecountCypher counts every group again from the memories not
	// erased, as the writes keep them (a group left with none keeps 0).
	kwRecountCypher = `
OPTIONAL MATCH (k:KeywordGroup)
SET k.docs = 0, k.len = 0
WITH count(k) AS reset
MATCH (m:Memory) WHERE m.status <> 'erased'
WITH m.tenant_id AS tenant_id, m.org_id AS org_id, m.repo_id AS repo_id,
     CASE WHEN m.scope IN $private AND m.user_id <> '' THEN m.user_id ELSE '' END AS owner,
     count(*) AS docs, sum(m.kw_len) AS len
MERGE (k:KeywordGroup {tenant_id: tenant_id, org_id: org_id, repo_id: repo_id, owner: owner})
SET k.docs = docs, k.len = len`
)

// backfillKeywords gives memories written before keyword groups existed
// their keyword properties, 500 at a time, takes them from erased memories
// an earlier backfill gave them to, then recounts every group. It runs at
// Open and does nothing once every memory not erased has them and no
// erased one does (TestKeywordBackfill, TestKeywordReopenAfterErase). Writes during
// the recount by an older mnemo would be miscounted: upgrade with writers
// stopped.
func (s *Store) backfillKeywords(ctx context.Context) error {
	done := 0
	for {
		n, err := write(ctx, s, func(tx neo4jdrv.ManagedTransaction) (int, error) {
			recs, err := collect(ctx, tx, kwMissingCypher, nil)
			if err != nil || len(recs) == 0 {
				return 0, err
			}
			rows := make([]map[string]any, len(recs))
			for i, r := range recs {
				p := r.AsMap()
				props := map[string]any{}
				if erased, _ := p["erased"].(bool); erased {
					props["kw_tf"], props["kw_len"], props["kw_text"], props["kw_group"] = nil, nil, nil, nil // removed
				} else {
					g := kwGroupOf(scopeOf(p), str(p, "user_id"), graph.Visibility(str(p, "visibility")))
					keywordProps(props, g, str(p, "title"), str(p, "body"), s.stems.Stem)
				}
				rows[i] = map[string]any{"id": str(p, "id"), "props": props}
			}
			_, err = collect(ctx, tx, kwBackfillCypher, map[string]any{"rows": rows})
			return len(rows), err
		})
		if err != nil {
			return fmt.Errorf("neo4j: backfill keyword properties: %w", err)
		}
		if n == 0 {
			break
		}
		done += n
	}
	if done == 0 {
		return nil
	}
	_, err := write(ctx, s, func(tx neo4jdrv.ManagedTransaction) (struct{}, error) {
		private := []string{string(graph.VisibilityUser), string(graph.VisibilitySession)} // graph.Visibility.Private
		_, err := collect(ctx, tx, kwRecountCypher, map[string]any{"private": private})
		return struct{}{}, err
	})
	if err != nil {
		return fmt.Errorf("neo4j: recount keyword groups: %w", err)
	}
	return nil
}
