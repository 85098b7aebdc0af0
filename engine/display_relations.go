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

// appendRelated gives each result, in rank order, up to relations_limit
// neighbours its relations lead to (newest relation first), each with the
// relation's type as its reason; shown holds the memories already in the
// response and is updated.
func appendRelated(q searchPlan, rs []SearchResult, set neighbourSet, shown map[string]bool) {
	lim := q.rt.Neighbours.RelationsLimit
	if lim <= 0 || len(set.rels) == 0 {
		return
	}
	for i := range rs {
		seed, n := rs[i].Memory.ID, 0
		for _, r := range set.rels {
			if n >= lim {
				break
			}
			if r.FromID != seed && r.ToID != seed {
				continue
			}
			h := set.byID[r.Other(seed)]
			if h == nil || h.mem.ID == "" || !h.hasVersion || shown[h.mem.ID] {
				continue // a primary result, already shown, hidden by an edit or not visible
			}
			nb := shapeNeighbour(q, h)
			nb.Reason, nb.RelationID, nb.Direction, nb.Shared = string(r.Type), r.ID, DirectionOut, []string{}
			if r.ToID == seed {
				nb.Direction = DirectionIn
			}
			shown[h.mem.ID] = true
			rs[i].Neighbours = append(rs[i].Neighbours, nb)
			n++
		}
	}
}
