package neo4j

import (
	"context"
	"errors"
	"fmt"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
)

// supersedeCheckCypher reads both ends of a supersession, locks the old
// memory, and reports whether a SUPERSEDES path already joins them in either
// direction (which would make the new edge a cycle or a duplicate). Uses
// memory_id.
const supersedeCheckCypher = `
OPTIONAL MATCH (old:Memory {id: $old})
OPTIONAL MATCH (new:Memory {id: $new})
FOREACH (x IN CASE WHEN old IS NULL THEN [] ELSE [old] END | SET x._lock = true REMOVE x._lock)
RETURN old {.tenant_id, .org_id, .repo_id, .status} AS old,
       new {.tenant_id, .org_id, .repo_id} AS new,
       old IS NOT NULL AND new IS NOT NULL AND (
         EXISTS { MATCH (old)-[:SUPERSEDES*1..]->(new) } OR
         EXISTS { MATCH (new)-[:SUPERSEDES*1..]->(old) }) AS linked`

// supersedeCypher marks old superseded and links new to it. Uses memory_id.
const supersedeCypher = `
MATCH (old:Memory {id: $old}), (new:Memory {id: $new})
SET ` + logStatusOld + `'superseded'
SET old.status = 'superseded'
REMOVE old.active_key
CREATE (new)-[:SUPERSEDES]->(old)`

// supersede records inside tx that newID SUPERSEDES oldID.
func supersede(ctx context.Context, tx txn, s graph.Scope, oldID, newID string, at time.Time) error {
	if oldID == newID {
		return fmt.Errorf("memory %q cannot supersede itself: %w", oldID, graph.ErrConflict)
	}
	recs, err := collect(ctx, tx, supersedeCheckCypher, map[string]any{"old": oldID, "new": newID})
	if err != nil {
		return err
	}
	p := recs[0].AsMap()
	old, _ := p["old"].(map[string]any)
	nw, _ := p["new"].(map[string]any)
	// Write checks: the writer's scope and beneath (Contains); whether the
	// principal may write beneath its scope or as the memory's user is the
	// engine's check (permissions subscopes, act_as_user).
	if old == nil || !s.Contains(scopeOf(old)) {
		return notFound("memory", oldID)
	}
	if nw == nil || !s.Contains(scopeOf(nw)) {
		return notFound("memory", newID)
	}
	if linked, _ := p["linked"].(bool); linked {
		return fmt.Errorf("%q and %q are already on one supersession chain: %w", newID, oldID, graph.ErrConflict)
	}
	if st := str(old, "status"); st != string(graph.StatusActive) {
		return fmt.Errorf("memory %q is %s, not active: %w", oldID, st, graph.ErrConflict)
	}
	if _, err = collect(ctx, tx, supersedeCypher, map[string]any{"old": oldID, "new": newID, "at": at.UTC()}); err != nil {
		return err
	}
	// The old memory's status and links changed: the walk's admission in
	// the process reads it again (memAttrs).
	return stampKeywords(ctx, tx, kwStamps{str(old, "tenant_id"): {oldID}})
}

// findActiveByKeyCypher finds the active memory with a canonical key in one
// namespace (exact scope, user, type). Uses memory_key.
const findActiveByKeyCypher = `
MATCH (m:Memory)
WHERE m.tenant_id = $tenant AND m.canonical_key = $key
  AND m.org_id = $org AND m.repo_id = $repo AND m.user_id = $user AND m.type = $type
  AND m.status = 'active'
RETURN ` + memoryProjection + ` AS m
ORDER BY m.created_at DESC, m.id DESC
LIMIT 1`

// FindActiveByKey returns the active memory with canonical key key in ns.
func (s *Store) FindActiveByKey(ctx context.Context, ns graph.Namespace, key string) (graph.Memory, error) {
	if err := ns.Scope.Validate(); err != nil {
		return graph.Memory{}, fmt.Errorf("neo4j: find by key: %w", err)
	}
	if key == "" {
		return graph.Memory{}, fmt.Errorf("neo4j: find by key: %w", &graph.FieldError{Field: "canonical_key", Message: "required"})
	}
	m, err := read(ctx, s, func(tx txn) (graph.Memory, error) {
		recs, err := collect(ctx, tx, findActiveByKeyCypher, map[string]any{
			"tenant": ns.Scope.TenantID, "org": ns.Scope.OrgID, "repo": ns.Scope.RepoID,
			"user": ns.UserID, "type": ns.Type, "key": key,
		})
		if err != nil {
			return graph.Memory{}, err
		}
		if len(recs) == 0 {
			return graph.Memory{}, notFound("canonical key", key)
		}
		return memoryOf(recs[0], "m"), nil
	})
	if err != nil {
		return graph.Memory{}, fmt.Errorf("neo4j: find by key: %w", err)
	}
	return m, nil
}

// resolveCypher follows SUPERSEDES edges from a visible memory while the
// successor is visible under the filter, to the newest memory of the chain
// the reader may read (a chain whose head is another user's private memory,
// or lies beneath the reader's scope, resolves to the last one it may read,
// as on SQLite). Under KnownAt, only supersessions recorded by then are
// followed. Every memory has at most one successor (only an active
// memory can be superseded), so the paths upward from start are one chain.
// Uses memory_id.
const resolveCypher = `
MATCH (start:Memory {id: $id})
WITH start
OPTIONAL MATCH p = (top:Memory)-[:SUPERSEDES*1..]->(start)
WHERE all(m IN nodes(p) WHERE ` + memoryVisible + `)
  AND ($f_known_at IS NULL OR all(m IN tail(nodes(p)) WHERE ` + knownStatus + ` = 'superseded'))
WITH start, top, length(p) AS hops ORDER BY hops DESC LIMIT 1
WITH coalesce(top, start) AS m
WHERE ` + memoryVisible + `
RETURN ` + memoryProjection + ` AS m`

// Resolve follows the supersession chain from id to its newest memory.
func (s *Store) Resolve(ctx context.Context, f graph.Filter, id string) (graph.Memory, error) {
	if err := f.Validate(); err != nil {
		return graph.Memory{}, fmt.Errorf("neo4j: resolve: %w", err)
	}
	if _, err := s.GetMemory(ctx, f, id); err != nil {
		return graph.Memory{}, fmt.Errorf("neo4j: resolve: %w", err)
	}
	m, err := read(ctx, s, func(tx txn) (graph.Memory, error) {
		recs, err := collect(ctx, tx, resolveCypher, filterParams(directFilter(f), map[string]any{"id": id}))
		if err != nil {
			return graph.Memory{}, err
		}
		if len(recs) == 0 {
			return graph.Memory{}, notFound("memory", id)
		}
		return memoryOf(recs[0], "m"), nil
	})
	if err != nil {
		return graph.Memory{}, fmt.Errorf("neo4j: resolve %s: %w", id, err)
	}
	return m, nil
}

// archiveCypher marks an active memory in scope archived and says what it
// found. Uses memory_id.
const archiveCypher = `
MATCH (n:Memory {id: $id})
WHERE ` + inScope + `
WITH n, n.status AS was
FOREACH (x IN CASE WHEN was = 'active' THEN [n] ELSE [] END |
  SET ` + logStatusX + `'archived' SET x.status = 'archived' REMOVE x.active_key)
RETURN was`

// Archive marks an active memory archived.
func (s *Store) Archive(ctx context.Context, sc graph.Scope, id string, audit ...graph.AuditEvent) error {
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("neo4j: archive: %w", err)
	}
	if err := errors.Join(requireIDs("id", id), validAudit(audit)); err != nil {
		return fmt.Errorf("neo4j: archive: %w", err)
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		now := s.now().UTC()
		recs, err := collect(ctx, tx, archiveCypher, writeScopeParams(sc, map[string]any{"id": id, "at": now}))
		if err != nil {
			return struct{}{}, err
		}
		if len(recs) == 0 {
			return struct{}{}, notFound("memory", id)
		}
		if was, _ := recs[0].Get("was"); was != string(graph.StatusActive) {
			return struct{}{}, fmt.Errorf("memory %q is %v, not active: %w", id, was, graph.ErrConflict)
		}
		if err := stampKeywords(ctx, tx, kwStamps{sc.TenantID: {id}}); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, appendAudit(ctx, tx, now, audit)
	})
	if err != nil {
		return fmt.Errorf("neo4j: archive %s: %w", id, err)
	}
	return nil
}

// touchCypher reinforces the memories in scope among $ids. Uses memory_id.
const touchCypher = `
UNWIND $ids AS id
MATCH (n:Memory {id: id})
WHERE ` + inScope + `
SET n.access_count = coalesce(n.access_count, 0) + 1, n.last_accessed = $at`

// Touch reinforces memories: access_count + 1 and last_accessed = at.
func (s *Store) Touch(ctx context.Context, sc graph.Scope, ids []string, at time.Time) error {
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("neo4j: touch: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	if at.IsZero() {
		at = s.now()
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		_, err := collect(ctx, tx, touchCypher, writeScopeParams(sc, map[string]any{"ids": dedupe(ids), "at": at.UTC()}))
		return struct{}{}, err
	})
	if err != nil {
		return fmt.Errorf("neo4j: touch: %w", err)
	}
	return nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// memoryOf reads the memory map in column key of rec.
func memoryOf(rec *neo4jdrv.Record, key string) graph.Memory {
	v, _ := rec.Get(key)
	p, _ := v.(map[string]any)
	return toMemory(p)
}
