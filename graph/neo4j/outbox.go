package neo4j

import (
	"context"
	"fmt"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
)

// pendingOutboxCypher returns the oldest outbox items across tenants. Uses
// outbox_created.
const pendingOutboxCypher = `
MATCH (o:OutboxItem)
RETURN o {.*} AS o
ORDER BY o.created_at, o.id
LIMIT $limit`

// PendingOutbox returns up to limit outbox items, oldest first.
func (s *Store) PendingOutbox(ctx context.Context, limit int) ([]graph.OutboxItem, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := read(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]graph.OutboxItem, error) {
		recs, err := collect(ctx, tx, pendingOutboxCypher, map[string]any{"limit": int64(limit)})
		if err != nil {
			return nil, err
		}
		out := make([]graph.OutboxItem, 0, len(recs))
		for _, r := range recs {
			p := nodeOf(r, "o")
			out = append(out, graph.OutboxItem{
				ID: str(p, "id"), Scope: scopeOf(p), MemoryID: str(p, "memory_id"), VersionID: str(p, "version_id"),
				Op: str(p, "op"), Attempts: int(i64(p, "attempts")), CreatedAt: tm(p, "created_at"),
			})
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: pending outbox: %w", err)
	}
	return out, nil
}

// ackOutboxCypher removes delivered items. Uses outbox_item_id.
const ackOutboxCypher = `
UNWIND $ids AS id
MATCH (o:OutboxItem {id: id})
DELETE o`

// retryOutboxCypher counts a failed delivery attempt. Uses outbox_item_id.
const retryOutboxCypher = `
UNWIND $ids AS id
MATCH (o:OutboxItem {id: id})
SET o.attempts = o.attempts + 1`

// AckOutbox removes delivered items; unknown ids are ignored.
func (s *Store) AckOutbox(ctx context.Context, ids []string) error {
	return s.outboxUpdate(ctx, "ack", ackOutboxCypher, ids)
}

// RetryOutbox counts a failed attempt on each item; unknown ids are ignored.
func (s *Store) RetryOutbox(ctx context.Context, ids []string) error {
	return s.outboxUpdate(ctx, "retry", retryOutboxCypher, ids)
}

func (s *Store) outboxUpdate(ctx context.Context, op, query string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := write(ctx, s, func(tx neo4jdrv.ManagedTransaction) (struct{}, error) {
		_, err := collect(ctx, tx, query, map[string]any{"ids": dedupe(ids)})
		return struct{}{}, err
	})
	if err != nil {
		return fmt.Errorf("neo4j: %s outbox: %w", op, err)
	}
	return nil
}
