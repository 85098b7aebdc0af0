package neo4j

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// restoreCheckCypher reads an archived memory's state and whether another
// active memory holds its canonical key in its namespace. Uses memory_id
// and memory_key.
const restoreCheckCypher = `
MATCH (n:Memory {id: $id})
WHERE ` + inScope + `
SET n._lock = true REMOVE n._lock
WITH n
OPTIONAL MATCH (o:Memory)
WHERE n.canonical_key <> '' AND o.tenant_id = n.tenant_id AND o.canonical_key = n.canonical_key
  AND o.status = 'active' AND o.org_id = n.org_id AND o.repo_id = n.repo_id
  AND o.user_id = n.user_id AND o.type = n.type AND o.id <> n.id
RETURN n.status AS was, head(collect(o.id)) AS holder`

const restoreCypher = `MATCH (n:Memory {id: $id}) SET ` + logStatusN + `'active' SET n.status = 'active'`

// Restore makes an archived memory active again.
func (s *Store) Restore(ctx context.Context, sc graph.Scope, id string, audit ...graph.AuditEvent) error {
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("neo4j: restore: %w", err)
	}
	if err := errors.Join(requireIDs("id", id), validAudit(audit)); err != nil {
		return fmt.Errorf("neo4j: restore: %w", err)
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		recs, err := collect(ctx, tx, restoreCheckCypher, writeScopeParams(sc, map[string]any{"id": id}))
		if err != nil {
			return struct{}{}, err
		}
		if len(recs) == 0 {
			return struct{}{}, notFound("memory", id)
		}
		p := recs[0].AsMap()
		if was := str(p, "was"); was != string(graph.StatusArchived) {
			return struct{}{}, fmt.Errorf("memory %q is %s, not archived: %w", id, was, graph.ErrConflict)
		}
		if h := str(p, "holder"); h != "" {
			return struct{}{}, fmt.Errorf("its canonical key is held by active memory %q: %w", h, graph.ErrConflict)
		}
		now := s.now().UTC()
		if _, err = collect(ctx, tx, restoreCypher, map[string]any{"id": id, "at": now}); err != nil {
			return struct{}{}, err
		}
		if err := stampKeywords(ctx, tx, kwStamps{sc.TenantID: {id}}); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, appendAudit(ctx, tx, now, audit)
	})
	if err != nil {
		return fmt.Errorf("neo4j: restore %s: %w", id, err)
	}
	return nil
}

// The statements of an erase (see graph/forget.go for what goes and what
// stays), each over the batch $ids of memories already checked to be in
// scope and not erased. All use memory_id; the gate, audit and outbox ones
// audit_subject, gate_memory and outbox_memory.
const (
	// eraseCheckCypher reads each memory of the batch with what the
	// keyword groups need, and locks it.
	eraseCheckCypher = `
UNWIND $ids AS id
OPTIONAL MATCH (m:Memory {id: id})
FOREACH (x IN CASE WHEN m IS NULL THEN [] ELSE [m] END | SET x._lock = true REMOVE x._lock)
RETURN id, m {.tenant_id, .org_id, .repo_id, .user_id, .scope, .status, .kw_len} AS m`
	// eraseEntitiesCypher lists the entities the memories and their
	// chunks mention: the orphan candidates.
	eraseEntitiesCypher = `
UNWIND $ids AS id
MATCH (m:Memory {id: id})
CALL {
  WITH m MATCH (m)-[:MENTIONS]->(e:Entity) RETURN e
  UNION
  WITH m MATCH (m)-[:HAS_VERSION]->(:Version)-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity) RETURN e
}
RETURN collect(DISTINCT e.id) AS entities`
	// eraseEdgesCypher reads what the write-time edges need: the norm
	// names each memory MENTIONS (its CO_OCCURS pairs) and its NEXT
	// neighbours.
	eraseEdgesCypher = `
UNWIND $ids AS id
MATCH (m:Memory {id: id})
RETURN id, [(m)-[:MENTIONS]->(e:Entity) | e.norm_name] AS norms,
       [(p:Memory)-[:NEXT]->(m) | p.id] AS prevs, [(m)-[:NEXT]->(n:Memory) | n.id] AS nexts`
	eraseNextCypher = `
UNWIND $ids AS id
MATCH (:Memory {id: id})-[r:NEXT]-(:Memory)
DELETE r`
	eraseChunksCypher = `
UNWIND $ids AS id
MATCH (:Memory {id: id})-[:HAS_VERSION]->(:Version)-[:HAS_CHUNK]->(c:Chunk)
DETACH DELETE c
RETURN count(*) AS n`
	eraseVersionsCypher = `
UNWIND $ids AS id
MATCH (:Memory {id: id})-[:HAS_VERSION]->(v:Version)
SET v = {id: v.id, memory_id: v.memory_id, number: v.number, created_at: v.created_at,
         name: 'v' + toString(v.number) + ' (erased)', content: '', summary: '', index_text: '', content_hash: ''}
RETURN count(*) AS n`
	eraseMemoriesCypher = `
UNWIND $ids AS id
MATCH (m:Memory {id: id})
OPTIONAL MATCH (m)-[r:MENTIONS]->(:Entity)
DELETE r
WITH DISTINCT m
SET m.status = 'erased', m.title = '', m.canonical_key = '', m.tags = [], m.subject_type = '', m.subject_id = '',
    m.layer = '', m.sublayer = '', m.session_id = ''
REMOVE m.kw_tf, m.kw_len, m.kw_text, m.kw_group, m.active_key, m.search_text
WITH m
OPTIONAL MATCH (ed:Edit)-[:EDITS]->(m)
SET ed.content = '', ed.reason = ''`
	// eraseCapsulesCypher takes the memories and their versions out of
	// every capsule that CONTAINS them.
	eraseCapsulesCypher = `
UNWIND $ids AS id
MATCH (m:Memory {id: id})
OPTIONAL MATCH (m)<-[r:CONTAINS]-(:Capsule)
DELETE r
WITH DISTINCT m
OPTIONAL MATCH (m)-[:HAS_VERSION]->(:Version)<-[rv:CONTAINS]-(:Capsule)
DELETE rv`
	eraseGateCypher = `
MATCH (g:GateRequest) WHERE g.tenant_id = $tenant AND g.memory_id IN $ids
SET g.title = '', g.reason = '', g.payload = 'null'
RETURN collect(g.id) AS ids`
	// eraseProposalsCypher empties the proposals on the memories and the
	// reasons of the decisions that rejected them. Uses
	// proposal_tenant_created.
	eraseProposalsCypher = `
MATCH (p:Proposal) WHERE p.tenant_id = $tenant AND p.memory_id IN $ids
SET p.title = '', p.content = ''
WITH p
OPTIONAL MATCH (p)-[:REJECTED_BECAUSE]->(d:Decision)
SET d.reason = ''`
	eraseAuditCypher = `
UNWIND $subjects AS sid
MATCH (a:AuditEvent) WHERE a.tenant_id = $tenant AND a.subject_id = sid
SET a.reason = ''`
	eraseOutboxCypher = `
MATCH (o:OutboxItem) WHERE o.tenant_id = $tenant AND o.memory_id IN $ids
DELETE o
RETURN count(*) AS n`
	// eraseOrphansCypher deletes the candidate entities nothing mentions
	// any more. Uses entity_id.
	eraseOrphansCypher = `
UNWIND $entities AS eid
MATCH (e:Entity {id: eid})
WHERE NOT EXISTS { MATCH (e)<-[:MENTIONS]-() }
DETACH DELETE e
RETURN count(*) AS n`
)

// Erase removes the content of memories and leaves tombstones.
func (s *Store) Erase(ctx context.Context, sc graph.Scope, in graph.EraseInput) (graph.Erasure, error) {
	if err := sc.Validate(); err != nil {
		return graph.Erasure{}, fmt.Errorf("neo4j: erase: %w", err)
	}
	if err := in.Validate(); err != nil {
		return graph.Erasure{}, fmt.Errorf("neo4j: erase: %w", err)
	}
	now := s.now().UTC()
	out, err := write(ctx, s, func(tx txn) (graph.Erasure, error) {
		var out graph.Erasure
		recs, err := collect(ctx, tx, eraseCheckCypher, map[string]any{"ids": dedupe(in.IDs)})
		if err != nil {
			return out, err
		}
		erased := map[string]bool{}
		var (
			stamps  kwStamps
			outbox  []map[string]any
			tenants = map[string][]string{}
		)
		for _, r := range recs {
			id, _ := r.Get("id")
			v, _ := r.Get("m")
			p, _ := v.(map[string]any)
			if p == nil || !sc.Contains(scopeOf(p)) {
				return out, notFound("memory", id.(string))
			}
			if graph.Status(str(p, "status")) == graph.StatusErased {
				continue
			}
			mid := id.(string)
			scope := scopeOf(p)
			erased[mid] = true
			tenants[scope.TenantID] = append(tenants[scope.TenantID], mid)
			stamps.add(scope.TenantID, mid)
			if in.Index {
				outbox = append(outbox, scopeProps(scope, map[string]any{
					"id": graph.NewID(), "memory_id": mid, "version_id": "", "op": "delete",
					"attempts": int64(0), "created_at": now, "next_attempt_at": neverTried, "dead": false, "last_error": "",
					"name": "delete " + mid,
				}))
			}
			out.Memories++
		}
		for tenant, ids := range tenants {
			if err := eraseTenant(ctx, tx, tenant, ids, &out, &stamps); err != nil {
				return out, err
			}
		}
		if err := stampKeywords(ctx, tx, stamps); err != nil {
			return out, err
		}
		if len(outbox) > 0 {
			if _, err := collect(ctx, tx, createOutboxCypher, map[string]any{"items": outbox}); err != nil {
				return out, err
			}
		}
		return out, appendEraseAudit(ctx, tx, now, in.Audit, erased)
	})
	if err != nil {
		return graph.Erasure{}, fmt.Errorf("neo4j: erase: %w", err)
	}
	return out, nil
}

// eraseAuditCypher writes audit events about memories the erase checked,
// each linked to its memory by DECIDED: appendAuditCypher's lookup of every
// subject label costs more than the rest of an erase. Uses memory_id.
const eraseAuditAppendCypher = `
UNWIND $events AS ev
MATCH (m:Memory {id: ev.subject_id})
CREATE (a:AuditEvent) SET a = ev
CREATE (a)-[:DECIDED]->(m)`

// appendEraseAudit writes an erase's audit events: those about a memory it
// erased through eraseAuditAppendCypher, the others as AppendAudit does.
func appendEraseAudit(ctx context.Context, tx txn, now time.Time, events []graph.AuditEvent,
	erased map[string]bool) error {
	var mine, others []graph.AuditEvent
	for _, ev := range events {
		if ev.SubjectKind == "Memory" && erased[ev.SubjectID] {
			mine = append(mine, ev)
		} else {
			others = append(others, ev)
		}
	}
	if len(mine) > 0 {
		if _, err := collect(ctx, tx, eraseAuditAppendCypher, map[string]any{"events": auditRows(now, mine)}); err != nil {
			return err
		}
	}
	return appendAudit(ctx, tx, now, others)
}

// eraseTenant erases memories ids of one tenant inside tx.
func eraseTenant(ctx context.Context, tx txn, tenant string, ids []string, out *graph.Erasure, stamps *kwStamps) error {
	params := map[string]any{"ids": ids, "tenant": tenant}
	recs, err := collect(ctx, tx, eraseEntitiesCypher, params)
	if err != nil {
		return err
	}
	entities, _ := recs[0].Get("entities")
	if err := eraseEdges(ctx, tx, tenant, ids, stamps); err != nil {
		return err
	}
	if _, err := collect(ctx, tx, eraseRelationsCypher, params); err != nil {
		return err
	}
	count := func(query string) (int, error) {
		recs, err := collect(ctx, tx, query, params)
		if err != nil || len(recs) == 0 {
			return 0, err
		}
		n, _ := recs[0].Get("n")
		c, _ := n.(int64)
		return int(c), nil
	}
	chunks, err := count(eraseChunksCypher)
	if err != nil {
		return err
	}
	versions, err := count(eraseVersionsCypher)
	if err != nil {
		return err
	}
	out.Chunks += chunks
	out.Versions += versions
	for _, q := range []string{eraseMemoriesCypher, eraseCapsulesCypher} {
		if _, err := collect(ctx, tx, q, params); err != nil {
			return err
		}
	}
	if _, err := collect(ctx, tx, eraseProposalsCypher, params); err != nil {
		return err
	}
	recs, err = collect(ctx, tx, eraseGateCypher, params)
	if err != nil {
		return err
	}
	gates, _ := recs[0].Get("ids")
	subjects := append([]any{}, anySlice(ids)...)
	if g, ok := gates.([]any); ok {
		subjects = append(subjects, g...)
	}
	if _, err := collect(ctx, tx, eraseAuditCypher, map[string]any{"tenant": tenant, "subjects": subjects}); err != nil {
		return err
	}
	dropped, err := count(eraseOutboxCypher)
	if err != nil {
		return err
	}
	out.Outbox += dropped
	recs, err = collect(ctx, tx, eraseOrphansCypher, map[string]any{"entities": entities})
	if err != nil {
		return err
	}
	n, _ := recs[0].Get("n")
	c, _ := n.(int64)
	out.Entities += int(c)
	return nil
}

// eraseEdges takes the memories ids out of the write-time edges: their
// CO_OCCURS counts go down (an edge at 0 goes), and their session's NEXT
// chain is re-linked around them, each predecessor that stays leading to
// each successor that stays, as if they had never been written. The
// predecessors given a new NEXT are added to stamps: the walk holds each
// memory's links in the process (memLink), read from a stamped end.
func eraseEdges(ctx context.Context, tx txn, tenant string, ids []string, stamps *kwStamps) error {
	recs, err := collect(ctx, tx, eraseEdgesCypher, map[string]any{"ids": ids})
	if err != nil {
		return err
	}
	pairs := map[[2]string]int64{}
	prevs, nexts := map[string][]string{}, map[string][]string{}
	for _, r := range recs {
		p := r.AsMap()
		id := str(p, "id")
		for _, pr := range graph.CoOccurPairs(strs(p, "norms")) {
			pairs[pr]--
		}
		prevs[id], nexts[id] = strs(p, "prevs"), strs(p, "nexts")
	}
	if len(pairs) > 0 {
		rows := make([]map[string]any, 0, len(pairs))
		for pr, n := range pairs {
			rows = append(rows, map[string]any{"tenant_id": tenant, "a": pr[0], "b": pr[1], "n": n})
		}
		slices.SortFunc(rows, func(a, b map[string]any) int {
			return cmp.Or(cmp.Compare(a["a"].(string), b["a"].(string)), cmp.Compare(a["b"].(string), b["b"].(string)))
		})
		if _, err := collect(ctx, tx, coOccursDropCypher, map[string]any{"pairs": rows}); err != nil {
			return err
		}
	}
	links := graph.Relink(prevs, nexts)
	if len(links) == 0 && len(prevs) == 0 {
		return nil
	}
	if _, err := collect(ctx, tx, eraseNextCypher, map[string]any{"ids": ids}); err != nil {
		return err
	}
	if len(links) == 0 {
		return nil
	}
	next := make([]map[string]any, len(links))
	for i, l := range links {
		next[i] = map[string]any{"prev": l[0], "next": l[1]}
		stamps.add(tenant, l[0])
	}
	_, err = collect(ctx, tx, nextCypher, map[string]any{"next": next})
	return err
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
