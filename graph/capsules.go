package graph

import (
	"context"
	"strings"
	"time"
)

// Capsules is the capability of storing capsules: bundles of memories,
// versions and decisions one agent hands to others (docs/curation.md). It
// is optional (graph/doc.go says how the engine finds it); both shipped
// stores implement it, and graph/storetest.RunCapsules is its conformance
// suite.
//
// Every read takes a CapsuleQuery beside the Filter and pushes both into
// the store query: the scope rule of f (capsules have no owner), the
// agent's place in the capsule (audience or creator), and liveness (not
// revoked, not expired at q.At). A capsule the query does not admit is
// ErrNotFound, as a missing one is.
type Capsules interface {
	// CreateCapsule writes a capsule, its audience and a CONTAINS edge to
	// each item, with the audit events (their SubjectID must be set), in
	// one transaction. Every item must lie in the capsule's scope or
	// beneath it (else ErrNotFound); whether its creator may read it is
	// the engine's check.
	CreateCapsule(ctx context.Context, c Capsule, audit ...AuditEvent) (Capsule, error)
	// GetCapsule reads one capsule admitted by f and q: q.Agent is in its
	// audience or created it. q.Sent is ignored.
	GetCapsule(ctx context.Context, f Filter, q CapsuleQuery, id string) (Capsule, error)
	// ListCapsules lists the capsules admitted by f and q, newest first
	// (created_at, then id, descending): those addressed to q.Agent, or
	// those it created when q.Sent.
	ListCapsules(ctx context.Context, f Filter, q CapsuleQuery, p Page) ([]Capsule, string, error)
	// RevokeCapsule marks a live capsule in s (or beneath it) revoked by
	// by at at, with the audit events, in one transaction. A missing one,
	// or one outside s, is ErrNotFound; one already revoked ErrConflict.
	RevokeCapsule(ctx context.Context, s Scope, id, by string, at time.Time, audit ...AuditEvent) (Capsule, error)
}

// Capsule limits.
const (
	// MaxCapsuleAudience caps the agents one capsule is addressed to.
	MaxCapsuleAudience = 64
	// MaxCapsuleItems caps a capsule's items (memories, versions and
	// decisions together).
	MaxCapsuleItems = 100
)

// Capsule is a bundle of memories, versions and decisions (CONTAINS edges)
// that its creator addresses to an audience of agents (principal ids), for
// a while: it expires at ExpiresAt, or earlier when revoked. An item whose
// memory is erased leaves the capsule in the erase's transaction.
type Capsule struct {
	ID      string `json:"id"`
	Scope   Scope  `json:"scope"`
	Subject string `json:"subject"`
	// Audience lists the agents (principal ids) the capsule is for.
	Audience    []string  `json:"audience"`
	MemoryIDs   []string  `json:"memory_ids,omitempty"`
	VersionIDs  []string  `json:"version_ids,omitempty"`
	DecisionIDs []string  `json:"decision_ids,omitempty"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
	// ExpiresAt is exclusive: the capsule is gone at that instant.
	ExpiresAt time.Time `json:"expires_at"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	RevokedBy string    `json:"revoked_by,omitempty"`
}

// Live reports whether c is readable at at: not revoked, not expired.
func (c Capsule) Live(at time.Time) bool {
	return c.RevokedAt.IsZero() && at.Before(c.ExpiresAt)
}

// CapsuleQuery says which agent reads capsules, and when.
type CapsuleQuery struct {
	// Agent is the principal id that reads: a capsule is read by the
	// agents of its audience and by its creator. Required.
	Agent string
	// At is the instant of the read: a capsule revoked, or expired at At
	// (ExpiresAt <= At), is left out. Required.
	At time.Time
	// Sent lists the capsules Agent created instead of those addressed
	// to it (ListCapsules only).
	Sent bool
}

// Validate reports a query no store may run.
func (q CapsuleQuery) Validate() error {
	if err := checkID("agent", q.Agent, false); err != nil {
		return err
	}
	if q.At.IsZero() {
		return invalid("at", "required: the instant capsules are live at")
	}
	return nil
}

// Validate checks a capsule before it is stored.
func (c Capsule) Validate() error {
	if err := c.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{"id": {c.ID, true}, "created_by": {c.CreatedBy, false}}); err != nil {
		return err
	}
	if strings.TrimSpace(c.Subject) == "" {
		return invalid("subject", "required: say what the capsule is about")
	}
	if err := checkText("subject", c.Subject, MaxTitleLen); err != nil {
		return err
	}
	if len(c.Audience) == 0 {
		return invalid("audience", "required: the agents the capsule is for")
	}
	if len(c.Audience) > MaxCapsuleAudience {
		return invalid("audience", "lists %d agents, more than %d", len(c.Audience), MaxCapsuleAudience)
	}
	n := len(c.MemoryIDs) + len(c.VersionIDs) + len(c.DecisionIDs)
	if n == 0 {
		return invalid("items", "required: a capsule holds at least one memory, version or decision")
	}
	if n > MaxCapsuleItems {
		return invalid("items", "lists %d items, more than %d", n, MaxCapsuleItems)
	}
	for field, ids := range map[string][]string{"audience": c.Audience, "memory_ids": c.MemoryIDs,
		"version_ids": c.VersionIDs, "decision_ids": c.DecisionIDs} {
		if err := checkIDList(field, ids); err != nil {
			return err
		}
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] {
				return invalid(field, "lists %s twice", id)
			}
			seen[id] = true
		}
	}
	if c.ExpiresAt.IsZero() {
		return invalid("expires_at", "required: every capsule expires")
	}
	if !c.CreatedAt.IsZero() && !c.ExpiresAt.After(c.CreatedAt) {
		return invalid("expires_at", "must be after created_at")
	}
	return nil
}
