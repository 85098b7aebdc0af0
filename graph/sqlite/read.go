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

// GetMemory implements graph.Store.
func (s *Store) GetMemory(ctx context.Context, f graph.Filter, id string) (graph.Memory, error) {
	if err := checkIDs("id", []string{id}); err != nil {
		return graph.Memory{}, fmt.Errorf("get memory: %w", err)
	}
	ms, err := s.GetMemories(ctx, f, []string{id})
	if err != nil {
		return graph.Memory{}, err
	}
	if len(ms) == 0 {
		return graph.Memory{}, fmt.Errorf("memory %s: %w", id, graph.ErrNotFound)
	}
	return ms[0], nil
}

// Memories by id under the direct-fetch visibility rule. Relies on the
// unique index on memories.id; CROSS JOIN keeps the id list as the outer
// loop (the planner otherwise may scan the scope and probe the list).
const selectMemoriesByID = `SELECT ` + memoryCols + `
FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value
WHERE %s
ORDER BY j.key`

// GetMemories implements graph.Store.
func (s *Store) GetMemories(ctx context.Context, f graph.Filter, ids []string) ([]graph.Memory, error) {
	w, err := memoryFilter(f, true)
	if err != nil {
		return nil, fmt.Errorf("get memories: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.cachedQuery(ctx, fmt.Sprintf(selectMemoriesByID, w.sql()), append([]any{jsonList(ids)}, w.args...)...)
	if err != nil {
		return nil, fmt.Errorf("get memories: %w", err)
	}
	ms, err := scanMemories(rows)
	if err == nil {
		err = asKnown(ctx, s.r, f, ms)
	}
	if err != nil {
		return nil, fmt.Errorf("get memories: %w", err)
	}
	return ms, nil
}

const versionCols = `v.id, m.id, v.number, v.content, v.summary, v.index_text, v.content_hash, v.provenance, v.created_at`

func scanVersion(sc scanner) (graph.Version, error) {
	var (
		v       graph.Version
		prov    string
		created int64
	)
	if err := sc.Scan(&v.ID, &v.MemoryID, &v.Number, &v.Content, &v.Summary, &v.IndexText, &v.ContentHash, &prov, &created); err != nil {
		return v, err
	}
	v.CreatedAt = fromNanos(created)
	if err := json.Unmarshal([]byte(prov), &v.Provenance); err != nil {
		return v, fmt.Errorf("version %s provenance: %w", v.ID, err)
	}
	return v, nil
}

// Versions by id whose memory is visible. Relies on the unique index on
// versions.id.
const selectVersionsByID = `SELECT ` + versionCols + `
FROM json_each(?) j CROSS JOIN versions v ON v.id = j.value JOIN memories m ON m.rid = v.memory_rid
WHERE %s
ORDER BY j.key`

// GetVersion implements graph.Store.
func (s *Store) GetVersion(ctx context.Context, f graph.Filter, id string) (graph.Version, error) {
	if err := checkIDs("id", []string{id}); err != nil {
		return graph.Version{}, fmt.Errorf("get version: %w", err)
	}
	vs, err := s.GetVersions(ctx, f, []string{id})
	if err != nil {
		return graph.Version{}, err
	}
	if len(vs) == 0 {
		return graph.Version{}, fmt.Errorf("version %s: %w", id, graph.ErrNotFound)
	}
	return vs[0], nil
}

// GetVersions implements graph.Store.
func (s *Store) GetVersions(ctx context.Context, f graph.Filter, ids []string) ([]graph.Version, error) {
	w, err := memoryFilter(f, true)
	if err != nil {
		return nil, fmt.Errorf("get versions: %w", err)
	}
	w.versionsKnown(f)
	if len(ids) == 0 {
		return nil, nil
	}
	return s.queryVersions(ctx, fmt.Sprintf(selectVersionsByID, w.sql()), append([]any{jsonList(ids)}, w.args...))
}

func (s *Store) queryVersions(ctx context.Context, query string, args []any) ([]graph.Version, error) {
	rows, err := s.cachedQuery(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("versions: %w", err)
	}
	vs, err := collect(rows, scanVersion)
	if err != nil {
		return nil, fmt.Errorf("versions: %w", err)
	}
	return vs, nil
}

// A version's chunks with the norm names they MENTION. Relies on
// chunks_version and the chunk_mentions primary key.
const selectChunks = `SELECT c.id, v.id, c.chunk_key, c.start_at, c.end_at,
	COALESCE((SELECT json_group_array(e.norm_name) FROM chunk_mentions cm JOIN entities e ON e.rid = cm.entity_rid
	          WHERE cm.chunk_rid = c.rid), '[]')
FROM versions v JOIN memories m ON m.rid = v.memory_rid JOIN chunks c ON c.version_rid = v.rid
WHERE v.id = ? AND %s
ORDER BY c.ord`

// GetChunks implements graph.Store.
func (s *Store) GetChunks(ctx context.Context, f graph.Filter, versionID string) ([]graph.Chunk, error) {
	w, err := memoryFilter(f, true)
	if err != nil {
		return nil, fmt.Errorf("get chunks: %w", err)
	}
	w.versionsKnown(f)
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf(selectChunks, w.sql()), append([]any{versionID}, w.args...)...)
	if err != nil {
		return nil, fmt.Errorf("get chunks: %w", err)
	}
	defer rows.Close()
	var out []graph.Chunk
	for rows.Next() {
		var (
			c    graph.Chunk
			ents string
		)
		if err := rows.Scan(&c.ID, &c.VersionID, &c.Key, &c.Start, &c.End, &ents); err != nil {
			return nil, fmt.Errorf("get chunks: %w", err)
		}
		if err := json.Unmarshal([]byte(ents), &c.Entities); err != nil {
			return nil, fmt.Errorf("get chunks: %w", err)
		}
		if len(c.Entities) == 0 {
			c.Entities = nil
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// The active memory with a key in an exact namespace, the newest if
// several. Relies on memories_active_ns: the statement says the key is not
// empty, as the partial index does, because a bound key cannot prove it.
const selectActiveByKey = `SELECT ` + memoryCols + `
FROM memories m
WHERE m.tenant_id = ? AND m.canonical_key = ? AND m.status = 'active' AND m.canonical_key <> ''
  AND m.org_id = ? AND m.repo_id = ? AND m.user_id = ? AND m.type = ?
ORDER BY m.created_at DESC LIMIT 1`

// FindActiveByKey implements graph.Store.
func (s *Store) FindActiveByKey(ctx context.Context, ns graph.Namespace, key string) (graph.Memory, error) {
	if err := ns.Scope.Validate(); err != nil {
		return graph.Memory{}, fmt.Errorf("find by key: %w", err)
	}
	if key == "" {
		return graph.Memory{}, fmt.Errorf("find by key: %w", &graph.FieldError{Field: "canonical_key", Message: "required"})
	}
	// The write path asks this up to three times per note (key, slot key,
	// fact key): the statement is prepared once per connection, not per call.
	row, err := s.cachedRow(ctx, selectActiveByKey, ns.Scope.TenantID, key, ns.Scope.OrgID,
		ns.Scope.RepoID, ns.UserID, ns.Type)
	if err != nil {
		return graph.Memory{}, fmt.Errorf("find by key: %w", err)
	}
	m, _, err := scanMemory(row)
	if errors.Is(err, sql.ErrNoRows) {
		return graph.Memory{}, fmt.Errorf("key %q: %w", key, graph.ErrNotFound)
	}
	if err != nil {
		return graph.Memory{}, fmt.Errorf("find by key: %w", err)
	}
	return m, nil
}

// Resolve implements graph.Store: it follows superseded_by (the SUPERSEDES
// edge read backwards) while the successor is visible under f.
func (s *Store) Resolve(ctx context.Context, f graph.Filter, id string) (graph.Memory, error) {
	direct := f
	if len(direct.Statuses) == 0 {
		direct.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}
	}
	m, err := s.GetMemory(ctx, direct, id)
	if err != nil {
		return graph.Memory{}, fmt.Errorf("resolve: %w", err)
	}
	for range 10000 {
		if m.SupersededBy == "" {
			return m, nil
		}
		next, err := s.GetMemory(ctx, direct, m.SupersededBy)
		if errors.Is(err, graph.ErrNotFound) {
			return m, nil
		}
		if err != nil {
			return graph.Memory{}, fmt.Errorf("resolve: %w", err)
		}
		m = next
	}
	return graph.Memory{}, fmt.Errorf("resolve %s: supersession chain too long: %w", id, graph.ErrConflict)
}

// Is old_rid's chain (what it supersedes, transitively) holding new_rid?
// Relies on the supersedes primary key.
const supersedesReaches = `WITH RECURSIVE down(rid) AS (
	SELECT ?
	UNION SELECT s.old_rid FROM supersedes s JOIN down ON s.new_rid = down.rid
)
SELECT EXISTS (SELECT 1 FROM down WHERE rid = ?)`

const (
	insertSupersedes = `INSERT INTO supersedes (new_rid, old_rid) VALUES (?, ?)`
	markSuperseded   = `UPDATE memories SET status = 'superseded', superseded_by = ? WHERE rid = ?`
)

func (t *tx) supersede(old, new memRef) error {
	if old.rid == new.rid {
		return fmt.Errorf("%s cannot supersede itself: %w", old.id, graph.ErrConflict)
	}
	var cycle bool
	if err := t.queryRow(supersedesReaches, old.rid, new.rid).Scan(&cycle); err != nil {
		return err
	}
	if cycle {
		return fmt.Errorf("%s already supersedes %s: %w", old.id, new.id, graph.ErrConflict)
	}
	if _, err := t.exec(insertSupersedes, new.rid, old.rid); err != nil {
		return err
	}
	if _, err := t.exec(markSuperseded, new.id, old.rid); err != nil {
		return err
	}
	return t.logStatus(old.rid, graph.StatusSuperseded, nanos(t.now))
}

// insertStatus records a status a memory took and when (memory_status).
const insertStatus = `INSERT INTO memory_status (memory_rid, status, at) VALUES (?, ?, ?)`

// logStatus records that memory rid took status at (unix nanoseconds), for
// reads as known at a time (graph.Filter.KnownAt).
func (t *tx) logStatus(rid int64, status graph.Status, at int64) error {
	_, err := t.exec(insertStatus, rid, string(status), at)
	return err
}

// Supersede implements graph.Store.
func (s *Store) Supersede(ctx context.Context, sc graph.Scope, oldID, newID string) error {
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("supersede: %w", err)
	}
	if err := checkIDs("id", []string{oldID, newID}); err != nil {
		return fmt.Errorf("supersede: %w", err)
	}
	err := s.write(ctx, func(t *tx) error {
		old, err := t.memoryRef(sc, oldID)
		if err != nil {
			return err
		}
		nw, err := t.memoryRef(sc, newID)
		if err != nil {
			return err
		}
		if old.rid != nw.rid && old.status != graph.StatusActive {
			return fmt.Errorf("%s is %s: %w", oldID, old.status, graph.ErrConflict)
		}
		return t.supersede(old, nw)
	})
	if err != nil {
		return fmt.Errorf("supersede %s by %s: %w", oldID, newID, err)
	}
	return nil
}

const archiveMemory = `UPDATE memories SET status = 'archived' WHERE rid = ?`

// Archive implements graph.Store.
func (s *Store) Archive(ctx context.Context, sc graph.Scope, id string, audit ...graph.AuditEvent) error {
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if err := errors.Join(checkIDs("id", []string{id}), validateAudit(audit)); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	err := s.write(ctx, func(t *tx) error {
		m, err := t.memoryRef(sc, id)
		if err != nil {
			return err
		}
		if m.status != graph.StatusActive {
			return fmt.Errorf("memory is %s: %w", m.status, graph.ErrConflict)
		}
		if _, err := t.exec(archiveMemory, m.rid); err != nil {
			return err
		}
		if err := t.logStatus(m.rid, graph.StatusArchived, nanos(t.now)); err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return fmt.Errorf("archive %s: %w", id, err)
	}
	return nil
}

// Reinforce memories in the writer's scope. Relies on the unique index on
// memories.id; the id list is the outer loop of the subquery (with a plain
// IN, the planner scans the tenant's memories and probes the list).
const touchMemories = `UPDATE memories SET access_count = access_count + 1, last_accessed = ?
WHERE rid IN (SELECT m.rid FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value WHERE %s)`

// Touch implements graph.Store.
func (s *Store) Touch(ctx context.Context, sc graph.Scope, ids []string, at time.Time) error {
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("touch: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	// A write: the writer's reach (Contains). The engine touches only what
	// a read under the access rule returned, so nothing the reader could
	// not read is reinforced.
	w := &where{}
	w.writeScope("m", sc)
	err := s.writeIn(ctx, writeReadCounts, []string{sc.TenantID}, func(t *tx) error {
		_, err := t.ExecContext(ctx, fmt.Sprintf(touchMemories, w.sql()), append([]any{nanos(at.UTC()), jsonList(ids)}, w.args...)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("touch: %w", err)
	}
	return nil
}

// selectVersionsOf lists a visible memory's versions, oldest first.
const selectVersionsOf = `SELECT ` + versionCols + `
FROM memories m JOIN versions v ON v.memory_rid = m.rid
WHERE m.id = ? AND %s
ORDER BY v.number`

// ListVersions implements graph.Store.
func (s *Store) ListVersions(ctx context.Context, f graph.Filter, memoryID string) ([]graph.Version, error) {
	w, err := memoryFilter(f, true)
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	w.versionsKnown(f)
	vs, err := s.queryVersions(ctx, fmt.Sprintf(selectVersionsOf, w.sql()), append([]any{memoryID}, w.args...))
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("versions of %s: %w", memoryID, graph.ErrNotFound)
	}
	return vs, nil
}
