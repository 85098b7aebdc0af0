package engine

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

// Stats are deployment-wide figures for operators' metrics, across every
// tenant: totals only, never ids.
type Stats struct {
	// Outbox is the vector outbox now (without dead letters' details).
	Outbox graph.OutboxStatus
	// Counts are the store's totals; Counted is false when the store
	// cannot count (it does not implement graph.Counter).
	Counts  graph.Counts
	Counted bool
	// VectorPoints is the vector index's size; VectorsCounted is false
	// when vectors are off or the index cannot say (vector.Sizer).
	VectorPoints   int
	VectorsCounted bool
	// Held is what the store's in-process indexes hold; HeldCounted is
	// false when the store keeps none (it does not implement
	// graph.IndexHolder: the embedded store's follow its file, unbounded).
	Held        graph.IndexHeld
	HeldCounted bool
}

// Stats reads the figures of Stats. It reads the stores, so a caller on a
// hot path caches it (server/metrics does, for a few seconds).
func (e *Engine) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	var err error
	if st.Outbox, err = e.store.OutboxStatus(ctx, e.now().UTC(), 0); err != nil {
		return st, fmt.Errorf("stats: outbox status: %w", err)
	}
	if c, ok := e.store.(graph.Counter); ok {
		if st.Counts, err = c.Counts(ctx); err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
		st.Counted = true
	}
	if s, ok := e.index.(vector.Sizer); ok {
		if st.VectorPoints, err = s.Size(ctx); err != nil {
			return st, fmt.Errorf("stats: vector index size: %w", err)
		}
		st.VectorsCounted = true
	}
	if h, ok := e.store.(graph.IndexHolder); ok {
		st.Held, st.HeldCounted = h.IndexHeld(), true
	}
	return st, nil
}

// AuthorizeStats checks that p may read the deployment-wide figures of
// Stats (the admin permission): they span every tenant.
func (e *Engine) AuthorizeStats(p graph.Principal) error {
	return authorize(e.policy.Current(), p, PermAdmin)
}
