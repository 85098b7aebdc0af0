package sqlite

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

const (
	// Memories by status across tenants, as the triggers of migration 17
	// keep them: a few rows, whatever the number of memories.
	countMemories = `SELECT status, n FROM memory_counts WHERE n > 0`
	// Pending gate requests across tenants.
	countGatePending = `SELECT count(*) FROM gate_requests WHERE status = 'pending'`
)

// Counts implements graph.Counter.
func (s *Store) Counts(ctx context.Context) (graph.Counts, error) {
	c := graph.Counts{Memories: map[graph.Status]int{}}
	rows, err := s.r.QueryContext(ctx, countMemories)
	if err != nil {
		return c, fmt.Errorf("count memories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			status string
			n      int
		)
		if err := rows.Scan(&status, &n); err != nil {
			return c, fmt.Errorf("count memories: %w", err)
		}
		c.Memories[graph.Status(status)] = n
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("count memories: %w", err)
	}
	if err := s.r.QueryRowContext(ctx, countGatePending).Scan(&c.GatePending); err != nil {
		return c, fmt.Errorf("count gate requests: %w", err)
	}
	return c, nil
}

var _ graph.Counter = (*Store)(nil)
