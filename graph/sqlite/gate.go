package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

const insertAudit = `INSERT INTO audit_events (id, tenant_id, org_id, repo_id, action, subject_kind, subject_id,
	actor_id, rule, outcome, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (t *tx) appendAudit(a graph.AuditEvent) error {
	a.ID, a.CreatedAt = orNewID(a.ID), orNow(a.CreatedAt, t.now)
	_, err := t.exec(insertAudit, append(append([]any{a.ID}, scopeArgs(a.Scope)...), a.Action, a.SubjectKind,
		a.SubjectID, a.ActorID, a.Rule, a.Outcome, a.Reason, nanos(a.CreatedAt))...)
	return err
}

// appendAudits writes events inside t.
func (t *tx) appendAudits(events []graph.AuditEvent) error {
	for _, a := range events {
		if err := t.appendAudit(a); err != nil {
			return err
		}
	}
	return nil
}

// validateAudit checks events before a write that carries them.
func validateAudit(events []graph.AuditEvent) error {
	for i, a := range events {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("audit %d: %w", i, err)
		}
	}
	return nil
}

// AppendAudit implements graph.Store. An event id is written once: a
// duplicate is graph.ErrConflict.
func (s *Store) AppendAudit(ctx context.Context, events ...graph.AuditEvent) error {
	for i, a := range events {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("append audit %d: %w", i, err)
		}
	}
	err := s.writeAs(ctx, writeLog, func(t *tx) error {
		for _, a := range events {
			if err := t.appendAudit(a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	return nil
}

// Audit events in scope, oldest first, after the cursor. Relies on
// audit_tenant_created (audit_subject when a subject is given, audit_actor
// when an actor is).
const listAudit = `SELECT a.rid, a.id, a.tenant_id, a.org_id, a.repo_id, a.action, a.subject_kind, a.subject_id,
	a.actor_id, a.rule, a.outcome, a.reason, a.created_at
FROM audit_events a WHERE %s
ORDER BY a.created_at, a.rid LIMIT ?`

// The user rule on audit events: an event about a memory private to another
// user (graph.Reader.MayRead) is not the reader's to see. Relies on the
// memories id index.
const auditOfReadable = `NOT EXISTS (
	SELECT 1 FROM memories m
	WHERE a.subject_kind = 'Memory' AND m.id = a.subject_id
	  AND m.user_id <> '' AND m.visibility IN ('user', 'session') AND m.user_id <> ?)`

// ListAudit implements graph.Store.
func (s *Store) ListAudit(ctx context.Context, f graph.Filter, q graph.AuditQuery, p graph.Page) ([]graph.AuditEvent, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", fmt.Errorf("list audit: %w", err)
	}
	c, ok, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, "", fmt.Errorf("list audit: %w", err)
	}
	w := &where{}
	w.readScope("a", f)
	if q.SubjectID != "" {
		w.add("a.subject_id = ?", q.SubjectID)
	}
	if q.Action != "" {
		w.add("a.action = ?", q.Action)
	}
	if q.ActorID != "" {
		w.add("a.actor_id = ?", q.ActorID)
	}
	if !q.From.IsZero() {
		w.add("a.created_at >= ?", nanos(q.From))
	}
	if !q.To.IsZero() {
		w.add("a.created_at < ?", nanos(q.To))
	}
	if !f.Reader.AllUsers {
		w.add(auditOfReadable, f.Reader.UserID)
	}
	if ok {
		w.add("(a.created_at > ? OR (a.created_at = ? AND a.rid > CAST(? AS INTEGER)))", c.At, c.At, c.Key)
	}
	limit := pageLimit(p)
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf(listAudit, w.sql()), append(w.args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var (
		out  []graph.AuditEvent
		rids []int64
	)
	for rows.Next() {
		var (
			a       graph.AuditEvent
			rid, at int64
		)
		if err := rows.Scan(&rid, &a.ID, &a.Scope.TenantID, &a.Scope.OrgID, &a.Scope.RepoID, &a.Action, &a.SubjectKind,
			&a.SubjectID, &a.ActorID, &a.Rule, &a.Outcome, &a.Reason, &at); err != nil {
			return nil, "", fmt.Errorf("list audit: %w", err)
		}
		a.CreatedAt = fromNanos(at)
		out, rids = append(out, a), append(rids, rid)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list audit: %w", err)
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = cursor{At: nanos(out[limit-1].CreatedAt), Key: fmt.Sprint(rids[limit-1])}.encode()
	}
	return out, next, nil
}

const insertGate = `INSERT INTO gate_requests (id, tenant_id, org_id, repo_id, title, status, rule, reason, payload,
	requested_by, decided_by, memory_id, created_at, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', ?, 0)`

// CreateGateRequest implements graph.Store. The audit event's subject
// defaults to the new request.
func (s *Store) CreateGateRequest(ctx context.Context, g graph.GateRequest, audit graph.AuditEvent) (graph.GateRequest, error) {
	if err := g.Validate(); err != nil {
		return g, fmt.Errorf("create gate request: %w", err)
	}
	if err := audit.Validate(); err != nil {
		return g, fmt.Errorf("create gate request: %w", err)
	}
	err := s.write(ctx, func(t *tx) error {
		g.ID, g.CreatedAt, g.Status = orNewID(g.ID), orNow(g.CreatedAt, t.now), graph.GatePending
		if _, err := t.exec(insertGate, append(append([]any{g.ID}, scopeArgs(g.Scope)...), g.Title, string(g.Status),
			g.Rule, g.Reason, string(g.Payload), g.RequestedBy, nanos(g.CreatedAt))...); err != nil {
			return err
		}
		if audit.SubjectID == "" {
			audit.SubjectID, audit.SubjectKind = g.ID, "GateRequest"
		}
		return t.appendAudit(audit)
	})
	if err != nil {
		return g, fmt.Errorf("create gate request: %w", err)
	}
	return g, nil
}

const gateCols = `g.rid, g.id, g.tenant_id, g.org_id, g.repo_id, g.title, g.status, g.rule, g.reason, g.payload,
	g.requested_by, g.decided_by, g.memory_id, g.created_at, g.decided_at`

func scanGate(sc scanner) (graph.GateRequest, int64, error) {
	var (
		g                     graph.GateRequest
		rid, created, decided int64
		status, payload       string
	)
	err := sc.Scan(&rid, &g.ID, &g.Scope.TenantID, &g.Scope.OrgID, &g.Scope.RepoID, &g.Title, &status, &g.Rule,
		&g.Reason, &payload, &g.RequestedBy, &g.DecidedBy, &g.MemoryID, &created, &decided)
	g.Status, g.Payload = graph.GateStatus(status), []byte(payload)
	g.CreatedAt, g.DecidedAt = fromNanos(created), fromNanos(decided)
	return g, rid, err
}

// GetGateRequest implements graph.Store.
func (s *Store) GetGateRequest(ctx context.Context, f graph.Filter, id string) (graph.GateRequest, error) {
	var g graph.GateRequest
	err := s.getOne(ctx, f, "gate request", `SELECT `+gateCols+` FROM gate_requests g WHERE g.id = ?`, id,
		func(sc scanner) (graph.Scope, error) {
			var err error
			g, _, err = scanGate(sc)
			return g.Scope, err
		})
	return g, err
}

// Gate requests in scope, oldest first (queue order), after the cursor.
// Relies on gate_tenant_status.
const listGate = `SELECT ` + gateCols + ` FROM gate_requests g WHERE %s ORDER BY g.created_at, g.rid LIMIT ?`

// ListGateRequests implements graph.Store; an empty status lists all.
func (s *Store) ListGateRequests(ctx context.Context, f graph.Filter, status graph.GateStatus, p graph.Page) ([]graph.GateRequest, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", fmt.Errorf("list gate requests: %w", err)
	}
	c, ok, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, "", fmt.Errorf("list gate requests: %w", err)
	}
	w := &where{}
	w.readScope("g", f)
	if status != "" {
		w.add("g.status = ?", string(status))
	}
	if ok {
		w.add("(g.created_at > ? OR (g.created_at = ? AND g.rid > CAST(? AS INTEGER)))", c.At, c.At, c.Key)
	}
	limit := pageLimit(p)
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf(listGate, w.sql()), append(w.args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("list gate requests: %w", err)
	}
	defer rows.Close()
	var (
		out  []graph.GateRequest
		rids []int64
	)
	for rows.Next() {
		g, rid, err := scanGate(rows)
		if err != nil {
			return nil, "", fmt.Errorf("list gate requests: %w", err)
		}
		out, rids = append(out, g), append(rids, rid)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list gate requests: %w", err)
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = cursor{At: nanos(out[limit-1].CreatedAt), Key: fmt.Sprint(rids[limit-1])}.encode()
	}
	return out, next, nil
}

const decideGate = `UPDATE gate_requests SET status = ?, decided_by = ?, reason = CASE WHEN ? = '' THEN reason ELSE ? END,
	memory_id = ?, decided_at = ? WHERE id = ? AND status = 'pending'`

// DecideGateRequest implements graph.Store.
func (s *Store) DecideGateRequest(ctx context.Context, sc graph.Scope, id string, d graph.GateDecision, audit graph.AuditEvent) (graph.GateRequest, error) {
	if err := sc.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("decide gate request: %w", err)
	}
	if err := d.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("decide gate request: %w", err)
	}
	if err := audit.Validate(); err != nil {
		return graph.GateRequest{}, fmt.Errorf("decide gate request: %w", err)
	}
	if err := checkIDs("id", []string{id}); err != nil {
		return graph.GateRequest{}, fmt.Errorf("decide gate request: %w", err)
	}
	var g graph.GateRequest
	err := s.write(ctx, func(t *tx) error {
		var err error
		g, err = t.decideGate(sc, id, d, audit)
		return err
	})
	if err != nil {
		return graph.GateRequest{}, fmt.Errorf("decide gate request: %w", err)
	}
	return g, nil
}

// decideGate settles a pending gate request in sc and writes its audit
// event, in the caller's transaction.
func (t *tx) decideGate(sc graph.Scope, id string, d graph.GateDecision, audit graph.AuditEvent) (graph.GateRequest, error) {
	g, _, err := scanGate(t.queryRow(`SELECT `+gateCols+` FROM gate_requests g WHERE g.id = ?`, id))
	// A write check: the decider's scope and beneath (Contains); the engine
	// decides whether a librarian may settle requests beneath its own scope.
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !sc.Contains(g.Scope)) {
		return g, fmt.Errorf("gate request %s: %w", id, graph.ErrNotFound)
	}
	if err != nil {
		return g, err
	}
	if g.Status != graph.GatePending {
		return g, fmt.Errorf("gate request %s is %s: %w", id, g.Status, graph.ErrConflict)
	}
	g.Status, g.DecidedBy, g.MemoryID, g.DecidedAt = d.Status, d.DecidedBy, d.MemoryID, orNow(d.At, t.now)
	if d.Reason != "" {
		g.Reason = d.Reason
	}
	if _, err := t.exec(decideGate, string(d.Status), d.DecidedBy, d.Reason, d.Reason, d.MemoryID, nanos(g.DecidedAt), id); err != nil {
		return g, err
	}
	if audit.SubjectID == "" {
		audit.SubjectID, audit.SubjectKind = g.ID, "GateRequest"
	}
	return g, t.appendAudit(audit)
}

// settle approves the request a write carries out, with memoryID as the
// memory written unless the decision names one.
func (t *tx) settle(g *graph.GateSettlement, memoryID string) error {
	if g == nil {
		return nil
	}
	d := g.Decision
	if d.MemoryID == "" {
		d.MemoryID = memoryID
	}
	_, err := t.decideGate(g.Scope, g.RequestID, d, g.Audit)
	return err
}
