package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// createEditCypher writes an edit and its EDITS edge to the target memory,
// which must lie in the edit's scope (no row back means it does not). Uses
// memory_id, edit_id.
const createEditCypher = `
MATCH (n:Memory {id: $target})
WHERE ` + inScope + `
CREATE (e:Edit)-[:EDITS]->(n)
SET e = $props
RETURN e.id AS id`

// CreateEdit stores a pending (or given-status) edit on a memory in scope.
func (s *Store) CreateEdit(ctx context.Context, e graph.Edit, audit ...graph.AuditEvent) (graph.Edit, error) {
	if err := e.Validate(); err != nil {
		return graph.Edit{}, fmt.Errorf("neo4j: create edit: %w", err)
	}
	for i, a := range audit {
		if err := a.Validate(); err != nil {
			return graph.Edit{}, fmt.Errorf("neo4j: create edit: audit %d: %w", i, err)
		}
	}
	stamp(&e.ID, &e.CreatedAt, s.now())
	if e.Status == "" {
		e.Status = graph.EditPending
	}
	e.DecidedAt = utc(e.DecidedAt)
	var imp, delta any
	if e.Importance != nil {
		imp = *e.Importance
	}
	if e.Delta != nil {
		delta = *e.Delta
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		recs, err := collect(ctx, tx, createEditCypher, writeScopeParams(e.Scope, map[string]any{
			"target": e.TargetMemoryID,
			"props": scopeProps(e.Scope, map[string]any{
				"id": e.ID, "name": string(e.Kind) + " " + string(e.Status), "kind": string(e.Kind),
				"status": string(e.Status), "target_memory_id": e.TargetMemoryID,
				"target_version_id": e.TargetVersionID, "content": e.Content, "importance": imp, "delta": delta,
				"channel": e.Channel, "reason": e.Reason, "created_by": e.CreatedBy, "decided_by": e.DecidedBy,
				"created_at": e.CreatedAt, "decided_at": timeParam(e.DecidedAt),
			}),
		}))
		if err != nil {
			return struct{}{}, err
		}
		if len(recs) == 0 {
			return struct{}{}, notFound("memory", e.TargetMemoryID)
		}
		if e.Status == graph.EditApproved {
			if err := applyEdit(ctx, tx, e.ID); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, appendAudit(ctx, tx, e.CreatedAt, audit)
	})
	if err != nil {
		return graph.Edit{}, fmt.Errorf("neo4j: create edit: %w", err)
	}
	return e, nil
}

// GetEdit reads an edit in scope.
func (s *Store) GetEdit(ctx context.Context, f graph.Filter, id string) (graph.Edit, error) {
	p, err := s.getNode(ctx, "Edit", f, id)
	if err != nil {
		return graph.Edit{}, fmt.Errorf("neo4j: get edit: %w", err)
	}
	return toEdit(p), nil
}

// decideEditCypher settles a pending edit in the writer's scope and returns
// it; was is its status before. Uses edit_id.
const decideEditCypher = `
MATCH (n:Edit {id: $id})
WHERE ` + inScope + `
WITH n, n.status AS was
FOREACH (x IN CASE WHEN was = 'pending' THEN [n] ELSE [] END |
  SET x.status = $status, x.decided_by = $by, x.decided_at = $at, x.name = x.kind + ' ' + $status)
RETURN was, n {.*} AS n`

// applyEditCypher makes an approved edit take effect on its memory where
// the store enforces it: retract makes the memory retracted (hidden from
// every read that does not admit retracted); quarantine and block set the
// quarantined flag and the blocked_channels list that memoryVisible checks
// (a property check per row, instead of walking every memory's edges).
// A retraction is logged with the edit's decision time (status_at,
// status_log: see logStatus). Amend and attenuate act in the engine's
// effective view. Uses edit_id.
const applyEditCypher = `
MATCH (e:Edit {id: $id})-[:EDITS]->(m:Memory)
WHERE e.status = 'approved'
FOREACH (x IN CASE WHEN e.kind = 'retract' AND m.status <> 'retracted' THEN [m] ELSE [] END |
  SET x.status_at = coalesce(x.status_at, [x.created_at]) + e.decided_at,
      x.status_log = coalesce(x.status_log, [x.status]) + 'retracted')
SET m.status = CASE WHEN e.kind = 'retract' THEN 'retracted' ELSE m.status END,
    m.quarantined = CASE WHEN e.kind = 'quarantine' THEN true ELSE m.quarantined END,
    m.blocked_channels = CASE
      WHEN e.kind = 'block' AND NOT e.channel IN coalesce(m.blocked_channels, [])
      THEN coalesce(m.blocked_channels, []) + e.channel
      ELSE m.blocked_channels END
FOREACH (x IN CASE WHEN e.kind = 'retract' THEN [m] ELSE [] END | REMOVE x.active_key)
RETURN m.tenant_id AS tenant, m.id AS id`

// applyEdit applies an approved edit and stamps its memory: the walk's
// admission in the process reads it again (memAttrs).
func applyEdit(ctx context.Context, tx txn, id string) error {
	recs, err := collect(ctx, tx, applyEditCypher, map[string]any{"id": id})
	if err != nil {
		return err
	}
	var st kwStamps
	for _, r := range recs {
		p := r.AsMap()
		st.add(str(p, "tenant"), str(p, "id"))
	}
	return stampKeywords(ctx, tx, st)
}

// DecideEdit approves or rejects a pending edit.
func (s *Store) DecideEdit(ctx context.Context, sc graph.Scope, id string, status graph.EditStatus, by string, at time.Time, audit ...graph.AuditEvent) (graph.Edit, error) {
	if err := sc.Validate(); err != nil {
		return graph.Edit{}, fmt.Errorf("neo4j: decide edit: %w", err)
	}
	for i, a := range audit {
		if err := a.Validate(); err != nil {
			return graph.Edit{}, fmt.Errorf("neo4j: decide edit: audit %d: %w", i, err)
		}
	}
	if err := requireIDs("id", id, "decided_by", by); err != nil {
		return graph.Edit{}, fmt.Errorf("neo4j: decide edit: %w", err)
	}
	if err := graph.ValidateEditStatus(status); err != nil {
		return graph.Edit{}, fmt.Errorf("neo4j: decide edit: %w", err)
	}
	if at.IsZero() {
		at = s.now()
	}
	e, err := write(ctx, s, func(tx txn) (graph.Edit, error) {
		recs, err := collect(ctx, tx, decideEditCypher, writeScopeParams(sc, map[string]any{
			"id": id, "status": string(status), "by": by, "at": at.UTC(),
		}))
		if err != nil {
			return graph.Edit{}, err
		}
		if len(recs) == 0 {
			return graph.Edit{}, notFound("edit", id)
		}
		if was, _ := recs[0].Get("was"); was != string(graph.EditPending) {
			return graph.Edit{}, fmt.Errorf("edit %q is already %v: %w", id, was, graph.ErrConflict)
		}
		if status == graph.EditApproved {
			if err := applyEdit(ctx, tx, id); err != nil {
				return graph.Edit{}, err
			}
		}
		if err := appendAudit(ctx, tx, at.UTC(), audit); err != nil {
			return graph.Edit{}, err
		}
		return toEdit(nodeOf(recs[0], "n")), nil
	})
	if err != nil {
		return graph.Edit{}, fmt.Errorf("neo4j: decide edit %s: %w", id, err)
	}
	return e, nil
}

// editKnown is the status filter of the edit listings ($statuses; an
// empty list means any), on the edits known at $known_at when it is set:
// written by then, and still pending when decided later
// (graph.Edit.AsKnownAt).
const editKnown = `($known_at IS NULL OR n.created_at <= $known_at)
  AND (size($statuses) = 0 OR (CASE WHEN $known_at IS NOT NULL AND n.status <> 'pending' AND n.decided_at > $known_at
       THEN 'pending' ELSE n.status END) IN $statuses)`

// listEditsCypher lists edits in scope with the given statuses (an empty
// list means any), oldest first. Uses edit_tenant.
const listEditsCypher = `
MATCH (n:Edit)
WHERE ` + inScope + `
  AND ` + editKnown + `
RETURN n {.*} AS n
ORDER BY n.created_at, n.id`

// listEditsOfCypher is listEditsCypher for the edits of given memories
// (every search reads them). Uses edit_target.
const listEditsOfCypher = `
MATCH (n:Edit)
WHERE n.target_memory_id IN $memory_ids
  AND ` + inScope + `
  AND ` + editKnown + `
RETURN n {.*} AS n
ORDER BY n.created_at, n.id`

// ListEdits lists edits on memories.
func (s *Store) ListEdits(ctx context.Context, f graph.Filter, q graph.EditQuery) ([]graph.Edit, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: list edits: %w", err)
	}
	statuses := make([]string, 0, len(q.Statuses))
	for _, st := range q.Statuses {
		statuses = append(statuses, string(st))
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Edit, error) {
		query := listEditsCypher
		if len(q.MemoryIDs) > 0 {
			query = listEditsOfCypher
		}
		recs, err := collect(ctx, tx, query, listEditsParams(f, q.MemoryIDs, statuses))
		if err != nil {
			return nil, err
		}
		out := make([]graph.Edit, 0, len(recs))
		for _, r := range recs {
			out = append(out, toEdit(nodeOf(r, "n")).AsKnownAt(f.KnownAt))
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: list edits: %w", err)
	}
	return out, nil
}

// listEditsParams binds the parameters of listEditsCypher and
// listEditsOfCypher: the memories (for the latter) and the statuses.
func listEditsParams(f graph.Filter, memoryIDs, statuses []string) map[string]any {
	return readScopeParams(f, map[string]any{
		"memory_ids": nonNil(memoryIDs), "statuses": statuses, "known_at": timeParam(f.KnownAt),
	})
}

func toEdit(p map[string]any) graph.Edit {
	e := graph.Edit{
		ID: str(p, "id"), Scope: scopeOf(p), Kind: graph.EditKind(str(p, "kind")),
		Status: graph.EditStatus(str(p, "status")), TargetMemoryID: str(p, "target_memory_id"),
		TargetVersionID: str(p, "target_version_id"), Content: str(p, "content"), Channel: str(p, "channel"),
		Reason: str(p, "reason"), CreatedBy: str(p, "created_by"), DecidedBy: str(p, "decided_by"),
		CreatedAt: tm(p, "created_at"), DecidedAt: tm(p, "decided_at"),
	}
	if _, ok := p["importance"]; ok {
		imp := float(p, "importance")
		e.Importance = &imp
	}
	if _, ok := p["delta"]; ok {
		d := float(p, "delta")
		e.Delta = &d
	}
	return e
}
