package mcp

import (
	"context"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// CapsuleCreateInput is the capsule_create tool's input, as POST
// /v1/capsules takes it.
type CapsuleCreateInput struct {
	Subject     string   `json:"subject" jsonschema:"what the capsule is about (required)"`
	Audience    []string `json:"audience" jsonschema:"the agents (principal ids) it is for (required)"`
	MemoryIDs   []string `json:"memory_ids,omitempty" jsonschema:"memories it holds, each one you can read"`
	VersionIDs  []string `json:"version_ids,omitempty" jsonschema:"versions it holds, each of a memory you can read"`
	DecisionIDs []string `json:"decision_ids,omitempty" jsonschema:"curation decisions it holds"`
	TTLSeconds  int64    `json:"ttl_seconds,omitempty" jsonschema:"how long it lives in seconds: 7 days when 0, at most 30 days"`
}

func (s *Server) capsuleCreate(ctx context.Context, p graph.Principal, in CapsuleCreateInput) (graph.Capsule, error) {
	return s.engine.CreateCapsule(ctx, p, engine.CapsuleRequest{Subject: in.Subject, Audience: in.Audience,
		MemoryIDs: in.MemoryIDs, VersionIDs: in.VersionIDs, DecisionIDs: in.DecisionIDs, TTLSeconds: in.TTLSeconds})
}

// CapsuleListInput is the capsule_list tool's input, as GET /v1/capsules
// takes it.
type CapsuleListInput struct {
	Sent   bool   `json:"sent,omitempty" jsonschema:"list the capsules you created instead of those addressed to you"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1 to 50 (20 when 0)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// CapsuleListOutput is one page of live capsules, newest first, with their
// items.
type CapsuleListOutput struct {
	Capsules   []engine.CapsuleView `json:"capsules"`
	NextCursor string               `json:"next_cursor"`
}

func (s *Server) capsuleList(ctx context.Context, p graph.Principal, in CapsuleListInput) (CapsuleListOutput, error) {
	cs, next, err := s.engine.ListCapsules(ctx, p, engine.CapsuleListRequest{Sent: in.Sent, Limit: in.Limit, Cursor: in.Cursor})
	if cs == nil {
		cs = []engine.CapsuleView{}
	}
	return CapsuleListOutput{Capsules: cs, NextCursor: next}, err
}
