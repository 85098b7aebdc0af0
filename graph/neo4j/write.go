package neo4j

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// createMemoriesCypher writes the Memory and Version nodes of a batch.
// Uses memory_id and version_id (uniqueness: a preset id that exists already
// fails the transaction with a conflict).
const createMemoriesCypher = `
UNWIND $rows AS row
CREATE (m:Memory) SET m = row.memory
CREATE (v:Version) SET v = row.version
CREATE (m)-[:HAS_VERSION]->(v)`

// mergeEntitiesCypher resolves entity refs by norm name within the tenant,
// creating missing entities and merging aliases into existing ones. Uses
// entity_norm.
const mergeEntitiesCypher = `
UNWIND $entities AS er
MERGE (e:Entity {tenant_id: er.tenant_id, norm_name: er.norm_name})
  ON CREATE SET e.id = er.id, e.name = er.name, e.type = er.type,
                e.aliases = er.aliases, e.alias_norms = er.alias_norms
WITH e, er, [a IN er.aliases WHERE NOT a IN e.aliases] AS new_aliases,
     [a IN er.alias_norms WHERE NOT a IN e.alias_norms] AS new_norms
// Write only when something changes, so memories that merely mention a
// popular entity do not all queue for its write lock.
FOREACH (x IN CASE WHEN size(new_aliases) > 0 OR size(new_norms) > 0 OR (e.type = '' AND er.type <> '')
                   THEN [e] ELSE [] END |
  SET x.aliases = x.aliases + new_aliases, x.alias_norms = x.alias_norms + new_norms,
      x.type = CASE WHEN x.type = '' THEN er.type ELSE x.type END)`

// memoryMentionsCypher links memories to the entities they mention, with
// the count of the version's chunks that do (graph.MentionCounts). Uses
// memory_id and entity_norm.
const memoryMentionsCypher = `
UNWIND $mentions AS x
MATCH (m:Memory {id: x.memory_id})
MATCH (e:Entity {tenant_id: x.tenant_id, norm_name: x.norm_name})
MERGE (m)-[r:MENTIONS]->(e)
SET r.count = x.count`

// createChunksCypher writes chunks under their version and links each to the
// entities it mentions. Uses version_id and entity_norm.
const createChunksCypher = `
UNWIND $chunks AS c
MATCH (v:Version {id: c.version_id})
CREATE (ch:Chunk) SET ch = c.props
CREATE (v)-[:HAS_CHUNK]->(ch)
WITH ch, c
UNWIND c.entities AS norm
MATCH (e:Entity {tenant_id: c.tenant_id, norm_name: norm})
MERGE (ch)-[:MENTIONS]->(e)`

// createOutboxCypher enqueues vector-index writes. Uses outbox_item_id.
const createOutboxCypher = `
UNWIND $items AS it
CREATE (o:OutboxItem) SET o = it`

// batch accumulates the parameters of one write transaction's queries.
type batch struct {
	rows     []map[string]any
	entities []map[string]any
	seen     map[string]int // tenant + norm name -> index in entities
	mentions []map[string]any
	chunks   []map[string]any
	chunkNxt []map[string]any // NEXT between consecutive chunks
	next     []map[string]any // NEXT between memories of a session
	cooccur  coOccurDeltas
	outbox   []map[string]any
	stamps   kwStamps
}

// addEntity records an entity ref for merging and returns its norm name.
func (b *batch) addEntity(tenant string, r graph.EntityRef) string {
	key := tenant + "\x00" + r.NormName
	aliases := nonNil(r.Aliases)
	norms := make([]string, 0, len(aliases))
	for _, a := range aliases {
		if n := graph.NormName(a); n != "" && !slices.Contains(norms, n) {
			norms = append(norms, n)
		}
	}
	if b.seen == nil {
		b.seen = map[string]int{}
	}
	if i, ok := b.seen[key]; ok {
		e := b.entities[i]
		e["aliases"] = union(e["aliases"].([]string), aliases)
		e["alias_norms"] = union(e["alias_norms"].([]string), norms)
		if e["type"] == "" {
			e["type"] = r.Type
		}
		return r.NormName
	}
	b.seen[key] = len(b.entities)
	b.entities = append(b.entities, map[string]any{
		"id": graph.NewID(), "tenant_id": tenant, "name": r.Name, "norm_name": r.NormName,
		"type": r.Type, "aliases": union(nil, aliases), "alias_norms": norms,
	})
	return r.NormName
}

// addVersionParts adds a new version's entities, memory MENTIONS, chunks and
// outbox entry.
func (b *batch) addVersionParts(s graph.Scope, memoryID string, v graph.VersionInput, now any) {
	seen := map[string]bool{}
	counts := graph.MentionCounts(v)
	var norms []string
	for _, r := range v.Entities {
		n := b.addEntity(s.TenantID, r)
		if !seen[n] {
			seen[n] = true
			norms = append(norms, n)
			b.mentions = append(b.mentions, map[string]any{"memory_id": memoryID, "tenant_id": s.TenantID, "norm_name": n,
				"count": counts[n]})
		}
	}
	b.cooccur.add(s.TenantID, norms, 1)
	prev := ""
	for _, c := range v.Chunks {
		var norms []string
		for _, r := range c.Entities {
			if n := b.addEntity(s.TenantID, r); !slices.Contains(norms, n) {
				norms = append(norms, n)
			}
		}
		id := graph.NewID()
		b.chunks = append(b.chunks, map[string]any{
			"version_id": v.ID, "tenant_id": s.TenantID, "entities": nonNil(norms),
			"props": map[string]any{
				"id": id, "version_id": v.ID, "chunk_key": c.Key, "name": c.Key,
				"start": int64(c.Start), "end": int64(c.End),
			},
		})
		if prev != "" {
			b.chunkNxt = append(b.chunkNxt, map[string]any{"prev": prev, "next": id})
		}
		prev = id
	}
	if v.Index {
		b.outbox = append(b.outbox, scopeProps(s, map[string]any{
			"id": graph.NewID(), "memory_id": memoryID, "version_id": v.ID, "op": "upsert",
			"attempts": int64(0), "created_at": now, "next_attempt_at": neverTried, "dead": false, "last_error": "",
			"name": "upsert " + v.ID,
		}))
	}
}

// run executes the batch's queries in tx, in dependency order.
func (b *batch) run(ctx context.Context, tx txn) error {
	steps := []struct {
		query string
		name  string
		rows  []map[string]any
	}{
		{createMemoriesCypher, "rows", b.rows},
		{mergeEntitiesCypher, "entities", b.entities},
		{memoryMentionsCypher, "mentions", b.mentions},
		{createChunksCypher, "chunks", b.chunks},
		{chunkNextCypher, "next", b.chunkNxt},
		{nextCypher, "next", b.next},
		{coOccursDropCypher, "pairs", b.cooccur.rows(-1)},
		{coOccursCypher, "pairs", b.cooccur.rows(1)},
		{createOutboxCypher, "items", b.outbox},
		{keywordLogCypher, "logs", b.stamps.rows()}, // last: the log's lock is held the least
	}
	for _, st := range steps {
		if len(st.rows) == 0 {
			continue
		}
		if _, err := collect(ctx, tx, st.query, map[string]any{st.name: st.rows}); err != nil {
			return err
		}
	}
	return nil
}

// claimKeysCypher gives memories their exclusive key, those still active
// (one superseded by a later input of the same batch is not). Uses memory_id
// and memory_active_key.
const claimKeysCypher = `
UNWIND $keys AS k
MATCH (m:Memory {id: k.id})
WHERE m.status = 'active'
SET m.active_key = k.key`

// activeKey is the namespace and canonical key of m as one string: tenant,
// org, repo, user, type and key, separated by a character none of them
// holds.
func activeKey(m graph.Memory) string {
	return strings.Join([]string{m.Scope.TenantID, m.Scope.OrgID, m.Scope.RepoID, m.UserID, m.Type, m.CanonicalKey}, "\x1f")
}

// CreateMemories writes a batch of memories in one transaction: all or none.
func (s *Store) CreateMemories(ctx context.Context, ins []graph.MemoryInput) ([]graph.Created, error) {
	for i := range ins {
		if err := ins[i].Validate(); err != nil {
			return nil, fmt.Errorf("neo4j: create memory %d: %w", i, err)
		}
	}
	if len(ins) == 0 {
		return nil, nil
	}
	now := s.now().UTC()
	ins = slices.Clone(ins)
	var b batch
	out := make([]graph.Created, len(ins))
	var (
		audit []graph.AuditEvent
		keys  []map[string]any
	)
	for i := range ins {
		in := &ins[i]
		in.Normalize(now)
		m := &in.Memory
		m.CreatedAt = m.CreatedAt.UTC()
		m.LastAccessed, m.ValidFrom, m.ValidTo = utc(m.LastAccessed), utc(m.ValidFrom), utc(m.ValidTo)
		props := memoryProps(*m, in.Version, s.stems.Stem)
		b.rows = append(b.rows, map[string]any{
			"memory":  props,
			"version": versionProps(m.ID, m.Title, 1, in.Version, now),
		})
		b.stamps.add(m.Scope.TenantID, m.ID)
		b.addVersionParts(m.Scope, m.ID, in.Version, now)
		mem := *m
		mem.CurrentVersionID, mem.VersionCount = in.Version.ID, 1
		out[i] = graph.Created{Memory: mem, Version: newVersion(m.ID, 1, in.Version, now)}
		audit = append(audit, graph.AboutMemory(in.Audit, m.ID)...)
		if in.ClaimsKey() {
			keys = append(keys, map[string]any{"id": m.ID, "key": activeKey(*m)})
		}
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		for _, in := range ins {
			if err := settle(ctx, tx, now, in.Settles, in.Memory.ID); err != nil {
				return struct{}{}, err
			}
		}
		next, err := linkSessions(ctx, tx, ins)
		if err != nil {
			return struct{}{}, err
		}
		b.next = next
		if err := b.run(ctx, tx); err != nil {
			return struct{}{}, err
		}
		for _, in := range ins {
			if in.Supersedes == "" {
				continue
			}
			if err := supersede(ctx, tx, in.Memory.Scope, in.Supersedes, in.Memory.ID, now); err != nil {
				return struct{}{}, err
			}
		}
		// Exclusive keys are claimed after the supersessions released
		// theirs; memory_active_key refuses a second holder.
		if len(keys) > 0 {
			if _, err := collect(ctx, tx, claimKeysCypher, map[string]any{"keys": keys}); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, appendAudit(ctx, tx, now, audit)
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: create memories: %w", err)
	}
	return out, nil
}

// versionForAddCypher locks the memory a version is appended to and returns
// what the append needs. Uses memory_id.
const versionForAddCypher = `
MATCH (m:Memory {id: $id})
SET m._lock = true REMOVE m._lock
RETURN m.tenant_id AS tenant_id, m.org_id AS org_id, m.repo_id AS repo_id,
       m.status AS status, m.title AS title, m.version_count AS version_count,
       m.user_id AS user_id, m.scope AS visibility, m.kw_len AS kw_len,
       m.current_version_id AS current_version_id`

// addVersionCypher appends a version to a memory, makes it current and drops
// the memory's old MENTIONS (the new version's are linked afterwards),
// returning the norm names they led to. Uses memory_id.
const addVersionCypher = `
MATCH (m:Memory {id: $id})
CREATE (v:Version) SET v = $version
CREATE (m)-[:HAS_VERSION]->(v)
SET m.current_version_id = v.id, m.version_count = v.number, m += $kw
WITH m
OPTIONAL MATCH (m)-[r:MENTIONS]->(e:Entity)
WITH r, e.norm_name AS norm
DELETE r
RETURN collect(norm) AS old`

// AddVersion appends the next version to an active memory in scope.
func (s *Store) AddVersion(ctx context.Context, sc graph.Scope, memoryID string, in graph.VersionInput) (graph.Version, error) {
	if err := sc.Validate(); err != nil {
		return graph.Version{}, fmt.Errorf("neo4j: add version: %w", err)
	}
	if err := requireIDs("memory_id", memoryID); err != nil {
		return graph.Version{}, fmt.Errorf("neo4j: add version: %w", err)
	}
	if err := in.Validate(); err != nil {
		return graph.Version{}, fmt.Errorf("neo4j: add version: %w", err)
	}
	in.Normalize()
	now := s.now().UTC()
	v, err := write(ctx, s, func(tx txn) (graph.Version, error) {
		return s.addVersion(ctx, tx, sc, memoryID, in, now, nil)
	})
	if err != nil {
		return graph.Version{}, fmt.Errorf("neo4j: add version to %s: %w", memoryID, err)
	}
	return v, nil
}

// addVersion appends in to active memory memoryID in writer scope sc within
// tx (AddVersion's work). check, when set, is called with the memory's
// current version id before anything is written; its error aborts.
func (s *Store) addVersion(ctx context.Context, tx txn, sc graph.Scope, memoryID string,
	in graph.VersionInput, now time.Time, check func(current string) error) (graph.Version, error) {
	recs, err := collect(ctx, tx, versionForAddCypher, map[string]any{"id": memoryID})
	if err != nil {
		return graph.Version{}, err
	}
	// A write check: the writer's scope and beneath (Contains); the
	// engine checks the principal may write there (subscopes).
	if len(recs) == 0 || !sc.Contains(scopeOf(recs[0].AsMap())) {
		return graph.Version{}, notFound("memory", memoryID)
	}
	p := recs[0].AsMap()
	if graph.Status(str(p, "status")) != graph.StatusActive {
		return graph.Version{}, fmt.Errorf("memory %q is %s: %w", memoryID, str(p, "status"), graph.ErrConflict)
	}
	if check != nil {
		if err := check(str(p, "current_version_id")); err != nil {
			return graph.Version{}, err
		}
	}
	if err := settle(ctx, tx, now, in.Settles, memoryID); err != nil {
		return graph.Version{}, err
	}
	number := int(i64(p, "version_count")) + 1
	kw := map[string]any{}
	keywordProps(kw, str(p, "title"), graph.SearchText(in.IndexText, in.Content), s.stems.Stem)
	recs, err = collect(ctx, tx, addVersionCypher, map[string]any{
		"id": memoryID, "version": versionProps(memoryID, str(p, "title"), number, in, now), "kw": kw,
	})
	if err != nil {
		return graph.Version{}, err
	}
	var b batch
	if len(recs) > 0 {
		b.cooccur.add(str(p, "tenant_id"), strs(recs[0].AsMap(), "old"), -1)
	}
	b.stamps.add(str(p, "tenant_id"), memoryID)
	b.addVersionParts(scopeOf(p), memoryID, in, now)
	if err := b.run(ctx, tx); err != nil {
		return graph.Version{}, err
	}
	if err := appendAudit(ctx, tx, now, graph.AboutMemory(in.Audit, memoryID)); err != nil {
		return graph.Version{}, err
	}
	return newVersion(memoryID, number, in, now), nil
}

func newVersion(memoryID string, number int, v graph.VersionInput, at time.Time) graph.Version {
	return graph.Version{
		ID: v.ID, MemoryID: memoryID, Number: number, Content: v.Content, Summary: v.Summary,
		IndexText: v.IndexText, ContentHash: v.ContentHash, Provenance: v.Provenance, CreatedAt: at,
	}
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

func union(a, b []string) []string {
	out := slices.Clone(nonNil(a))
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
