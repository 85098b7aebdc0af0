package neo4j

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

const (
	// Memories by status across tenants: a label scan (the count store
	// answers the total, not the grouping).
	countMemoriesCypher = `MATCH (m:Memory) RETURN m.status AS status, count(*) AS n`
	// Pending gate requests across tenants.
	countGatePendingCypher = `MATCH (g:GateRequest {status: 'pending'}) RETURN count(g) AS n`
)

// Counts implements graph.Counter.
func (s *Store) Counts(ctx context.Context) (graph.Counts, error) {
	c, err := read(ctx, s, func(tx txn) (graph.Counts, error) {
		c := graph.Counts{Memories: map[graph.Status]int{}}
		recs, err := collect(ctx, tx, countMemoriesCypher, nil)
		if err != nil {
			return c, err
		}
		for _, r := range recs {
			p := r.AsMap()
			c.Memories[graph.Status(str(p, "status"))] = int(i64(p, "n"))
		}
		recs, err = collect(ctx, tx, countGatePendingCypher, nil)
		if err != nil || len(recs) == 0 {
			return c, err
		}
		c.GatePending = int(i64(recs[0].AsMap(), "n"))
		return c, nil
	})
	if err != nil {
		return c, fmt.Errorf("neo4j: counts: %w", err)
	}
	return c, nil
}

var _ graph.Counter = (*Store)(nil)
var _ graph.IndexHolder = (*Store)(nil)
