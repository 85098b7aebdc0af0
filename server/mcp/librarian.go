package mcp

import (
	"context"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// LibrarianListInput is the librarian_list tool's input, as GET
// /v1/librarian/requests takes it.
type LibrarianListInput struct {
	Status string `json:"status,omitempty" jsonschema:"pending (default), approved or rejected"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1 to 1000"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// LibrarianListOutput is one page of queued writes.
type LibrarianListOutput struct {
	Requests   []graph.GateRequest `json:"requests"`
	NextCursor string              `json:"next_cursor"`
}

func (s *Server) librarianList(ctx context.Context, p graph.Principal, in LibrarianListInput) (LibrarianListOutput, error) {
	if in.Limit < 0 || in.Limit > 1000 {
		return LibrarianListOutput{}, invalid("limit must be a whole number from 1 to 1000")
	}
	reqs, next, err := s.engine.ListGateRequests(ctx, p, graph.GateStatus(in.Status), graph.Page{Limit: in.Limit, Cursor: in.Cursor})
	if reqs == nil {
		reqs = []graph.GateRequest{}
	}
	return LibrarianListOutput{Requests: reqs, NextCursor: next}, err
}

func (s *Server) librarianGet(ctx context.Context, p graph.Principal, in IDInput) (engine.GateRequestView, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.GateRequestView{}, err
	}
	return s.engine.GetGateRequest(ctx, p, in.ID)
}

// DecisionInput names a queued write (or an edit) and says why.
type DecisionInput struct {
	ID     string `json:"id" jsonschema:"the gate request's, edit's or proposal's id (required)"`
	Reason string `json:"reason,omitempty" jsonschema:"note (approve) or reason (reject), recorded in the audit event"`
}

func (s *Server) librarianApprove(ctx context.Context, p graph.Principal, in DecisionInput) (engine.Decision, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.Decision{}, err
	}
	return s.engine.ApproveGateRequest(ctx, p, in.ID, in.Reason)
}

func (s *Server) librarianReject(ctx context.Context, p graph.Principal, in DecisionInput) (engine.Decision, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.Decision{}, err
	}
	return s.engine.RejectGateRequest(ctx, p, in.ID, in.Reason)
}
