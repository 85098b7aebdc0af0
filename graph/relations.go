package graph

import (
	"context"
	"time"
)

// RelationType is the kind of an explicit relation between two memories: a
// closed set, so that both stores hold the same relationship types and an
// analyst in Neo4j Browser reads them as they are.
type RelationType string

// The relation types. A relation is directed (From -> To) and reads as
// "From <type> To": A DEPENDS_ON B, A DERIVED_FROM B, A CONTRADICTS B,
// A RELATES_TO B.
const (
	RelatesTo   RelationType = "RELATES_TO"
	DependsOn   RelationType = "DEPENDS_ON"
	Contradicts RelationType = "CONTRADICTS"
	DerivedFrom RelationType = "DERIVED_FROM"
)

// RelationTypes lists every relation type, in the order the docs give them.
var RelationTypes = []RelationType{RelatesTo, DependsOn, Contradicts, DerivedFrom}

func (t RelationType) valid() bool {
	switch t {
	case RelatesTo, DependsOn, Contradicts, DerivedFrom:
		return true
	}
	return false
}

// Relation is an explicit, typed, directed edge between two memories of one
// tenant, created by a principal (docs/curation.md, "Relations"). On Neo4j
// it is a relationship of its type between the two Memory nodes, with the
// other fields as properties; on SQLite a row of the relations table.
//
// Scope is the scope the relation was created in (the creator's). A reader
// sees a relation when it sees that scope (the scope rule of curation
// records) and reads both memories under its filter: an archived,
// retracted, erased or unreadable end hides the relation.
type Relation struct {
	ID        string       `json:"id"`
	Scope     Scope        `json:"scope"`
	FromID    string       `json:"from"`
	ToID      string       `json:"to"`
	Type      RelationType `json:"type"`
	Reason    string       `json:"reason,omitempty"`
	CreatedBy string       `json:"created_by"`
	CreatedAt time.Time    `json:"created_at"`
}

// Validate reports a relation no store may write: an unknown type, a
// missing end, a memory related to itself, a bad id or an oversized reason.
func (r Relation) Validate() error {
	if err := r.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{
		"id": {r.ID, true}, "from": {r.FromID, false}, "to": {r.ToID, false}, "created_by": {r.CreatedBy, false},
	}); err != nil {
		return err
	}
	if !r.Type.valid() {
		return invalid("type", "unknown relation type %q (want RELATES_TO|DEPENDS_ON|CONTRADICTS|DERIVED_FROM)", r.Type)
	}
	if r.FromID == r.ToID {
		return invalid("to", "a memory cannot be related to itself")
	}
	return checkText("reason", r.Reason, MaxTitleLen)
}

// MaxRelationSeeds bounds the memories one RelationsOf call asks about.
const MaxRelationSeeds = 256

// Relations is the capability of a Store that keeps explicit relations
// between memories. Both stores implement it; the engine obtains it from
// its store by a type assertion. Reads follow the visibility rule on
// Relation; writes take the writer's scope, which must contain the
// relation's memories (Scope.Contains) and, for a delete, the relation's
// scope. Audit events given to a write are written in its transaction.
type Relations interface {
	// CreateRelation writes r (its ID and CreatedAt filled when empty),
	// both memories in r.Scope's reach and of its tenant, unless a relation
	// of the same type from the same memory to the same memory already
	// exists in the same scope: then it writes nothing (not the audit
	// events either) and returns that one with created false. A missing
	// or out-of-reach memory is ErrNotFound.
	CreateRelation(ctx context.Context, r Relation, audit ...AuditEvent) (rel Relation, created bool, err error)
	// GetRelation reads relation id when f sees it: f sees its scope and
	// reads both memories by the direct-fetch rule of GetMemory (archived
	// ends included unless f lists Statuses). Otherwise ErrNotFound.
	GetRelation(ctx context.Context, f Filter, id string) (Relation, error)
	// DeleteRelation deletes relation id when s contains its scope and
	// both its memories, and returns it; otherwise ErrNotFound.
	DeleteRelation(ctx context.Context, s Scope, id string, audit ...AuditEvent) (Relation, error)
	// RelationsOf returns, for each memory of ids that f admits, at most
	// perMemory of the relations f sees from or to it, newest first
	// (then by id): those whose other end f admits too (the list rule:
	// active unless f lists Statuses). At most MaxRelationSeeds ids.
	RelationsOf(ctx context.Context, f Filter, ids []string, perMemory int) ([]Relation, error)
}

// Other returns the end of r that is not id (r.ToID when id is neither).
func (r Relation) Other(id string) string {
	if r.ToID == id {
		return r.FromID
	}
	return r.ToID
}
