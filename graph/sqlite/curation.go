package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// scopeOf reads a record's scope columns (tenant_id, org_id, repo_id).
func scopeArgs(s graph.Scope) []any { return []any{s.TenantID, s.OrgID, s.RepoID} }

// getOne reads one curation record by id and checks its scope against f's
// scope rule (Scope.Sees, or Contains with Reader.Subscopes). These records
// have no owner, so the user rule does not apply.
func (s *Store) getOne(ctx context.Context, f graph.Filter, kind, query, id string, scan func(sc scanner) (graph.Scope, error)) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("get %s: %w", kind, err)
	}
	if err := checkIDs("id", []string{id}); err != nil {
		return fmt.Errorf("get %s: %w", kind, err)
	}
	sc, err := scan(s.r.QueryRowContext(ctx, query, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !f.Scope.Reaches(sc, f.Reader.Subscopes)) {
		return fmt.Errorf("%s %s: %w", kind, id, graph.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", kind, id, err)
	}
	return nil
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t.UTC()
}

func orNewID(id string) string {
	if id == "" {
		return graph.NewID()
	}
	return id
}

const insertDecision = `INSERT INTO decisions (id, tenant_id, org_id, repo_id, kind, outcome, rule, reason, decided_by,
	created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const selectDecision = `SELECT id, tenant_id, org_id, repo_id, kind, outcome, rule, reason, decided_by, created_at
FROM decisions WHERE id = ?`

// GetDecision implements graph.Store.
func (s *Store) GetDecision(ctx context.Context, f graph.Filter, id string) (graph.Decision, error) {
	var d graph.Decision
	err := s.getOne(ctx, f, "decision", selectDecision, id, func(sc scanner) (graph.Scope, error) {
		var created int64
		err := sc.Scan(&d.ID, &d.Scope.TenantID, &d.Scope.OrgID, &d.Scope.RepoID, &d.Kind, &d.Outcome, &d.Rule,
			&d.Reason, &d.DecidedBy, &created)
		d.CreatedAt = fromNanos(created)
		return d.Scope, err
	})
	return d, err
}

const insertBaseline = `INSERT INTO baselines (id, tenant_id, org_id, repo_id, name, version_ids, published_by,
	created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

const baselineCols = `b.id, b.tenant_id, b.org_id, b.repo_id, b.name, b.version_ids, b.published_by, b.created_at`

func scanBaseline(sc scanner, b *graph.Baseline) (graph.Scope, error) {
	var (
		ids     string
		created int64
	)
	if err := sc.Scan(&b.ID, &b.Scope.TenantID, &b.Scope.OrgID, &b.Scope.RepoID, &b.Name, &ids, &b.PublishedBy, &created); err != nil {
		return b.Scope, err
	}
	b.CreatedAt = fromNanos(created)
	return b.Scope, json.Unmarshal([]byte(ids), &b.VersionIDs)
}

// GetBaseline implements graph.Store.
func (s *Store) GetBaseline(ctx context.Context, f graph.Filter, id string) (graph.Baseline, error) {
	var b graph.Baseline
	err := s.getOne(ctx, f, "baseline", `SELECT `+baselineCols+` FROM baselines b WHERE b.id = ?`, id,
		func(sc scanner) (graph.Scope, error) { return scanBaseline(sc, &b) })
	return b, err
}

const insertEdit = `INSERT INTO edits (id, tenant_id, org_id, repo_id, kind, status, memory_rid, target_memory_id,
	target_version_id, content, importance, delta, channel, reason, created_by, decided_by, created_at, decided_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// CreateEdit implements graph.Store. The target must be visible under the
// edit's scope.
func (s *Store) CreateEdit(ctx context.Context, e graph.Edit, audit ...graph.AuditEvent) (graph.Edit, error) {
	if err := e.Validate(); err != nil {
		return e, fmt.Errorf("create edit: %w", err)
	}
	if err := validateAudit(audit); err != nil {
		return e, fmt.Errorf("create edit: %w", err)
	}
	err := s.write(ctx, func(t *tx) error {
		m, err := t.memoryRef(e.Scope, e.TargetMemoryID)
		if err != nil {
			return err
		}
		e.ID, e.CreatedAt = orNewID(e.ID), orNow(e.CreatedAt, t.now)
		if e.Status == "" {
			e.Status = graph.EditPending
		}
		_, err = t.exec(insertEdit, append(append([]any{e.ID}, scopeArgs(e.Scope)...), string(e.Kind), string(e.Status),
			m.rid, e.TargetMemoryID, e.TargetVersionID, e.Content, e.Importance, e.Delta, e.Channel, e.Reason, e.CreatedBy,
			e.DecidedBy, nanos(e.CreatedAt), nanos(e.DecidedAt))...)
		if err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return e, fmt.Errorf("create edit: %w", err)
	}
	return e, nil
}

const editCols = `ed.id, ed.tenant_id, ed.org_id, ed.repo_id, ed.kind, ed.status, ed.target_memory_id,
	ed.target_version_id, ed.content, ed.importance, ed.delta, ed.channel, ed.reason, ed.created_by, ed.decided_by,
	ed.created_at, ed.decided_at`

func scanEdit(sc scanner) (graph.Edit, error) {
	var (
		e                graph.Edit
		kind, status     string
		imp, delta       sql.NullFloat64
		created, decided int64
	)
	err := sc.Scan(&e.ID, &e.Scope.TenantID, &e.Scope.OrgID, &e.Scope.RepoID, &kind, &status, &e.TargetMemoryID,
		&e.TargetVersionID, &e.Content, &imp, &delta, &e.Channel, &e.Reason, &e.CreatedBy, &e.DecidedBy, &created, &decided)
	e.Kind, e.Status = graph.EditKind(kind), graph.EditStatus(status)
	e.CreatedAt, e.DecidedAt = fromNanos(created), fromNanos(decided)
	if imp.Valid {
		e.Importance = &imp.Float64
	}
	if delta.Valid {
		e.Delta = &delta.Float64
	}
	return e, err
}

// GetEdit implements graph.Store.
func (s *Store) GetEdit(ctx context.Context, f graph.Filter, id string) (graph.Edit, error) {
	var e graph.Edit
	err := s.getOne(ctx, f, "edit", `SELECT `+editCols+` FROM edits ed WHERE ed.id = ?`, id,
		func(sc scanner) (graph.Scope, error) {
			var err error
			e, err = scanEdit(sc)
			return e.Scope, err
		})
	return e, err
}

const decideEdit = `UPDATE edits SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'`

// DecideEdit implements graph.Store. Deciding an edit that is not pending is
// graph.ErrConflict.
func (s *Store) DecideEdit(ctx context.Context, sc graph.Scope, id string, status graph.EditStatus, by string, at time.Time, audit ...graph.AuditEvent) (graph.Edit, error) {
	if err := sc.Validate(); err != nil {
		return graph.Edit{}, fmt.Errorf("decide edit: %w", err)
	}
	if err := validateAudit(audit); err != nil {
		return graph.Edit{}, fmt.Errorf("decide edit: %w", err)
	}
	if err := graph.ValidateEditStatus(status); err != nil {
		return graph.Edit{}, fmt.Errorf("decide edit: %w", err)
	}
	if err := checkIDs("id", []string{id}); err != nil {
		return graph.Edit{}, fmt.Errorf("decide edit: %w", err)
	}
	if err := checkIDs("decided_by", []string{by}); err != nil {
		return graph.Edit{}, fmt.Errorf("decide edit: %w", err)
	}
	var e graph.Edit
	err := s.write(ctx, func(t *tx) error {
		var err error
		e, err = scanEdit(t.queryRow(`SELECT `+editCols+` FROM edits ed WHERE ed.id = ?`, id))
		// A write check: the decider's scope and beneath (Contains); the
		// engine decides whether a librarian may settle edits beneath its
		// own scope.
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !sc.Contains(e.Scope)) {
			return fmt.Errorf("edit %s: %w", id, graph.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if e.Status != graph.EditPending {
			return fmt.Errorf("edit %s is %s: %w", id, e.Status, graph.ErrConflict)
		}
		e.Status, e.DecidedBy, e.DecidedAt = status, by, orNow(at, t.now)
		if _, err = t.exec(decideEdit, string(status), by, nanos(e.DecidedAt), id); err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return graph.Edit{}, fmt.Errorf("decide edit: %w", err)
	}
	return e, nil
}

// Edits in scope, oldest first. Relies on edits_tenant.
const listEdits = `SELECT ` + editCols + ` FROM edits ed WHERE %s ORDER BY ed.created_at, ed.rid`

// Edits of given memories (every search reads them twice), oldest first.
// The id list is the outer loop (CROSS JOIN) and each id a seek in
// edits_target; the text is constant for a filter shape, so the statement
// is prepared once per connection (stmtCache) instead of on every search,
// and what it reads is cached (editCache). The rid comes first (editRow).
const listEditsOf = `SELECT ed.rid, ` + editCols + `
FROM json_each(?) j CROSS JOIN edits ed INDEXED BY edits_target ON ed.tenant_id = ? AND ed.target_memory_id = j.value
WHERE %s ORDER BY ed.created_at, ed.rid`

// ListEdits implements graph.Store.
func (s *Store) ListEdits(ctx context.Context, f graph.Filter, q graph.EditQuery) ([]graph.Edit, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list edits: %w", err)
	}
	w := &where{}
	w.readScope("ed", f)
	statuses := anys(q.Statuses)
	status := "ed.status"
	if !f.KnownAt.IsZero() {
		// As known at KnownAt: written by then, and still pending when
		// decided later (graph.Edit.AsKnownAt).
		at := nanos(f.KnownAt)
		w.add("ed.created_at <= ?", at)
		status = "(CASE WHEN ed.status <> 'pending' AND ed.decided_at > ? THEN 'pending' ELSE ed.status END)"
		statuses = append([]any{at}, statuses...)
	}
	if len(q.Statuses) > 0 {
		w.add(status+" IN ("+placeholders(len(q.Statuses))+")", statuses...)
	}
	var (
		edits []graph.Edit
		err   error
	)
	switch {
	case len(q.MemoryIDs) > 0 && f.KnownAt.IsZero():
		edits, err = s.editsOf(ctx, w, f.Scope.TenantID, q.MemoryIDs)
	case len(q.MemoryIDs) > 0:
		var rows *sql.Rows
		if rows, err = s.cachedQuery(ctx, fmt.Sprintf(listEditsOf, w.sql()),
			append([]any{jsonList(q.MemoryIDs), f.Scope.TenantID}, w.args...)...); err == nil {
			var rs []editRow
			rs, err = collect(rows, scanEditRow)
			edits = editsIn(rs)
		}
	default:
		var rows *sql.Rows
		if rows, err = s.r.QueryContext(ctx, fmt.Sprintf(listEdits, w.sql()), w.args...); err == nil {
			edits, err = collect(rows, scanEdit)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list edits: %w", err)
	}
	for i := range edits {
		edits[i] = edits[i].AsKnownAt(f.KnownAt)
	}
	return edits, nil
}
