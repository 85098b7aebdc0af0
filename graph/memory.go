package graph

import (
	"strings"
	"time"
)

// Status is a memory's lifecycle state.
type Status string

// Memory statuses.
const (
	StatusActive     Status = "active"
	StatusSuperseded Status = "superseded"
	StatusArchived   Status = "archived"
	StatusRetracted  Status = "retracted"
	// StatusErased marks a tombstone: Store.Erase removed the memory's
	// content everywhere and kept only its identity (see graph/forget.go).
	StatusErased Status = "erased"
)

// SourceKind says how a memory came to be.
type SourceKind string

// Source kinds.
const (
	SourceAuthored         SourceKind = "AUTHORED"
	SourceIngestedEvidence SourceKind = "INGESTED_EVIDENCE"
	SourceProposed         SourceKind = "PROPOSED"
)

// Visibility is the reach of a memory (the `scope` property in the graph):
// one session, one user, a project, a policy, or everything in the tenant.
type Visibility string

// Visibilities.
const (
	VisibilitySession Visibility = "session"
	VisibilityUser    Visibility = "user"
	VisibilityProject Visibility = "project"
	VisibilityPolicy  Visibility = "policy"
	VisibilityGlobal  Visibility = "global"
)

// Memory is one durable unit of knowledge. Its content lives in versions;
// the memory node carries identity, classification and lifecycle.
type Memory struct {
	ID           string     `json:"id"`
	Scope        Scope      `json:"scope"`
	UserID       string     `json:"user_id,omitempty"`
	Type         string     `json:"type"`
	Layer        string     `json:"layer,omitempty"`
	Sublayer     string     `json:"sublayer,omitempty"`
	Title        string     `json:"title"`
	CanonicalKey string     `json:"canonical_key,omitempty"`
	Status       Status     `json:"status"`
	SourceKind   SourceKind `json:"source_kind"`
	Importance   float64    `json:"importance"`
	AccessCount  int64      `json:"access_count"`
	LastAccessed time.Time  `json:"last_accessed,omitzero"`
	ValidFrom    time.Time  `json:"valid_from,omitzero"`
	ValidTo      time.Time  `json:"valid_to,omitzero"` // exclusive; zero means open-ended
	Visibility   Visibility `json:"visibility"`
	SubjectType  string     `json:"subject_type,omitempty"`
	SubjectID    string     `json:"subject_id,omitempty"`
	ProjectID    string     `json:"project_id,omitempty"`
	SessionID    string     `json:"session_id,omitempty"`
	Channel      string     `json:"channel,omitempty"`
	Tags         []string   `json:"tags,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`

	// CurrentVersionID is the id of the newest version (the HAS_VERSION edge
	// with the highest number). Read-only: stores fill it.
	CurrentVersionID string `json:"current_version_id"`
	// VersionCount is the number of versions. Read-only.
	VersionCount int `json:"version_count"`
	// SupersededBy is the id of the memory that SUPERSEDES this one, if any.
	// Read-only.
	SupersededBy string `json:"superseded_by,omitempty"`
}

// Provenance records who or what produced a version.
type Provenance struct {
	ActorType  string `json:"actor_type,omitempty"`
	ActorID    string `json:"actor_id,omitempty"`
	ToolID     string `json:"tool_id,omitempty"`
	SourceRepo string `json:"source_repo,omitempty"`
	CommitSHA  string `json:"commit_sha,omitempty"`
	Path       string `json:"path,omitempty"`
}

// Version is one immutable revision of a memory's content. Versions are
// append-only and numbered from 1.
type Version struct {
	ID          string     `json:"id"`
	MemoryID    string     `json:"memory_id"`
	Number      int        `json:"number"`
	Content     string     `json:"content"`
	Summary     string     `json:"summary,omitempty"`
	IndexText   string     `json:"index_text,omitempty"`
	ContentHash string     `json:"content_hash"`
	Provenance  Provenance `json:"provenance"`
	CreatedAt   time.Time  `json:"created_at"`
}

// Chunk is a section of a version's content, addressed by its heading path
// (Key) and byte offsets [Start, End).
type Chunk struct {
	ID        string `json:"id"`
	VersionID string `json:"version_id"`
	Key       string `json:"chunk_key"`
	Start     int    `json:"start"`
	End       int    `json:"end"`
	// Entities are the norm names of the entities this chunk MENTIONS.
	Entities []string `json:"entities,omitempty"`
}

// Entity is one real-world thing memories mention. Entities are per tenant
// and unique by NormName within it.
type Entity struct {
	ID       string   `json:"id"`
	TenantID string   `json:"tenant_id"`
	Name     string   `json:"name"`
	NormName string   `json:"norm_name"`
	Type     string   `json:"type,omitempty"`
	Aliases  []string `json:"aliases,omitempty"`
}

// EntityRef names an entity a new memory or chunk mentions. Stores resolve
// it to an Entity by NormName within the tenant, creating it when missing and
// merging aliases when present. Resolution beyond exact NormName (aliases,
// fuzzy matching) is the extractor's job before the write.
type EntityRef struct {
	Name     string   `json:"name"`
	NormName string   `json:"norm_name"`
	Type     string   `json:"type,omitempty"`
	Aliases  []string `json:"aliases,omitempty"`
}

// ChunkInput is a chunk of a new version.
type ChunkInput struct {
	Key      string      `json:"chunk_key"`
	Start    int         `json:"start"`
	End      int         `json:"end"`
	Entities []EntityRef `json:"entities,omitempty"`
}

// SearchText is what KeywordSearch matches in a version besides the
// memory's title: its index text, or its content when the index text is
// blank. Both backends index it.
func SearchText(indexText, content string) string {
	if strings.TrimSpace(indexText) == "" {
		return content
	}
	return indexText
}

// VersionInput is the content of a new version. ID, number and timestamps
// are assigned by the store unless ID is set (callers may pre-assign ids so a
// batch can reference them).
type VersionInput struct {
	ID          string       `json:"id,omitempty"`
	Content     string       `json:"content"`
	Summary     string       `json:"summary,omitempty"`
	IndexText   string       `json:"index_text,omitempty"`
	ContentHash string       `json:"content_hash,omitempty"` // computed when empty
	Provenance  Provenance   `json:"provenance"`
	Chunks      []ChunkInput `json:"chunks,omitempty"`
	Entities    []EntityRef  `json:"entities,omitempty"`
	// Index asks the store to enqueue a vector-index outbox entry for this
	// version in the same transaction.
	Index bool `json:"-"`
	// Settles, when set, is the gate request AddVersion approves in the
	// same transaction (the version is a librarian-approved queued write).
	// CreateMemory takes it in MemoryInput.Settles and refuses it here.
	Settles *GateSettlement `json:"-"`
	// Audit events AddVersion writes in the same transaction, each about the
	// memory unless its SubjectID names another record. CreateMemory takes
	// its events in MemoryInput.Audit and refuses them here.
	Audit []AuditEvent `json:"audit,omitempty"`
}

// MemoryInput is everything CreateMemory writes in one transaction: the
// memory node, its first version, the version's chunks, the entities and the
// MENTIONS edges. Memory.ID may be preset; Status defaults to active,
// SourceKind to AUTHORED, Visibility to user, AccessCount to 1, CreatedAt to
// now. Read-only Memory fields are ignored.
type MemoryInput struct {
	Memory  Memory       `json:"memory"`
	Version VersionInput `json:"version"`
	// Supersedes, when set, is an active memory in the same scope that the
	// new memory replaces, in the same transaction.
	Supersedes string `json:"supersedes,omitempty"`
	// ExclusiveKey keeps the canonical key exclusive in its namespace
	// (scope, user, type): the write fails with ErrConflict when another
	// active memory there has the same key and asked the same (other than
	// the one superseded), even one written at the same moment by another
	// process. The engine sets it for types that dedupe.
	ExclusiveKey bool `json:"exclusive_key,omitempty"`
	// Audit events are written in the same transaction, each DECIDED the
	// new memory unless its SubjectID names another record.
	Audit []AuditEvent `json:"audit,omitempty"`
	// Settles, when set, is the gate request this write approves, in the
	// same transaction (the memory is a librarian-approved queued write).
	Settles *GateSettlement `json:"-"`
}

// ClaimsKey reports whether the memory holds its canonical key exclusively
// once written: it asked (ExclusiveKey), has a key and is active. Backends
// check and claim the key for exactly these inputs.
func (in MemoryInput) ClaimsKey() bool {
	return in.ExclusiveKey && in.Memory.CanonicalKey != "" && in.Memory.Status == StatusActive
}

// Created is the outcome of a successful CreateMemory.
type Created struct {
	Memory  Memory  `json:"memory"`
	Version Version `json:"version"`
}
