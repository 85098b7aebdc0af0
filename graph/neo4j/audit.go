package neo4j

import (
	"context"
	"fmt"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
)

// appendAuditCypher creates audit events and links each to its subject with
// DECIDED when the subject exists in the same tenant (an event about a record
// that does not exist yet, or no longer, is still kept). Uses the *_id
// constraints of the subject labels.
const appendAuditCypher = `
UNWIND $events AS ev
CREATE (a:AuditEvent) SET a = ev
WITH a
CALL {
  WITH a MATCH (s:Memory {id: a.subject_id}) WHERE a.subject_kind = 'Memory' AND s.tenant_id = a.tenant_id RETURN s
  UNION
  WITH a MATCH (s:GateRequest {id: a.subject_id}) WHERE a.subject_kind = 'GateRequest' AND s.tenant_id = a.tenant_id RETURN s
  UNION
  WITH a MATCH (s:Edit {id: a.subject_id}) WHERE a.subject_kind = 'Edit' AND s.tenant_id = a.tenant_id RETURN s
  UNION
  WITH a MATCH (s:Proposal {id: a.subject_id}) WHERE a.subject_kind = 'Proposal' AND s.tenant_id = a.tenant_id RETURN s
  UNION
  WITH a MATCH (s:Decision {id: a.subject_id}) WHERE a.subject_kind = 'Decision' AND s.tenant_id = a.tenant_id RETURN s
  UNION
  WITH a MATCH (s:Baseline {id: a.subject_id}) WHERE a.subject_kind = 'Baseline' AND s.tenant_id = a.tenant_id RETURN s
  UNION
  WITH a MATCH (s:Capsule {id: a.subject_id}) WHERE a.subject_kind = 'Capsule' AND s.tenant_id = a.tenant_id RETURN s
}
CREATE (a)-[:DECIDED]->(s)`

// appendAudit writes events inside tx, filling ids and times.
func appendAudit(ctx context.Context, tx txn, now time.Time, events []graph.AuditEvent) error {
	if len(events) == 0 {
		return nil
	}
	_, err := collect(ctx, tx, appendAuditCypher, map[string]any{"events": auditRows(now, events)})
	return err
}

// auditRows are events as AuditEvent properties, with ids and times filled.
func auditRows(now time.Time, events []graph.AuditEvent) []map[string]any {
	rows := make([]map[string]any, len(events))
	for i, a := range events {
		if a.ID == "" {
			a.ID = graph.NewID()
		}
		if a.CreatedAt.IsZero() {
			a.CreatedAt = now
		}
		rows[i] = scopeProps(a.Scope, map[string]any{
			"id": a.ID, "name": a.Action, "action": a.Action, "subject_kind": a.SubjectKind,
			"subject_id": a.SubjectID, "actor_id": a.ActorID, "rule": a.Rule, "outcome": a.Outcome,
			"reason": a.Reason, "created_at": a.CreatedAt.UTC(),
		})
	}
	return rows
}

// AppendAudit appends audit events in one transaction.
func (s *Store) AppendAudit(ctx context.Context, events ...graph.AuditEvent) error {
	for i, a := range events {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("neo4j: append audit %d: %w", i, err)
		}
	}
	now := s.now().UTC()
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		return struct{}{}, appendAudit(ctx, tx, now, events)
	})
	if err != nil {
		return fmt.Errorf("neo4j: append audit: %w", err)
	}
	return nil
}

// listAuditCypher lists audit events in scope, oldest first, after the
// keyset cursor. The user rule (graph.Reader.MayRead) holds: an event that
// DECIDED a memory private to another user is left out. Uses
// audit_tenant_created.
const listAuditCypher = `
MATCH (n:AuditEvent)
WHERE ` + inScope + `
  AND ($subject_id = '' OR n.subject_id = $subject_id)
  AND ($action = '' OR n.action = $action)
  AND ($actor_id = '' OR n.actor_id = $actor_id)
  AND ($from IS NULL OR n.created_at >= $from)
  AND ($to IS NULL OR n.created_at < $to)
  AND ($f_all_users OR NOT EXISTS {
       MATCH (n)-[:DECIDED]->(m:Memory)
       WHERE m.user_id <> '' AND m.scope IN ['user', 'session'] AND m.user_id <> $f_reader })
  AND ($c_at IS NULL OR n.created_at > $c_at OR (n.created_at = $c_at AND n.id > $c_id))
RETURN n {.*} AS n
ORDER BY n.created_at, n.id
LIMIT $limit`

// ListAudit lists audit events in scope, oldest first.
func (s *Store) ListAudit(ctx context.Context, f graph.Filter, q graph.AuditQuery, p graph.Page) ([]graph.AuditEvent, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", fmt.Errorf("neo4j: list audit: %w", err)
	}
	limit := pageLimit(p.Limit)
	at, id, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, "", fmt.Errorf("neo4j: list audit: %w", err)
	}
	evs, err := read(ctx, s, func(tx txn) ([]graph.AuditEvent, error) {
		recs, err := collect(ctx, tx, listAuditCypher, readScopeParams(f, map[string]any{
			"subject_id": q.SubjectID, "action": q.Action, "actor_id": q.ActorID,
			"from": timeParam(q.From), "to": timeParam(q.To),
			"f_all_users": f.Reader.AllUsers, "f_reader": f.Reader.UserID,
			"c_at": timeParam(at), "c_id": id, "limit": int64(limit + 1),
		}))
		if err != nil {
			return nil, err
		}
		out := make([]graph.AuditEvent, 0, len(recs))
		for _, r := range recs {
			out = append(out, toAudit(nodeOf(r, "n")))
		}
		return out, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("neo4j: list audit: %w", err)
	}
	next := ""
	if len(evs) > limit {
		evs = evs[:limit]
		next = encodeCursor(evs[limit-1].CreatedAt, evs[limit-1].ID)
	}
	return evs, next, nil
}

func toAudit(p map[string]any) graph.AuditEvent {
	return graph.AuditEvent{
		ID: str(p, "id"), Scope: scopeOf(p), Action: str(p, "action"), SubjectKind: str(p, "subject_kind"),
		SubjectID: str(p, "subject_id"), ActorID: str(p, "actor_id"), Rule: str(p, "rule"),
		Outcome: str(p, "outcome"), Reason: str(p, "reason"), CreatedAt: tm(p, "created_at"),
	}
}

// nodeOf reads the map in column key of rec.
func nodeOf(rec *neo4jdrv.Record, key string) map[string]any {
	v, _ := rec.Get(key)
	p, _ := v.(map[string]any)
	return p
}
