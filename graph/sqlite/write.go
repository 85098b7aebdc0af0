package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// CreateMemories implements graph.Store: every input is validated before the
// store is touched, then all are written in one transaction.
func (s *Store) CreateMemories(ctx context.Context, in []graph.MemoryInput) ([]graph.Created, error) {
	ins := slices.Clone(in)
	for i := range ins {
		if err := ins[i].Validate(); err != nil {
			return nil, fmt.Errorf("create memory %d: %w", i, err)
		}
	}
	out := make([]graph.Created, len(ins))
	tenants := make([]string, len(ins))
	for i := range ins {
		tenants[i] = ins[i].Memory.Scope.TenantID
	}
	// Each memory is written in its own tenant: what it supersedes, its
	// session's NEXT edge, its entities and their counts are all looked up
	// there (memoryRef, linkSession, resolveEntity).
	err := s.writeIn(ctx, writeGraph, tenants, func(t *tx) error {
		for i := range ins {
			if err := t.err(); err != nil {
				return err
			}
			ins[i].Memory.Tags = slices.Clone(ins[i].Memory.Tags)
			ins[i].Version.Entities = cloneRefs(ins[i].Version.Entities)
			ins[i].Version.Chunks = slices.Clone(ins[i].Version.Chunks)
			for j := range ins[i].Version.Chunks {
				ins[i].Version.Chunks[j].Entities = cloneRefs(ins[i].Version.Chunks[j].Entities)
			}
			ins[i].Normalize(t.now)
			c, err := t.createMemory(ins[i])
			if err != nil {
				return fmt.Errorf("create memory %s: %w", ins[i].Memory.ID, err)
			}
			if err := t.settle(ins[i].Settles, c.Memory.ID); err != nil {
				return fmt.Errorf("create memory %s: %w", ins[i].Memory.ID, err)
			}
			out[i] = c
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func cloneRefs(refs []graph.EntityRef) []graph.EntityRef {
	out := slices.Clone(refs)
	for i := range out {
		out[i].Aliases = slices.Clone(out[i].Aliases)
	}
	return out
}

const insertMemory = `INSERT INTO memories (id, tenant_id, org_id, repo_id, user_id, type, layer, sublayer, title,
	canonical_key, status, source_kind, importance, access_count, last_accessed, valid_from, valid_to, visibility,
	subject_type, subject_id, project_id, session_id, channel, tags, created_at, exclusive_key)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// The active memory holding an exclusive key in a namespace, other than the
// one being superseded (rid; 0 for none). Relies on memories_exclusive_key.
const exclusiveHolder = `SELECT id FROM memories
WHERE tenant_id = ? AND canonical_key = ? AND org_id = ? AND repo_id = ? AND user_id = ? AND type = ?
  AND status = 'active' AND exclusive_key = 1 AND rid <> ?
LIMIT 1`

const insertTag = `INSERT OR IGNORE INTO memory_tags (memory_rid, tag) VALUES (?, ?)`

func (t *tx) createMemory(in graph.MemoryInput) (graph.Created, error) {
	m := in.Memory
	var old memRef
	if in.Supersedes != "" {
		var err error
		if old, err = t.memoryRef(m.Scope, in.Supersedes); err != nil {
			return graph.Created{}, fmt.Errorf("supersedes: %w", err)
		}
		if old.status != graph.StatusActive {
			return graph.Created{}, fmt.Errorf("supersedes %s: %w: memory is %s", in.Supersedes, graph.ErrConflict, old.status)
		}
	}
	if in.ClaimsKey() {
		// Writes are serialised (one writer, BEGIN IMMEDIATE, across
		// processes too), so this check and the insert cannot interleave
		// with another writer's.
		var holder string
		err := t.queryRow(exclusiveHolder, m.Scope.TenantID, m.CanonicalKey, m.Scope.OrgID, m.Scope.RepoID, m.UserID,
			m.Type, old.rid).Scan(&holder)
		switch {
		case err == nil:
			return graph.Created{}, fmt.Errorf("canonical key %q is held by active memory %s: %w", m.CanonicalKey, holder, graph.ErrConflict)
		case !errors.Is(err, sql.ErrNoRows):
			return graph.Created{}, err
		}
	}
	tags, _ := json.Marshal(nonNil(m.Tags))
	res, err := t.exec(insertMemory, m.ID, m.Scope.TenantID, m.Scope.OrgID, m.Scope.RepoID, m.UserID, m.Type, m.Layer,
		m.Sublayer, m.Title, m.CanonicalKey, string(m.Status), string(m.SourceKind), m.Importance, m.AccessCount,
		nanos(m.LastAccessed), nanos(m.ValidFrom), nanos(m.ValidTo), string(m.Visibility), m.SubjectType, m.SubjectID,
		m.ProjectID, m.SessionID, m.Channel, string(tags), nanos(m.CreatedAt), in.ExclusiveKey)
	if err != nil {
		return graph.Created{}, err
	}
	rid, err := res.LastInsertId()
	if err != nil {
		return graph.Created{}, err
	}
	for _, tag := range m.Tags {
		if _, err := t.exec(insertTag, rid, tag); err != nil {
			return graph.Created{}, err
		}
	}
	if err := t.logStatus(rid, m.Status, nanos(m.CreatedAt)); err != nil {
		return graph.Created{}, err
	}
	if err := t.linkSession(m, rid); err != nil {
		return graph.Created{}, err
	}
	ref := memRef{rid: rid, id: m.ID, scope: m.Scope, status: m.Status, createdAt: nanos(m.CreatedAt)}
	v, err := t.addVersion(ref, 1, in.Version)
	if err != nil {
		return graph.Created{}, err
	}
	if in.Supersedes != "" {
		if err := t.supersede(old, ref); err != nil {
			return graph.Created{}, err
		}
	}
	for _, a := range graph.AboutMemory(in.Audit, m.ID) {
		if err := t.appendAudit(a); err != nil {
			return graph.Created{}, err
		}
	}
	m.CurrentVersionID, m.VersionCount = v.ID, 1
	return graph.Created{Memory: m, Version: v}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// memRef is what writes need to know about an existing memory.
type memRef struct {
	rid       int64
	id        string
	scope     graph.Scope
	status    graph.Status
	createdAt int64
	versions  int
}

const selectMemoryRef = `SELECT rid, tenant_id, org_id, repo_id, status, created_at, version_count
FROM memories WHERE id = ?`

// memoryRef loads a memory the writer scope s may touch; anything else is
// graph.ErrNotFound. A write check, so Contains (s and beneath): whether the
// principal may write beneath its own scope (permission subscopes) and as
// the memory's user (act_as_user) is the engine's decision.
func (t *tx) memoryRef(s graph.Scope, id string) (memRef, error) {
	r := memRef{id: id}
	var status string
	err := t.queryRow(selectMemoryRef, id).Scan(&r.rid, &r.scope.TenantID, &r.scope.OrgID, &r.scope.RepoID, &status,
		&r.createdAt, &r.versions)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !s.Contains(r.scope)) {
		return r, fmt.Errorf("memory %s: %w", id, graph.ErrNotFound)
	}
	r.status = graph.Status(status)
	return r, err
}

// AddVersion implements graph.Store.
func (s *Store) AddVersion(ctx context.Context, sc graph.Scope, memoryID string, in graph.VersionInput) (graph.Version, error) {
	if err := sc.Validate(); err != nil {
		return graph.Version{}, fmt.Errorf("add version: %w", err)
	}
	if err := checkIDs("memory_id", []string{memoryID}); err != nil {
		return graph.Version{}, fmt.Errorf("add version: %w", err)
	}
	if err := in.Validate(); err != nil {
		return graph.Version{}, fmt.Errorf("add version: %w", err)
	}
	in.Entities = cloneRefs(in.Entities)
	in.Chunks = slices.Clone(in.Chunks)
	for j := range in.Chunks {
		in.Chunks[j].Entities = cloneRefs(in.Chunks[j].Entities)
	}
	in.Normalize()
	var v graph.Version
	err := s.writeIn(ctx, writeGraph, []string{sc.TenantID}, func(t *tx) error {
		ref, err := t.memoryRef(sc, memoryID) // in sc's tenant (Contains)
		if err != nil {
			return err
		}
		if ref.status != graph.StatusActive {
			return fmt.Errorf("memory %s is %s: %w", memoryID, ref.status, graph.ErrConflict)
		}
		v, err = t.addVersion(ref, ref.versions+1, in)
		if err != nil {
			return err
		}
		for _, a := range graph.AboutMemory(in.Audit, memoryID) {
			if err := t.appendAudit(a); err != nil {
				return err
			}
		}
		return t.settle(in.Settles, memoryID)
	})
	if err != nil {
		return graph.Version{}, fmt.Errorf("add version to %s: %w", memoryID, err)
	}
	return v, nil
}

const (
	insertVersion = `INSERT INTO versions (id, memory_rid, number, content, summary, index_text, content_hash,
	provenance, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertChunk        = `INSERT INTO chunks (id, version_rid, ord, chunk_key, start_at, end_at) VALUES (?, ?, ?, ?, ?, ?)`
	insertChunkMention = `INSERT OR IGNORE INTO chunk_mentions (chunk_rid, entity_rid) VALUES (?, ?)`
	// mentions_memory finds the old MENTIONS to replace.
	deleteMentions = `DELETE FROM mentions WHERE memory_rid = ?`
	insertMention  = `INSERT OR IGNORE INTO mentions (entity_rid, created_at, memory_rid, count) VALUES (?, ?, ?, ?)`
	setCurrent     = `UPDATE memories SET current_version_id = ?, version_count = ? WHERE rid = ?`
	insertOutbox   = `INSERT INTO outbox (id, tenant_id, org_id, repo_id, memory_id, version_id, op, created_at)
	VALUES (?, ?, ?, ?, ?, ?, 'upsert', ?)`
)

// addVersion writes version number n of memory m with its chunks, entities
// and MENTIONS, makes it current and enqueues the outbox item — in the
// caller's transaction. The keyword index follows the versions table.
func (t *tx) addVersion(m memRef, n int, in graph.VersionInput) (graph.Version, error) {
	prov, _ := json.Marshal(in.Provenance)
	v := graph.Version{ID: in.ID, MemoryID: m.id, Number: n, Content: in.Content, Summary: in.Summary,
		IndexText: in.IndexText, ContentHash: in.ContentHash, Provenance: in.Provenance, CreatedAt: t.now}
	res, err := t.exec(insertVersion, v.ID, m.rid, n, v.Content, v.Summary, v.IndexText, v.ContentHash, string(prov), nanos(t.now))
	if err != nil {
		return v, err
	}
	vrid, err := res.LastInsertId()
	if err != nil {
		return v, err
	}
	if n > 1 {
		if err := t.countOldMentions(m.rid); err != nil {
			return v, err
		}
		if _, err := t.exec(deleteMentions, m.rid); err != nil {
			return v, err
		}
	}
	counts := graph.MentionCounts(in)
	ents := make(map[string]int64, len(in.Entities))
	for _, e := range in.Entities {
		erid, err := t.resolveEntity(m.scope.TenantID, e)
		if err != nil {
			return v, err
		}
		res, err := t.exec(insertMention, erid, m.createdAt, m.rid, counts[e.NormName])
		if err != nil {
			return v, err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			t.mentions[erid]++
		}
		ents[e.NormName] = erid
	}
	t.coOccur(ents, 1)
	for i, c := range in.Chunks {
		res, err := t.exec(insertChunk, graph.NewID(), vrid, i, c.Key, c.Start, c.End)
		if err != nil {
			return v, err
		}
		crid, err := res.LastInsertId()
		if err != nil {
			return v, err
		}
		for _, e := range c.Entities {
			erid, err := t.resolveEntity(m.scope.TenantID, e)
			if err != nil {
				return v, err
			}
			if _, err := t.exec(insertChunkMention, crid, erid); err != nil {
				return v, err
			}
		}
	}
	if _, err := t.exec(setCurrent, v.ID, n, m.rid); err != nil {
		return v, err
	}
	if in.Index {
		if _, err := t.exec(insertOutbox, graph.NewID(), m.scope.TenantID, m.scope.OrgID, m.scope.RepoID, m.id, v.ID, nanos(t.now)); err != nil {
			return v, err
		}
	}
	return v, nil
}

// The entities a memory MENTIONS now. Relies on mentions_memory.
const selectMentioned = `SELECT x.entity_rid, e.norm_name FROM mentions x JOIN entities e ON e.rid = x.entity_rid
WHERE x.memory_rid = ?`

// countOldMentions records the posting-list shrink of replacing a memory's
// MENTIONS, and the CO_OCCURS pairs they no longer support.
func (t *tx) countOldMentions(memRID int64) error {
	st, err := t.stmt(selectMentioned)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(t.ctx, memRID)
	if err != nil {
		return err
	}
	defer rows.Close()
	old := map[string]int64{}
	for rows.Next() {
		var (
			rid  int64
			norm string
		)
		if err := rows.Scan(&rid, &norm); err != nil {
			return err
		}
		t.mentions[rid]--
		old[norm] = rid
	}
	t.coOccur(old, -1)
	return rows.Err()
}

const (
	selectEntity = `SELECT rid, type, aliases FROM entities WHERE tenant_id = ? AND norm_name = ?`
	insertEntity = `INSERT INTO entities (id, tenant_id, name, norm_name, type, aliases) VALUES (?, ?, ?, ?, ?, ?)`
	updateEntity = `UPDATE entities SET type = ?, aliases = ? WHERE rid = ?`
	insertAlias  = `INSERT OR IGNORE INTO entity_aliases (tenant_id, alias_norm, entity_rid) VALUES (?, ?, ?)`
)

type entityKey struct{ tenant, norm string }

// entityState is what resolveEntity knows of an entity in this transaction.
type entityState struct {
	rid     int64
	typ     string
	aliases []string
}

// resolveEntity finds the tenant's entity by norm name, creating it when
// missing and merging new aliases (and a type when it had none).
func (t *tx) resolveEntity(tenant string, e graph.EntityRef) (int64, error) {
	key := entityKey{tenant, e.NormName}
	st, ok := t.entities[key]
	if !ok {
		var (
			rid          int64
			typ, aliases string
		)
		err := t.queryRow(selectEntity, tenant, e.NormName).Scan(&rid, &typ, &aliases)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			merged := dedupe(e.Aliases, nil)
			al, _ := json.Marshal(merged)
			res, err := t.exec(insertEntity, graph.NewID(), tenant, e.Name, e.NormName, e.Type, string(al))
			if err != nil {
				return 0, err
			}
			if rid, err = res.LastInsertId(); err != nil {
				return 0, err
			}
			t.entities[key] = &entityState{rid: rid, typ: e.Type, aliases: merged}
			return rid, t.addAliases(tenant, rid, e.Aliases)
		case err != nil:
			return 0, err
		}
		st = &entityState{rid: rid, typ: typ}
		if err := json.Unmarshal([]byte(aliases), &st.aliases); err != nil {
			return 0, fmt.Errorf("entity %s aliases: %w", e.NormName, err)
		}
		t.entities[key] = st
	}
	merged := dedupe(e.Aliases, st.aliases)
	if len(merged) == len(st.aliases) && (st.typ != "" || e.Type == "") {
		return st.rid, nil
	}
	if st.typ == "" {
		st.typ = e.Type
	}
	st.aliases = merged
	al, _ := json.Marshal(merged)
	if _, err := t.exec(updateEntity, st.typ, string(al), st.rid); err != nil {
		return 0, err
	}
	return st.rid, t.addAliases(tenant, st.rid, e.Aliases)
}

func (t *tx) addAliases(tenant string, rid int64, aliases []string) error {
	for _, a := range aliases {
		if n := graph.NormName(a); n != "" {
			if _, err := t.exec(insertAlias, tenant, n, rid); err != nil {
				return err
			}
		}
	}
	return nil
}

// dedupe appends to have the aliases not yet in it (case-insensitively).
func dedupe(add, have []string) []string {
	if len(add) == 0 {
		return have
	}
	out := append([]string{}, have...)
	seen := map[string]bool{}
	for _, a := range out {
		seen[graph.NormName(a)] = true
	}
	for _, a := range add {
		if n := graph.NormName(a); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, a)
		}
	}
	return out
}
