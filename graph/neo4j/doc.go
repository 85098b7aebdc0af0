// Package neo4j is the graph.Store backend on Neo4j 5 (Community or
// Enterprise, single instance or cluster), through the official Go driver.
//
// It stores mnemo's model as an analyst expects to browse it in Neo4j
// Browser: Memory, Version, Chunk, Entity, Proposal, Decision, Baseline,
// Edit, Capsule, AuditEvent, GateRequest and ContextReceipt nodes joined by HAS_VERSION,
// HAS_CHUNK, MENTIONS (with a count), SUPERSEDES, NEXT (Memory to Memory
// within a session, Chunk to Chunk within a version), CO_OCCURS (Entity to
// Entity, with a count), TARGETS_VERSION, REBASED_TO (Proposal to the
// Proposal that replaced it), ACCEPTED_AS,
// REJECTED_BECAUSE, PUBLISHES, CONTAINS, EDITS and DECIDED edges (see
// DESIGN.md, "The graph", and docs/graph.md). Every node has a
// human-readable title or name.
// Pending vector-index writes are OutboxItem nodes, so the outbox lives in
// the same store and transaction as the graph write it follows.
//
// A few properties are kept for the read path and are not part of the model:
// Memory.kw_tf, kw_len and kw_seq, and the KeywordLog nodes, are keyword
// search's (keyword.go); Memory.quarantined and
// Memory.blocked_channels mirror approved quarantine and block edits so the
// read filter is a property check; Entity.alias_norms (the aliases in norm
// form) is what Candidates matches aliases against.
//
// Every write runs in one managed transaction (ExecuteWrite, which retries
// transient failures). A read runs its statements in one read session, each
// its own auto-commit transaction (one round trip where a managed one takes
// three; Neo4j reads at read committed either way), and runs again on a
// transient failure (read, store.go). The caller's Filter is part of every
// query's WHERE clause, so tenant isolation never depends on post-filtering.
// Open creates the constraints and indexes the queries rely on; each query
// names the ones it uses in a comment.
package neo4j
