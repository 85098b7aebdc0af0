package neo4j

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// sessionNewestCypher finds the newest memory of each session of a batch
// (graph.EventTime, then created_at, then write order: among equals, the
// one no NEXT leaves yet, i.e. the last written), before the batch is
// written. Uses memory_session.
const sessionNewestCypher = `
UNWIND $sessions AS s
CALL {
  WITH s
  MATCH (m:Memory {tenant_id: s.tenant_id, session_id: s.session_id})
  WHERE m.org_id = s.org_id AND m.repo_id = s.repo_id AND m.user_id = s.user_id
  WITH m ORDER BY coalesce(m.valid_from, m.created_at) DESC, m.created_at DESC,
       CASE WHEN EXISTS { (m)-[:NEXT]->(:Memory) } THEN 1 ELSE 0 END, m.id DESC
  LIMIT 1
  RETURN m.id AS id, coalesce(m.valid_from, m.created_at) AS ev, m.created_at AS at
}
RETURN s.i AS i, id, ev, at`

// nextCypher writes NEXT edges between memories. Uses memory_id.
const nextCypher = `
UNWIND $next AS n
MATCH (a:Memory {id: n.prev})
MATCH (b:Memory {id: n.next})
MERGE (a)-[:NEXT]->(b)`

// chunkNextCypher writes NEXT edges between consecutive chunks. Uses
// chunk_id.
const chunkNextCypher = `
UNWIND $next AS n
MATCH (a:Chunk {id: n.prev})
MATCH (b:Chunk {id: n.next})
CREATE (a)-[:NEXT]->(b)`

// coOccursCypher adds to CO_OCCURS counts, in the order given (so
// concurrent writers lock entity pairs in one order). Uses entity_norm.
const coOccursCypher = `
UNWIND $pairs AS p
MATCH (a:Entity {tenant_id: p.tenant_id, norm_name: p.a})
MATCH (b:Entity {tenant_id: p.tenant_id, norm_name: p.b})
MERGE (a)-[r:CO_OCCURS]->(b)
SET r.count = coalesce(r.count, 0) + p.n`

// coOccursDropCypher takes from CO_OCCURS counts (a new version replaced
// the entities of an old one) and drops the edges no memory supports any
// more; apart from coOccursCypher, whose writes need no Eager step. Uses
// entity_norm.
const coOccursDropCypher = `
UNWIND $pairs AS p
MATCH (:Entity {tenant_id: p.tenant_id, norm_name: p.a})-[r:CO_OCCURS]->(:Entity {tenant_id: p.tenant_id, norm_name: p.b})
SET r.count = r.count + p.n
WITH r WHERE r.count <= 0
DELETE r`

// sessionKey is the namespace NEXT edges chain memories in.
type sessionKey struct{ tenant, org, repo, user, session string }

type sessionHead struct {
	id     string
	ev, at time.Time
}

// linkSessions returns the NEXT edges of a batch's memories (normalised):
// each memory with a session follows the newest one of its session, read
// from the database or written earlier in the batch. A memory becomes the
// newest unless its (event time, created_at) is older: ties go to the one
// written last.
func linkSessions(ctx context.Context, tx txn, ins []graph.MemoryInput) ([]map[string]any, error) {
	keys := map[sessionKey]int{}
	var params []map[string]any
	for _, in := range ins {
		m := in.Memory
		if m.SessionID == "" {
			continue
		}
		k := sessionKey{m.Scope.TenantID, m.Scope.OrgID, m.Scope.RepoID, m.UserID, m.SessionID}
		if _, ok := keys[k]; !ok {
			keys[k] = len(params)
			params = append(params, map[string]any{"i": int64(len(params)), "tenant_id": k.tenant, "org_id": k.org,
				"repo_id": k.repo, "user_id": k.user, "session_id": k.session})
		}
	}
	if len(params) == 0 {
		return nil, nil
	}
	recs, err := collect(ctx, tx, sessionNewestCypher, map[string]any{"sessions": params})
	if err != nil {
		return nil, err
	}
	heads := make([]*sessionHead, len(params))
	for _, r := range recs {
		p := r.AsMap()
		heads[p["i"].(int64)] = &sessionHead{id: str(p, "id"), ev: tm(p, "ev"), at: tm(p, "at")}
	}
	var next []map[string]any
	for _, in := range ins {
		m := in.Memory
		if m.SessionID == "" {
			continue
		}
		i := keys[sessionKey{m.Scope.TenantID, m.Scope.OrgID, m.Scope.RepoID, m.UserID, m.SessionID}]
		h, ev := heads[i], graph.EventTime(m)
		if h != nil {
			next = append(next, map[string]any{"prev": h.id, "next": m.ID})
		}
		if h == nil || ev.After(h.ev) || (ev.Equal(h.ev) && !m.CreatedAt.Before(h.at)) {
			heads[i] = &sessionHead{id: m.ID, ev: ev, at: m.CreatedAt}
		}
	}
	return next, nil
}

// coOccurDeltas accumulates CO_OCCURS count changes by tenant and pair.
type coOccurDeltas map[[3]string]int64

// add records the pairs of a memory mentioning norms, delta each.
func (d *coOccurDeltas) add(tenant string, norms []string, delta int64) {
	if *d == nil {
		*d = coOccurDeltas{}
	}
	for _, p := range graph.CoOccurPairs(norms) {
		(*d)[[3]string{tenant, p[0], p[1]}] += delta
	}
}

// rows are the parameters of coOccursCypher (sign 1: the increments) or
// coOccursDropCypher (sign -1), in a fixed order.
func (d coOccurDeltas) rows(sign int64) []map[string]any {
	var keys [][3]string
	for k, n := range d {
		if n*sign > 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b [3]string) int { return slices.Compare(a[:], b[:]) })
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		out[i] = map[string]any{"tenant_id": k[0], "a": k[1], "b": k[2], "n": d[k]}
	}
	return out
}

var _ graph.EdgeCounter = (*Store)(nil)

// coOccurrencesCypher reads an entity's CO_OCCURS edges, both ways. Uses
// entity_norm.
const coOccurrencesCypher = `
MATCH (e:Entity {tenant_id: $tenant, norm_name: $name})-[r:CO_OCCURS]-(o:Entity)
RETURN o.norm_name AS k, r.count AS v`

// CoOccurrences implements graph.EdgeCounter.
func (s *Store) CoOccurrences(ctx context.Context, tenant, entity string) (map[string]int64, error) {
	out, err := s.counts(ctx, coOccurrencesCypher, map[string]any{"tenant": tenant, "name": entity})
	if err != nil {
		return nil, fmt.Errorf("neo4j: co-occurrences: %w", err)
	}
	return out, nil
}

// mentionCountsCypher reads a memory's MENTIONS counts. Uses memory_id.
const mentionCountsCypher = `
MATCH (m:Memory {id: $id})-[r:MENTIONS]->(e:Entity)
WHERE m.tenant_id = $tenant
RETURN e.norm_name AS k, coalesce(r.count, 1) AS v`

// MentionCounts implements graph.EdgeCounter.
func (s *Store) MentionCounts(ctx context.Context, tenant, memoryID string) (map[string]int64, error) {
	out, err := s.counts(ctx, mentionCountsCypher, map[string]any{"tenant": tenant, "id": memoryID})
	if err != nil {
		return nil, fmt.Errorf("neo4j: mention counts: %w", err)
	}
	return out, nil
}

func (s *Store) counts(ctx context.Context, q string, params map[string]any) (map[string]int64, error) {
	return read(ctx, s, func(tx txn) (map[string]int64, error) {
		recs, err := collect(ctx, tx, q, params)
		if err != nil {
			return nil, err
		}
		out := make(map[string]int64, len(recs))
		for _, r := range recs {
			p := r.AsMap()
			out[str(p, "k")] = i64(p, "v")
		}
		return out, nil
	})
}
