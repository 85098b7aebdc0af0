package engine

import (
	"context"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// The ports each use case family uses, declared by the consumer as
// Weaviate's usecases declare theirs in ports.go. The engine holds one
// graph.Store (and the capabilities New found on it, capabilities.go); these
// interfaces say which of its methods each family actually calls, so a
// reader sees a use case's reach at a glance, a helper can take the narrow
// port instead of the whole store, and a new store method nothing calls
// stands out. The assertions at the bottom keep them honest: graph.Store
// satisfies every port (the curation ports are the capabilities
// themselves, see below).
//
//	use case (file)                                 port
//	Ingest, IngestBatch, IngestBacklog              ingestPort (+ forgetPort's Archive for a
//	  (ingest*.go, backlog.go)                        backlog's vanished files)
//	Search (search*.go, rank.go, display*.go,       searchPort (+ graph.Relations.RelationsOf
//	  effective.go)                                   for display, graph.Edits.ListEdits for
//	                                                  the effective view)
//	ReadContext, VerifyCitations, ContextBundle     contextPort (+ graph.Proposals' baselines
//	  (context*.go, bundle.go)                        for selector published / baseline_id,
//	                                                  graph.Capsules.ListCapsules for a bundle)
//	Get, GetWith, List, ListAudit, Reindex, Doctor  memoryPort
//	  (memories.go, audit.go, reindex.go)
//	Archive, Restore, Erase, EraseUser (forget.go)  forgetPort
//	ListGateRequests, GetGateRequest,               gatePort (an approval replays the write
//	  ApproveGateRequest, RejectGateRequest           through ingestPort, settling the request
//	  (librarian.go)                                  in the write's transaction)
//	ReloadPolicy, FollowPolicy (gate_reload.go)     policyPort
//	DrainOutbox, RunOutbox, OutboxStatus,           outboxPort (+ graph.Counter for Stats)
//	  RequeueDeadLetters, Stats (outbox.go, stats.go)
//	Propose, AcceptProposal, RejectProposal,        curationReader + graph.Proposals
//	  RebaseProposal, PromoteBaseline, ... (proposals.go, baselines.go)
//	ProposeEdit, DecideEdit, ListMemoryEdits        curationReader + graph.Edits
//	  (edits.go)
//	CreateCapsule, GetCapsule, ListCapsules,        curationReader + graph.Capsules
//	  RevokeCapsule (capsules.go)                     (+ graph.Proposals.GetDecision for items)
//	Relate, Unrelate, ListRelations (relations.go)  curationReader + graph.Relations
//
// The curation ports are the capability interfaces themselves: the engine
// calls every method of graph.Proposals, graph.Edits, graph.Capsules and
// graph.Relations, so a narrower copy would only repeat them.

// memoryReader reads memories by id.
type memoryReader interface {
	GetMemory(ctx context.Context, f graph.Filter, id string) (graph.Memory, error)
	GetMemories(ctx context.Context, f graph.Filter, ids []string) ([]graph.Memory, error)
}

// versionReader reads versions by id.
type versionReader interface {
	GetVersion(ctx context.Context, f graph.Filter, id string) (graph.Version, error)
	GetVersions(ctx context.Context, f graph.Filter, ids []string) ([]graph.Version, error)
}

// auditWriter appends audit events outside any other write.
type auditWriter interface {
	AppendAudit(ctx context.Context, events ...graph.AuditEvent) error
}

// toucher reinforces memories (access count and last access).
type toucher interface {
	Touch(ctx context.Context, s graph.Scope, ids []string, at time.Time) error
}

// gateReader reads one queued write.
type gateReader interface {
	GetGateRequest(ctx context.Context, f graph.Filter, id string) (graph.GateRequest, error)
}

// ingestPort is the write path: the integrity checks' reads (key holder,
// dedupe and contradiction candidates, explicit supersession targets) and
// the writes (new memories with supersession, audit and outbox in one
// transaction; new versions; reinforcement; queued and rejected writes).
type ingestPort interface {
	memoryReader
	versionReader
	auditWriter
	toucher
	FindActiveByKey(ctx context.Context, ns graph.Namespace, key string) (graph.Memory, error)
	KeywordSearch(ctx context.Context, f graph.Filter, query string, limit int) ([]graph.Scored, error)
	CreateMemories(ctx context.Context, in []graph.MemoryInput) ([]graph.Created, error)
	AddVersion(ctx context.Context, s graph.Scope, memoryID string, in graph.VersionInput) (graph.Version, error)
	CreateGateRequest(ctx context.Context, g graph.GateRequest, audit graph.AuditEvent) (graph.GateRequest, error)
	DecideGateRequest(ctx context.Context, s graph.Scope, id string, d graph.GateDecision, audit graph.AuditEvent) (graph.GateRequest, error)
}

// searchPort is the read path of search: the three retrievers (keyword,
// entity graph with its walk, neighbours) and the loads of what they found.
type searchPort interface {
	memoryReader
	versionReader
	KeywordSearch(ctx context.Context, f graph.Filter, query string, limit int) ([]graph.Scored, error)
	Candidates(ctx context.Context, f graph.Filter, names []string, limit int) ([]graph.Candidate, error)
	Neighbours(ctx context.Context, f graph.Filter, seedIDs []string, perSeed int) ([]graph.Neighbour, error)
	Walk(ctx context.Context, f graph.Filter, r graph.WalkRequest) ([]graph.Walked, error)
}

// contextPort is read_context and citation verification: search's reads
// plus a hit's chunks, the reinforcement of what was returned, and the
// receipt a citation is checked against.
type contextPort interface {
	searchPort
	toucher
	GetChunks(ctx context.Context, f graph.Filter, versionID string) ([]graph.Chunk, error)
	ListMemories(ctx context.Context, f graph.Filter, p graph.Page) (graph.Listing, error)
	CreateContextReceipt(ctx context.Context, r graph.ContextReceipt) (graph.ContextReceipt, error)
	GetContextReceipt(ctx context.Context, f graph.Filter, id string) (graph.ContextReceipt, error)
}

// memoryPort is get, list, history and the audit trail.
type memoryPort interface {
	memoryReader
	versionReader
	toucher
	Resolve(ctx context.Context, f graph.Filter, id string) (graph.Memory, error)
	ListMemories(ctx context.Context, f graph.Filter, p graph.Page) (graph.Listing, error)
	ListAudit(ctx context.Context, f graph.Filter, q graph.AuditQuery, p graph.Page) ([]graph.AuditEvent, string, error)
}

// forgetPort is archive, restore and erase (of a memory, of a user).
type forgetPort interface {
	memoryReader
	auditWriter
	Archive(ctx context.Context, s graph.Scope, id string, audit ...graph.AuditEvent) error
	Restore(ctx context.Context, s graph.Scope, id string, audit ...graph.AuditEvent) error
	Erase(ctx context.Context, s graph.Scope, in graph.EraseInput) (graph.Erasure, error)
	ListMemories(ctx context.Context, f graph.Filter, p graph.Page) (graph.Listing, error)
}

// gatePort is the librarian's queue: list, read and settle queued writes
// (an approval replays the write through ingestPort and settles the
// request in the write's transaction).
type gatePort interface {
	gateReader
	auditWriter
	ListGateRequests(ctx context.Context, f graph.Filter, status graph.GateStatus, p graph.Page) ([]graph.GateRequest, string, error)
	DecideGateRequest(ctx context.Context, s graph.Scope, id string, d graph.GateDecision, audit graph.AuditEvent) (graph.GateRequest, error)
}

// policyPort is the policy reload every replica follows: the store's mark
// of the newest reload, and its audit event.
type policyPort interface {
	auditWriter
	PolicyMark(ctx context.Context) (graph.PolicyMark, error)
	MarkPolicy(ctx context.Context, digest, name, by string, at time.Time) (graph.PolicyMark, error)
}

// outboxPort is the vector outbox: the drain (due items, the memories and
// versions they name, ack or fail) and its operators' view.
type outboxPort interface {
	memoryReader
	versionReader
	DueOutbox(ctx context.Context, at time.Time, lease time.Duration, limit int) ([]graph.OutboxItem, error)
	AckOutbox(ctx context.Context, ids []string) error
	FailOutbox(ctx context.Context, fails []graph.OutboxFailure) error
	RequeueOutbox(ctx context.Context, at time.Time, ids []string) (int, error)
	OutboxStatus(ctx context.Context, at time.Time, deadLimit int) (graph.OutboxStatus, error)
}

// curationReader is what the curation use cases read of the core store
// before they touch their capability: the target memory, its versions.
type curationReader interface {
	memoryReader
	versionReader
	ListVersions(ctx context.Context, f graph.Filter, memoryID string) ([]graph.Version, error)
}

// The core store satisfies every port, so the engine's one store serves
// them all.
var (
	_ ingestPort     = graph.Store(nil)
	_ searchPort     = graph.Store(nil)
	_ contextPort    = graph.Store(nil)
	_ memoryPort     = graph.Store(nil)
	_ forgetPort     = graph.Store(nil)
	_ gatePort       = graph.Store(nil)
	_ policyPort     = graph.Store(nil)
	_ outboxPort     = graph.Store(nil)
	_ curationReader = graph.Store(nil)
	_ gateReader     = graph.Store(nil)
)
