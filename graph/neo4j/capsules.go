package neo4j

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

var _ graph.Capsules = (*Store)(nil)

// createCapsuleCypher writes a capsule and a CONTAINS edge to each item
// (kind and position on the edge: the items read back in the order given).
// Uses capsule_id, memory_id, version_id, decision_id.
const createCapsuleCypher = `
CREATE (c:Capsule) SET c = $props
WITH c
CALL {
  WITH c UNWIND $items AS it
  CALL {
    WITH it MATCH (x:Memory {id: it.id}) WHERE it.kind = 'memory' RETURN x
    UNION
    WITH it MATCH (x:Version {id: it.id}) WHERE it.kind = 'version' RETURN x
    UNION
    WITH it MATCH (x:Decision {id: it.id}) WHERE it.kind = 'decision' RETURN x
  }
  CREATE (c)-[:CONTAINS {kind: it.kind, pos: it.pos}]->(x)
}`

// CreateCapsule implements graph.Capsules.
func (s *Store) CreateCapsule(ctx context.Context, c graph.Capsule, audit ...graph.AuditEvent) (graph.Capsule, error) {
	if err := c.Validate(); err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: create capsule: %w", err)
	}
	for i, a := range audit {
		if err := a.Validate(); err != nil {
			return graph.Capsule{}, fmt.Errorf("neo4j: create capsule: audit %d: %w", i, err)
		}
	}
	now := s.now().UTC()
	stamp(&c.ID, &c.CreatedAt, now)
	c.ExpiresAt = utc(c.ExpiresAt)
	var items []map[string]any
	for _, l := range []struct {
		kind string
		ids  []string
	}{{"memory", c.MemoryIDs}, {"version", c.VersionIDs}, {"decision", c.DecisionIDs}} {
		for _, id := range l.ids {
			items = append(items, map[string]any{"kind": l.kind, "id": id, "pos": int64(len(items))})
		}
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		for _, chk := range []struct {
			query, kind string
			ids         []string
		}{
			{memoriesInScopeCypher, "memory", c.MemoryIDs}, {versionsInScopeCypher, "version", c.VersionIDs},
			{decisionsInScopeCypher, "decision", c.DecisionIDs},
		} {
			if err := requireInScope(ctx, tx, chk.query, chk.kind, c.Scope, chk.ids...); err != nil {
				return struct{}{}, err
			}
		}
		_, err := collect(ctx, tx, createCapsuleCypher, map[string]any{
			"props": scopeProps(c.Scope, map[string]any{
				"id": c.ID, "name": c.Subject, "subject": c.Subject, "audience": c.Audience,
				"created_by": c.CreatedBy, "created_at": c.CreatedAt, "expires_at": c.ExpiresAt, "revoked_by": "",
			}),
			"items": items,
		})
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, appendAudit(ctx, tx, now, audit)
	})
	if err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: create capsule: %w", err)
	}
	return c, nil
}

// capsuleProjection returns a Capsule n as a map with its items.
const capsuleProjection = `n {.*, items: [(n)-[r:CONTAINS]->(x) | {kind: r.kind, pos: r.pos, id: x.id}]}`

// capsuleLive keeps capsules that are neither revoked nor expired at $at.
const capsuleLive = `n.revoked_at IS NULL AND n.expires_at > $at`

// getCapsuleCypher reads a live capsule in scope for an agent of its
// audience or its creator. Uses capsule_id.
const getCapsuleCypher = `
MATCH (n:Capsule {id: $id})
WHERE ` + inScope + ` AND ` + capsuleLive + ` AND (n.created_by = $agent OR $agent IN n.audience)
RETURN ` + capsuleProjection + ` AS n`

// GetCapsule implements graph.Capsules.
func (s *Store) GetCapsule(ctx context.Context, f graph.Filter, q graph.CapsuleQuery, id string) (graph.Capsule, error) {
	if err := f.Validate(); err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: get capsule: %w", err)
	}
	if err := q.Validate(); err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: get capsule: %w", err)
	}
	if err := requireIDs("id", id); err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: get capsule: %w", err)
	}
	c, err := read(ctx, s, func(tx txn) (graph.Capsule, error) {
		recs, err := collect(ctx, tx, getCapsuleCypher, readScopeParams(f, map[string]any{
			"id": id, "agent": q.Agent, "at": q.At.UTC(),
		}))
		if err != nil {
			return graph.Capsule{}, err
		}
		if len(recs) == 0 {
			return graph.Capsule{}, notFound("capsule", id)
		}
		return toCapsule(nodeOf(recs[0], "n")), nil
	})
	if err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: get capsule: %w", err)
	}
	return c, nil
}

// listCapsulesCypher lists live capsules in scope addressed to $agent (or
// created by it, $sent), newest first, after the keyset cursor. Uses
// capsule_tenant_created.
const listCapsulesCypher = `
MATCH (n:Capsule)
WHERE ` + inScope + ` AND ` + capsuleLive + `
  AND (($sent AND n.created_by = $agent) OR (NOT $sent AND $agent IN n.audience))
  AND ($c_at IS NULL OR n.created_at < $c_at OR (n.created_at = $c_at AND n.id < $c_id))
RETURN ` + capsuleProjection + ` AS n
ORDER BY n.created_at DESC, n.id DESC
LIMIT $limit`

// ListCapsules implements graph.Capsules.
func (s *Store) ListCapsules(ctx context.Context, f graph.Filter, q graph.CapsuleQuery, p graph.Page) ([]graph.Capsule, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", fmt.Errorf("neo4j: list capsules: %w", err)
	}
	if err := q.Validate(); err != nil {
		return nil, "", fmt.Errorf("neo4j: list capsules: %w", err)
	}
	limit := pageLimit(p.Limit)
	at, cid, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, "", fmt.Errorf("neo4j: list capsules: %w", err)
	}
	cs, err := read(ctx, s, func(tx txn) ([]graph.Capsule, error) {
		recs, err := collect(ctx, tx, listCapsulesCypher, readScopeParams(f, map[string]any{
			"agent": q.Agent, "at": q.At.UTC(), "sent": q.Sent,
			"c_at": timeParam(at), "c_id": cid, "limit": int64(limit + 1),
		}))
		if err != nil {
			return nil, err
		}
		out := make([]graph.Capsule, 0, len(recs))
		for _, r := range recs {
			out = append(out, toCapsule(nodeOf(r, "n")))
		}
		return out, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("neo4j: list capsules: %w", err)
	}
	next := ""
	if len(cs) > limit {
		cs = cs[:limit]
		next = encodeCursor(cs[limit-1].CreatedAt, cs[limit-1].ID)
	}
	return cs, next, nil
}

// revokeCapsuleCypher revokes a capsule in the writer's scope; was is its
// revocation time before, read under the node's write lock so two
// concurrent revocations cannot both see it live. Uses capsule_id.
const revokeCapsuleCypher = `
MATCH (n:Capsule {id: $id})
WHERE ` + inScope + `
SET n._lock = true REMOVE n._lock
WITH n, n.revoked_at AS was
FOREACH (x IN CASE WHEN was IS NULL THEN [n] ELSE [] END | SET x.revoked_at = $at, x.revoked_by = $by)
RETURN was, ` + capsuleProjection + ` AS n`

// RevokeCapsule implements graph.Capsules.
func (s *Store) RevokeCapsule(ctx context.Context, sc graph.Scope, id, by string, at time.Time, audit ...graph.AuditEvent) (graph.Capsule, error) {
	if err := sc.Validate(); err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: revoke capsule: %w", err)
	}
	if err := requireIDs("id", id, "revoked_by", by); err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: revoke capsule: %w", err)
	}
	for i, a := range audit {
		if err := a.Validate(); err != nil {
			return graph.Capsule{}, fmt.Errorf("neo4j: revoke capsule: audit %d: %w", i, err)
		}
	}
	now := s.now().UTC()
	if at.IsZero() {
		at = now
	}
	c, err := write(ctx, s, func(tx txn) (graph.Capsule, error) {
		recs, err := collect(ctx, tx, revokeCapsuleCypher, writeScopeParams(sc, map[string]any{
			"id": id, "by": by, "at": at.UTC(),
		}))
		if err != nil {
			return graph.Capsule{}, err
		}
		if len(recs) == 0 {
			return graph.Capsule{}, notFound("capsule", id)
		}
		if was, _ := recs[0].Get("was"); was != nil {
			return graph.Capsule{}, fmt.Errorf("capsule %s is already revoked: %w", id, graph.ErrConflict)
		}
		return toCapsule(nodeOf(recs[0], "n")), appendAudit(ctx, tx, now, audit)
	})
	if err != nil {
		return graph.Capsule{}, fmt.Errorf("neo4j: revoke capsule: %w", err)
	}
	return c, nil
}

// toCapsule reads a capsuleProjection map.
func toCapsule(p map[string]any) graph.Capsule {
	c := graph.Capsule{
		ID: str(p, "id"), Scope: scopeOf(p), Subject: str(p, "subject"), Audience: strs(p, "audience"),
		CreatedBy: str(p, "created_by"), CreatedAt: tm(p, "created_at"), ExpiresAt: tm(p, "expires_at"),
		RevokedAt: tm(p, "revoked_at"), RevokedBy: str(p, "revoked_by"),
	}
	raw, _ := p["items"].([]any)
	items := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			items = append(items, m)
		}
	}
	slices.SortFunc(items, func(a, b map[string]any) int { return cmp.Compare(i64(a, "pos"), i64(b, "pos")) })
	for _, it := range items {
		switch id := str(it, "id"); str(it, "kind") {
		case "memory":
			c.MemoryIDs = append(c.MemoryIDs, id)
		case "version":
			c.VersionIDs = append(c.VersionIDs, id)
		case "decision":
			c.DecisionIDs = append(c.DecisionIDs, id)
		}
	}
	return c
}
