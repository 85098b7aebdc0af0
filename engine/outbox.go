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
	// Failed is the number of items left for a later pass.
	Failed int `json:"failed"`
}

// DrainOutbox delivers up to limit pending vector-index writes. For each
// memory it checks what the index holds: a point already at the memory's
// current version is acknowledged without embedding; otherwise the current
// version is embedded and upserted, then the items are acknowledged. An
// older item never overwrites a newer version. Failed items are counted
// (RetryOutbox) and stay. It is idempotent and safe when several replicas
// drain at once.
func (e *Engine) DrainOutbox(ctx context.Context, limit int) (DrainStats, error) {
	if e.index == nil {
		return DrainStats{}, ErrVectorsOff
	}
	items, err := e.store.PendingOutbox(ctx, limit)
	if err != nil {
		return DrainStats{}, fmt.Errorf("read outbox: %w", err)
	}
	st := DrainStats{Seen: len(items)}
	groups := map[graph.Scope]map[string][]graph.OutboxItem{} // scope -> memory id -> items
	var deletes []graph.OutboxItem
	for _, it := range items {
		if it.Op == "delete" {
			deletes = append(deletes, it)
			continue
		}
		if groups[it.Scope] == nil {
			groups[it.Scope] = map[string][]graph.OutboxItem{}
		}
		groups[it.Scope][it.MemoryID] = append(groups[it.Scope][it.MemoryID], it)
	}
	if len(deletes) > 0 {
		e.drainDeletes(ctx, deletes, &st)
	}
	for s, byMem := range groups {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := e.drainScope(ctx, s, byMem, &st); err != nil {
			e.log.Warn("outbox delivery failed; will retry", "tenant", s.TenantID, "memories", len(byMem), "err", err)
			var ids []string
			for _, its := range byMem {
				ids = append(ids, itemIDs(its)...)
			}
			st.Failed += len(ids)
			if rerr := e.store.RetryOutbox(ctx, ids); rerr != nil {
				return st, fmt.Errorf("count failed outbox attempts: %w", rerr)
			}
		}
	}
	return st, nil
}

func (e *Engine) drainDeletes(ctx context.Context, items []graph.OutboxItem, st *DrainStats) {
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
		st.Failed += len(items)
		_ = e.store.RetryOutbox(ctx, itemIDs(items)) // counted next pass if this fails too
	}
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
// index is off. Errors of one pass are logged; the next pass retries.
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
				e.log.Debug("outbox drained", "seen", st.Seen, "embedded", st.Embedded, "current", st.Current, "gone", st.Gone, "failed", st.Failed)
			}
			if st.Seen < batch || st.Failed > 0 {
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
