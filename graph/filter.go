package graph

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// Filter is the read side of authorization plus the caller's own narrowing.
// The engine builds it from the Principal; every Store read takes one and
// pushes it into the store query. The zero value of every field except Scope
// means "no restriction".
type Filter struct {
	// Scope is mandatory: TenantID must be set. See the package comment for
	// how org and repo narrow it; Reader.Subscopes widens it.
	Scope Scope
	// Reader is who the read is for. Stores push it into every query beside
	// Scope: see Reader.MayRead and Filter.Admits.
	Reader Reader

	// UserID narrows to memories of that user (the caller's own choice; it
	// widens nothing: Reader still decides what is readable).
	UserID      string
	Types       []string
	Tags        []string // a memory matches when it carries every tag listed
	Visibility  []Visibility
	SubjectType string
	SubjectID   string
	ProjectID   string
	SessionID   string
	// EntityTypes keeps memories that mention at least one entity of these
	// types.
	EntityTypes []string

	CreatedAfter  time.Time // inclusive
	CreatedBefore time.Time // exclusive
	// ValidAt, when set, keeps memories valid at that instant: ValidFrom is
	// zero or <= ValidAt, and ValidTo is zero or > ValidAt (exclusive).
	ValidAt time.Time
	// KnownAt, when set, reads the graph as mnemo knew it at that instant
	// (transaction time; docs/time.md): a memory created after it does not
	// exist; a memory's status, current version and successor are those
	// recorded by then (a supersession, archive or restore recorded later
	// has not happened); versions written later do not exist; an edit
	// decided later is still pending. Statuses filter the status as of
	// KnownAt. Erasure is never undone: an erased memory stays erased.
	KnownAt time.Time

	// Statuses lists the statuses to include; empty means active only.
	Statuses []Status
	// Channel hides memories that an approved block edit hides on it.
	Channel string
	// IncludeQuarantined shows memories under an approved quarantine edit
	// (only for principals with the permission; the engine checks that).
	IncludeQuarantined bool
}

// Reader is the access side of a Filter: who reads, and what the
// principal's permissions let it read beyond the plain rule.
//
// The plain rule: a memory whose visibility is user or session is private to
// its owner (Memory.UserID); one with no owner, or any other visibility
// (project, policy, global), is readable by every reader of its scope; and a
// reader sees its own scope and the scopes above it (Scope.Sees).
type Reader struct {
	// UserID is the user the read is for (Principal.User()).
	UserID string
	// AllUsers reads every user's private memories (permission
	// read_all_users; also the engine's own maintenance reads).
	AllUsers bool
	// Subscopes reads records in scopes beneath the filter's scope
	// (Scope.Contains instead of Scope.Sees; permission subscopes).
	Subscopes bool
}

// System is the Reader of the engine's own maintenance (outbox, reindex,
// doctor): every user, every subscope. Never built from a request.
var System = Reader{AllUsers: true, Subscopes: true}

// MayRead reports whether r may read a memory owned by owner with
// visibility v (the user half of the access rule; scope is the other half).
func (r Reader) MayRead(owner string, v Visibility) bool {
	if r.AllUsers || owner == "" || owner == r.UserID {
		return true
	}
	return v != VisibilityUser && v != VisibilitySession
}

// Private reports whether visibility v makes a memory private to its owner.
func (v Visibility) Private() bool { return v == VisibilityUser || v == VisibilitySession }

// Admits reports whether the access rule of f (scope and reader, not the
// caller's narrowing fields) lets its reader read m. It is the reference
// the store queries implement, used by tests and by code that must check
// one record it already holds.
func (f Filter) Admits(m Memory) bool {
	return f.Scope.Reaches(m.Scope, f.Reader.Subscopes) && f.Reader.MayRead(m.UserID, m.Visibility)
}

// Validate reports a filter that must not reach a store: no tenant, no
// reader (a read names the user it is for: Reader.UserID, or AllUsers for
// the engine's maintenance and principals allowed every user's memories),
// or malformed values.
func (f Filter) Validate() error {
	if err := f.Scope.Validate(); err != nil {
		return err
	}
	if err := f.validateLists(); err != nil {
		return err
	}

	for _, s := range f.Statuses {
		if !s.valid() {
			return invalid("statuses", "unknown status %q", s)
		}
	}
	for _, v := range f.Visibility {
		if !v.valid() {
			return invalid("visibility", "unknown visibility %q", v)
		}
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		return invalid("created_before", "must be after created_after")
	}
	if f.Reader.UserID == "" && !f.Reader.AllUsers {
		return invalid("reader", "a read must name the user it is for")
	}
	return nil
}

// EffectiveStatuses returns the statuses the filter admits (active when none
// are listed).
func (f Filter) EffectiveStatuses() []Status {
	if len(f.Statuses) == 0 {
		return []Status{StatusActive}
	}
	return f.Statuses
}

// Namespace is where canonical keys are unique among active memories: the
// exact scope, the user, and the memory type.
type Namespace struct {
	Scope  Scope
	UserID string
	Type   string
}

// Page asks for one page of a listing. Cursor is the NextCursor of the
// previous page, opaque to callers; Limit defaults to 50 and is capped at
// 1000.
type Page struct {
	Limit  int
	Cursor string
}

// Listing is one page of memories, newest first, and the cursor of the next
// page ("" when this is the last).
type Listing struct {
	Memories   []Memory `json:"memories"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// Candidate is a memory found through the entities it MENTIONS.
type Candidate struct {
	Memory Memory `json:"memory"`
	// Matched lists the norm names of the query entities it mentions.
	Matched []string `json:"matched"`
}

// Neighbour is a memory that shares at least one entity with a seed memory.
type Neighbour struct {
	SeedID string   `json:"seed_id"`
	Memory Memory   `json:"memory"`
	Shared []string `json:"shared"` // norm names of the shared entities, sorted
	// Weight is the specificity of what is shared: the sum of EntityWeight
	// over the shared entities.
	Weight float64 `json:"weight"`
}

// NeighbourFanout is how many memories each entity of a seed contributes to
// the seed's neighbours at most: the newest ones that pass the filter. It
// bounds Neighbours' cost by seeds x entities x NeighbourFanout rows however
// many memories mention an entity (a person named in every conversation
// turn, say).
const NeighbourFanout = 16

// EntityWeight is what sharing an entity mentioned by mentions memories
// says about two memories: 1/ln(1 + mentions), so an entity two memories
// mention weighs 0.91 and one a thousand mention 0.14. mentions counts every
// memory of the tenant that mentions the entity, whatever its status or
// scope (at least 1).
func EntityWeight(mentions int64) float64 {
	return 1 / math.Log(1+float64(max(mentions, 1)))
}

// SharedEntity is one entity a neighbour shares with its seed.
type SharedEntity struct {
	Name     string // norm name
	Mentions int64  // memories of the tenant mentioning it
}

// RankNeighbours weighs one seed's neighbours by what they share with it
// (shared, parallel to ns; sorted and deduplicated in place) and returns the perSeed best, in
// a new slice with Shared and Weight filled: highest Weight first, then
// newest (created_at, then id, descending). Backends share it so that
// equal inputs rank equally everywhere; ns and shared are theirs to reuse.
func RankNeighbours(ns []Neighbour, shared [][]SharedEntity, perSeed int) []Neighbour {
	for i := range ns {
		es := shared[i]
		slices.SortFunc(es, func(a, b SharedEntity) int { return strings.Compare(a.Name, b.Name) })
		shared[i] = slices.CompactFunc(es, func(a, b SharedEntity) bool { return a.Name == b.Name })
		ns[i].Weight = 0
		for _, e := range shared[i] {
			ns[i].Weight += EntityWeight(e.Mentions)
		}
	}
	// Sort positions, not the (large) Neighbour values; the order is total
	// (ids are unique), so no stable sort is needed.
	order := make([]int, len(ns))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		a, b := &ns[i], &ns[j]
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		if c := b.Memory.CreatedAt.Compare(a.Memory.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.Memory.ID, a.Memory.ID)
	})
	out := make([]Neighbour, min(len(ns), perSeed))
	for k := range out {
		i := order[k]
		out[k] = ns[i]
		out[k].Shared = make([]string, len(shared[i]))
		for j, e := range shared[i] {
			out[k].Shared[j] = e.Name
		}
	}
	return out
}

// Scored is a memory found by keyword search, with its BM25-style score
// (higher is better; comparable within one result list only).
type Scored struct {
	Memory Memory  `json:"memory"`
	Score  float64 `json:"score"`
}

// AuditQuery selects audit events; empty fields match anything.
type AuditQuery struct {
	SubjectID string
	Action    string
	ActorID   string
	From      time.Time // inclusive
	To        time.Time // exclusive
}

// EditQuery selects edits on memories.
type EditQuery struct {
	MemoryIDs []string     // targets; empty means any
	Statuses  []EditStatus // empty means any
}

// GateDecision settles a pending gate request.
type GateDecision struct {
	Status    GateStatus // approved or rejected
	DecidedBy string
	Reason    string
	MemoryID  string // the memory written when approved
	At        time.Time
}

// GateSettlement approves a pending gate request in the transaction of the
// write that carries it out, so a librarian's approval never leaves the
// memory written and the request pending, or the reverse. The store settles
// it exactly as DecideGateRequest would (a request outside Scope is
// ErrNotFound, one no longer pending is ErrConflict), and then writes
// nothing at all. Decision.MemoryID defaults to the memory written; the
// audit event's subject defaults to the request.
type GateSettlement struct {
	RequestID string
	// Scope is the deciding librarian's scope.
	Scope    Scope
	Decision GateDecision
	Audit    AuditEvent
}

func (s Status) valid() bool {
	switch s {
	case StatusActive, StatusSuperseded, StatusArchived, StatusRetracted, StatusErased:
		return true
	}
	return false
}

func (v Visibility) valid() bool {
	switch v {
	case VisibilitySession, VisibilityUser, VisibilityProject, VisibilityPolicy, VisibilityGlobal:
		return true
	}
	return false
}

func (k SourceKind) valid() bool {
	switch k {
	case SourceAuthored, SourceIngestedEvidence, SourceProposed:
		return true
	}
	return false
}

func (k EditKind) valid() bool {
	switch k {
	case EditRetract, EditAmend, EditQuarantine, EditAttenuate, EditBlock:
		return true
	}
	return false
}

func (s EditStatus) valid() bool {
	switch s {
	case EditPending, EditApproved, EditRejected:
		return true
	}
	return false
}

func (s ProposalStatus) valid() bool {
	switch s {
	case ProposalOpen, ProposalAccepted, ProposalRejected, ProposalRebased:
		return true
	}
	return false
}

// MaxFilterValues caps each list of a Filter (types, tags, entity types,
// visibilities, statuses), so that no query outgrows a store's limits
// (SQLite's bound parameters, Neo4j's parameter maps): 32,760 types used to
// fail SQLite with a 500. A memory carries at most MaxTags tags, so a
// longer tag list could match nothing anyway.
const MaxFilterValues = 64

func (f Filter) validateLists() error {
	for _, l := range []struct {
		field  string
		values []string
		max    int
	}{
		{"types", f.Types, MaxIDLen}, {"tags", f.Tags, MaxTagLen}, {"entity_types", f.EntityTypes, MaxNameLen},
	} {
		if len(l.values) > MaxFilterValues {
			return invalid(l.field, "lists %d values, more than %d", len(l.values), MaxFilterValues)
		}
		for _, v := range l.values {
			if len(v) > l.max {
				return invalid(l.field, "has a value longer than %d bytes", l.max)
			}
		}
	}
	if len(f.Visibility) > MaxFilterValues {
		return invalid("visibility", "lists %d values, more than %d", len(f.Visibility), MaxFilterValues)
	}
	if len(f.Statuses) > MaxFilterValues {
		return invalid("statuses", "lists %d values, more than %d", len(f.Statuses), MaxFilterValues)
	}
	return nil
}
