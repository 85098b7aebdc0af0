package mcp

import (
	"context"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// RelateInput is the relate tool's input, as POST /v1/relations takes it.
type RelateInput struct {
	From   string `json:"from" jsonschema:"the memory the relation starts from (required)"`
	To     string `json:"to" jsonschema:"the memory it points to (required); from and to differ"`
	Type   string `json:"type" jsonschema:"RELATES_TO, DEPENDS_ON, CONTRADICTS or DERIVED_FROM (required): from <type> to"`
	Reason string `json:"reason,omitempty" jsonschema:"why; recorded with the relation and in the audit trail"`
}

func (s *Server) relate(ctx context.Context, p graph.Principal, in RelateInput) (engine.RelationResult, error) {
	return s.engine.Relate(ctx, p, engine.RelationRequest{From: in.From, To: in.To, Type: graph.RelationType(in.Type), Reason: in.Reason})
}

// UnrelateInput is the unrelate tool's input, as DELETE /v1/relations/{id}
// takes it.
type UnrelateInput struct {
	ID     string `json:"id" jsonschema:"the relation to delete (required)"`
	Reason string `json:"reason,omitempty" jsonschema:"why; recorded in the audit trail"`
}

// UnrelateOutput is the deleted relation.
type UnrelateOutput struct {
	Relation graph.Relation `json:"relation"`
}

func (s *Server) unrelate(ctx context.Context, p graph.Principal, in UnrelateInput) (UnrelateOutput, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return UnrelateOutput{}, err
	}
	r, err := s.engine.Unrelate(ctx, p, in.ID, in.Reason)
	return UnrelateOutput{Relation: r}, err
}

// RelationsInput is the relations tool's input, as GET
// /v1/memories/{id}/relations takes it.
type RelationsInput struct {
	MemoryID string `json:"memory_id" jsonschema:"the memory whose relations to list (required)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many, 1 to 1000 (100 when 0)"`
}

// RelationsOutput is a memory's relations, newest first.
type RelationsOutput struct {
	Relations []graph.Relation `json:"relations"`
}

func (s *Server) relations(ctx context.Context, p graph.Principal, in RelationsInput) (RelationsOutput, error) {
	rels, err := s.engine.ListRelations(ctx, p, in.MemoryID, in.Limit)
	if rels == nil {
		rels = []graph.Relation{}
	}
	return RelationsOutput{Relations: rels}, err
}
