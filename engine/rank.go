package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// rank finds and orders the memories for plan q: candidates per mode, fusion,
// the effective view (edits, statuses, supersession), then the reranker,
// and scores the relevance of the best q.limit. It returns every surviving
// hit, best first, and whether graph mode fell back.
func (e *Engine) rank(ctx context.Context, q searchPlan) ([]*hit, bool, error) {
	p, fallback, err := e.retrieve(ctx, q)
	if err != nil {
		return nil, false, err
	}
	if err := e.loadMissing(ctx, q.f, p); err != nil {
		return nil, false, err
	}
	// With rerank off in graph mode only the graph signal ran (and the
	// keyword seeds the walk did not return, put after its memories:
	// walkedFirst), so the fused order is the graph signal's own order.
	// The time signal reorders what the others found (search_dates.go);
	// like any signal, it does not run at weight 0.
	if (q.mode != policy.ModeGraph || q.rt.RerankEnabled()) && weight(q.rt.FusionWeights, signalTime) > 0 {
		addDated(p, q.dates)
	}
	ranked := p.fuse(q.rt.Fusion, q.rt.FusionWeights, rrfK(q.rt))
	if q.mode == policy.ModeGraph && !q.rt.RerankEnabled() {
		ranked = walkedFirst(ranked)
	}
	ranked, err = e.effectiveView(ctx, q, ranked)
	if err != nil {
		return nil, false, err
	}
	switch q.reranker {
	case policy.RerankerMMR:
		head := ranked[:min(len(ranked), 3*q.limit)]
		if err := e.loadVersions(ctx, q.f, head); err != nil {
			return nil, false, err
		}
		texts := make(map[string]string, len(head))
		for _, h := range head {
			texts[h.mem.ID] = h.text()
		}
		ranked = append(mmr(head, texts, q.rt.Reranker.Lambda), ranked[len(head):]...)
	case policy.RerankerNodeDistance:
		dist, err := e.distances(ctx, q, ranked)
		if err != nil {
			return nil, false, err
		}
		ranked = byDistance(ranked, dist)
	}
	if err := e.scoreRelevance(ctx, q, p.qvec, p.qcontent, ranked[:min(len(ranked), q.limit)]); err != nil {
		return nil, false, err
	}
	return ranked, fallback, nil
}

// walkedFirst orders the memories the graph signal ranked before the rest
// (graph mode without rerank: its keyword seeds the walk did not return),
// each part in its fused order.
func walkedFirst(hs []*hit) []*hit {
	g := signalSlot(signalGraph)
	slices.SortStableFunc(hs, func(a, b *hit) int { return cmp.Compare(min(b.ranks[g], 1), min(a.ranks[g], 1)) })
	return hs
}

func rrfK(rt policy.Retrieval) int {
	if rt.RRFK > 0 {
		return rt.RRFK
	}
	return 60
}

// mmr reorders hits by maximal marginal relevance: each pick maximises
// lambda * relevance - (1 - lambda) * (highest similarity to a hit already
// picked), where relevance is the normalised fused score and similarity the
// Jaccard overlap of the texts' word sets (the vector index does not hand
// back stored vectors). texts maps memory id to its text.
func mmr(hs []*hit, texts map[string]string, lambda float64) []*hit {
	words := make([]map[string]bool, len(hs))
	for i, h := range hs {
		words[i] = wordSet(texts[h.mem.ID])
	}
	picked := make([]bool, len(hs))
	maxSim := make([]float64, len(hs))
	out := make([]*hit, 0, len(hs))
	for len(out) < len(hs) {
		bi, bv := -1, 0.0
		for i, h := range hs {
			if picked[i] {
				continue
			}
			v := lambda*h.norm - (1-lambda)*maxSim[i]
			if bi < 0 || v > bv {
				bi, bv = i, v
			}
		}
		picked[bi] = true
		out = append(out, hs[bi])
		for i := range hs {
			if !picked[i] {
				maxSim[i] = max(maxSim[i], jaccard(words[i], words[bi]))
			}
		}
	}
	return out
}

// byDistance reorders hits by graph distance to a center (0: the center
// itself, 1: one MENTIONS hop away, 2: farther), then by fused score.
func byDistance(hs []*hit, dist map[string]int) []*hit {
	d := func(h *hit) int {
		if v, ok := dist[h.mem.ID]; ok {
			return v
		}
		return 2
	}
	out := slices.Clone(hs)
	slices.SortStableFunc(out, func(a, b *hit) int { return cmp.Compare(d(a), d(b)) })
	return out
}

// distances maps memory ids to their graph distance from the center of a
// node_distance rerank: 0 for the center memory, 1 for memories sharing an
// entity with it (or mentioning the center entity), absent for farther ones.
// Without a center, the best fused result is the center.
func (e *Engine) distances(ctx context.Context, q searchPlan, ranked []*hit) (map[string]int, error) {
	center := q.center
	if center == "" {
		if len(ranked) == 0 {
			return nil, nil
		}
		center = ranked[0].mem.ID
	}
	dist := map[string]int{}
	ms, err := e.store.GetMemories(ctx, q.f, []string{center})
	if err != nil {
		return nil, fmt.Errorf("node distance center: %w", err)
	}
	if len(ms) == 1 {
		dist[center] = 0
		ns, err := e.store.Neighbours(ctx, q.f, []string{center}, graphPool)
		if err != nil {
			return nil, fmt.Errorf("node distance: %w", err)
		}
		for _, n := range ns {
			dist[n.Memory.ID] = 1
		}
		return dist, nil
	}
	cs, err := e.store.Candidates(ctx, q.f, []string{graph.NormName(center)}, graphPool)
	if err != nil {
		return nil, fmt.Errorf("node distance: %w", err)
	}
	for _, c := range cs {
		dist[c.Memory.ID] = 1
	}
	return dist, nil
}

// jaccard is |a ∩ b| / |a ∪ b| (0 for two empty sets).
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
