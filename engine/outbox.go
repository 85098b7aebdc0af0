package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

// ErrVectorsOff reports an outbox drain on an engine without a vector
// index: nothing can be delivered.
var ErrVectorsOff = errors.New("vector index is off")

// OutboxOptions tunes how failed vector-index writes are retried. Zero
// fields take their defaults.
type OutboxOptions struct {
	// MaxAttempts is how many failed deliveries make an item a dead
	// letter, which no drain retries until `mnemo outbox retry` requeues
	// it (default 10).
	MaxAttempts int
	// Backoff is the wait after an item's first failed delivery, doubled
	// after each further one (default 5s); MaxBackoff caps it (default
	// 1h). With the defaults an item is given up on after about 1.5 hours.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Lease is how long a drain holds the items it took before another
	// drainer (another replica) may take them (default 2m): long enough to
	// embed and upsert a batch, short enough that a crashed drainer's
	// items are soon picked up again.
	Lease time.Duration
}

func (o OutboxOptions) withDefaults() OutboxOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.Backoff <= 0 {
		o.Backoff = 5 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Hour
	}
	return o
}

// backoff is the wait after the n-th failed delivery (n >= 1).
func (o OutboxOptions) backoff(n int) time.Duration {
	d := o.Backoff
	for i := 1; i < n && d < o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxBackoff)
}

// maxOutboxError caps the error text kept with a failed item.
const maxOutboxError = 500

// DrainStats counts what one drain pass did.
type DrainStats struct {
	// Seen is the number of outbox items read.
	Seen int `json:"seen"`
	// Embedded is the number of memories embedded and upserted.
	Embedded int `json:"embedded"`
	// Current is the number of memories whose point already held their
	// current version (the write path upserted it right away).
	Current int `json:"current"`
	// Gone is the number of items whose memory no longer exists.
	Gone int `json:"gone"`
	// Failed is the number of items whose delivery failed: retried after
	// a backoff, or dead-lettered.
	Failed int `json:"failed"`
	// Dead is the number of failed items given up on in this pass (dead
	// letters).
	Dead int `json:"dead"`
}

// delivery is a set of upserts delivered together: the memories of one
// scope, with their outbox items.
type delivery struct {
	scope graph.Scope
	byMem map[string][]graph.OutboxItem
}

// DrainOutbox delivers up to limit vector-index writes that are due. For
// each memory it checks what the index holds: a point already at the
// memory's current version is acknowledged without embedding; otherwise
// the current version is embedded and upserted, then the items are
// acknowledged. An older item never overwrites a newer version. New items
// go in one delivery per scope; an item that failed before goes alone, so a
// poisonous item cannot fail the others twice. A failed item is retried
// after an exponential backoff and dead-lettered after
// OutboxOptions.MaxAttempts failures. The items are claimed for
// OutboxOptions.Lease as they are read, so replicas draining at once each
// deliver different items; a crashed drain's items are due again when the
// lease runs out. It is idempotent.
func (e *Engine) DrainOutbox(ctx context.Context, limit int) (DrainStats, error) {
	if e.index == nil {
		return DrainStats{}, ErrVectorsOff
	}
	items, err := e.store.DueOutbox(ctx, e.now().UTC(), e.outbox.Lease, limit)
	if err != nil {
		return DrainStats{}, fmt.Errorf("read outbox: %w", err)
	}
	st := DrainStats{Seen: len(items)}
	var (
		ds      []delivery
		byScope = map[graph.Scope]int{} // scope -> index in ds of its new items
		deletes []graph.OutboxItem
	)
	for _, it := range items {
		switch {
		case it.Op == "delete":
			deletes = append(deletes, it)
		case it.Attempts > 0:
			ds = append(ds, delivery{scope: it.Scope, byMem: map[string][]graph.OutboxItem{it.MemoryID: {it}}})
		default:
			i, ok := byScope[it.Scope]
			if !ok {
				i = len(ds)
				byScope[it.Scope] = i
				ds = append(ds, delivery{scope: it.Scope, byMem: map[string][]graph.OutboxItem{}})
			}
			ds[i].byMem[it.MemoryID] = append(ds[i].byMem[it.MemoryID], it)
		}
	}
	if len(deletes) > 0 {
		if err := e.drainDeletes(ctx, deletes, &st); err != nil {
			return st, err
		}
	}
	for _, d := range ds {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := e.drainScope(ctx, d.scope, d.byMem, &st); err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err() // stopped, not failed: no attempt counted
			}
			var failed []graph.OutboxItem
			for _, its := range d.byMem {
				failed = append(failed, its...)
			}
			e.log.Warn("outbox delivery failed; will retry", "tenant", d.scope.TenantID, "memories", len(d.byMem), "err", err)
			if ferr := e.failOutbox(ctx, failed, err, &st); ferr != nil {
				return st, ferr
			}
		}
	}
	return st, nil
}

// failOutbox records a failed delivery of items: each is due again after
// its backoff, or dead-lettered once it has failed MaxAttempts times.
func (e *Engine) failOutbox(ctx context.Context, items []graph.OutboxItem, cause error, st *DrainStats) error {
	now := e.now().UTC()
	msg := truncate(cause.Error(), maxOutboxError)
	fails := make([]graph.OutboxFailure, len(items))
	for i, it := range items {
		n := it.Attempts + 1
		fails[i] = graph.OutboxFailure{ID: it.ID, Error: msg, RetryAt: now.Add(e.outbox.backoff(n)), Dead: n >= e.outbox.MaxAttempts}
		if fails[i].Dead {
			st.Dead++
			e.log.Error("outbox item dead-lettered; `mnemo outbox retry` requeues it", "item", it.ID,
				"memory", it.MemoryID, "attempts", n, "err", msg)
		}
	}
	st.Failed += len(items)
	if err := e.store.FailOutbox(ctx, fails); err != nil {
		return fmt.Errorf("count failed outbox attempts: %w", err)
	}
	return nil
}

func (e *Engine) drainDeletes(ctx context.Context, items []graph.OutboxItem, st *DrainStats) error {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.MemoryID
	}
	err := e.index.Delete(ctx, ids)
	if err == nil {
		err = e.store.AckOutbox(ctx, itemIDs(items))
	}
	if err != nil {
		e.log.Warn("outbox delete failed; will retry", "count", len(items), "err", err)
		return e.failOutbox(ctx, items, err, st)
	}
	return nil
}

// drainScope delivers the items of one scope.
func (e *Engine) drainScope(ctx context.Context, s graph.Scope, byMem map[string][]graph.OutboxItem, st *DrainStats) error {
	ids := make([]string, 0, len(byMem))
	for id := range byMem {
		ids = append(ids, id)
	}
	f := graph.Filter{Scope: s, Reader: graph.System, Statuses: allStatuses}
	mems, err := e.store.GetMemories(ctx, f, ids)
	if err != nil {
		return fmt.Errorf("read memories: %w", err)
	}
	found := make(map[string]graph.Memory, len(mems))
	for _, m := range mems {
		found[m.ID] = m
	}
	indexed, err := e.indexedVersions(ctx, s, ids)
	if err != nil {
		return err
	}
	var ack []string
	var stale []graph.Memory
	for id, its := range byMem {
		m, ok := found[id]
		switch {
		case !ok:
			st.Gone++
			ack = append(ack, itemIDs(its)...)
		case indexed[id] == m.CurrentVersionID:
			st.Current++
			ack = append(ack, itemIDs(its)...)
		default:
			stale = append(stale, m)
		}
	}
	if len(stale) > 0 {
		if err := e.embedCurrent(ctx, f, stale); err != nil {
			return err
		}
		st.Embedded += len(stale)
		for _, m := range stale {
			ack = append(ack, itemIDs(byMem[m.ID])...)
		}
	}
	if err := e.store.AckOutbox(ctx, ack); err != nil {
		return fmt.Errorf("ack outbox: %w", err)
	}
	return nil
}

// indexedVersions returns the version each of ids' points holds.
func (e *Engine) indexedVersions(ctx context.Context, s graph.Scope, ids []string) (map[string]string, error) {
	probe := make([]float32, e.index.Dimensions())
	probe[0] = 1
	hits, err := e.index.Score(ctx, probe, maintenanceFilter(s), ids)
	if err != nil {
		return nil, fmt.Errorf("read vector index: %w", err)
	}
	out := make(map[string]string, len(hits))
	for _, h := range hits {
		out[h.ID] = h.Payload.VersionID
	}
	return out, nil
}

// embedCurrent embeds and upserts the current version of every memory.
func (e *Engine) embedCurrent(ctx context.Context, f graph.Filter, mems []graph.Memory) error {
	vids := make([]string, len(mems))
	for i, m := range mems {
		vids[i] = m.CurrentVersionID
	}
	vers, err := e.store.GetVersions(ctx, f, vids)
	if err != nil {
		return fmt.Errorf("read versions: %w", err)
	}
	byID := make(map[string]graph.Version, len(vers))
	for _, v := range vers {
		byID[v.ID] = v
	}
	texts := make([]string, 0, len(mems))
	keep := mems[:0:0]
	for _, m := range mems {
		v, ok := byID[m.CurrentVersionID]
		if !ok {
			return fmt.Errorf("current version %s of memory %s: %w", m.CurrentVersionID, m.ID, graph.ErrNotFound)
		}
		texts = append(texts, graph.SearchText(v.IndexText, v.Content))
		keep = append(keep, m)
	}
	vecs, err := e.embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	pts := make([]vector.Point, len(keep))
	for i, m := range keep {
		pts[i] = point(m, m.CurrentVersionID, vecs[i])
	}
	if err := e.index.Upsert(ctx, pts); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	return nil
}

func itemIDs(items []graph.OutboxItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// RunOutbox drains the outbox every interval until ctx ends, and at once
// on start. It returns nil when ctx ends, and at once (nil) when the vector
// index is off: the process that holds the index drains what every
// process enqueued. Errors of one pass are logged; the next pass retries.
func (e *Engine) RunOutbox(ctx context.Context, interval time.Duration, batch int) error {
	if e.index == nil {
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for {
			st, err := e.DrainOutbox(ctx, batch)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				e.log.Warn("outbox drain failed", "err", err)
				break
			}
			if st.Seen > 0 {
				e.log.Debug("outbox drained", "seen", st.Seen, "embedded", st.Embedded, "current", st.Current,
					"gone", st.Gone, "failed", st.Failed, "dead", st.Dead)
			}
			// Failed items are not due again before their backoff, so
			// the next pass reads the items behind them.
			if st.Seen < batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// OutboxStatus summarises the vector outbox now: live, due and dead
// items, with up to deadLimit dead letters and their last errors. It is an
// operator's view across tenants (`mnemo outbox status`).
func (e *Engine) OutboxStatus(ctx context.Context, deadLimit int) (graph.OutboxStatus, error) {
	st, err := e.store.OutboxStatus(ctx, e.now().UTC(), deadLimit)
	if err != nil {
		return st, fmt.Errorf("outbox status: %w", err)
	}
	return st, nil
}

// RequeueDeadLetters makes dead letters live and due now, with their
// attempts counted from zero: those among ids, or all when ids is empty.
// It returns how many it requeued (`mnemo outbox retry`).
func (e *Engine) RequeueDeadLetters(ctx context.Context, ids []string) (int, error) {
	n, err := e.store.RequeueOutbox(ctx, e.now().UTC(), ids)
	if err != nil {
		return 0, fmt.Errorf("requeue dead letters: %w", err)
	}
	return n, nil
}
