package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

const outboxCols = `id, tenant_id, org_id, repo_id, memory_id, version_id, op, attempts, next_attempt_at, last_error,
	dead, created_at`

func scanOutbox(sc scanner) (graph.OutboxItem, error) {
	var (
		it       graph.OutboxItem
		next, at int64
		dead     int
	)
	err := sc.Scan(&it.ID, &it.Scope.TenantID, &it.Scope.OrgID, &it.Scope.RepoID, &it.MemoryID, &it.VersionID,
		&it.Op, &it.Attempts, &next, &it.LastError, &dead, &at)
	it.NextAttemptAt, it.Dead, it.CreatedAt = fromNanos(next), dead != 0, fromNanos(at)
	return it, err
}

// Live items due at ?, earliest due first, then oldest. Relies on outbox_due.
const dueOutbox = `SELECT ` + outboxCols + ` FROM outbox
WHERE dead = 0 AND next_attempt_at <= ? ORDER BY next_attempt_at, rid LIMIT ?`

// claimOutbox moves the next attempt of the items in the JSON list ?2 to ?1.
const claimOutbox = `UPDATE outbox SET next_attempt_at = ? WHERE id IN (SELECT value FROM json_each(?))`

// DueOutbox implements graph.Store. A claim reads and moves the items in
// one write transaction, and write transactions take turns (BEGIN
// IMMEDIATE), so two claims never share an item.
func (s *Store) DueOutbox(ctx context.Context, at time.Time, lease time.Duration, limit int) ([]graph.OutboxItem, error) {
	if limit <= 0 {
		return nil, nil
	}
	if lease <= 0 {
		out, err := s.queryOutbox(ctx, dueOutbox, nanos(at), limit)
		if err != nil {
			return nil, fmt.Errorf("due outbox: %w", err)
		}
		return out, nil
	}
	var out []graph.OutboxItem
	err := s.writeAs(ctx, writeLog, func(t *tx) error {
		rows, err := t.QueryContext(t.ctx, dueOutbox, nanos(at), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			it, err := scanOutbox(rows)
			if err != nil {
				return err
			}
			out, ids = append(out, it), append(ids, it.ID)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		_, err = t.exec(claimOutbox, nanos(at.Add(lease)), jsonList(ids))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", err)
	}
	return out, nil
}

func (s *Store) queryOutbox(ctx context.Context, query string, args ...any) ([]graph.OutboxItem, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []graph.OutboxItem
	for rows.Next() {
		it, err := scanOutbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

const (
	ackOutbox  = `DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?))`
	failOutbox = `UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, dead = ? WHERE id = ?`
	// Dead letters back to live (those named, or all when the list is
	// empty). Relies on outbox_due.
	requeueOutbox = `UPDATE outbox SET dead = 0, attempts = 0, next_attempt_at = ?
WHERE dead = 1 AND (json_array_length(?) = 0 OR id IN (SELECT value FROM json_each(?)))`
)

// AckOutbox implements graph.Store.
func (s *Store) AckOutbox(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.writeAs(ctx, writeLog, func(t *tx) error {
		_, err := t.exec(ackOutbox, jsonList(ids))
		return err
	})
	if err != nil {
		return fmt.Errorf("ack outbox: %w", err)
	}
	return nil
}

// FailOutbox implements graph.Store.
func (s *Store) FailOutbox(ctx context.Context, fails []graph.OutboxFailure) error {
	if len(fails) == 0 {
		return nil
	}
	err := s.writeAs(ctx, writeLog, func(t *tx) error {
		for _, f := range fails {
			dead := 0
			if f.Dead {
				dead = 1
			}
			if _, err := t.exec(failOutbox, f.Error, nanos(f.RetryAt), dead, f.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("fail outbox: %w", err)
	}
	return nil
}

// RequeueOutbox implements graph.Store.
func (s *Store) RequeueOutbox(ctx context.Context, at time.Time, ids []string) (int, error) {
	var n int64
	err := s.writeAs(ctx, writeLog, func(t *tx) error {
		list := jsonList(ids)
		res, err := t.exec(requeueOutbox, nanos(at), list, list)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("requeue outbox: %w", err)
	}
	return int(n), nil
}

const (
	// Counts of live, due and dead items. A scan of outbox_due.
	outboxCounts = `SELECT COALESCE(SUM(dead = 0), 0), COALESCE(SUM(dead = 0 AND next_attempt_at <= ?), 0),
	COALESCE(SUM(dead = 1), 0), COALESCE(MIN(CASE WHEN dead = 0 THEN created_at END), 0) FROM outbox`
	// The oldest dead letters. Relies on outbox_due.
	deadOutbox = `SELECT ` + outboxCols + ` FROM outbox WHERE dead = 1 ORDER BY rid LIMIT ?`
)

// OutboxStatus implements graph.Store.
func (s *Store) OutboxStatus(ctx context.Context, at time.Time, deadLimit int) (graph.OutboxStatus, error) {
	var (
		st     graph.OutboxStatus
		oldest int64
	)
	if err := s.r.QueryRowContext(ctx, outboxCounts, nanos(at)).Scan(&st.Pending, &st.Due, &st.Dead, &oldest); err != nil {
		return st, fmt.Errorf("outbox status: %w", err)
	}
	if oldest != 0 {
		st.Oldest = fromNanos(oldest)
	}
	if deadLimit > 0 && st.Dead > 0 {
		dead, err := s.queryOutbox(ctx, deadOutbox, deadLimit)
		if err != nil {
			return st, fmt.Errorf("outbox status: %w", err)
		}
		st.DeadLetters = dead
	}
	return st, nil
}
