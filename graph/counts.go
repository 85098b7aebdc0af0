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

// IndexHolder is an optional Store capability: a store that keeps indexes
// of its graph in the process's memory, bounded across tenants
// (graph/neo4j's keyword and mention indexes), says what they hold, for
// operators' metrics. Totals only, never tenants.
type IndexHolder interface {
	IndexHeld() IndexHeld
}

// IndexHeld is what a store's in-process indexes hold now.
type IndexHeld struct {
	// Memories and Tenants are held now; Limit is the bound on Units
	// (0: none): the memories, a tenant counting for more when its
	// memories hold more terms than a note does (Neo4j's termsPerMemory).
	Memories, Units, Tenants, Limit int
	// Dropped counts the tenants dropped to keep within Limit since the
	// process started.
	Dropped int64
}
