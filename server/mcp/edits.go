package mcp

import (
	"context"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// EditProposeInput is the edit_propose tool's input, as POST
// /v1/memories/{id}/edits takes it with the memory's id beside it.
type EditProposeInput struct {
	MemoryID   string   `json:"memory_id" jsonschema:"the memory to edit (required)"`
	Kind       string   `json:"kind" jsonschema:"retract, amend, quarantine, attenuate or block (required)"`
	Reason     string   `json:"reason" jsonschema:"why (required); recorded in the audit trail"`
	VersionID  string   `json:"version_id,omitempty" jsonschema:"the version the edit is about; the current one when empty"`
	Content    string   `json:"content,omitempty" jsonschema:"amend: the replacement text"`
	Importance *float64 `json:"importance,omitempty" jsonschema:"amend or attenuate: the new importance, 0 to 1"`
	Delta      *float64 `json:"delta,omitempty" jsonschema:"attenuate: lower the importance by this much instead (negative)"`
	Channel    string   `json:"channel,omitempty" jsonschema:"block: the channel the memory is hidden on"`
}

func (s *Server) editPropose(ctx context.Context, p graph.Principal, in EditProposeInput) (engine.EditResult, error) {
	if err := graph.CheckID("id", in.MemoryID); err != nil {
		return engine.EditResult{}, err
	}
	return s.engine.ProposeEdit(ctx, p, in.MemoryID, engine.EditRequest{
		Kind: graph.EditKind(in.Kind), VersionID: in.VersionID, Content: in.Content, Importance: in.Importance,
		Delta: in.Delta, Channel: in.Channel, Reason: in.Reason,
	})
}

// EditListInput is the edit_list tool's input.
type EditListInput struct {
	MemoryID string `json:"memory_id" jsonschema:"the memory whose edits to list (required)"`
	Status   string `json:"status,omitempty" jsonschema:"pending, approved or rejected; any when empty"`
}

// EditListOutput is the edits of one memory, oldest first.
type EditListOutput struct {
	Edits []graph.Edit `json:"edits"`
}

func (s *Server) editList(ctx context.Context, p graph.Principal, in EditListInput) (EditListOutput, error) {
	if err := graph.CheckID("id", in.MemoryID); err != nil {
		return EditListOutput{}, err
	}
	eds, err := s.engine.ListMemoryEdits(ctx, p, in.MemoryID, graph.EditStatus(in.Status))
	if eds == nil {
		eds = []graph.Edit{}
	}
	return EditListOutput{Edits: eds}, err
}

func (s *Server) editApprove(ctx context.Context, p graph.Principal, in DecisionInput) (engine.EditResult, error) {
	return s.decideEdit(ctx, p, in, true)
}

func (s *Server) editReject(ctx context.Context, p graph.Principal, in DecisionInput) (engine.EditResult, error) {
	return s.decideEdit(ctx, p, in, false)
}

func (s *Server) decideEdit(ctx context.Context, p graph.Principal, in DecisionInput, approve bool) (engine.EditResult, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.EditResult{}, err
	}
	return s.engine.DecideEdit(ctx, p, in.ID, approve, in.Reason)
}

// AuditInput is the audit tool's input, as GET /v1/audit takes it.
type AuditInput struct {
	MemoryID string `json:"memory_id,omitempty" jsonschema:"one memory's trail"`
	Actor    string `json:"actor,omitempty" jsonschema:"events by this principal"`
	Action   string `json:"action,omitempty" jsonschema:"events of this action"`
	From     string `json:"from,omitempty" jsonschema:"RFC 3339 or YYYY-MM-DD"`
	To       string `json:"to,omitempty" jsonschema:"RFC 3339 or YYYY-MM-DD"`
	Limit    int    `json:"limit,omitempty" jsonschema:"page size, 1 to 1000"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// AuditOutput is one page of audit events, oldest first.
type AuditOutput struct {
	Events     []graph.AuditEvent `json:"events"`
	NextCursor string             `json:"next_cursor"`
}

func (s *Server) audit(ctx context.Context, p graph.Principal, in AuditInput) (AuditOutput, error) {
	r := engine.AuditRequest{MemoryID: in.MemoryID, ActorID: in.Actor, Action: in.Action, Cursor: in.Cursor, Limit: in.Limit}
	var err error
	if r.From, err = parseTime(in.From, "from"); err != nil {
		return AuditOutput{}, err
	}
	if r.To, err = parseTime(in.To, "to"); err != nil {
		return AuditOutput{}, err
	}
	if in.Limit < 0 || in.Limit > 1000 {
		return AuditOutput{}, invalid("limit must be a whole number from 1 to 1000")
	}
	evs, next, err := s.engine.ListAudit(ctx, p, r)
	if evs == nil {
		evs = []graph.AuditEvent{}
	}
	return AuditOutput{Events: evs, NextCursor: next}, err
}
