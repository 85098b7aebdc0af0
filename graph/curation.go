package graph

import (
	"encoding/json"
	"slices"
	"time"
)

// ProposalStatus is where a proposal stands in curation.
type ProposalStatus string

// Proposal statuses.
const (
	ProposalOpen     ProposalStatus = "open"
	ProposalAccepted ProposalStatus = "accepted"
	ProposalRejected ProposalStatus = "rejected"
	// ProposalRebased is a proposal replaced by a rebased one (REBASED_TO):
	// it can no longer be accepted, rejected or rebased.
	ProposalRebased ProposalStatus = "rebased"
)

// Proposal is a suggested change to a memory awaiting curation. Its edges:
// TARGETS_VERSION (the version it was written against), REBASED_TO (the
// proposal that replaced it, pinned to a newer version), ACCEPTED_AS (the
// version it became) and REJECTED_BECAUSE (the Decision that turned it
// down).
type Proposal struct {
	ID         string         `json:"id"`
	Scope      Scope          `json:"scope"`
	MemoryID   string         `json:"memory_id,omitempty"` // the memory it changes
	Title      string         `json:"title"`
	Content    string         `json:"content"`
	Status     ProposalStatus `json:"status"`
	ProposedBy string         `json:"proposed_by"`
	// TargetVersionID pins the version the proposal was written against;
	// it can be accepted only while that version is the memory's current
	// one.
	TargetVersionID string `json:"target_version_id,omitempty"`
	// RebasedToID (a rebased proposal) names the proposal that replaced
	// it, RebasedToVersionID the version that one is pinned to.
	RebasedToID        string    `json:"rebased_to_id,omitempty"`
	RebasedToVersionID string    `json:"rebased_to_version_id,omitempty"`
	AcceptedVersionID  string    `json:"accepted_version_id,omitempty"`
	RejectedDecisionID string    `json:"rejected_decision_id,omitempty"`
	CreatedAt          time.Time `json:"created_at"`
}

// Decision is the record of a curation or gate decision.
type Decision struct {
	ID        string    `json:"id"`
	Scope     Scope     `json:"scope"`
	Kind      string    `json:"kind"` // "gate" or "curation"
	Outcome   string    `json:"outcome"`
	Rule      string    `json:"rule,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	DecidedBy string    `json:"decided_by"`
	CreatedAt time.Time `json:"created_at"`
}

// Baseline is a published pointer per repository: the set of versions it
// PUBLISHES.
type Baseline struct {
	ID          string    `json:"id"`
	Scope       Scope     `json:"scope"`
	Name        string    `json:"name"`
	VersionIDs  []string  `json:"version_ids"`
	PublishedBy string    `json:"published_by"`
	CreatedAt   time.Time `json:"created_at"`
}

// EditKind is what an Edit does to its target.
type EditKind string

// Edit kinds.
const (
	EditRetract    EditKind = "retract"
	EditAmend      EditKind = "amend"
	EditQuarantine EditKind = "quarantine"
	EditAttenuate  EditKind = "attenuate"
	EditBlock      EditKind = "block"
)

// EditStatus is an edit's approval state. Only approved edits take effect.
type EditStatus string

// Edit statuses.
const (
	EditPending  EditStatus = "pending"
	EditApproved EditStatus = "approved"
	EditRejected EditStatus = "rejected"
)

// Edit is a curation overlay on a memory (EDITS edge), optionally pinned to
// one of its versions.
type Edit struct {
	ID              string     `json:"id"`
	Scope           Scope      `json:"scope"`
	Kind            EditKind   `json:"kind"`
	Status          EditStatus `json:"status"`
	TargetMemoryID  string     `json:"target_memory_id"`
	TargetVersionID string     `json:"target_version_id,omitempty"`
	Content         string     `json:"content,omitempty"`    // amend: the replacement text
	Importance      *float64   `json:"importance,omitempty"` // amend / attenuate: the new importance
	// Delta (attenuate only, instead of Importance) lowers the importance
	// the edits before it left: 0.9 with delta -0.5 is 0.4.
	Delta     *float64  `json:"delta,omitempty"`
	Channel   string    `json:"channel,omitempty"` // block: the channel it hides on
	Reason    string    `json:"reason,omitempty"`
	CreatedBy string    `json:"created_by"`
	DecidedBy string    `json:"decided_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// AuditEvent is an append-only record of a decision or action; it DECIDED
// its subject. No API deletes one.
type AuditEvent struct {
	ID          string    `json:"id"`
	Scope       Scope     `json:"scope"`
	Action      string    `json:"action"`       // e.g. "gate.approve", "edit.approve"
	SubjectKind string    `json:"subject_kind"` // label of the subject: Memory, GateRequest, Edit, ...
	SubjectID   string    `json:"subject_id"`
	ActorID     string    `json:"actor_id"`
	Rule        string    `json:"rule,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// AboutMemory returns a copy of events in which an event naming no subject
// is about memory id (SubjectKind "Memory" unless it names one): the
// defaulting MemoryInput.Audit and VersionInput.Audit promise, shared by
// the backends.
func AboutMemory(events []AuditEvent, id string) []AuditEvent {
	out := slices.Clone(events)
	for i := range out {
		if out[i].SubjectID == "" {
			out[i].SubjectID = id
			if out[i].SubjectKind == "" {
				out[i].SubjectKind = "Memory"
			}
		}
	}
	return out
}

// GateStatus is a gate request's state.
type GateStatus string

// Gate statuses.
const (
	GatePending  GateStatus = "pending"
	GateApproved GateStatus = "approved"
	GateRejected GateStatus = "rejected"
)

// GateRequest is a write the policy gate queued for a librarian. Payload is
// the serialised request, opaque to the store.
type GateRequest struct {
	ID          string          `json:"id"`
	Scope       Scope           `json:"scope"`
	Title       string          `json:"title"`
	Status      GateStatus      `json:"status"`
	Rule        string          `json:"rule,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Payload     json.RawMessage `json:"payload"`
	RequestedBy string          `json:"requested_by"`
	DecidedBy   string          `json:"decided_by,omitempty"`
	MemoryID    string          `json:"memory_id,omitempty"` // set when approved and written
	CreatedAt   time.Time       `json:"created_at"`
	DecidedAt   time.Time       `json:"decided_at,omitzero"`
}

// OutboxItem is a pending vector-index write, kept in the graph store so a
// failed index write is retried and never lost. An item is live until it is
// delivered (acknowledged: removed) or dead-lettered after too many failed
// attempts; a dead letter stays until it is requeued.
type OutboxItem struct {
	ID        string `json:"id"`
	Scope     Scope  `json:"scope"`
	MemoryID  string `json:"memory_id"`
	VersionID string `json:"version_id"`
	Op        string `json:"op"` // "upsert" or "delete"
	// Attempts counts the failed deliveries.
	Attempts int `json:"attempts"`
	// NextAttemptAt is when the item is next due: zero (due at once, in
	// any process's clock) until a delivery fails.
	NextAttemptAt time.Time `json:"next_attempt_at"`
	// LastError is why the last delivery failed.
	LastError string `json:"last_error,omitempty"`
	// Dead marks a dead letter: no drain picks it up until it is requeued.
	Dead      bool      `json:"dead,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// OutboxFailure is one failed delivery of an outbox item, as the drain
// records it: the item's attempts go up by one, and it is next due at
// RetryAt, or dead-lettered.
type OutboxFailure struct {
	ID      string
	Error   string
	RetryAt time.Time
	Dead    bool
}

// OutboxStatus summarises the outbox at one instant.
type OutboxStatus struct {
	// Pending is the number of live items; Due, those due at the instant
	// asked; Dead, the dead letters.
	Pending int `json:"pending"`
	Due     int `json:"due"`
	Dead    int `json:"dead"`
	// Oldest is the creation time of the oldest live item (zero when none).
	Oldest time.Time `json:"oldest,omitzero"`
	// DeadLetters are the oldest dead letters, up to the number asked.
	DeadLetters []OutboxItem `json:"dead_letters,omitempty"`
}

// Citation pins a piece of returned context to the exact version (and
// optionally chunk and byte range) it came from, so an agent's answer can be
// verified against what it was given.
type Citation struct {
	RepositoryID string `json:"repository_id"`
	ElementID    string `json:"element_id"` // the memory id
	VersionID    string `json:"version_id"`
	ChunkKey     string `json:"chunk_key,omitempty"`
	Start        *int   `json:"start,omitempty"`
	End          *int   `json:"end,omitempty"`
}

// ContextReceipt records what one read_context call returned, under its
// context_id, so citations can be verified later by any replica.
type ContextReceipt struct {
	ID          string     `json:"id"`
	Scope       Scope      `json:"scope"`
	PrincipalID string     `json:"principal_id"`
	Query       string     `json:"query,omitempty"`
	Citations   []Citation `json:"citations"`
	CreatedAt   time.Time  `json:"created_at"`
}
