package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

// A memory to restore, with what its exclusive key check needs. Relies on
// the unique index on memories.id.
const selectRestore = `SELECT rid, tenant_id, org_id, repo_id, user_id, type, canonical_key, status
FROM memories WHERE id = ?`

// The active memory with a canonical key in a namespace. Relies on
// memories_active_ns.
const activeHolder = `SELECT id FROM memories
WHERE tenant_id = ? AND canonical_key = ? AND org_id = ? AND repo_id = ? AND user_id = ? AND type = ?
  AND status = 'active' AND canonical_key <> ''
LIMIT 1`

const restoreMemory = `UPDATE memories SET status = 'active' WHERE rid = ?`

// Restore implements graph.Store.
func (s *Store) Restore(ctx context.Context, sc graph.Scope, id string, audit ...graph.AuditEvent) error {
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := errors.Join(checkIDs("id", []string{id}), validateAudit(audit)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	err := s.write(ctx, func(t *tx) error {
		var (
			rid                   int64
			scope                 graph.Scope
			user, typ, key, state string
		)
		err := t.queryRow(selectRestore, id).Scan(&rid, &scope.TenantID, &scope.OrgID, &scope.RepoID, &user, &typ, &key,
			&state)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !sc.Contains(scope)) {
			return fmt.Errorf("memory %s: %w", id, graph.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if graph.Status(state) != graph.StatusArchived {
			return fmt.Errorf("memory is %s, not archived: %w", state, graph.ErrConflict)
		}
		if key != "" {
			var holder string
			err := t.queryRow(activeHolder, scope.TenantID, key, scope.OrgID, scope.RepoID, user, typ).Scan(&holder)
			if err == nil {
				return fmt.Errorf("canonical key %q is held by active memory %s: %w", key, holder, graph.ErrConflict)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if _, err := t.exec(restoreMemory, rid); err != nil {
			return err
		}
		if err := t.logStatus(rid, graph.StatusActive, nanos(t.now)); err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return fmt.Errorf("restore %s: %w", id, err)
	}
	return nil
}

// Statements of an erase, each about one memory (rid) unless it says
// otherwise. The chunk statements rely on chunks_version, the mention ones
// on mentions_memory and the chunk_mentions primary key, the audit one on
// audit_subject, the outbox and gate ones scan their (small, per tenant)
// tables.
const (
	eraseChunkEntities = `SELECT DISTINCT cm.entity_rid FROM versions v
JOIN chunks c ON c.version_rid = v.rid JOIN chunk_mentions cm ON cm.chunk_rid = c.rid WHERE v.memory_rid = ?`
	eraseChunkMentions = `DELETE FROM chunk_mentions WHERE chunk_rid IN (
	SELECT c.rid FROM versions v JOIN chunks c ON c.version_rid = v.rid WHERE v.memory_rid = ?)`
	eraseChunks   = `DELETE FROM chunks WHERE version_rid IN (SELECT rid FROM versions WHERE memory_rid = ?)`
	eraseVersions = `UPDATE versions SET content = '', summary = '', index_text = '', content_hash = '', provenance = '{}'
WHERE memory_rid = ?`
	eraseTags   = `DELETE FROM memory_tags WHERE memory_rid = ?`
	eraseMemory = `UPDATE memories SET status = 'erased', title = '', canonical_key = '', tags = '[]', subject_type = '',
	subject_id = '', layer = '', sublayer = '', session_id = '', exclusive_key = 0 WHERE rid = ?`
	eraseEdits = `UPDATE edits SET content = '', reason = '' WHERE memory_rid = ?`
	// The memory's relations, either way. Relies on the relations unique
	// key and relations_to.
	eraseRelations = `DELETE FROM relations WHERE from_rid = ?1 OR to_rid = ?1`
	// The memory and its versions leave every capsule. Relies on
	// capsule_items_memory, which is partial: the "<> 0" lets the planner
	// use it (a bound parameter does not prove the index's condition).
	eraseCapsuleItems = `DELETE FROM capsule_items WHERE memory_rid = ?1 AND memory_rid <> 0`
	// By tenant and memory id. Relies on gate_memory (partial: see
	// eraseCapsuleItems).
	eraseGateRequests = `UPDATE gate_requests SET title = '', reason = '', payload = 'null'
WHERE tenant_id = ?1 AND memory_id = ?2 AND memory_id <> '' RETURNING id`
	eraseAuditReasons = `UPDATE audit_events SET reason = '' WHERE tenant_id = ? AND subject_id = ?`
	// The proposals on the memory (their text) and the reasons of the
	// decisions that rejected them. Relies on proposals_memory.
	eraseRejections = `UPDATE decisions SET reason = '' WHERE id IN (
	SELECT rejected_decision_id FROM proposals WHERE tenant_id = ? AND memory_id = ? AND rejected_decision_id <> '')`
	eraseProposals     = `UPDATE proposals SET title = '', content = '' WHERE tenant_id = ? AND memory_id = ?`
	eraseOutbox        = `DELETE FROM outbox WHERE tenant_id = ? AND memory_id = ?`
	insertOutboxDelete = `INSERT INTO outbox (id, tenant_id, org_id, repo_id, memory_id, version_id, op, created_at)
	VALUES (?, ?, ?, ?, ?, '', 'delete', ?)`
	insertErasure = `INSERT INTO erasures (memory_rid) VALUES (?)`
	// The entities a memory mentions, by norm name. Relies on
	// mentions_memory.
	eraseMentioned = `SELECT e.norm_name, e.rid FROM mentions x JOIN entities e ON e.rid = x.entity_rid WHERE x.memory_rid = ?`
	// NEXT around a memory: its predecessors and successors in its
	// session. Rely on the memory_next primary key and memory_next_next.
	eraseNextPrev = `SELECT prev_rid FROM memory_next WHERE next_rid = ?`
	eraseNextNext = `SELECT next_rid FROM memory_next WHERE prev_rid = ?`
	eraseNext     = `DELETE FROM memory_next WHERE prev_rid = ?1 OR next_rid = ?1`
	// By entity rid: an entity that nothing mentions any more, with its
	// CO_OCCURS edges (their counts are 0 by now, but memories written
	// before the edges existed never counted). Relies on the mentions
	// primary key, chunk_mentions_entity, the co_occurs primary key and
	// co_occurs_b.
	deleteOrphanCoOccurs = `DELETE FROM co_occurs WHERE (a_rid = ?1 OR b_rid = ?1)
AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity_rid = ?1) AND NOT EXISTS (SELECT 1 FROM chunk_mentions WHERE entity_rid = ?1)`
	deleteOrphanAliases = `DELETE FROM entity_aliases WHERE entity_rid = ?1 AND tenant_id = (SELECT tenant_id FROM entities WHERE rid = ?1)
AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity_rid = ?1) AND NOT EXISTS (SELECT 1 FROM chunk_mentions WHERE entity_rid = ?1)`
	deleteOrphan = `DELETE FROM entities WHERE rid = ?1
AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity_rid = ?1) AND NOT EXISTS (SELECT 1 FROM chunk_mentions WHERE entity_rid = ?1)`
)

// Erase implements graph.Store.
func (s *Store) Erase(ctx context.Context, sc graph.Scope, in graph.EraseInput) (graph.Erasure, error) {
	if err := sc.Validate(); err != nil {
		return graph.Erasure{}, fmt.Errorf("erase: %w", err)
	}
	if err := in.Validate(); err != nil {
		return graph.Erasure{}, fmt.Errorf("erase: %w", err)
	}
	var out graph.Erasure
	err := s.write(ctx, func(t *tx) error {
		out = graph.Erasure{}
		entities := map[int64]bool{}
		for _, id := range in.IDs {
			if err := t.err(); err != nil {
				return err
			}
			m, err := t.memoryRef(sc, id)
			if err != nil {
				return err
			}
			if m.status == graph.StatusErased {
				continue
			}
			if err := t.erase(m, in.Index, entities, &out); err != nil {
				return fmt.Errorf("memory %s: %w", id, err)
			}
		}
		// The posting-list sizes and CO_OCCURS counts before the orphans
		// go (an orphan's are 0 by then).
		if err := t.flushMentionCounts(); err != nil {
			return err
		}
		clear(t.mentions)
		if err := t.flushCoOccurs(); err != nil {
			return err
		}
		clear(t.cooccur)
		for rid := range entities {
			for _, q := range []string{deleteOrphanAliases, deleteOrphanCoOccurs} {
				if _, err := t.exec(q, rid); err != nil {
					return err
				}
			}
			res, err := t.exec(deleteOrphan, rid)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			out.Entities += int(n)
		}
		for _, a := range in.Audit {
			if err := t.appendAudit(a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return graph.Erasure{}, fmt.Errorf("erase: %w", err)
	}
	// The WAL still holds the pages as they were before the erase; a
	// checkpoint that truncates it leaves them nowhere. Readers on an older
	// snapshot may keep it from completing (busy): the next checkpoint
	// does it.
	if out.Memories > 0 {
		var busy, frames, done int
		if err := s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done); err != nil {
			return out, fmt.Errorf("erase: checkpoint: %w", err)
		}
	}
	return out, nil
}

// erase removes memory m's content inside t, collecting the entities it and
// its chunks mentioned into entities.
func (t *tx) erase(m memRef, index bool, entities map[int64]bool, out *graph.Erasure) error {
	if err := t.collect(eraseChunkEntities, m.rid, entities); err != nil {
		return err
	}
	mentioned, err := t.names(eraseMentioned, m.rid)
	if err != nil {
		return err
	}
	for _, rid := range mentioned {
		t.mentions[rid]--
		entities[rid] = true
	}
	t.coOccur(mentioned, -1)
	if err := t.relinkNext(m.rid); err != nil {
		return err
	}
	if _, err := t.exec(deleteMentions, m.rid); err != nil {
		return err
	}
	if _, err := t.exec(eraseChunkMentions, m.rid); err != nil {
		return err
	}
	res, err := t.exec(eraseChunks, m.rid)
	if err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	out.Chunks += int(n)
	if res, err = t.exec(eraseVersions, m.rid); err != nil {
		return err
	}
	n, _ = res.RowsAffected()
	out.Versions += int(n)
	for _, q := range []string{eraseTags, eraseMemory, eraseEdits, eraseRelations, eraseCapsuleItems, insertErasure} {
		if _, err := t.exec(q, m.rid); err != nil {
			return err
		}
	}
	subjects := []string{m.id}
	if subjects, err = t.gateRequestsOf(m, subjects); err != nil {
		return err
	}
	for _, id := range subjects {
		if _, err := t.exec(eraseAuditReasons, m.scope.TenantID, id); err != nil {
			return err
		}
	}
	for _, q := range []string{eraseRejections, eraseProposals} {
		if _, err := t.exec(q, m.scope.TenantID, m.id); err != nil {
			return err
		}
	}
	if res, err = t.exec(eraseOutbox, m.scope.TenantID, m.id); err != nil {
		return err
	}
	n, _ = res.RowsAffected()
	out.Outbox += int(n)
	if index {
		if _, err := t.exec(insertOutboxDelete, graph.NewID(), m.scope.TenantID, m.scope.OrgID, m.scope.RepoID, m.id,
			nanos(t.now)); err != nil {
			return err
		}
	}
	out.Memories++
	return nil
}

// gateRequestsOf empties the gate requests that wrote m and appends their
// ids to ids.
func (t *tx) gateRequestsOf(m memRef, ids []string) ([]string, error) {
	st, err := t.stmt(eraseGateRequests)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(t.ctx, m.scope.TenantID, m.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// relinkNext takes memory rid out of its session's NEXT chain: each of its
// predecessors now leads to each of its successors, as if it had never been
// written.
func (t *tx) relinkNext(rid int64) error {
	prevs, nexts := map[int64]bool{}, map[int64]bool{}
	if err := t.collect(eraseNextPrev, rid, prevs); err != nil {
		return err
	}
	if err := t.collect(eraseNextNext, rid, nexts); err != nil {
		return err
	}
	if len(prevs)+len(nexts) == 0 {
		return nil
	}
	if _, err := t.exec(eraseNext, rid); err != nil {
		return err
	}
	for p := range prevs {
		for n := range nexts {
			if p != n {
				if _, err := t.exec(insertNext, p, n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// names reads (norm name, rid) rows of query (one parameter).
func (t *tx) names(query string, arg any) (map[string]int64, error) {
	st, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(t.ctx, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			n   string
			rid int64
		)
		if err := rows.Scan(&n, &rid); err != nil {
			return nil, err
		}
		out[n] = rid
	}
	return out, rows.Err()
}

// collect adds the rids query (one parameter) returns to set.
func (t *tx) collect(query string, arg any, set map[int64]bool) error {
	st, err := t.stmt(query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(t.ctx, arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			return err
		}
		set[rid] = true
	}
	return rows.Err()
}
