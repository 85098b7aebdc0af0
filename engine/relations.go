package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// Audit actions of relations. A create or delete writes one event per
// memory of the relation (its subject), so each memory's trail tells it.
const (
	AuditRelationCreate = "relation.create"
	AuditRelationDelete = "relation.delete"
)

// Neighbour reasons: why a memory was appended to a result. A related
// memory's reason is its relation's type (graph.RelationTypes).
const NeighbourSharedEntities = "shared_entities"

// Directions of a related neighbour: out when the result is the relation's
// From (result -> neighbour), in when it is its To.
const (
	DirectionOut = "out"
	DirectionIn  = "in"
)

// MaxRelationsListed caps ListRelations.
const MaxRelationsListed = 1000

// RelationRequest relates memory From to memory To: "From <Type> To".
type RelationRequest struct {
	From   string             `json:"from"`
	To     string             `json:"to"`
	Type   graph.RelationType `json:"type"`
	Reason string             `json:"reason,omitempty"`
}

// RelationResult is a relation as Relate found or made it.
type RelationResult struct {
	Relation graph.Relation `json:"relation"`
	// Created is false when the same relation (from, to, type, in the
	// caller's scope) existed: Relate is idempotent.
	Created bool `json:"created"`
}

// Relate creates relation r in p's scope. Both memories must be readable
// by p (a direct fetch: any status but retracted and erased) and writable
// by it (in its scope's reach, under its user or with act_as_user); a
// memory that is not is ErrNotFound, whichever the reason, so ids are not
// probed. A memory related to itself or an unknown type is ErrInvalid. The
// same relation twice is not an error: the first is returned, Created
// false, and nothing is written or audited.
func (e *Engine) Relate(ctx context.Context, p graph.Principal, r RelationRequest) (RelationResult, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, PermWrite); err != nil {
		return RelationResult{}, err
	}
	rs, err := e.relations()
	if err != nil {
		return RelationResult{}, err
	}
	rel := graph.Relation{ID: graph.NewID(), Scope: p.Scope, FromID: r.From, ToID: r.To, Type: r.Type,
		Reason: strings.TrimSpace(r.Reason), CreatedBy: p.ID, CreatedAt: e.now().UTC()}
	if err := rel.Validate(); err != nil {
		return RelationResult{}, err
	}
	for _, id := range []string{r.From, r.To} {
		if err := e.relationEnd(ctx, pol, p, id); err != nil {
			return RelationResult{}, err
		}
	}
	rel, created, err := rs.CreateRelation(ctx, rel, e.relationEvents(rel, AuditRelationCreate, p.ID, "created", rel.Reason)...)
	if err != nil {
		return RelationResult{}, fmt.Errorf("relate %s to %s: %w", r.From, r.To, err)
	}
	return RelationResult{Relation: rel, Created: created}, nil
}

// Unrelate deletes relation id: p must see it (graph.Relation's rule,
// ends read by a direct fetch) and may write both its memories, as for
// Relate; otherwise ErrNotFound. The delete is audited with reason.
func (e *Engine) Unrelate(ctx context.Context, p graph.Principal, id, reason string) (graph.Relation, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, PermWrite); err != nil {
		return graph.Relation{}, err
	}
	rs, err := e.relations()
	if err != nil {
		return graph.Relation{}, err
	}
	if err := graph.CheckID("id", id); err != nil {
		return graph.Relation{}, err
	}
	f, err := readFilter(pol, p, nil, graph.Filter{})
	if err != nil {
		return graph.Relation{}, err
	}
	rel, err := rs.GetRelation(ctx, f, id)
	if err != nil {
		return graph.Relation{}, err
	}
	for _, m := range []string{rel.FromID, rel.ToID} {
		if err := e.relationEnd(ctx, pol, p, m); err != nil {
			return graph.Relation{}, fmt.Errorf("relation %s: %w", id, graph.ErrNotFound)
		}
	}
	reason = truncate(strings.TrimSpace(reason), graph.MaxTitleLen)
	if reason == "" {
		reason = "deleted by " + p.ID
	}
	rel, err = rs.DeleteRelation(ctx, p.Scope, id, e.relationEvents(rel, AuditRelationDelete, p.ID, "deleted", reason)...)
	if err != nil {
		return graph.Relation{}, fmt.Errorf("unrelate %s: %w", id, err)
	}
	return rel, nil
}

// ListRelations lists the relations of memory id that p sees, newest
// first, at most limit (100 when 0, at most MaxRelationsListed): those
// whose other memory p reads (active, superseded or archived). The memory
// must be readable by p.
func (e *Engine) ListRelations(ctx context.Context, p graph.Principal, id string, limit int) ([]graph.Relation, error) {
	pol := e.policy.Current()
	rs, err := e.relations()
	if err != nil {
		return nil, err
	}
	if err := graph.CheckID("id", id); err != nil {
		return nil, err
	}
	switch {
	case limit == 0:
		limit = 100
	case limit < 0 || limit > MaxRelationsListed:
		return nil, &graph.FieldError{Field: "limit", Message: fmt.Sprintf("is %d; want 1 to %d", limit, MaxRelationsListed)}
	}
	f, err := readFilter(pol, p, nil, graph.Filter{
		Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}})
	if err != nil {
		return nil, err
	}
	if _, err := e.store.GetMemory(ctx, f, id); err != nil {
		return nil, err
	}
	out, err := rs.RelationsOf(ctx, f, []string{id}, limit)
	if err != nil {
		return nil, fmt.Errorf("relations of %s: %w", id, err)
	}
	return out, nil
}

// relationEnd checks that p reads memory id by a direct fetch and may
// write it (e.target's rule, retracted and erased excluded, and the
// memory's user); anything else is ErrNotFound.
func (e *Engine) relationEnd(ctx context.Context, pol *policy.Policy, p graph.Principal, id string) error {
	f, err := readFilter(pol, p, nil, graph.Filter{})
	if err != nil {
		return err
	}
	m, err := e.store.GetMemory(ctx, f, id)
	if err == nil {
		if _, err = scopeFor(pol, p, &m.Scope); err == nil {
			err = mayWriteAs(pol, p, m.UserID)
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, graph.ErrNotFound), errors.Is(err, graph.ErrForbidden):
		return fmt.Errorf("memory %s: %w", id, graph.ErrNotFound)
	}
	return fmt.Errorf("memory %s: %w", id, err)
}

// relationEvents are the audit events of one step on relation r: one per
// memory, each in p's scope (the relation's), naming the relation.
func (e *Engine) relationEvents(r graph.Relation, action, actor, outcome, reason string) []graph.AuditEvent {
	at := e.now().UTC()
	out := make([]graph.AuditEvent, 0, 2)
	for _, id := range []string{r.FromID, r.ToID} {
		out = append(out, graph.AuditEvent{
			ID: graph.NewID(), Scope: r.Scope, Action: action, SubjectKind: subjectMemory, SubjectID: id, ActorID: actor,
			Outcome: truncate(fmt.Sprintf("%s %s relation %s: %s -> %s", outcome, r.Type, r.ID, r.FromID, r.ToID), graph.MaxTitleLen),
			Reason:  truncate(reason, graph.MaxTitleLen), CreatedAt: at,
		})
	}
	return out
}
