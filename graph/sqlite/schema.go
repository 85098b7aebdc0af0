package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order, each once, recorded in
// schema_migrations. Never edit a released migration; append a new one.
var migrations = []string{
	// 1: the graph.
	`
CREATE TABLE memories (
	rid            INTEGER PRIMARY KEY,
	id             TEXT NOT NULL UNIQUE,
	tenant_id      TEXT NOT NULL,
	org_id         TEXT NOT NULL,
	repo_id        TEXT NOT NULL,
	user_id        TEXT NOT NULL,
	type           TEXT NOT NULL,
	layer          TEXT NOT NULL,
	sublayer       TEXT NOT NULL,
	title          TEXT NOT NULL,
	canonical_key  TEXT NOT NULL,
	status         TEXT NOT NULL,
	source_kind    TEXT NOT NULL,
	importance     REAL NOT NULL,
	access_count   INTEGER NOT NULL,
	last_accessed  INTEGER NOT NULL,
	valid_from     INTEGER NOT NULL,
	valid_to       INTEGER NOT NULL,
	visibility     TEXT NOT NULL,
	subject_type   TEXT NOT NULL,
	subject_id     TEXT NOT NULL,
	project_id     TEXT NOT NULL,
	session_id     TEXT NOT NULL,
	channel        TEXT NOT NULL,
	tags           TEXT NOT NULL,            -- JSON array, in the caller's order
	created_at     INTEGER NOT NULL,         -- unix nanoseconds UTC
	current_version_id TEXT NOT NULL DEFAULT '',
	version_count  INTEGER NOT NULL DEFAULT 0,
	superseded_by  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX memories_tenant_created ON memories(tenant_id, created_at DESC, id DESC);
CREATE INDEX memories_active_key ON memories(tenant_id, canonical_key) WHERE status = 'active' AND canonical_key <> '';

CREATE TABLE memory_tags (
	memory_rid INTEGER NOT NULL REFERENCES memories(rid),
	tag        TEXT NOT NULL,
	PRIMARY KEY (memory_rid, tag)
) WITHOUT ROWID;

-- SUPERSEDES: new_rid SUPERSEDES old_rid.
CREATE TABLE supersedes (
	new_rid INTEGER NOT NULL REFERENCES memories(rid),
	old_rid INTEGER NOT NULL REFERENCES memories(rid),
	PRIMARY KEY (new_rid, old_rid)
) WITHOUT ROWID;

-- HAS_VERSION: versions.memory_rid.
CREATE TABLE versions (
	rid          INTEGER PRIMARY KEY,
	id           TEXT NOT NULL UNIQUE,
	memory_rid   INTEGER NOT NULL REFERENCES memories(rid),
	number       INTEGER NOT NULL,
	content      TEXT NOT NULL,
	summary      TEXT NOT NULL,
	index_text   TEXT NOT NULL,
	content_hash TEXT NOT NULL,
	provenance   TEXT NOT NULL,              -- JSON object
	created_at   INTEGER NOT NULL,
	UNIQUE (memory_rid, number)
);

-- HAS_CHUNK: chunks.version_rid.
CREATE TABLE chunks (
	rid         INTEGER PRIMARY KEY,
	id          TEXT NOT NULL UNIQUE,
	version_rid INTEGER NOT NULL REFERENCES versions(rid),
	ord         INTEGER NOT NULL,
	chunk_key   TEXT NOT NULL,
	start_at    INTEGER NOT NULL,
	end_at      INTEGER NOT NULL
);
CREATE INDEX chunks_version ON chunks(version_rid, ord);

CREATE TABLE entities (
	rid       INTEGER PRIMARY KEY,
	id        TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL,
	name      TEXT NOT NULL,
	norm_name TEXT NOT NULL,
	type      TEXT NOT NULL,
	aliases   TEXT NOT NULL,                 -- JSON array as given
	UNIQUE (tenant_id, norm_name)
);
-- Aliases by norm name, for case-insensitive lookup.
CREATE TABLE entity_aliases (
	tenant_id  TEXT NOT NULL,
	alias_norm TEXT NOT NULL,
	entity_rid INTEGER NOT NULL REFERENCES entities(rid),
	PRIMARY KEY (tenant_id, alias_norm, entity_rid)
) WITHOUT ROWID;

-- MENTIONS from a memory (its current version's entities). The primary key
-- is the posting list of an entity, newest memory first when scanned
-- backwards; created_at is copied from the memory (it never changes).
CREATE TABLE mentions (
	entity_rid INTEGER NOT NULL REFERENCES entities(rid),
	created_at INTEGER NOT NULL,
	memory_rid INTEGER NOT NULL REFERENCES memories(rid),
	PRIMARY KEY (entity_rid, created_at, memory_rid)
) WITHOUT ROWID;
CREATE INDEX mentions_memory ON mentions(memory_rid, entity_rid);

-- MENTIONS from a chunk.
CREATE TABLE chunk_mentions (
	chunk_rid  INTEGER NOT NULL REFERENCES chunks(rid),
	entity_rid INTEGER NOT NULL REFERENCES entities(rid),
	PRIMARY KEY (chunk_rid, entity_rid)
) WITHOUT ROWID;

-- Keyword index: rowid = memories.rid; body = current version's index text
-- (content when empty).
CREATE VIRTUAL TABLE memories_fts USING fts5(
	title, body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);

-- EDITS: edits.memory_rid.
CREATE TABLE edits (
	rid               INTEGER PRIMARY KEY,
	id                TEXT NOT NULL UNIQUE,
	tenant_id         TEXT NOT NULL,
	org_id            TEXT NOT NULL,
	repo_id           TEXT NOT NULL,
	kind              TEXT NOT NULL,
	status            TEXT NOT NULL,
	memory_rid        INTEGER NOT NULL REFERENCES memories(rid),
	target_memory_id  TEXT NOT NULL,
	target_version_id TEXT NOT NULL,
	content           TEXT NOT NULL,
	importance        REAL,
	channel           TEXT NOT NULL,
	reason            TEXT NOT NULL,
	created_by        TEXT NOT NULL,
	decided_by        TEXT NOT NULL,
	created_at        INTEGER NOT NULL,
	decided_at        INTEGER NOT NULL
);
CREATE INDEX edits_memory ON edits(memory_rid);
CREATE INDEX edits_approved ON edits(memory_rid, kind) WHERE status = 'approved';
CREATE INDEX edits_tenant ON edits(tenant_id, created_at);

CREATE TABLE proposals (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	title TEXT NOT NULL, content TEXT NOT NULL, status TEXT NOT NULL, proposed_by TEXT NOT NULL,
	target_version_id TEXT NOT NULL,       -- TARGETS_VERSION
	rebased_to_version_id TEXT NOT NULL,   -- REBASED_TO
	accepted_version_id TEXT NOT NULL,     -- ACCEPTED_AS
	rejected_decision_id TEXT NOT NULL,    -- REJECTED_BECAUSE
	created_at INTEGER NOT NULL
);
CREATE TABLE decisions (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	kind TEXT NOT NULL, outcome TEXT NOT NULL, rule TEXT NOT NULL, reason TEXT NOT NULL,
	decided_by TEXT NOT NULL, created_at INTEGER NOT NULL
);
CREATE TABLE baselines (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	name TEXT NOT NULL,
	version_ids TEXT NOT NULL,             -- PUBLISHES, JSON array
	published_by TEXT NOT NULL, created_at INTEGER NOT NULL
);
CREATE INDEX baselines_tenant_created ON baselines(tenant_id, created_at DESC);
CREATE TABLE capsules (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	name TEXT NOT NULL,
	memory_ids TEXT NOT NULL,              -- CONTAINS, JSON array
	version_ids TEXT NOT NULL,             -- CONTAINS, JSON array
	created_by TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL
);
CREATE TABLE audit_events (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	action TEXT NOT NULL, subject_kind TEXT NOT NULL,
	subject_id TEXT NOT NULL,              -- DECIDED
	actor_id TEXT NOT NULL, rule TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX audit_tenant_created ON audit_events(tenant_id, created_at, rid);
CREATE INDEX audit_subject ON audit_events(tenant_id, subject_id);
CREATE TABLE gate_requests (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	title TEXT NOT NULL, status TEXT NOT NULL, rule TEXT NOT NULL, reason TEXT NOT NULL,
	payload TEXT NOT NULL, requested_by TEXT NOT NULL, decided_by TEXT NOT NULL, memory_id TEXT NOT NULL,
	created_at INTEGER NOT NULL, decided_at INTEGER NOT NULL
);
CREATE INDEX gate_tenant_status ON gate_requests(tenant_id, status, created_at, rid);
CREATE TABLE outbox (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	memory_id TEXT NOT NULL, version_id TEXT NOT NULL, op TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL
);
`,
	// 2: context receipts (what a read_context call returned, for citation
	// verification by any replica).
	`
CREATE TABLE context_receipts (
	rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
	tenant_id TEXT NOT NULL, org_id TEXT NOT NULL, repo_id TEXT NOT NULL,
	principal_id TEXT NOT NULL, query TEXT NOT NULL,
	citations TEXT NOT NULL,               -- JSON array of graph.Citation
	created_at INTEGER NOT NULL
);
`,
	// 3: title matches weigh twice the body in the keyword index's rank.
	`INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)');`,
	// 4: posting-list sizes, so Candidates orders its walks by selectivity
	// without counting.
	`
ALTER TABLE entities ADD COLUMN mention_count INTEGER NOT NULL DEFAULT 0;
UPDATE entities SET mention_count = (SELECT count(*) FROM mentions WHERE entity_rid = entities.rid);
`,
	// 5: keyword search moved to the in-memory index (keyword.go), which
	// reads the versions table; the FTS5 table is no longer written or read.
	`DROP TABLE memories_fts;`,
	// 6: exclusive canonical keys (graph.MemoryInput.ExclusiveKey): the
	// flag, and the lookup the write path makes under the writer lock.
	`
ALTER TABLE memories ADD COLUMN exclusive_key INTEGER NOT NULL DEFAULT 0;
CREATE INDEX memories_exclusive_key ON memories(tenant_id, canonical_key, org_id, repo_id, user_id, type)
	WHERE status = 'active' AND exclusive_key = 1;
`,
	// 7: outbox retries with backoff and dead letters: when an item is next
	// due (0: at once, never tried), why it last failed, and whether it was
	// given up on.
	`
ALTER TABLE outbox ADD COLUMN next_attempt_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN dead INTEGER NOT NULL DEFAULT 0;
CREATE INDEX outbox_due ON outbox(dead, next_attempt_at, rid);
`,
	// 8: attenuate edits by a delta (graph.Edit.Delta); the edits of given
	// memories (ListEdits on the read path) without walking the tenant's;
	// audit events listed by actor.
	`
ALTER TABLE edits ADD COLUMN delta REAL;
CREATE INDEX edits_target ON edits(tenant_id, target_memory_id, status);
CREATE INDEX audit_actor ON audit_events(tenant_id, actor_id, created_at, rid);
`,
	// 9: edges built at write time (docs/graph.md). NEXT from the previous
	// memory of a session to the next (memories_session finds the
	// session's newest: event time, then created_at, then rid); NEXT
	// between the chunks of a version is their order (chunks_version).
	// CO_OCCURS between the entities one memory mentions, a = the lesser
	// norm name, with the number of memories mentioning both. MENTIONS
	// carry how many of the version's chunks mention the entity (1 when
	// none does). Older memories get no NEXT or CO_OCCURS edges.
	`
CREATE TABLE memory_next (
	prev_rid INTEGER NOT NULL REFERENCES memories(rid),
	next_rid INTEGER NOT NULL REFERENCES memories(rid),
	PRIMARY KEY (prev_rid, next_rid)
) WITHOUT ROWID;
CREATE INDEX memory_next_next ON memory_next(next_rid);
CREATE INDEX supersedes_old ON supersedes(old_rid);
CREATE INDEX memories_session ON memories(tenant_id, session_id, org_id, repo_id, user_id,
	(CASE WHEN valid_from = 0 THEN created_at ELSE valid_from END), created_at) WHERE session_id <> '';
CREATE TABLE co_occurs (
	a_rid INTEGER NOT NULL REFERENCES entities(rid),
	b_rid INTEGER NOT NULL REFERENCES entities(rid),
	count INTEGER NOT NULL,
	PRIMARY KEY (a_rid, b_rid)
) WITHOUT ROWID;
ALTER TABLE mentions ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
`,
	// 10: erasure (forget.go): the log the keyword index follows to drop
	// erased memories (rowids grow in commit order, never reused), and the
	// lookups of an entity's chunk mentions and CO_OCCURS edges that find
	// and drop orphaned entities, and of a memory's outbox items and gate
	// requests.
	`
CREATE TABLE erasures (
	rid        INTEGER PRIMARY KEY AUTOINCREMENT,
	memory_rid INTEGER NOT NULL REFERENCES memories(rid)
);
CREATE INDEX chunk_mentions_entity ON chunk_mentions(entity_rid);
CREATE INDEX co_occurs_b ON co_occurs(b_rid);
CREATE INDEX outbox_memory ON outbox(tenant_id, memory_id);
CREATE INDEX gate_memory ON gate_requests(tenant_id, memory_id) WHERE memory_id <> '';
`,
	// 11: explicit relations between memories (relations.go): one row per
	// (from, to, type) in a scope; the unique key serves the lookups from
	// a memory, relations_to those to it (the walk, RelationsOf, Erase).
	`
CREATE TABLE relations (
	rid        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	tenant_id  TEXT NOT NULL,
	org_id     TEXT NOT NULL,
	repo_id    TEXT NOT NULL,
	from_rid   INTEGER NOT NULL REFERENCES memories(rid),
	to_rid     INTEGER NOT NULL REFERENCES memories(rid),
	type       TEXT NOT NULL,
	reason     TEXT NOT NULL,
	created_by TEXT NOT NULL,
	created_at INTEGER NOT NULL,             -- unix nanoseconds UTC
	UNIQUE (from_rid, to_rid, type, org_id, repo_id)
);
CREATE INDEX relations_to ON relations(to_rid);
`,
	// 12: time travel (docs/time.md): every status a memory takes, with the
	// transaction time it took it, so a read "as known at" T finds the
	// status recorded by then (the newest row at or before T; statusAsOf
	// relies on memory_status_at). Memories written before this migration
	// get their history as far as it can be told: active since creation,
	// superseded since their successor was written, and any other status
	// (archived) since creation, as nothing recorded when it changed.
	`
CREATE TABLE memory_status (
	rid        INTEGER PRIMARY KEY,
	memory_rid INTEGER NOT NULL REFERENCES memories(rid),
	status     TEXT NOT NULL,
	at         INTEGER NOT NULL
);
CREATE INDEX memory_status_at ON memory_status(memory_rid, at);
INSERT INTO memory_status (memory_rid, status, at) SELECT rid, 'active', created_at FROM memories;
INSERT INTO memory_status (memory_rid, status, at)
	SELECT m.rid, m.status, COALESCE((SELECT max(n.created_at) FROM supersedes s JOIN memories n ON n.rid = s.new_rid
	                                  WHERE s.old_rid = m.rid), m.created_at)
	FROM memories m WHERE m.status NOT IN ('active', 'erased');
`,
	// 13: capsules between agents (capsules.go): a subject instead of a
	// name; an audience (JSON on the capsule for reading it back, and
	// capsule_audience for the listing of an agent's capsules); revocation;
	// items as rows that carry their memory (capsule_items_memory: an
	// erase drops the items of the memories it erases), moved out of the
	// JSON columns. The context bundle lists memories of a type (decisions,
	// tasks) and of a session newest first: memories_type_created and
	// memories_session_created serve those listings without walking the
	// tenant (memories_session is partial, so a session id bound as a
	// parameter cannot use it).
	`
ALTER TABLE capsules RENAME COLUMN name TO subject;
ALTER TABLE capsules ADD COLUMN audience TEXT NOT NULL DEFAULT '[]';
ALTER TABLE capsules ADD COLUMN revoked_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE capsules ADD COLUMN revoked_by TEXT NOT NULL DEFAULT '';
CREATE INDEX capsules_creator ON capsules(tenant_id, created_by, created_at);
CREATE TABLE capsule_audience (
	tenant_id   TEXT NOT NULL,
	agent_id    TEXT NOT NULL,
	capsule_rid INTEGER NOT NULL REFERENCES capsules(rid),
	PRIMARY KEY (tenant_id, agent_id, capsule_rid)
) WITHOUT ROWID;
CREATE TABLE capsule_items (
	rid         INTEGER PRIMARY KEY,
	capsule_rid INTEGER NOT NULL REFERENCES capsules(rid),
	kind        TEXT NOT NULL,             -- CONTAINS: memory | version | decision
	item_id     TEXT NOT NULL,
	memory_rid  INTEGER NOT NULL           -- the memory, or the version's; 0 for a decision
);
CREATE INDEX capsule_items_capsule ON capsule_items(capsule_rid, rid);
CREATE INDEX capsule_items_memory ON capsule_items(memory_rid) WHERE memory_rid <> 0;
INSERT INTO capsule_items (capsule_rid, kind, item_id, memory_rid)
SELECT c.rid, 'memory', j.value, COALESCE((SELECT m.rid FROM memories m WHERE m.id = j.value), 0)
FROM capsules c, json_each(c.memory_ids) j;
INSERT INTO capsule_items (capsule_rid, kind, item_id, memory_rid)
SELECT c.rid, 'version', j.value, COALESCE((SELECT v.memory_rid FROM versions v WHERE v.id = j.value), 0)
FROM capsules c, json_each(c.version_ids) j;
ALTER TABLE capsules DROP COLUMN memory_ids;
ALTER TABLE capsules DROP COLUMN version_ids;
CREATE INDEX memories_type_created ON memories(tenant_id, type, created_at DESC, id DESC);
CREATE INDEX memories_session_created ON memories(tenant_id, session_id, created_at DESC, id DESC);
`,
	// 14: the curation loop (proposals.go): a proposal names the memory it
	// changes and the proposal a rebase replaced it with (REBASED_TO);
	// proposals are listed per tenant or per memory, newest first;
	// published baselines are the newest per repository.
	`
ALTER TABLE proposals ADD COLUMN memory_id TEXT NOT NULL DEFAULT '';
ALTER TABLE proposals ADD COLUMN rebased_to_id TEXT NOT NULL DEFAULT '';
CREATE INDEX proposals_tenant ON proposals(tenant_id, created_at DESC);
CREATE INDEX proposals_memory ON proposals(tenant_id, memory_id, created_at DESC);
CREATE INDEX baselines_repo ON baselines(tenant_id, org_id, repo_id, created_at DESC);
`,
	// 15: the write sequence (walkcache.go): one row that every write
	// transaction bumps, so a client's walk cache sees the writes of every
	// other client of the file, in this process or another.
	`
CREATE TABLE write_seq (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
);
INSERT INTO write_seq (id, n) VALUES (1, 0);
`,
	// 16: the policy mark (policymark.go): the newest policy reload, which
	// every process serving the file follows.
	`
CREATE TABLE policy_mark (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	generation INTEGER NOT NULL,
	digest     TEXT NOT NULL,
	name       TEXT NOT NULL,
	marked_by  TEXT NOT NULL,
	marked_at  INTEGER NOT NULL
);
`,
	// 17: memories by status, maintained by triggers (counts.go): /metrics
	// reads a handful of rows instead of counting the memories table
	// (140-175 ms at 100k memories).
	`
CREATE TABLE memory_counts (
	status TEXT PRIMARY KEY,
	n      INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO memory_counts (status, n) SELECT status, count(*) FROM memories GROUP BY status;
CREATE TRIGGER memory_counts_insert AFTER INSERT ON memories BEGIN
	INSERT INTO memory_counts (status, n) VALUES (NEW.status, 1) ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER memory_counts_delete AFTER DELETE ON memories BEGIN
	UPDATE memory_counts SET n = n - 1 WHERE status = OLD.status;
END;
CREATE TRIGGER memory_counts_status AFTER UPDATE OF status ON memories WHEN OLD.status IS NOT NEW.status BEGIN
	UPDATE memory_counts SET n = n - 1 WHERE status = OLD.status;
	INSERT INTO memory_counts (status, n) VALUES (NEW.status, 1) ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
`,
	// 18: a context bundle lists decisions one visibility at a time
	// (engine.DecisionOrder); by type alone, the private visibilities
	// walked every decision of the tenant to find a reader's few.
	`
CREATE INDEX IF NOT EXISTS memories_type_visibility_created ON memories(tenant_id, type, visibility, created_at DESC, id DESC);
`,
	// 19: an erase deletes the entities nothing mentions any more, with
	// their aliases: without an index by entity, each deletion scanned
	// the tenant's aliases twice (the delete and the foreign-key check).
	`
CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases(entity_rid);
`,
	// 20: the write path's lookup of a key's active holder in a namespace
	// (selectActiveByKey, activeHolder) seeks the namespace and reads the
	// newest first. memories_active_key had only (tenant, key), and the
	// lookup by key did not use it at all (its text did not imply the
	// partial index's canonical_key <> ''): it walked the tenant's
	// memories of the type until one held the key — all of them for a
	// key nobody holds, three times per ingested note.
	`
DROP INDEX IF EXISTS memories_active_key;
CREATE INDEX IF NOT EXISTS memories_active_ns ON memories(tenant_id, canonical_key, org_id, repo_id, user_id, type, created_at)
	WHERE status = 'active' AND canonical_key <> '';
`,
	// 21: a write that changes only memories' read counters (Touch: every
	// read_context and get) bumps a sequence of its own, so that the
	// walk's posting lists, which do not hold the counters, stay cached
	// (store.go, writeKind). Since 22 each tenant's read counter does
	// this (tenant_seq.r) and nothing reads read_seq.
	`
CREATE TABLE IF NOT EXISTS read_seq (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
);
INSERT OR IGNORE INTO read_seq (id, n) VALUES (1, 0);
`,
	// 22: each tenant's own write and read sequences (store.go,
	// writeIn): a write in one tenant leaves the read caches of every
	// other tenant warm.
	`
CREATE TABLE IF NOT EXISTS tenant_seq (
	tenant_id TEXT PRIMARY KEY,
	w         INTEGER NOT NULL,
	r         INTEGER NOT NULL
) WITHOUT ROWID;
`,
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)`

// migrate applies the migrations not yet recorded, each in its own
// transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, createMigrationsTable); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var applied int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if applied > len(migrations) {
		return fmt.Errorf("migrate: database schema version %d is newer than this binary (%d)", applied, len(migrations))
	}
	for v := applied + 1; v <= len(migrations); v++ {
		if err := applyMigration(ctx, db, v); err != nil {
			return err
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, v int) error {
	t, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %d: %w", v, err)
	}
	defer func() { _ = t.Rollback() }()
	if _, err := t.ExecContext(ctx, migrations[v-1]); err != nil {
		return fmt.Errorf("migrate %d: %w", v, err)
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO schema_migrations(version) VALUES (?)`, v); err != nil {
		return fmt.Errorf("migrate %d: %w", v, err)
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("migrate %d: %w", v, err)
	}
	return nil
}
