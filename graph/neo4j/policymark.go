package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// The policy mark is one PolicyMark node (id "policy"; constraint
// policy_mark_id makes the MERGE safe under concurrent reloads).
const (
	getPolicyMarkCypher = `MATCH (m:PolicyMark {id: 'policy'}) RETURN m {.*} AS m`
	markPolicyCypher    = `
MERGE (m:PolicyMark {id: 'policy'})
ON CREATE SET m.generation = 0
SET m.generation = m.generation + 1, m.digest = $digest, m.name = $name, m.marked_by = $by, m.marked_at = $at
RETURN m {.*} AS m`
)

func toPolicyMark(p map[string]any) graph.PolicyMark {
	if p == nil {
		return graph.PolicyMark{}
	}
	return graph.PolicyMark{Generation: i64(p, "generation"), Digest: str(p, "digest"), Name: str(p, "name"),
		MarkedBy: str(p, "marked_by"), MarkedAt: tm(p, "marked_at")}
}

// PolicyMark implements graph.Store.
func (s *Store) PolicyMark(ctx context.Context) (graph.PolicyMark, error) {
	m, err := read(ctx, s, func(tx txn) (graph.PolicyMark, error) {
		recs, err := collect(ctx, tx, getPolicyMarkCypher, nil)
		if err != nil || len(recs) == 0 {
			return graph.PolicyMark{}, err
		}
		return toPolicyMark(nodeOf(recs[0], "m")), nil
	})
	if err != nil {
		return graph.PolicyMark{}, fmt.Errorf("neo4j: policy mark: %w", err)
	}
	return m, nil
}

// MarkPolicy implements graph.Store.
func (s *Store) MarkPolicy(ctx context.Context, digest, name, by string, at time.Time) (graph.PolicyMark, error) {
	m, err := write(ctx, s, func(tx txn) (graph.PolicyMark, error) {
		recs, err := collect(ctx, tx, markPolicyCypher, map[string]any{"digest": digest, "name": name, "by": by, "at": at.UTC()})
		if err != nil || len(recs) == 0 {
			return graph.PolicyMark{}, err
		}
		return toPolicyMark(nodeOf(recs[0], "m")), nil
	})
	if err != nil {
		return graph.PolicyMark{}, fmt.Errorf("neo4j: mark policy: %w", err)
	}
	return m, nil
}
