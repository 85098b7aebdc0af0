package neo4j

import (
	"context"
	"fmt"
	"strings"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// schema lists the constraints and indexes the queries of this package rely
// on. Every statement is idempotent (IF NOT EXISTS), so Open runs them all on
// every start. Queries name the entries they use.
func schema() []string {
	return []string{
		// Uniqueness of ids, one constraint per label (each also gives the
		// range index used to look records up by id).
		"CREATE CONSTRAINT memory_id IF NOT EXISTS FOR (n:Memory) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT version_id IF NOT EXISTS FOR (n:Version) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (n:Chunk) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT proposal_id IF NOT EXISTS FOR (n:Proposal) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT decision_id IF NOT EXISTS FOR (n:Decision) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT baseline_id IF NOT EXISTS FOR (n:Baseline) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT edit_id IF NOT EXISTS FOR (n:Edit) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT capsule_id IF NOT EXISTS FOR (n:Capsule) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT audit_event_id IF NOT EXISTS FOR (n:AuditEvent) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT gate_request_id IF NOT EXISTS FOR (n:GateRequest) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT context_receipt_id IF NOT EXISTS FOR (n:ContextReceipt) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT outbox_item_id IF NOT EXISTS FOR (n:OutboxItem) REQUIRE n.id IS UNIQUE",
		"CREATE CONSTRAINT policy_mark_id IF NOT EXISTS FOR (n:PolicyMark) REQUIRE n.id IS UNIQUE",
		// entity_norm: entities are unique by norm name within a tenant; MERGE
		// on (tenant_id, norm_name) relies on it to be safe under concurrency.
		"CREATE CONSTRAINT entity_norm IF NOT EXISTS FOR (n:Entity) REQUIRE (n.tenant_id, n.norm_name) IS UNIQUE",
		// memory_key: FindActiveByKey and the SAQ dedupe.
		"CREATE INDEX memory_key IF NOT EXISTS FOR (n:Memory) ON (n.tenant_id, n.canonical_key)",
		// memory_listing: a tenant's memories of one type, newest first
		// (ListMemories itself reads memory_tenant_created in order and
		// filters the types as it goes: retrieve.go).
		"CREATE INDEX memory_listing IF NOT EXISTS FOR (n:Memory) ON (n.tenant_id, n.type, n.created_at)",
		// memory_tenant_created: ListMemories and the Neighbours window, read
		// in its order.
		"CREATE INDEX memory_tenant_created IF NOT EXISTS FOR (n:Memory) ON (n.tenant_id, n.created_at)",
		// memory_session: the newest memory of a session, which a new
		// one follows by a NEXT edge (edges.go).
		"CREATE INDEX memory_session IF NOT EXISTS FOR (n:Memory) ON (n.tenant_id, n.session_id)",
		// entity_tenant: alias matching in Candidates scans one tenant's entities.
		"CREATE INDEX entity_tenant IF NOT EXISTS FOR (n:Entity) ON (n.tenant_id)",
		// audit_tenant_created, gate_tenant_created, baseline_tenant_created:
		// listings oldest or newest first within a tenant.
		"CREATE INDEX audit_tenant_created IF NOT EXISTS FOR (n:AuditEvent) ON (n.tenant_id, n.created_at)",
		"CREATE INDEX gate_tenant_created IF NOT EXISTS FOR (n:GateRequest) ON (n.tenant_id, n.created_at)",
		"CREATE INDEX baseline_tenant_created IF NOT EXISTS FOR (n:Baseline) ON (n.tenant_id, n.created_at)",
		// capsule_tenant_created: an agent's capsules, newest first within a
		// tenant (the audience is a list property, matched per capsule).
		"CREATE INDEX capsule_tenant_created IF NOT EXISTS FOR (n:Capsule) ON (n.tenant_id, n.created_at)",
		"CREATE INDEX proposal_tenant_created IF NOT EXISTS FOR (n:Proposal) ON (n.tenant_id, n.created_at)",
		// audit_subject, gate_memory, outbox_memory: Erase finds the audit
		// events, gate requests and outbox items of a memory (forget.go).
		"CREATE INDEX audit_subject IF NOT EXISTS FOR (n:AuditEvent) ON (n.subject_id)",
		"CREATE INDEX gate_memory IF NOT EXISTS FOR (n:GateRequest) ON (n.memory_id)",
		"CREATE INDEX outbox_memory IF NOT EXISTS FOR (n:OutboxItem) ON (n.memory_id)",
		// relation_id_*: a relation (relations.go) by id, one index per
		// relationship type.
		"CREATE INDEX relation_id_relates_to IF NOT EXISTS FOR ()-[n:RELATES_TO]-() ON (n.id)",
		"CREATE INDEX relation_id_depends_on IF NOT EXISTS FOR ()-[n:DEPENDS_ON]-() ON (n.id)",
		"CREATE INDEX relation_id_contradicts IF NOT EXISTS FOR ()-[n:CONTRADICTS]-() ON (n.id)",
		"CREATE INDEX relation_id_derived_from IF NOT EXISTS FOR ()-[n:DERIVED_FROM]-() ON (n.id)",
		// edit_tenant: ListEdits and the edit lookups within a tenant.
		"CREATE INDEX edit_tenant IF NOT EXISTS FOR (n:Edit) ON (n.tenant_id)",
		// edit_target: the edits of given memories, which every search
		// reads (ListEdits with MemoryIDs), without the tenant's other edits.
		"CREATE INDEX edit_target IF NOT EXISTS FOR (n:Edit) ON (n.target_memory_id)",
		// outbox_due: DueOutbox (live items, earliest due first) and the
		// dead letters. It replaces outbox_created.
		"DROP INDEX outbox_created IF EXISTS",
		"CREATE INDEX outbox_due IF NOT EXISTS FOR (n:OutboxItem) ON (n.dead, n.next_attempt_at)",
		// Items written before retries had a schedule are due now and live.
		"MATCH (o:OutboxItem) WHERE o.next_attempt_at IS NULL " +
			"SET o.next_attempt_at = datetime({epochSeconds: 0}), o.dead = false, o.last_error = ''",
		// active_key: graph.MemoryInput.ExclusiveKey. Only active memories
		// that asked carry the property, so the constraint holds per
		// namespace and key across every client of the database.
		"CREATE CONSTRAINT memory_active_key IF NOT EXISTS FOR (n:Memory) REQUIRE n.active_key IS UNIQUE",
		// memory_search, memory_search_en, memory_keyword and keyword_group
		// served keyword search in Cypher, which now ranks in each process
		// (keyword.go).
		"DROP INDEX memory_search IF EXISTS",
		"DROP INDEX memory_search_en IF EXISTS",
		"DROP INDEX memory_keyword IF EXISTS",
		"DROP CONSTRAINT keyword_group IF EXISTS",
		// keyword_log: one KeywordLog per tenant, the sequence of its
		// keyword changes; memory_kw_seq finds the memories a process has
		// not applied (keyword.go).
		"CREATE CONSTRAINT keyword_log IF NOT EXISTS FOR (n:KeywordLog) REQUIRE n.tenant_id IS UNIQUE",
		"CREATE INDEX memory_kw_seq IF NOT EXISTS FOR (n:Memory) ON (n.tenant_id, n.kw_seq)",
		// migration_id: one Migration node per data migration Open has run
		// to its end (keyword.go: the keyword backfill).
		"CREATE CONSTRAINT migration_id IF NOT EXISTS FOR (n:Migration) REQUIRE n.id IS UNIQUE",
	}
}

// ensureSchema creates the schema and waits until every index is online.
// Schema statements run in auto-commit transactions, as Neo4j requires. It
// first lists the indexes and constraints that exist and skips the
// statements naming one that does (or dropping one that does not): each is
// a schema transaction of its own, and the ~45 of them took most of Open,
// which every Neo4j test runs. The data statements always run.
func (s *Store) ensureSchema(ctx context.Context) error {
	sess := s.session(ctx, neo4jdrv.AccessModeWrite)
	defer sess.Close(ctx)
	have := map[string]bool{}
	for _, list := range []string{"SHOW INDEXES YIELD name", "SHOW CONSTRAINTS YIELD name"} {
		res, err := sess.Run(ctx, list, nil)
		if err != nil {
			return fmt.Errorf("neo4j: schema %q: %w", list, err)
		}
		recs, err := res.Collect(ctx)
		if err != nil {
			return fmt.Errorf("neo4j: schema %q: %w", list, err)
		}
		for _, r := range recs {
			if n, ok := r.Values[0].(string); ok {
				have[n] = true
			}
		}
	}
	created := false
	for _, stmt := range schema() {
		name, create, ok := schemaName(stmt)
		if ok && have[name] == create {
			continue
		}
		created = created || (ok && create)
		res, err := sess.Run(ctx, stmt, nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if err != nil {
			return fmt.Errorf("neo4j: schema %q: %w", stmt, err)
		}
	}
	if !created {
		return nil
	}
	res, err := sess.Run(ctx, "CALL db.awaitIndexes(300)", nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		return fmt.Errorf("neo4j: schema: await indexes: %w", err)
	}
	return nil
}

// schemaName reads the index or constraint a schema statement creates
// (create true) or drops; ok is false for a statement of another kind.
func schemaName(stmt string) (name string, create, ok bool) {
	f := strings.Fields(stmt)
	switch {
	case len(f) >= 6 && f[0] == "CREATE" && (f[1] == "CONSTRAINT" || f[1] == "INDEX") && f[3] == "IF" && f[4] == "NOT":
		return f[2], true, true
	case len(f) >= 6 && f[0] == "CREATE" && f[2] == "INDEX" && f[4] == "IF" && f[5] == "NOT": // CREATE FULLTEXT INDEX
		return f[3], true, true
	case len(f) == 5 && f[0] == "DROP" && (f[1] == "INDEX" || f[1] == "CONSTRAINT") && f[3] == "IF" && f[4] == "EXISTS":
		return f[2], false, true
	}
	return "", false, false
}
