package graph

import (
	"context"
	"time"
)

// Store is the graph backend's core contract: what the engine needs to ingest,
// search, build context, forget and index at all — the memory graph's domain
// operations, never "run this query". Curation records live on optional
// capability interfaces (Proposals, Edits, Capsules) that a backend may also
// implement; graph/doc.go says how the engine finds them. Every read takes a Filter (its Scope is mandatory and is
// pushed into the query); every write takes the writer's Scope and refuses to
// touch records outside it (ErrNotFound). Every write method is one
// transaction: it either fully happens or leaves nothing behind. Input is
// validated (the model's Validate methods) before the store is touched.
//
// Implementations: graph/sqlite (embedded default) and graph/neo4j. Both pass
// graph/storetest.Run and implement every capability.
type Store interface {
	// CreateMemories writes memories in one transaction: either all are
	// written or none. For each: the memory, its version 1, the version's
	// chunks, the entities (resolved by NormName within the tenant, created
	// when new) and MENTIONS edges from the memory and from each chunk, the
	// supersession of in.Supersedes when set (it must be active and in
	// scope, else ErrConflict or ErrNotFound), audit events in.Audit (their
	// SubjectID defaults to the new memory's id), and an outbox entry when
	// in.Version.Index is set.
	CreateMemories(ctx context.Context, in []MemoryInput) ([]Created, error)
	// AddVersion appends the next version (number = previous + 1) to an
	// active memory, with its chunks, entities and MENTIONS edges; the
	// memory's MENTIONS are replaced by the new version's entities.
	AddVersion(ctx context.Context, s Scope, memoryID string, in VersionInput) (Version, error)

	// GetMemory returns one memory visible under f. Status is not filtered
	// here: a direct fetch sees superseded and archived memories too, but
	// never another tenant's, nor a retracted or erased one unless
	// f.Statuses admits it.
	GetMemory(ctx context.Context, f Filter, id string) (Memory, error)
	// GetMemories returns the memories among ids visible under f (same
	// rules as GetMemory), in the order of ids; missing ones are skipped.
	GetMemories(ctx context.Context, f Filter, ids []string) ([]Memory, error)
	// GetVersion returns one version whose memory is visible under f.
	GetVersion(ctx context.Context, f Filter, id string) (Version, error)
	// GetVersions returns the versions among ids whose memories are visible
	// under f, in the order of ids; missing ones are skipped.
	GetVersions(ctx context.Context, f Filter, ids []string) ([]Version, error)
	// ListVersions returns a memory's versions, oldest first (the curation
	// loop pins a proposal by version number).
	ListVersions(ctx context.Context, f Filter, memoryID string) ([]Version, error)
	// GetChunks returns a version's chunks in document order.
	GetChunks(ctx context.Context, f Filter, versionID string) ([]Chunk, error)
	// FindActiveByKey returns the active memory with canonical key key in
	// the namespace (exact scope, user and type), or ErrNotFound.
	FindActiveByKey(ctx context.Context, ns Namespace, key string) (Memory, error)
	// Resolve follows SUPERSEDES edges from id to the newest memory of the
	// chain (A superseded by B superseded by C resolves to C).
	Resolve(ctx context.Context, f Filter, id string) (Memory, error)
	// Archive marks an active memory archived, with the audit events
	// (their SubjectID must be set) in the same transaction.
	Archive(ctx context.Context, s Scope, id string, audit ...AuditEvent) error
	// Restore makes an archived memory active again, with the audit events
	// in the same transaction; a memory in another state is ErrConflict,
	// and so is one whose exclusive canonical key an active memory holds
	// by now.
	Restore(ctx context.Context, s Scope, id string, audit ...AuditEvent) error
	// Erase removes the content of memories for good and leaves tombstones
	// (graph/forget.go says what stays), in one transaction. A memory
	// already erased is skipped; one outside s is ErrNotFound and nothing is
	// erased.
	Erase(ctx context.Context, s Scope, in EraseInput) (Erasure, error)
	// Touch reinforces memories: access_count + 1 and last_accessed = at.
	// Ids outside the scope are ignored.
	Touch(ctx context.Context, s Scope, ids []string, at time.Time) error

	// ListMemories lists memories matching f, newest first (created_at,
	// then id, descending), with cursor pagination that neither repeats
	// nor skips a memory while inserts run concurrently.
	ListMemories(ctx context.Context, f Filter, p Page) (Listing, error)
	// Candidates finds memories that MENTION any entity whose norm name or
	// alias equals one of names (case-insensitive), most matched entities
	// first, then newest; at most limit.
	Candidates(ctx context.Context, f Filter, names []string, limit int) ([]Candidate, error)
	// Neighbours finds, for each seed, up to perSeed other memories that
	// share at least one entity with it, ranked by RankNeighbours (the most
	// specific shared entities first, then newest). Each of the seed's
	// entities contributes only its NeighbourFanout newest memories that
	// pass f, so a popular entity costs no more than a rare one. Seeds
	// themselves are never returned as neighbours; results come grouped by
	// seed, in seed order.
	Neighbours(ctx context.Context, f Filter, seedIDs []string, perSeed int) ([]Neighbour, error)
	// Walk runs a personalized PageRank from r's seeds over the bounded
	// neighbourhood f admits (see WalkRequest for the bounds) and returns
	// at most r.Limit memories by score, highest first (ties by id). The
	// walk only traverses memories f admits: an unreadable memory never
	// carries it, even as a bridge, and every entity's specificity is
	// counted over admitted memories. Seed memories f does not admit and
	// seed names that resolve to no entity of the tenant are ignored; no
	// seed left (or r.Limit <= 0): nil.
	Walk(ctx context.Context, f Filter, r WalkRequest) ([]Walked, error)
	// KeywordSearch ranks memories by full-text relevance (BM25 or the
	// backend's fulltext score) of query over their title and current
	// version's index text (content when the index text is empty); at most
	// limit.
	KeywordSearch(ctx context.Context, f Filter, query string, limit int) ([]Scored, error)

	// AppendAudit appends audit events (append-only; nothing deletes them).
	AppendAudit(ctx context.Context, events ...AuditEvent) error
	// ListAudit lists audit events in scope, oldest first.
	ListAudit(ctx context.Context, f Filter, q AuditQuery, p Page) ([]AuditEvent, string, error)

	// CreateGateRequest, GetGateRequest, ListGateRequests and
	// DecideGateRequest store, read and settle queued writes. Deciding a
	// request that is not pending is ErrConflict. The audit event is
	// written in the same transaction.
	CreateGateRequest(ctx context.Context, g GateRequest, audit AuditEvent) (GateRequest, error)
	GetGateRequest(ctx context.Context, f Filter, id string) (GateRequest, error)
	ListGateRequests(ctx context.Context, f Filter, status GateStatus, p Page) ([]GateRequest, string, error)
	DecideGateRequest(ctx context.Context, s Scope, id string, d GateDecision, audit AuditEvent) (GateRequest, error)

	// CreateContextReceipt stores what a read_context call returned (a
	// ContextReceipt node); GetContextReceipt reads it back for citation
	// verification.
	CreateContextReceipt(ctx context.Context, r ContextReceipt) (ContextReceipt, error)
	GetContextReceipt(ctx context.Context, f Filter, id string) (ContextReceipt, error)

	// PolicyMark returns the newest policy reload's mark (the zero mark
	// before any). MarkPolicy records a reload: it bumps the generation and
	// stores digest, name, by and at, atomically, and returns the new mark.
	PolicyMark(ctx context.Context) (PolicyMark, error)
	MarkPolicy(ctx context.Context, digest, name, by string, at time.Time) (PolicyMark, error)

	// DueOutbox returns up to limit live outbox items due at at (their
	// NextAttemptAt is not after it), across all tenants: items never
	// tried first, oldest first, then retries, earliest due first (a
	// background job, not a principal, calls it). Dead letters are never
	// returned. With lease > 0 it also claims them, in the same
	// transaction: their next attempt moves to at+lease, so no other
	// drainer (another replica) gets them until then, unless they are
	// acknowledged or failed first; two concurrent calls never return the
	// same item. With lease 0 it only reads.
	DueOutbox(ctx context.Context, at time.Time, lease time.Duration, limit int) ([]OutboxItem, error)
	// AckOutbox removes delivered items. Idempotent; unknown ids are
	// ignored.
	AckOutbox(ctx context.Context, ids []string) error
	// FailOutbox records failed deliveries: each item's Attempts + 1, its
	// LastError, and either its next due time or its death (dead letter).
	// Unknown ids are ignored.
	FailOutbox(ctx context.Context, fails []OutboxFailure) error
	// RequeueOutbox makes dead letters live again, due at at with no
	// attempts counted: those among ids, or every one when ids is empty.
	// It returns how many it requeued.
	RequeueOutbox(ctx context.Context, at time.Time, ids []string) (int, error)
	// OutboxStatus counts live, due (at at) and dead items, and returns up
	// to deadLimit dead letters, oldest first.
	OutboxStatus(ctx context.Context, at time.Time, deadLimit int) (OutboxStatus, error)

	// Health reports whether the store can serve.
	Health(ctx context.Context) error
	// Close releases the store.
	Close() error
}
