package mcp

import (
	"context"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// ProposeInput is the propose tool's input, as POST /v1/proposals takes it.
type ProposeInput struct {
	MemoryID      string `json:"memory_id" jsonschema:"the memory the change is for (required)"`
	VersionID     string `json:"version_id,omitempty" jsonschema:"the version the proposal was written against (the version_id read_context returned); or version_number"`
	VersionNumber int    `json:"version_number,omitempty" jsonschema:"the number of that version, instead of version_id"`
	Title         string `json:"title,omitempty" jsonschema:"a title; the memory's when empty"`
	Content       string `json:"content" jsonschema:"the proposed text of the memory (required)"`
}

// ProposalOutput is a proposal as written.
type ProposalOutput struct {
	Proposal graph.Proposal `json:"proposal"`
}

func (s *Server) propose(ctx context.Context, p graph.Principal, in ProposeInput) (ProposalOutput, error) {
	pr, err := s.engine.Propose(ctx, p, engine.ProposalRequest(in))
	return ProposalOutput{Proposal: pr}, err
}

func (s *Server) proposalAccept(ctx context.Context, p graph.Principal, in DecisionInput) (engine.ProposalResult, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.ProposalResult{}, err
	}
	return s.engine.AcceptProposal(ctx, p, in.ID, in.Reason)
}

func (s *Server) proposalReject(ctx context.Context, p graph.Principal, in DecisionInput) (engine.ProposalResult, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.ProposalResult{}, err
	}
	return s.engine.RejectProposal(ctx, p, in.ID, in.Reason)
}
