package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

// The newest other memory of a session (graph.EventTime, then created_at,
// then write order), in the same tenant, org, repo and user. Relies on
// memories_session, read backwards.
const newestInSession = `SELECT rid FROM memories
WHERE tenant_id = ? AND session_id = ? AND org_id = ? AND repo_id = ? AND user_id = ? AND session_id <> '' AND rid <> ?
ORDER BY CASE WHEN valid_from = 0 THEN created_at ELSE valid_from END DESC, created_at DESC, rid DESC
LIMIT 1`

const insertNext = `INSERT OR IGNORE INTO memory_next (prev_rid, next_rid) VALUES (?, ?)`

// linkSession writes the NEXT edge from the newest memory of m's session
// to m (rid), when m has a session and it has another memory.
func (t *tx) linkSession(m graph.Memory, rid int64) error {
	if m.SessionID == "" {
		return nil
	}
	var prev int64
	err := t.queryRow(newestInSession, m.Scope.TenantID, m.SessionID, m.Scope.OrgID, m.Scope.RepoID, m.UserID, rid).Scan(&prev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	_, err = t.exec(insertNext, prev, rid)
	return err
}

// coOccur records the CO_OCCURS pairs of a memory mentioning ents (norm
// name -> rid), delta each (+1 for a version written, -1 for the one it
// replaces); flushCoOccurs writes them at commit.
func (t *tx) coOccur(ents map[string]int64, delta int64) {
	norms := make([]string, 0, len(ents))
	for n := range ents {
		norms = append(norms, n)
	}
	for _, p := range graph.CoOccurPairs(norms) {
		t.cooccur[[2]int64{ents[p[0]], ents[p[1]]}] += delta
	}
}

const (
	addCoOccur = `INSERT INTO co_occurs (a_rid, b_rid, count) VALUES (?, ?, ?)
ON CONFLICT (a_rid, b_rid) DO UPDATE SET count = count + excluded.count`
	dropCoOccur = `DELETE FROM co_occurs WHERE a_rid = ? AND b_rid = ? AND count <= 0`
)

// flushCoOccurs writes the accumulated CO_OCCURS count changes, dropping
// the edges no memory supports any more.
func (t *tx) flushCoOccurs() error {
	for p, d := range t.cooccur {
		if d == 0 {
			continue
		}
		if _, err := t.exec(addCoOccur, p[0], p[1], d); err != nil {
			return err
		}
		if d < 0 {
			if _, err := t.exec(dropCoOccur, p[0], p[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

var _ graph.EdgeCounter = (*Store)(nil)

// The CO_OCCURS edges of an entity, both ways. Relies on the co_occurs
// primary key and a scan of it for b (analysts' use only).
const coOccurrences = `SELECT o.norm_name, c.count FROM entities e
JOIN co_occurs c ON c.a_rid = e.rid JOIN entities o ON o.rid = c.b_rid
WHERE e.tenant_id = ? AND e.norm_name = ?
UNION ALL
SELECT o.norm_name, c.count FROM entities e
JOIN co_occurs c ON c.b_rid = e.rid JOIN entities o ON o.rid = c.a_rid
WHERE e.tenant_id = ? AND e.norm_name = ?`

// CoOccurrences implements graph.EdgeCounter.
func (s *Store) CoOccurrences(ctx context.Context, tenant, entity string) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, coOccurrences, tenant, entity, tenant, entity)
	if err != nil {
		return nil, fmt.Errorf("co-occurrences: %w", err)
	}
	return countsOf(rows)
}

// The counts of a memory's MENTIONS. Relies on mentions_memory.
const mentionCounts = `SELECT e.norm_name, x.count FROM memories m
JOIN mentions x ON x.memory_rid = m.rid JOIN entities e ON e.rid = x.entity_rid
WHERE m.id = ? AND m.tenant_id = ?`

// MentionCounts implements graph.EdgeCounter.
func (s *Store) MentionCounts(ctx context.Context, tenant, memoryID string) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, mentionCounts, memoryID, tenant)
	if err != nil {
		return nil, fmt.Errorf("mention counts: %w", err)
	}
	return countsOf(rows)
}

func countsOf(rows *sql.Rows) (map[string]int64, error) {
	type kv struct {
		k string
		v int64
	}
	got, err := collect(rows, func(sc scanner) (x kv, err error) { return x, sc.Scan(&x.k, &x.v) })
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(got))
	for _, x := range got {
		out[x.k] = x.v
	}
	return out, nil
}
