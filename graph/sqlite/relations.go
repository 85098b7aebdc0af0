package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

var _ graph.Relations = (*Store)(nil)

// relationCols is what scanRelation reads: relation r, its memories a
// (from) and b (to).
const relationCols = `r.id, r.tenant_id, r.org_id, r.repo_id, a.id, b.id, r.type, r.reason, r.created_by, r.created_at`

const relationJoin = `JOIN memories a ON a.rid = r.from_rid JOIN memories b ON b.rid = r.to_rid`

func scanRelation(sc scanner) (graph.Relation, error) {
	var (
		r       graph.Relation
		typ     string
		created int64
	)
	err := sc.Scan(&r.ID, &r.Scope.TenantID, &r.Scope.OrgID, &r.Scope.RepoID, &r.FromID, &r.ToID, &typ, &r.Reason,
		&r.CreatedBy, &created)
	r.Type, r.CreatedAt = graph.RelationType(typ), fromNanos(created)
	return r, err
}

const (
	// The relation of the same type between the same memories in the same
	// scope. Relies on the relations unique key.
	selectRelationDup = `SELECT ` + relationCols + ` FROM relations r ` + relationJoin + `
WHERE r.from_rid = ? AND r.to_rid = ? AND r.type = ? AND r.org_id = ? AND r.repo_id = ?`
	insertRelation = `INSERT INTO relations (id, tenant_id, org_id, repo_id, from_rid, to_rid, type, reason, created_by,
	created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// A relation by id with the scopes of its memories. Relies on the
	// unique index on relations.id.
	selectRelationForDelete = `SELECT ` + relationCols + `, a.org_id, a.repo_id, b.org_id, b.repo_id
FROM relations r ` + relationJoin + ` WHERE r.id = ?`
	deleteRelation = `DELETE FROM relations WHERE id = ?`
)

// CreateRelation implements graph.Relations.
func (s *Store) CreateRelation(ctx context.Context, r graph.Relation, audit ...graph.AuditEvent) (graph.Relation, bool, error) {
	if err := r.Validate(); err != nil {
		return r, false, fmt.Errorf("create relation: %w", err)
	}
	if err := validateAudit(audit); err != nil {
		return r, false, fmt.Errorf("create relation: %w", err)
	}
	created := false
	err := s.write(ctx, func(t *tx) error {
		created = false
		ends := [2]memRef{}
		for i, id := range []string{r.FromID, r.ToID} {
			m, err := t.memoryRef(r.Scope, id)
			if err == nil && m.status == graph.StatusErased {
				err = fmt.Errorf("memory %s: %w", id, graph.ErrNotFound)
			}
			if err != nil {
				return err
			}
			ends[i] = m
		}
		dup, err := scanRelation(t.queryRow(selectRelationDup, ends[0].rid, ends[1].rid, string(r.Type),
			r.Scope.OrgID, r.Scope.RepoID))
		if err == nil {
			r = dup
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		r.ID, r.CreatedAt = orNewID(r.ID), orNow(r.CreatedAt, t.now)
		if _, err := t.exec(insertRelation, append(append([]any{r.ID}, scopeArgs(r.Scope)...), ends[0].rid, ends[1].rid,
			string(r.Type), r.Reason, r.CreatedBy, nanos(r.CreatedAt))...); err != nil {
			return err
		}
		created = true
		return t.appendAudits(audit)
	})
	if err != nil {
		return r, false, fmt.Errorf("create relation: %w", err)
	}
	return r, created, nil
}

// relationVisible is the read rule of a relation r (graph.Relation): its
// scope seen by the filter (%[1]s, on r) and both memories admitted
// (%[2]s, on m, whose parameters come twice). Relies on the memories
// primary key.
const relationVisible = `%[1]s
	AND EXISTS (SELECT 1 FROM memories m WHERE m.rid = r.from_rid AND %[2]s)
	AND EXISTS (SELECT 1 FROM memories m WHERE m.rid = r.to_rid AND %[2]s)`

// GetRelation implements graph.Relations.
func (s *Store) GetRelation(ctx context.Context, f graph.Filter, id string) (graph.Relation, error) {
	w, err := memoryFilter(f, true)
	if err != nil {
		return graph.Relation{}, fmt.Errorf("get relation: %w", err)
	}
	if err := graph.CheckID("id", id); err != nil {
		return graph.Relation{}, fmt.Errorf("get relation: %w", err)
	}
	rs := &where{}
	rs.readScope("r", f)
	q := `SELECT ` + relationCols + ` FROM relations r ` + relationJoin + ` WHERE r.id = ? AND ` +
		fmt.Sprintf(relationVisible, rs.sql(), w.sql())
	args := append(append(append([]any{id}, rs.args...), w.args...), w.args...)
	r, err := scanRelation(s.r.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("relation %s: %w", id, graph.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("get relation %s: %w", id, err)
	}
	return r, nil
}

// DeleteRelation implements graph.Relations.
func (s *Store) DeleteRelation(ctx context.Context, sc graph.Scope, id string, audit ...graph.AuditEvent) (graph.Relation, error) {
	if err := sc.Validate(); err != nil {
		return graph.Relation{}, fmt.Errorf("delete relation: %w", err)
	}
	if err := graph.CheckID("id", id); err != nil {
		return graph.Relation{}, fmt.Errorf("delete relation: %w", err)
	}
	if err := validateAudit(audit); err != nil {
		return graph.Relation{}, fmt.Errorf("delete relation: %w", err)
	}
	var r graph.Relation
	err := s.write(ctx, func(t *tx) error {
		var a, b graph.Scope
		var err error
		r, err = scanRelationWith(t.queryRow(selectRelationForDelete, id), &a, &b)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("relation %s: %w", id, graph.ErrNotFound)
		}
		if err != nil {
			return err
		}
		a.TenantID, b.TenantID = r.Scope.TenantID, r.Scope.TenantID
		if !sc.Contains(r.Scope) || !sc.Contains(a) || !sc.Contains(b) {
			return fmt.Errorf("relation %s: %w", id, graph.ErrNotFound)
		}
		if _, err := t.exec(deleteRelation, id); err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return graph.Relation{}, fmt.Errorf("delete relation: %w", err)
	}
	return r, nil
}

// scanRelationWith reads selectRelationForDelete: a relation and the org
// and repo of its memories (same tenant: a relation never crosses one).
func scanRelationWith(sc scanner, a, b *graph.Scope) (graph.Relation, error) {
	var (
		r       graph.Relation
		typ     string
		created int64
	)
	err := sc.Scan(&r.ID, &r.Scope.TenantID, &r.Scope.OrgID, &r.Scope.RepoID, &r.FromID, &r.ToID, &typ, &r.Reason,
		&r.CreatedBy, &created, &a.OrgID, &a.RepoID, &b.OrgID, &b.RepoID)
	r.Type, r.CreatedAt = graph.RelationType(typ), fromNanos(created)
	return r, err
}

// relationsOf lists, for each memory of a list the filter admits (%[1]s:
// the filter on m), its relations the filter sees (%[2]s: the scope rule
// on r) whose other end it admits too, numbered newest first per memory.
// Relies on the memories id index, the relations unique key (from) and
// relations_to.
const relationsOf = `WITH src AS MATERIALIZED (
  SELECT m.rid FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value WHERE %[1]s),
hit AS (
  SELECT s.rid AS seed, r.rid AS rel, r.to_rid AS other FROM src s CROSS JOIN relations r ON r.from_rid = s.rid WHERE %[2]s
  UNION ALL
  SELECT s.rid, r.rid, r.from_rid FROM src s CROSS JOIN relations r ON r.to_rid = s.rid WHERE %[2]s),
ok AS (
  SELECT h.rel, ROW_NUMBER() OVER (PARTITION BY h.seed ORDER BY r.created_at DESC, r.id) AS n
  FROM hit h CROSS JOIN relations r ON r.rid = h.rel CROSS JOIN memories m ON m.rid = h.other WHERE %[1]s)
SELECT DISTINCT ` + relationCols + ` FROM ok CROSS JOIN relations r ON r.rid = ok.rel ` + relationJoin + `
WHERE ok.n <= ?
ORDER BY r.created_at DESC, r.id`

// RelationsOf implements graph.Relations.
func (s *Store) RelationsOf(ctx context.Context, f graph.Filter, ids []string, perMemory int) ([]graph.Relation, error) {
	w, err := memoryFilter(f, false)
	if err != nil {
		return nil, fmt.Errorf("relations of: %w", err)
	}
	if len(ids) > graph.MaxRelationSeeds {
		return nil, fmt.Errorf("relations of: %w", &graph.FieldError{Field: "ids",
			Message: fmt.Sprintf("lists %d memories, more than %d", len(ids), graph.MaxRelationSeeds)})
	}
	if err := checkIDs("ids", ids); err != nil {
		return nil, fmt.Errorf("relations of: %w", err)
	}
	if len(ids) == 0 || perMemory <= 0 {
		return nil, nil
	}
	rs := &where{}
	rs.readScope("r", f)
	q := fmt.Sprintf(relationsOf, w.sql(), rs.sql())
	args := append([]any{jsonList(ids)}, w.args...)
	args = append(append(append(args, rs.args...), rs.args...), w.args...)
	rows, err := s.cachedQuery(ctx, q, append(args, perMemory)...)
	if err != nil {
		return nil, fmt.Errorf("relations of: %w", err)
	}
	out, err := collect(rows, scanRelation)
	if err != nil {
		return nil, fmt.Errorf("relations of: %w", err)
	}
	return out, nil
}
