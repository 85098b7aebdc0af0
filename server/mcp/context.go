package mcp

import (
	"context"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// ReadContextInput is the read_context tool's input, as POST /v1/context
// takes it (the selector as an object).
type ReadContextInput struct {
	Query     string                  `json:"query,omitempty" jsonschema:"what the context is for; query or element_id is required"`
	ElementID string                  `json:"element_id,omitempty" jsonschema:"one memory id to read instead of a query"`
	Scope     *graph.Scope            `json:"scope,omitempty"`
	Selector  *engine.ContextSelector `json:"selector,omitempty" jsonschema:"which versions: kind published (default) or baseline with baseline_id"`
	Limits    *engine.ContextLimits   `json:"limits,omitempty" jsonschema:"max_items and token_budget"`
	AsOf      string                  `json:"as_of,omitempty" jsonschema:"valid time: read memories valid at this instant, RFC 3339 or YYYY-MM-DD (default now)"`
	KnownAt   string                  `json:"known_at,omitempty" jsonschema:"transaction time: read what mnemo knew at this instant, RFC 3339 or YYYY-MM-DD (default now)"`
}

func (s *Server) readContext(ctx context.Context, p graph.Principal, in ReadContextInput) (engine.ContextResponse, error) {
	tt, err := timeTravel(in.AsOf, in.KnownAt)
	if err != nil {
		return engine.ContextResponse{}, err
	}
	r := engine.ContextRequest{Scope: in.Scope, Query: in.Query, ElementID: in.ElementID, TimeTravel: tt}
	if in.Selector != nil {
		r.Selector = *in.Selector
	}
	if in.Limits != nil {
		r.Limits = *in.Limits
	}
	return s.engine.ReadContext(ctx, p, r)
}

// VerifyInput is the verify_citations tool's input, as POST
// /v1/citations/verify takes it.
type VerifyInput struct {
	ContextID string           `json:"context_id" jsonschema:"the context_id read_context answered (required)"`
	Citations []graph.Citation `json:"citations" jsonschema:"the citations an answer used"`
	Scope     *graph.Scope     `json:"scope,omitempty"`
}

func (s *Server) verifyCitations(ctx context.Context, p graph.Principal, in VerifyInput) (engine.VerifyResponse, error) {
	return s.engine.VerifyCitations(ctx, p, engine.VerifyRequest{Scope: in.Scope, ContextID: in.ContextID, Citations: in.Citations})
}
