package graph

import "context"

// Proposals is the capability to store curation proposals, the decisions
// that settle them and the baselines published from them. It is optional: a
// store without it still serves memories, and the engine answers the use
// cases that need it with ErrUnsupported (graph/doc.go says how the engine
// finds it). Both shipped stores implement it; graph/storetest.RunProposals
// is its conformance suite.
//
// Reads take a Filter whose scope rule (Scope.Sees, or Scope.Contains with
// Subscopes) is pushed into the query; the records carry no owner. Writes
// are one transaction each and refuse invalid records (ErrInvalid).
type Proposals interface {
	// CreateProposal and GetProposal store and read curation proposals.
	CreateProposal(ctx context.Context, p Proposal) (Proposal, error)
	GetProposal(ctx context.Context, f Filter, id string) (Proposal, error)
	// CreateDecision and GetDecision store and read decision artifacts.
	CreateDecision(ctx context.Context, d Decision) (Decision, error)
	GetDecision(ctx context.Context, f Filter, id string) (Decision, error)
	// CreateBaseline, GetBaseline and LatestBaseline store and read
	// published baselines; LatestBaseline is the newest one visible under f
	// (ErrNotFound when there is none).
	CreateBaseline(ctx context.Context, b Baseline) (Baseline, error)
	GetBaseline(ctx context.Context, f Filter, id string) (Baseline, error)
	LatestBaseline(ctx context.Context, f Filter) (Baseline, error)
}
