package neo4j

import (
	"context"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
)

// Reads as known at a time (graph.Filter.KnownAt; docs/time.md).
//
// Every Memory carries its status history: status_log (the statuses it
// took, in order) and status_at (when each was recorded, transaction time),
// parallel lists written with the memory and appended by every status
// change (logStatusX and its kin). A memory written before the lists
// existed starts them, on its first change, with the status it had then,
// dated from its creation.
//
// A read whose filter has KnownAt binds $f_known_at (filterParams), and
// asKnown rewrites its Cypher: memoryVisible admits what existed then, with
// the status recorded by then and the edits approved by then (instead of
// the status, quarantined and blocked_channels properties, which hold
// today's), and memoryProjection returns the status, current version,
// version count and successor of then. A read without KnownAt runs the text
// as written, so its plans and cost do not change.

// logStatusX, logStatusN and logStatusOld append a status change of node
// x, n or old at $at: the caller's text continues with the new status (a
// string literal), then sets it.
const (
	logStatusX = `x.status_at = coalesce(x.status_at, [x.created_at]) + $at,
  x.status_log = coalesce(x.status_log, [x.status]) + `
	logStatusN = `n.status_at = coalesce(n.status_at, [n.created_at]) + $at,
  n.status_log = coalesce(n.status_log, [n.status]) + `
	logStatusOld = `old.status_at = coalesce(old.status_at, [old.created_at]) + $at,
  old.status_log = coalesce(old.status_log, [old.status]) + `
)

// knownStatus is m's status as known at $f_known_at: the last one
// status_log recorded by then (the status itself for a memory that has no
// history yet); erased whatever the time, as an erasure is never undone.
const knownStatus = `(CASE WHEN m.status = 'erased' THEN 'erased' ELSE coalesce(last(
  [i IN range(0, size(coalesce(m.status_at, [])) - 1) WHERE m.status_at[i] <= $f_known_at | m.status_log[i]]),
  m.status) END)`

// knownVersions are m's versions written by $f_known_at (version 1 exists
// as soon as its memory: it is written in the same transaction, a moment
// after the engine stamped the memory's created_at).
const knownVersions = `[(m)-[:HAS_VERSION]->(kv:Version) WHERE kv.created_at <= $f_known_at OR kv.number = 1 | kv]`

// versionKnown admits a version v written by $f_known_at (any without
// KnownAt), appended to a WHERE.
const versionKnown = `
  AND ($f_known_at IS NULL OR v.created_at <= $f_known_at OR v.number = 1)`

// asKnown rewrites query for a filter with KnownAt (params binds
// f_known_at), and returns it unchanged otherwise.
func asKnown(query string, params map[string]any) string {
	if params["f_known_at"] == nil {
		return query
	}
	return knownRewrite.Replace(query)
}

var knownRewrite = strings.NewReplacer(
	// memoryVisible
	"\n  AND m.status IN $f_statuses",
	"\n  AND m.created_at <= $f_known_at AND "+knownStatus+" IN $f_statuses",
	"\n  AND ($f_channel = '' OR NOT $f_channel IN coalesce(m.blocked_channels, []))",
	"\n  AND NOT EXISTS { MATCH (ke:Edit)-[:EDITS]->(m) WHERE ke.status = 'approved' AND ke.decided_at <= $f_known_at"+
		"\n       AND ((ke.kind = 'block' AND ke.channel = $f_channel) OR (ke.kind = 'quarantine' AND NOT $f_quarantined)) }",
	"\n  AND ($f_quarantined OR m.quarantined IS NULL OR NOT m.quarantined)", "",
	// memoryProjection
	".title, .canonical_key, .status,", ".title, .canonical_key, status: "+knownStatus+",",
	".current_version_id, .version_count,",
	"current_version_id: reduce(best = null, kv IN "+knownVersions+
		" | CASE WHEN best IS NULL OR kv.number > best.number THEN kv ELSE best END).id,\n  version_count: size("+knownVersions+"),",
	"superseded_by: head([(sup:Memory)-[:SUPERSEDES]->(m) | sup.id])",
	"superseded_by: CASE WHEN "+knownStatus+" = 'superseded' THEN head([(sup:Memory)-[:SUPERSEDES]->(m) | sup.id]) END",
)

// keywordKnownCypher returns the title and the text of the version known
// at $f_known_at of every memory the filter admits (as of then: asKnown
// rewrites memoryVisible). A scan of the tenant's memories: no index holds
// past versions' text (docs/time.md says what it costs). Uses memory_*
// indexes on tenant_id.
const keywordKnownCypher = `
MATCH (m:Memory)
WHERE ` + memoryVisible + `
WITH m, reduce(best = null, kv IN ` + knownVersions + ` |
  CASE WHEN best IS NULL OR kv.number > best.number THEN kv ELSE best END) AS v
RETURN m.id AS id, m.title AS title, coalesce(v.index_text, '') AS index_text, coalesce(v.content, '') AS content`

// keywordAsKnown is KeywordSearch as known at f.KnownAt: BM25 over the
// title and the then-current version's text of the memories f admits as of
// then, with their statistics (bm25.Score, as graph/sqlite computes it);
// the best limit, read with their fields as of then.
func (s *Store) keywordAsKnown(ctx context.Context, f graph.Filter, terms []string, limit int) ([]graph.Scored, error) {
	return read(ctx, s, func(tx txn) ([]graph.Scored, error) {
		recs, err := collect(ctx, tx, keywordKnownCypher, filterParams(f, nil))
		if err != nil {
			return nil, err
		}
		var (
			ids   = make([]string, len(recs))
			docs  = make([]bm25.Doc, len(recs))
			stems bm25.Stems
		)
		for i, r := range recs {
			p := r.AsMap()
			ids[i] = str(p, "id")
			docs[i] = bm25.IndexWith(str(p, "title"), graph.SearchText(str(p, "index_text"), str(p, "content")), stems.Stem)
		}
		scores := bm25.Score(docs, terms)
		order := bm25.Best(scores, limit, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
		top := make([]string, len(order))
		for i, k := range order {
			top[i] = ids[k]
		}
		mrecs, err := collect(ctx, tx, getMemoriesCypher, filterParams(f, map[string]any{"ids": top}))
		if err != nil {
			return nil, err
		}
		out := make([]graph.Scored, 0, len(mrecs))
		for _, r := range mrecs {
			i, _ := r.Get("i")
			k, _ := i.(int64)
			out = append(out, graph.Scored{Memory: memoryOf(r, "m"), Score: scores[order[k]]})
		}
		return out, nil
	})
}
