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

var _ graph.Capsules = (*Store)(nil)

const (
	insertCapsule = `INSERT INTO capsules (id, tenant_id, org_id, repo_id, subject, audience, created_by, created_at,
	expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertCapsuleAudience = `INSERT OR IGNORE INTO capsule_audience (tenant_id, agent_id, capsule_rid) VALUES (?, ?, ?)`
	insertCapsuleItem     = `INSERT INTO capsule_items (capsule_rid, kind, item_id, memory_rid) VALUES (?, ?, ?, ?)`
	// A version's memory, for the scope check and the item's memory_rid.
	// Relies on the unique index on versions.id.
	selectVersionRef = `SELECT m.rid, m.tenant_id, m.org_id, m.repo_id FROM versions v JOIN memories m ON m.rid = v.memory_rid
WHERE v.id = ?`
	selectDecisionScope = `SELECT tenant_id, org_id, repo_id FROM decisions WHERE id = ?`
)

// Capsule item kinds, as capsule_items.kind stores them.
const (
	itemMemory   = "memory"
	itemVersion  = "version"
	itemDecision = "decision"
)

// CreateCapsule implements graph.Capsules.
func (s *Store) CreateCapsule(ctx context.Context, c graph.Capsule, audit ...graph.AuditEvent) (graph.Capsule, error) {
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("create capsule: %w", err)
	}
	if err := validateAudit(audit); err != nil {
		return c, fmt.Errorf("create capsule: %w", err)
	}
	c.ExpiresAt = c.ExpiresAt.UTC()
	err := s.write(ctx, func(t *tx) error {
		c.ID, c.CreatedAt = orNewID(c.ID), orNow(c.CreatedAt, t.now)
		items, err := t.capsuleItems(c)
		if err != nil {
			return err
		}
		audience, _ := json.Marshal(c.Audience)
		res, err := t.exec(insertCapsule, append(append([]any{c.ID}, scopeArgs(c.Scope)...), c.Subject, string(audience),
			c.CreatedBy, nanos(c.CreatedAt), nanos(c.ExpiresAt))...)
		if err != nil {
			return err
		}
		rid, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for _, a := range c.Audience {
			if _, err := t.exec(insertCapsuleAudience, c.Scope.TenantID, a, rid); err != nil {
				return err
			}
		}
		for _, it := range items {
			if _, err := t.exec(insertCapsuleItem, rid, it.kind, it.id, it.memoryRID); err != nil {
				return err
			}
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return c, fmt.Errorf("create capsule: %w", err)
	}
	return c, nil
}

type capsuleItem struct {
	kind, id  string
	memoryRID int64
}

// capsuleItems checks that every item of c lies in c's scope or beneath
// it, and returns the rows to write.
func (t *tx) capsuleItems(c graph.Capsule) ([]capsuleItem, error) {
	var out []capsuleItem
	for _, id := range c.MemoryIDs {
		m, err := t.memoryRef(c.Scope, id)
		if err != nil {
			return nil, err
		}
		out = append(out, capsuleItem{itemMemory, id, m.rid})
	}
	for _, id := range c.VersionIDs {
		var (
			rid int64
			sc  graph.Scope
		)
		err := t.queryRow(selectVersionRef, id).Scan(&rid, &sc.TenantID, &sc.OrgID, &sc.RepoID)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !c.Scope.Contains(sc)) {
			return nil, fmt.Errorf("version %s: %w", id, graph.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, capsuleItem{itemVersion, id, rid})
	}
	for _, id := range c.DecisionIDs {
		var sc graph.Scope
		err := t.queryRow(selectDecisionScope, id).Scan(&sc.TenantID, &sc.OrgID, &sc.RepoID)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !c.Scope.Contains(sc)) {
			return nil, fmt.Errorf("decision %s: %w", id, graph.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, capsuleItem{itemDecision, id, 0})
	}
	return out, nil
}

const capsuleCols = `c.rid, c.id, c.tenant_id, c.org_id, c.repo_id, c.subject, c.audience, c.created_by, c.created_at,
	c.expires_at, c.revoked_at, c.revoked_by`

func scanCapsule(sc scanner) (graph.Capsule, int64, error) {
	var (
		c                         graph.Capsule
		rid                       int64
		audience                  string
		created, expires, revoked int64
	)
	if err := sc.Scan(&rid, &c.ID, &c.Scope.TenantID, &c.Scope.OrgID, &c.Scope.RepoID, &c.Subject, &audience,
		&c.CreatedBy, &created, &expires, &revoked, &c.RevokedBy); err != nil {
		return c, 0, err
	}
	c.CreatedAt, c.ExpiresAt, c.RevokedAt = fromNanos(created), fromNanos(expires), fromNanos(revoked)
	return c, rid, json.Unmarshal([]byte(audience), &c.Audience)
}

// Live capsules only: not revoked, not expired at the read's instant.
const capsuleLive = `c.revoked_at = 0 AND c.expires_at > ?`

// One capsule by id, for an agent of its audience or its creator. Relies on
// the unique index on capsules.id and the capsule_audience primary key.
const getCapsule = `SELECT ` + capsuleCols + ` FROM capsules c
WHERE c.id = ? AND %s AND ` + capsuleLive + `
  AND (c.created_by = ? OR EXISTS (
       SELECT 1 FROM capsule_audience a WHERE a.tenant_id = c.tenant_id AND a.agent_id = ? AND a.capsule_rid = c.rid))`

// GetCapsule implements graph.Capsules.
func (s *Store) GetCapsule(ctx context.Context, f graph.Filter, q graph.CapsuleQuery, id string) (graph.Capsule, error) {
	if err := errors.Join(f.Validate(), q.Validate(), checkIDs("id", []string{id})); err != nil {
		return graph.Capsule{}, fmt.Errorf("get capsule: %w", err)
	}
	w := &where{}
	w.readScope("c", f)
	args := append(append([]any{id}, w.args...), nanos(q.At), q.Agent, q.Agent)
	c, rid, err := scanCapsule(s.r.QueryRowContext(ctx, fmt.Sprintf(getCapsule, w.sql()), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("capsule %s: %w", id, graph.ErrNotFound)
	}
	if err == nil {
		err = s.readItems(ctx, []int64{rid}, []*graph.Capsule{&c})
	}
	if err != nil {
		return graph.Capsule{}, fmt.Errorf("get capsule %s: %w", id, err)
	}
	return c, nil
}

// Live capsules addressed to an agent, newest first; relies on the
// capsule_audience primary key. Live capsules an agent created; relies on
// capsules_creator.
const (
	listCapsulesTo = `SELECT ` + capsuleCols + ` FROM capsule_audience a JOIN capsules c ON c.rid = a.capsule_rid
WHERE a.tenant_id = ? AND a.agent_id = ? AND %s AND ` + capsuleLive + `
ORDER BY c.created_at DESC, c.rid DESC LIMIT ?`
	listCapsulesBy = `SELECT ` + capsuleCols + ` FROM capsules c
WHERE c.created_by = ? AND %s AND ` + capsuleLive + `
ORDER BY c.created_at DESC, c.rid DESC LIMIT ?`
)

// ListCapsules implements graph.Capsules.
func (s *Store) ListCapsules(ctx context.Context, f graph.Filter, q graph.CapsuleQuery, p graph.Page) ([]graph.Capsule, string, error) {
	if err := errors.Join(f.Validate(), q.Validate()); err != nil {
		return nil, "", fmt.Errorf("list capsules: %w", err)
	}
	cur, ok, err := decodeCursor(p.Cursor)
	if err != nil {
		return nil, "", fmt.Errorf("list capsules: %w", err)
	}
	w := &where{}
	w.readScope("c", f)
	if ok {
		w.add("(c.created_at < ? OR (c.created_at = ? AND c.rid < CAST(? AS INTEGER)))", cur.At, cur.At, cur.Key)
	}
	limit := pageLimit(p)
	query, args := listCapsulesTo, []any{f.Scope.TenantID, q.Agent}
	if q.Sent {
		query, args = listCapsulesBy, []any{q.Agent}
	}
	args = append(append(args, w.args...), nanos(q.At), limit+1)
	rows, err := s.cachedQuery(ctx, fmt.Sprintf(query, w.sql()), args...)
	if err != nil {
		return nil, "", fmt.Errorf("list capsules: %w", err)
	}
	defer rows.Close()
	var (
		out  []graph.Capsule
		rids []int64
	)
	for rows.Next() {
		c, rid, err := scanCapsule(rows)
		if err != nil {
			return nil, "", fmt.Errorf("list capsules: %w", err)
		}
		out, rids = append(out, c), append(rids, rid)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list capsules: %w", err)
	}
	var next string
	if len(out) > limit {
		out, rids = out[:limit], rids[:limit]
		next = cursor{At: nanos(out[limit-1].CreatedAt), Key: fmt.Sprint(rids[limit-1])}.encode()
	}
	ptrs := make([]*graph.Capsule, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	if err := s.readItems(ctx, rids, ptrs); err != nil {
		return nil, "", fmt.Errorf("list capsules: %w", err)
	}
	return out, next, nil
}

// The items of capsules, in the order they were given. Relies on
// capsule_items_capsule.
const selectCapsuleItems = `SELECT i.capsule_rid, i.kind, i.item_id FROM json_each(?) j
CROSS JOIN capsule_items i ON i.capsule_rid = j.value ORDER BY i.capsule_rid, i.rid`

// readItems fills the item ids of capsules cs (rids parallel).
func (s *Store) readItems(ctx context.Context, rids []int64, cs []*graph.Capsule) error {
	if len(rids) == 0 {
		return nil
	}
	byRID := make(map[int64]*graph.Capsule, len(rids))
	for i, rid := range rids {
		byRID[rid] = cs[i]
	}
	ids, _ := json.Marshal(rids)
	rows, err := s.cachedQuery(ctx, selectCapsuleItems, string(ids))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			rid      int64
			kind, id string
		)
		if err := rows.Scan(&rid, &kind, &id); err != nil {
			return err
		}
		c := byRID[rid]
		switch kind {
		case itemMemory:
			c.MemoryIDs = append(c.MemoryIDs, id)
		case itemVersion:
			c.VersionIDs = append(c.VersionIDs, id)
		case itemDecision:
			c.DecisionIDs = append(c.DecisionIDs, id)
		}
	}
	return rows.Err()
}

const revokeCapsule = `UPDATE capsules SET revoked_at = ?, revoked_by = ? WHERE rid = ?`

// RevokeCapsule implements graph.Capsules.
func (s *Store) RevokeCapsule(ctx context.Context, sc graph.Scope, id, by string, at time.Time, audit ...graph.AuditEvent) (graph.Capsule, error) {
	if err := errors.Join(sc.Validate(), checkIDs("id", []string{id}), checkIDs("revoked_by", []string{by}), validateAudit(audit)); err != nil {
		return graph.Capsule{}, fmt.Errorf("revoke capsule: %w", err)
	}
	var (
		c   graph.Capsule
		rid int64
	)
	err := s.write(ctx, func(t *tx) error {
		var err error
		c, rid, err = scanCapsule(t.queryRow(`SELECT `+capsuleCols+` FROM capsules c WHERE c.id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !sc.Contains(c.Scope)) {
			return fmt.Errorf("capsule %s: %w", id, graph.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if !c.RevokedAt.IsZero() {
			return fmt.Errorf("capsule %s is already revoked: %w", id, graph.ErrConflict)
		}
		c.RevokedAt, c.RevokedBy = orNow(at, t.now), by
		if _, err := t.exec(revokeCapsule, nanos(c.RevokedAt), by, rid); err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return graph.Capsule{}, fmt.Errorf("revoke capsule: %w", err)
	}
	if err := s.readItems(ctx, []int64{rid}, []*graph.Capsule{&c}); err != nil {
		return graph.Capsule{}, fmt.Errorf("revoke capsule %s: %w", id, err)
	}
	return c, nil
}
