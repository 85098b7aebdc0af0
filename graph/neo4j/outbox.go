package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// neverTried is the next_attempt_at of an item never tried: the epoch,
// due at once in every process's clock (graph.OutboxItem.NextAttemptAt is
// zero).
var neverTried = time.Unix(0, 0).UTC()

// dueOutboxCypher returns the live items due at $at across tenants, items
// never tried first (oldest first), then the earliest due. Uses outbox_due.
const dueOutboxCypher = `
MATCH (o:OutboxItem)
WHERE o.dead = false AND o.next_attempt_at <= $at
RETURN o {.*} AS o
ORDER BY o.next_attempt_at, o.created_at, o.id
LIMIT $limit`

// claimOutboxCypher claims the live items due at $at: it takes each one's
// write lock first (SET o.claiming), then checks again that it is live and
// due, so of two concurrent claims the second, which waited on the lock,
// sees the first one's lease and skips the item. Uses outbox_due.
const claimOutboxCypher = `
MATCH (o:OutboxItem)
WHERE o.dead = false AND o.next_attempt_at <= $at
WITH o ORDER BY o.next_attempt_at, o.created_at, o.id
LIMIT $limit
SET o.claiming = true
WITH o
WHERE o.dead = false AND o.next_attempt_at <= $at
WITH o, o {.*} AS item
SET o.next_attempt_at = $until
REMOVE o.claiming
RETURN item AS o
ORDER BY item.next_attempt_at, item.created_at, item.id`

// DueOutbox returns up to limit live outbox items due at at, and claims
// them when lease > 0 (graph.Store).
func (s *Store) DueOutbox(ctx context.Context, at time.Time, lease time.Duration, limit int) ([]graph.OutboxItem, error) {
	if limit <= 0 {
		return nil, nil
	}
	params := map[string]any{"at": at.UTC(), "limit": int64(limit)}
	if lease <= 0 {
		out, err := s.readOutbox(ctx, dueOutboxCypher, params)
		if err != nil {
			return nil, fmt.Errorf("neo4j: due outbox: %w", err)
		}
		return out, nil
	}
	params["until"] = at.Add(lease).UTC()
	out, err := write(ctx, s, func(tx txn) ([]graph.OutboxItem, error) {
		return outboxItems(ctx, tx, claimOutboxCypher, params)
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: claim outbox: %w", err)
	}
	return out, nil
}

func (s *Store) readOutbox(ctx context.Context, query string, params map[string]any) ([]graph.OutboxItem, error) {
	return read(ctx, s, func(tx txn) ([]graph.OutboxItem, error) {
		return outboxItems(ctx, tx, query, params)
	})
}

func outboxItems(ctx context.Context, tx txn, query string, params map[string]any) ([]graph.OutboxItem, error) {
	recs, err := collect(ctx, tx, query, params)
	if err != nil {
		return nil, err
	}
	out := make([]graph.OutboxItem, 0, len(recs))
	for _, r := range recs {
		out = append(out, toOutboxItem(nodeOf(r, "o")))
	}
	return out, nil
}

func toOutboxItem(p map[string]any) graph.OutboxItem {
	dead, _ := p["dead"].(bool)
	next := tm(p, "next_attempt_at")
	if !next.After(neverTried) {
		next = time.Time{}
	}
	return graph.OutboxItem{
		ID: str(p, "id"), Scope: scopeOf(p), MemoryID: str(p, "memory_id"), VersionID: str(p, "version_id"),
		Op: str(p, "op"), Attempts: int(i64(p, "attempts")), NextAttemptAt: next,
		LastError: str(p, "last_error"), Dead: dead, CreatedAt: tm(p, "created_at"),
	}
}

// ackOutboxCypher removes delivered items. Uses outbox_item_id.
const ackOutboxCypher = `
UNWIND $ids AS id
MATCH (o:OutboxItem {id: id})
DELETE o`

// failOutboxCypher records failed deliveries. Uses outbox_item_id.
const failOutboxCypher = `
UNWIND $fails AS f
MATCH (o:OutboxItem {id: f.id})
SET o.attempts = o.attempts + 1, o.last_error = f.error, o.next_attempt_at = f.retry_at, o.dead = f.dead`

// AckOutbox removes delivered items; unknown ids are ignored.
func (s *Store) AckOutbox(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.writeOutbox(ctx, ackOutboxCypher, map[string]any{"ids": dedupe(ids)}); err != nil {
		return fmt.Errorf("neo4j: ack outbox: %w", err)
	}
	return nil
}

// FailOutbox records failed deliveries; unknown ids are ignored.
func (s *Store) FailOutbox(ctx context.Context, fails []graph.OutboxFailure) error {
	if len(fails) == 0 {
		return nil
	}
	rows := make([]map[string]any, len(fails))
	for i, f := range fails {
		rows[i] = map[string]any{"id": f.ID, "error": f.Error, "retry_at": f.RetryAt.UTC(), "dead": f.Dead}
	}
	if err := s.writeOutbox(ctx, failOutboxCypher, map[string]any{"fails": rows}); err != nil {
		return fmt.Errorf("neo4j: fail outbox: %w", err)
	}
	return nil
}

func (s *Store) writeOutbox(ctx context.Context, query string, params map[string]any) error {
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		_, err := collect(ctx, tx, query, params)
		return struct{}{}, err
	})
	return err
}

// requeueOutboxCypher makes dead letters live again: those in $ids, or all
// when $ids is empty. Uses outbox_due.
const requeueOutboxCypher = `
MATCH (o:OutboxItem)
WHERE o.dead = true AND (size($ids) = 0 OR o.id IN $ids)
SET o.dead = false, o.attempts = 0, o.next_attempt_at = $at
RETURN count(o) AS n`

// RequeueOutbox makes dead letters live again.
func (s *Store) RequeueOutbox(ctx context.Context, at time.Time, ids []string) (int, error) {
	n, err := write(ctx, s, func(tx txn) (int64, error) {
		recs, err := collect(ctx, tx, requeueOutboxCypher, map[string]any{"at": at.UTC(), "ids": nonNil(ids)})
		if err != nil || len(recs) == 0 {
			return 0, err
		}
		n, _ := recs[0].Get("n")
		c, _ := n.(int64)
		return c, nil
	})
	if err != nil {
		return 0, fmt.Errorf("neo4j: requeue outbox: %w", err)
	}
	return int(n), nil
}

// outboxCountsCypher counts live, due and dead items: a scan of the
// outbox, which is small when deliveries keep up.
const outboxCountsCypher = `
MATCH (o:OutboxItem)
RETURN sum(CASE WHEN o.dead THEN 0 ELSE 1 END) AS pending,
       sum(CASE WHEN NOT o.dead AND o.next_attempt_at <= $at THEN 1 ELSE 0 END) AS due,
       sum(CASE WHEN o.dead THEN 1 ELSE 0 END) AS dead,
       min(CASE WHEN o.dead THEN null ELSE o.created_at END) AS oldest`

// deadOutboxCypher returns the oldest dead letters. Uses outbox_due.
const deadOutboxCypher = `
MATCH (o:OutboxItem)
WHERE o.dead = true
RETURN o {.*} AS o
ORDER BY o.created_at, o.id
LIMIT $limit`

// OutboxStatus counts the outbox and lists up to deadLimit dead letters.
func (s *Store) OutboxStatus(ctx context.Context, at time.Time, deadLimit int) (graph.OutboxStatus, error) {
	st, err := read(ctx, s, func(tx txn) (graph.OutboxStatus, error) {
		recs, err := collect(ctx, tx, outboxCountsCypher, map[string]any{"at": at.UTC()})
		if err != nil || len(recs) == 0 {
			return graph.OutboxStatus{}, err
		}
		p := recs[0].AsMap()
		return graph.OutboxStatus{
			Pending: int(i64(p, "pending")), Due: int(i64(p, "due")), Dead: int(i64(p, "dead")), Oldest: tm(p, "oldest"),
		}, nil
	})
	if err != nil {
		return st, fmt.Errorf("neo4j: outbox status: %w", err)
	}
	if deadLimit > 0 && st.Dead > 0 {
		if st.DeadLetters, err = s.readOutbox(ctx, deadOutboxCypher, map[string]any{"limit": int64(deadLimit)}); err != nil {
			return st, fmt.Errorf("neo4j: outbox status: %w", err)
		}
	}
	return st, nil
}
