package graph

import "context"

// Counter is an optional Store capability: deployment-wide counts across
// every tenant, for operators' metrics (`/metrics` on `mnemo serve`). It is
// not a read on behalf of a principal, so it takes no Filter and returns
// only totals, never ids or tenants. Callers check for it with a type
// assertion. graph/sqlite and graph/neo4j implement it.
type Counter interface {
	Counts(ctx context.Context) (Counts, error)
}

// Counts are totals across every tenant.
type Counts struct {
	// Memories counts memories by status.
	Memories map[Status]int
	// GatePending counts the gate requests awaiting a librarian.
	GatePending int
}
