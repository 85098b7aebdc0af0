package engine

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

// relatedOf reads the relations of seeds whose other memory the search's
// filter admits, when the policy shows related neighbours
// (retrieval.neighbours.relations_limit) and the store keeps relations:
// twice the limit per seed, as some may be hidden by an edit or be
// results themselves.
func (e *Engine) relatedOf(ctx context.Context, q searchPlan, seeds []string) ([]graph.Relation, error) {
	n := q.rt.Neighbours.RelationsLimit
	rs, ok := e.store.(graph.Relations)
	if n <= 0 || !ok {
		return nil, nil
	}
	rels, err := rs.RelationsOf(ctx, q.f, seeds[:min(len(seeds), graph.MaxRelationSeeds)], 2*n)
	if err != nil {
		return nil, fmt.Errorf("related neighbours: %w", err)
	}
	return rels, nil
}

// loadRelated adds to byID and hs the memories rels lead to from the
// seeds, loaded under the search's filter.
func (e *Engine) loadRelated(ctx context.Context, q searchPlan, rels []graph.Relation, isSeed map[string]bool,
	byID map[string]*hit, hs []*hit) ([]*hit, error) {
	var ids []string
	for _, r := range rels {
		for _, id := range []string{r.FromID, r.ToID} {
			if _, seen := byID[id]; !isSeed[id] && !seen {
				byID[id] = nil
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return hs, nil
	}
	ms, err := e.loadAdmitted(ctx, q.f, ids)
	if err != nil {
		return nil, fmt.Errorf("related neighbours: %w", err)
	}
	for _, id := range ids {
		if m, ok := ms[id]; ok {
			h := &hit{mem: m, loaded: true}
			byID[id] = h
			hs = append(hs, h)
		} else {
			delete(byID, id)
		}
	}
	return hs, nil
}

// pickRelated picks for each result, in rank order, up to relations_limit
// neighbours its relations lead to (newest relation first), each with the
// relation as its reason, among the hits usable accepts; a memory is
// picked once.
func pickRelated(q searchPlan, rs []SearchResult, set neighbourSet, usable func(*hit) bool) []neighbourPick {
	lim := q.rt.Neighbours.RelationsLimit
	if lim <= 0 || len(set.rels) == 0 {
		return nil
	}
	var picks []neighbourPick
	picked := map[string]bool{}
	for i := range rs {
		seed, n := rs[i].Memory.ID, 0
		for k := range set.rels {
			r := &set.rels[k]
			if n >= lim {
				break
			}
			if r.FromID != seed && r.ToID != seed {
				continue
			}
			h := set.byID[r.Other(seed)]
			if !usable(h) || picked[h.mem.ID] {
				continue
			}
			picked[h.mem.ID] = true
			picks = append(picks, neighbourPick{result: i, h: h, rel: r})
			n++
		}
	}
	return picks
}
