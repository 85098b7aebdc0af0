package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// resolve turns the best q.limit hits into results: their versions loaded,
// then shaped for display (searchResults).
func (e *Engine) resolve(ctx context.Context, q searchPlan, ranked []*hit) ([]SearchResult, error) {
	top := ranked[:min(len(ranked), q.limit)]
	if err := e.loadVersions(ctx, q.f, top); err != nil {
		return nil, err
	}
	return searchResults(q, top), nil
}

// loadVersions loads the current version of every hit that has none yet.
func (e *Engine) loadVersions(ctx context.Context, f graph.Filter, hs []*hit) error {
	var ids []string
	byMemory := map[string]*hit{}
	for _, h := range hs {
		if !h.hasVersion && h.mem.CurrentVersionID != "" {
			ids = append(ids, h.mem.CurrentVersionID)
			byMemory[h.mem.ID] = h
		}
	}
	if len(ids) == 0 {
		return nil
	}
	vs, err := e.store.GetVersions(ctx, f, ids)
	if err != nil {
		return fmt.Errorf("load versions: %w", err)
	}
	for _, v := range vs {
		if h := byMemory[v.MemoryID]; h != nil {
			h.version, h.hasVersion = v, true
		}
	}
	return nil
}

// loadMissing loads the memories only known by id (vector hits not loaded
// ahead) and drops the hits the filter hides (loadAdmitted). Vector ranks
// are then renumbered among the survivors, keeping at most vectorPool of
// the hits only the vector signal found. A vector-only hit that vectorPool
// admitted hits already precede is dropped unread: it could not be kept.
// It still counts in the ranks of the hits after it, as if admitted (the
// search did not read whether it is), so a hit past the pool that another
// signal found ranks as if every hit before it had been read.
func (e *Engine) loadMissing(ctx context.Context, f graph.Filter, p *pool) error {
	vec := p.vectorOrder()
	unread := map[string]bool{}
	admitted := 0
	for _, id := range vec {
		switch h := p.hits[id]; {
		case h.loaded:
			admitted++
		case admitted >= vectorPool && h.rankedBy() == 1:
			unread[id] = true
		}
	}
	var ids []string
	for _, id := range p.order {
		if !p.hits[id].loaded && !unread[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 || len(unread) > 0 {
		var ms map[string]graph.Memory
		if len(ids) > 0 {
			var err error
			if ms, err = e.loadAdmitted(ctx, f, ids); err != nil {
				return err
			}
		}
		kept := p.order[:0]
		for _, id := range p.order {
			h := p.hits[id]
			if !h.loaded {
				if m, ok := ms[id]; ok {
					h.mem, h.loaded = m, true
				}
			}
			if h.loaded {
				kept = append(kept, id)
			} else {
				delete(p.hits, id)
			}
		}
		p.order = kept
	}
	// Renumber the vector ranks among survivors and unread hits, best
	// first, keeping at most vectorPool vector-only ones.
	i := 0
	for _, id := range vec {
		h, ok := p.hits[id]
		switch {
		case unread[id]:
			i++
			continue
		case !ok:
			continue // hidden by the filter
		}
		if i >= vectorPool && h.rankedBy() == 1 {
			p.remove(id)
		} else {
			h.ranks[signalSlot(signalVector)] = i + 1
		}
		i++
	}
	return nil
}

// vectorOrder returns the ids of the hits the vector signal found, best
// first.
func (p *pool) vectorOrder() []string {
	var ids []string
	for _, id := range p.order {
		if _, ok := p.hits[id].rank(signalVector); ok {
			ids = append(ids, id)
		}
	}
	v := signalSlot(signalVector)
	slices.SortStableFunc(ids, func(a, b string) int { return p.hits[a].ranks[v] - p.hits[b].ranks[v] })
	return ids
}

// loadAdmitted loads the memories ids through Store.GetMemories, which
// applies the whole filter, and keeps those whose status the filter admits.
func (e *Engine) loadAdmitted(ctx context.Context, f graph.Filter, ids []string) (map[string]graph.Memory, error) {
	ms, err := e.store.GetMemories(ctx, f, ids)
	if err != nil {
		return nil, fmt.Errorf("load vector hits: %w", err)
	}
	statuses := f.EffectiveStatuses()
	out := make(map[string]graph.Memory, len(ms))
	for _, m := range ms {
		if slices.Contains(statuses, m.Status) {
			out[m.ID] = m
		}
	}
	return out, nil
}

// neighbourSet is what fetchNeighbours found for a set of seeds: the
// store's neighbours, the seeds' relations (engine/relations.go) and, by
// id, their hits with edits applied; appendNeighbours loads the versions
// of those it shows.
type neighbourSet struct {
	ns   []graph.Neighbour
	rels []graph.Relation
	byID map[string]*hit
}

// fetchNeighbours asks the store for the neighbours and the relations of
// seeds (the results to be) and loads their memories, so that it can run
// while the results resolve.
func (e *Engine) fetchNeighbours(ctx context.Context, q searchPlan, seeds []string) (neighbourSet, error) {
	lim := q.rt.Neighbours
	if len(seeds) == 0 {
		return neighbourSet{}, nil
	}
	var ns []graph.Neighbour
	if lim.NotesLimit+lim.DocsLimit > 0 {
		var err error
		if ns, err = e.store.Neighbours(ctx, q.f, seeds, lim.NotesLimit+lim.DocsLimit+len(seeds)); err != nil {
			return neighbourSet{}, fmt.Errorf("neighbours: %w", err)
		}
	}
	rels, err := e.relatedOf(ctx, q, seeds)
	if err != nil {
		return neighbourSet{}, err
	}
	isSeed := make(map[string]bool, len(seeds))
	for _, id := range seeds {
		isSeed[id] = true
	}
	hs := make([]*hit, 0, len(ns))
	byID := map[string]*hit{}
	for _, n := range ns {
		if !isSeed[n.Memory.ID] && byID[n.Memory.ID] == nil {
			h := &hit{mem: n.Memory, loaded: true}
			byID[n.Memory.ID] = h
			hs = append(hs, h)
		}
	}
	if hs, err = e.loadRelated(ctx, q, rels, isSeed, byID, hs); err != nil {
		return neighbourSet{}, err
	}
	if len(hs) == 0 {
		return neighbourSet{}, nil
	}
	if err := e.applyEdits(ctx, q.f, hs); err != nil {
		return neighbourSet{}, err
	}
	return neighbourSet{ns: ns, rels: rels, byID: byID}, nil
}
