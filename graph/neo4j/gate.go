package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// createGateRequestCypher writes a queued write. Uses gate_request_id.
const createGateRequestCypher = `CREATE (g:GateRequest) SET g = $props`

// CreateGateRequest stores a pending gate request and its audit event in one
// transaction.
func (s *Store) CreateGateRequest(ctx context.Context, g graph.GateRequest, audit graph.AuditEvent) (graph.GateRequest, error) {
	if err := g.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: create gate request: %w", err)
	}
	now := s.now().UTC()
	stamp(&g.ID, &g.CreatedAt, now)
	g.Status = graph.GatePending
	if audit.SubjectID == "" {
		audit.SubjectID, audit.SubjectKind = g.ID, "GateRequest"
	}
	if err := audit.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: create gate request: %w", err)
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		_, err := collect(ctx, tx, createGateRequestCypher, map[string]any{"props": scopeProps(g.Scope, map[string]any{
			"id": g.ID, "title": g.Title, "status": string(g.Status), "rule": g.Rule, "reason": g.Reason,
			"payload": string(g.Payload), "requested_by": g.RequestedBy, "decided_by": "", "memory_id": "",
			"created_at": g.CreatedAt,
		})})
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, appendAudit(ctx, tx, now, []graph.AuditEvent{audit})
	})
	if err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: create gate request: %w", err)
	}
	return g, nil
}

// GetGateRequest reads a gate request in scope.
func (s *Store) GetGateRequest(ctx context.Context, f graph.Filter, id string) (graph.GateRequest, error) {
	p, err := s.getNode(ctx, "GateRequest", f, id)
	if err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: get gate request: %w", err)
	}
	return toGateRequest(p), nil
}

// listGateRequestsCypher lists gate requests in scope with a status (any
// when empty), oldest first, after the keyset cursor. Uses
// gate_tenant_created.
const listGateRequestsCypher = `
MATCH (n:GateRequest)
WHERE ` + inScope + `
  AND ($status = '' OR n.status = $status)
  AND ($c_at IS NULL OR n.created_at > $c_at OR (n.created_at = $c_at AND n.id > $c_id))
RETURN n {.*} AS n
ORDER BY n.created_at, n.id
LIMIT $limit`

// ListGateRequests lists gate requests in scope, oldest first.
func (s *Store) ListGateRequests(ctx context.Context, f graph.Filter, status graph.GateStatus, p graph.Page) ([]graph.GateRequest, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", fmt.Errorf("neo4j: list gate requests: %w", err)
	}
	limit := pageLimit(p.Limit)
	at, id, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, "", fmt.Errorf("neo4j: list gate requests: %w", err)
	}
	gs, err := read(ctx, s, func(tx txn) ([]graph.GateRequest, error) {
		recs, err := collect(ctx, tx, listGateRequestsCypher, readScopeParams(f, map[string]any{
			"status": string(status), "c_at": timeParam(at), "c_id": id, "limit": int64(limit + 1),
		}))
		if err != nil {
			return nil, err
		}
		out := make([]graph.GateRequest, 0, len(recs))
		for _, r := range recs {
			out = append(out, toGateRequest(nodeOf(r, "n")))
		}
		return out, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("neo4j: list gate requests: %w", err)
	}
	next := ""
	if len(gs) > limit {
		gs = gs[:limit]
		next = encodeCursor(gs[limit-1].CreatedAt, gs[limit-1].ID)
	}
	return gs, next, nil
}

// decideGateRequestCypher settles a pending gate request in the writer's
// scope; was is its status before, read under the node's write lock so two
// concurrent decisions cannot both see it pending. Uses gate_request_id.
const decideGateRequestCypher = `
MATCH (n:GateRequest {id: $id})
WHERE ` + inScope + `
SET n._lock = true REMOVE n._lock
WITH n, n.status AS was
FOREACH (x IN CASE WHEN was = 'pending' THEN [n] ELSE [] END |
  SET x.status = $status, x.decided_by = $by, x.reason = CASE WHEN $reason = '' THEN x.reason ELSE $reason END,
      x.memory_id = $memory_id, x.decided_at = $at)
RETURN was, n {.*} AS n`

// DecideGateRequest approves or rejects a pending gate request and writes
// its audit event in the same transaction.
func (s *Store) DecideGateRequest(ctx context.Context, sc graph.Scope, id string, d graph.GateDecision, audit graph.AuditEvent) (graph.GateRequest, error) {
	if err := sc.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: decide gate request: %w", err)
	}
	if err := d.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: decide gate request: %w", err)
	}
	if err := requireIDs("id", id); err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: decide gate request: %w", err)
	}
	if audit.SubjectID == "" {
		audit.SubjectID, audit.SubjectKind = id, "GateRequest"
	}
	if err := audit.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: decide gate request: %w", err)
	}
	now := s.now().UTC()
	g, err := write(ctx, s, func(tx txn) (graph.GateRequest, error) {
		return decideGate(ctx, tx, now, sc, id, d, audit)
	})
	if err != nil {
		return graph.GateRequest{}, fmt.Errorf("neo4j: decide gate request %s: %w", id, err)
	}
	return g, nil
}

// decideGate settles a pending gate request in sc and writes its audit
// event (subject defaulting to the request), in tx.
func decideGate(ctx context.Context, tx txn, now time.Time, sc graph.Scope, id string, d graph.GateDecision, audit graph.AuditEvent) (graph.GateRequest, error) {
	at := d.At
	if at.IsZero() {
		at = now
	}
	if audit.SubjectID == "" {
		audit.SubjectID, audit.SubjectKind = id, "GateRequest"
	}
	recs, err := collect(ctx, tx, decideGateRequestCypher, writeScopeParams(sc, map[string]any{
		"id": id, "status": string(d.Status), "by": d.DecidedBy, "reason": d.Reason,
		"memory_id": d.MemoryID, "at": at.UTC(),
	}))
	if err != nil {
		return graph.GateRequest{}, err
	}
	if len(recs) == 0 {
		return graph.GateRequest{}, notFound("gate request", id)
	}
	if was, _ := recs[0].Get("was"); was != string(graph.GatePending) {
		return graph.GateRequest{}, fmt.Errorf("gate request %q is already %v: %w", id, was, graph.ErrConflict)
	}
	if err := appendAudit(ctx, tx, now, []graph.AuditEvent{audit}); err != nil {
		return graph.GateRequest{}, err
	}
	return toGateRequest(nodeOf(recs[0], "n")), nil
}

// settle approves the request a write carries out, first in the write's
// transaction (so a conflict stops it before anything is written), with
// memoryID as the memory written unless the decision names one.
func settle(ctx context.Context, tx txn, now time.Time, g *graph.GateSettlement, memoryID string) error {
	if g == nil {
		return nil
	}
	d := g.Decision
	if d.MemoryID == "" {
		d.MemoryID = memoryID
	}
	_, err := decideGate(ctx, tx, now, g.Scope, g.RequestID, d, g.Audit)
	return err
}

func toGateRequest(p map[string]any) graph.GateRequest {
	return graph.GateRequest{
		ID: str(p, "id"), Scope: scopeOf(p), Title: str(p, "title"), Status: graph.GateStatus(str(p, "status")),
		Rule: str(p, "rule"), Reason: str(p, "reason"), Payload: json.RawMessage(str(p, "payload")),
		RequestedBy: str(p, "requested_by"), DecidedBy: str(p, "decided_by"), MemoryID: str(p, "memory_id"),
		CreatedAt: tm(p, "created_at"), DecidedAt: tm(p, "decided_at"),
	}
}
