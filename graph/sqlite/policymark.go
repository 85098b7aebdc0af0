package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

const (
	policyMarkCols = `generation, digest, name, marked_by, marked_at`
	getPolicyMark  = `SELECT ` + policyMarkCols + ` FROM policy_mark WHERE id = 1`
	markPolicy     = `INSERT INTO policy_mark (id, ` + policyMarkCols + `) VALUES (1, 1, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET generation = generation + 1, digest = excluded.digest, name = excluded.name,
	marked_by = excluded.marked_by, marked_at = excluded.marked_at
RETURNING ` + policyMarkCols
)

func scanPolicyMark(sc scanner) (graph.PolicyMark, error) {
	var (
		m  graph.PolicyMark
		at int64
	)
	err := sc.Scan(&m.Generation, &m.Digest, &m.Name, &m.MarkedBy, &at)
	m.MarkedAt = fromNanos(at)
	return m, err
}

// PolicyMark implements graph.Store.
func (s *Store) PolicyMark(ctx context.Context) (graph.PolicyMark, error) {
	m, err := scanPolicyMark(s.r.QueryRowContext(ctx, getPolicyMark))
	if errors.Is(err, sql.ErrNoRows) {
		return graph.PolicyMark{}, nil
	}
	if err != nil {
		return graph.PolicyMark{}, fmt.Errorf("policy mark: %w", err)
	}
	return m, nil
}

// MarkPolicy implements graph.Store.
func (s *Store) MarkPolicy(ctx context.Context, digest, name, by string, at time.Time) (graph.PolicyMark, error) {
	var m graph.PolicyMark
	err := s.write(ctx, func(t *tx) error {
		var err error
		m, err = scanPolicyMark(t.queryRow(markPolicy, digest, name, by, nanos(at)))
		return err
	})
	if err != nil {
		return graph.PolicyMark{}, fmt.Errorf("mark policy: %w", err)
	}
	return m, nil
}
