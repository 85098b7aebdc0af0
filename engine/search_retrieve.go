package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
)

// Candidate pool sizes: how many memories each signal hands to fusion. They
// trade recall for latency; docs/search.md records how they were tuned.
const (
	// graphPool caps Store.Candidates.
	graphPool = 200
	// expansionSeeds is how many top graph candidates seed the 1-hop
	// expansion, and expansionPerSeed how many neighbours each adds.
	expansionSeeds   = 10
	expansionPerSeed = 5
	// keywordPool caps Store.KeywordSearch.
	keywordPool = 100
	// vectorPool is the vector hits wanted after the effective view; the
	// index applies the access rule and every narrowing field but statuses,
	// validity and entity types, so it is asked for vectorOverfetch times as
	// many (superseded, archived and expired memories keep their points),
	// or vectorOverfetchNarrow times when the filter names entity types.
	vectorPool            = 100
	vectorOverfetch       = 2
	vectorOverfetchNarrow = 6
)

// rank finds and orders the memories for plan q: candidates per mode, fusion,
// the effective view (edits, statuses, supersession), then the reranker. It
// returns every surviving hit, best first, and whether graph mode fell back.
func (e *Engine) rank(ctx context.Context, q searchPlan) ([]*hit, bool, error) {
	p, fallback, err := e.retrieve(ctx, q)
	if err != nil {
		return nil, false, err
	}
	if err := e.loadMissing(ctx, q.f, p); err != nil {
		return nil, false, err
	}
	// With rerank off in graph mode only the graph signal ran, so the
	// fused order is the graph signal's own order.
	ranked := p.fuse(q.rt.Fusion, q.rt.FusionWeights, rrfK(q.rt))
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
	return ranked, fallback, nil
}

func rrfK(rt policy.Retrieval) int {
	if rt.RRFK > 0 {
		return rt.RRFK
	}
	return 60
}

// embedQuery embeds one query text.
func (e *Engine) embedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed query: got %d vectors for 1 text", len(vs))
	}
	return vs[0], nil
}

// retrieve runs the signals of q's mode into one pool.
func (e *Engine) retrieve(ctx context.Context, q searchPlan) (*pool, bool, error) {
	p := newPool()
	// The query is embedded (ONNX Runtime, on its own threads), and in
	// hybrid and vector mode the index searched and its hits loaded, while
	// the store answers the graph and keyword signals. Graph mode embeds
	// ahead only for its rerank; without rerank, only for its fallback.
	// In hybrid mode a signal whose fusion weight is 0 could only add
	// unscored hits, so it does not run (the default policy weighs graph 0).
	runs := func(signal string) bool {
		return q.mode != policy.ModeHybrid || weight(q.rt.FusionWeights, signal) > 0
	}
	var (
		qvec    []float32
		vhits   []vector.Hit
		vmems   map[string]graph.Memory // vector hits the filter admits, loaded ahead
		vecErr  error
		vecDone chan struct{}
	)
	searchAhead := (q.mode == policy.ModeHybrid || q.mode == policy.ModeVector) && runs(signalVector)
	if q.withVectors && (searchAhead || q.mode == policy.ModeGraph && q.rt.RerankEnabled()) {
		vecDone = make(chan struct{})
		go func() {
			defer close(vecDone)
			if qvec, vecErr = e.embedQuery(ctx, q.text); vecErr != nil || !searchAhead {
				return
			}
			if vhits, vecErr = e.vectorHits(ctx, q, qvec); vecErr == nil && len(vhits) > 0 {
				ids := make([]string, len(vhits))
				for i, h := range vhits {
					ids[i] = h.ID
				}
				vmems, vecErr = e.loadAdmitted(ctx, q.f, ids)
			}
		}()
		defer func() { <-vecDone }() // never leave it running past the search
	}
	embed := func() error {
		switch {
		case vecDone != nil:
			<-vecDone
		case q.withVectors && qvec == nil && vecErr == nil: // graph mode's fallback without rerank
			qvec, vecErr = e.embedQuery(ctx, q.text)
		}
		return vecErr
	}
	vectorSearch := func() error {
		if !q.withVectors {
			return nil
		}
		if err := embed(); err != nil {
			return err
		}
		if !searchAhead {
			var err error
			if vhits, err = e.vectorHits(ctx, q, qvec); err != nil {
				return err
			}
		}
		addVector(p, vhits, vmems)
		return nil
	}
	switch q.mode {
	case policy.ModeKeyword:
		return p, false, e.keywordSearch(ctx, q, p, nil)
	case policy.ModeVector:
		return p, false, vectorSearch()
	case policy.ModeHybrid:
		// The store's two signals run side by side while the query embeds;
		// the pool still takes them in the order graph, vector, keyword.
		var (
			kw    []graph.Scored
			kwErr error
			gErr  error
			kwOK  = make(chan struct{})
		)
		go func() {
			defer close(kwOK)
			if runs(signalKeyword) {
				kw, kwErr = e.keywordHits(ctx, q)
			}
		}()
		if runs(signalGraph) {
			gErr = e.graphSearch(ctx, q, p)
		}
		<-kwOK
		if err := cmp.Or(gErr, kwErr); err != nil {
			return nil, false, err
		}
		if runs(signalVector) {
			if err := vectorSearch(); err != nil {
				return nil, false, err
			}
		}
		addKeyword(p, kw, nil)
		return p, false, nil
	}
	// Graph mode.
	if err := e.graphSearch(ctx, q, p); err != nil {
		return nil, false, err
	}
	if len(p.order) == 0 {
		if err := vectorSearch(); err != nil {
			return nil, false, err
		}
		return p, true, e.keywordSearch(ctx, q, p, nil)
	}
	if !q.rt.RerankEnabled() {
		return p, false, nil
	}
	within := map[string]bool{}
	for _, id := range p.order {
		within[id] = true
	}
	if q.withVectors {
		if err := embed(); err != nil {
			return nil, false, err
		}
		hits, err := e.index.Score(ctx, qvec, vectorFilter(q.f), slices.Clone(p.order))
		if err != nil {
			return nil, false, fmt.Errorf("vector rerank: %w", err)
		}
		for i, h := range hits {
			p.add(signalVector, i+1, h.ID, nil, float64(h.Score))
		}
	}
	return p, false, e.keywordSearch(ctx, q, p, within)
}

// graphSearch adds the graph signal: memories that mention an entity named
// in the query, most matched entities first, then (1 hop) memories sharing
// entities with the best of them.
func (e *Engine) graphSearch(ctx context.Context, q searchPlan, p *pool) error {
	names := queryNames(q.text)
	if len(names) == 0 {
		return nil
	}
	cands, err := e.store.Candidates(ctx, q.f, names, graphPool)
	if err != nil {
		return fmt.Errorf("graph candidates: %w", err)
	}
	// The graph ranks candidates by the specificity of the entities they
	// match: sum over matched names of ln(1 + n/df), df being how many
	// candidates match that name (a name every candidate mentions says
	// little). Equal scores share a rank (competition ranking), so the other
	// signals break the tie.
	df := map[string]int{}
	for _, c := range cands {
		for _, n := range c.Matched {
			df[n]++
		}
	}
	spec := make([]float64, len(cands))
	order := make([]int, len(cands))
	for i, c := range cands {
		order[i] = i
		for _, n := range c.Matched {
			spec[i] += math.Log(1 + float64(len(cands))/float64(df[n]))
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(spec[b], spec[a]) })
	rank := 0
	for pos, i := range order {
		c := &cands[i]
		if pos == 0 || spec[i] != spec[order[pos-1]] {
			rank = pos + 1
		}
		h := p.add(signalGraph, rank, c.Memory.ID, &c.Memory, spec[i])
		h.path = c.Matched
	}
	seedsFrom := make([]graph.Candidate, len(order))
	for pos, i := range order {
		seedsFrom[pos] = cands[i]
	}
	cands = seedsFrom
	if q.rt.Hops() < 1 || len(cands) == 0 {
		return nil
	}
	seeds := make([]string, 0, expansionSeeds)
	for _, c := range cands[:min(len(cands), expansionSeeds)] {
		seeds = append(seeds, c.Memory.ID)
	}
	ns, err := e.store.Neighbours(ctx, q.f, seeds, expansionPerSeed)
	if err != nil {
		return fmt.Errorf("graph expansion: %w", err)
	}
	// One hop away ranks after every direct candidate; expansions tie.
	rank = len(cands) + 1
	for i := range ns {
		n := &ns[i]
		if _, seen := p.hits[n.Memory.ID]; seen {
			continue
		}
		h := p.add(signalGraph, rank, n.Memory.ID, &n.Memory, n.Weight)
		h.path = n.Shared
	}
	return nil
}

// keywordSearch adds the keyword signal. With within set, only memories
// already in the pool are ranked (rerank of graph candidates).
func (e *Engine) keywordSearch(ctx context.Context, q searchPlan, p *pool, within map[string]bool) error {
	hits, err := e.keywordHits(ctx, q)
	if err != nil {
		return err
	}
	addKeyword(p, hits, within)
	return nil
}

// keywordHits asks the store for the keyword pool.
func (e *Engine) keywordHits(ctx context.Context, q searchPlan) ([]graph.Scored, error) {
	hits, err := e.store.KeywordSearch(ctx, q.f, keywordQuery(q.text), keywordPool)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return hits, nil
}

// addKeyword adds the keyword signal, ranking only the hits within the set
// when it is not nil.
func addKeyword(p *pool, hits []graph.Scored, within map[string]bool) {
	rank := 0
	for i := range hits {
		s := &hits[i]
		if within != nil && !within[s.Memory.ID] {
			continue
		}
		rank++
		p.add(signalKeyword, rank, s.Memory.ID, &s.Memory, s.Score)
	}
}

// vectorHits runs the nearest-neighbour search of the vector signal. The
// index applies the access rule and the caller's narrowing inside its
// search (vectorFilter); what it cannot carry (statuses, validity, entity
// types) the store applies when the hits are loaded (loadAdmitted), so the
// index is asked for somewhat more hits than wanted.
func (e *Engine) vectorHits(ctx context.Context, q searchPlan, qvec []float32) ([]vector.Hit, error) {
	k := vectorPool * vectorOverfetch
	if narrowsBeyondIndex(q.f) {
		k = vectorPool * vectorOverfetchNarrow
	}
	hits, err := e.index.Search(ctx, qvec, vectorFilter(q.f), k)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	return hits, nil
}

// addVector adds the vector signal, hits in rank order. When the hits were
// loaded ahead (mems not nil), a hit the filter hid is left out; otherwise
// loadMissing loads and filters them.
func addVector(p *pool, hits []vector.Hit, mems map[string]graph.Memory) {
	for i, h := range hits {
		if mems == nil {
			p.add(signalVector, i+1, h.ID, nil, float64(h.Score))
		} else if m, ok := mems[h.ID]; ok {
			p.add(signalVector, i+1, h.ID, &m, float64(h.Score))
		}
	}
}

// vectorFilter is f as the vector index applies it: the scope and the
// reader (the access rule, vector.Filter mirrors graph.Reader) and every
// narrowing field the index carries. A filter without a reader is refused
// by the index (vector.ErrInvalid), never read as "everyone". Statuses,
// validity, entity types, channel blocks and quarantine are not in the
// index; the store and the effective view apply them.
func vectorFilter(f graph.Filter) vector.Filter {
	vf := vector.Filter{
		TenantID: f.Scope.TenantID, OrgID: f.Scope.OrgID, RepoID: f.Scope.RepoID,
		ReaderUserID: f.Reader.UserID, AllUsers: f.Reader.AllUsers, Subscopes: f.Reader.Subscopes,
		UserID: f.UserID, Types: f.Types, Tags: f.Tags,
		SubjectType: f.SubjectType, SubjectID: f.SubjectID, ProjectID: f.ProjectID, SessionID: f.SessionID,
		CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore,
	}
	for _, v := range f.Visibility {
		vf.Visibility = append(vf.Visibility, string(v))
	}
	return vf
}

// maintenanceFilter is the vector filter of the engine's own maintenance
// (outbox, reindex, doctor) in scope s: graph.System, every user and every
// subscope.
func maintenanceFilter(s graph.Scope) vector.Filter {
	return vectorFilter(graph.Filter{Scope: s, Reader: graph.System})
}

// narrowsBeyondIndex reports whether f restricts what the index cannot
// carry beyond statuses and validity (so more index hits are dropped when
// loaded): entity types, which live on MENTIONS edges.
func narrowsBeyondIndex(f graph.Filter) bool {
	return len(f.EntityTypes) > 0
}

// loadMissing loads the memories only known by id (vector hits not loaded
// ahead) and drops the hits the filter hides (loadAdmitted). Vector ranks
// are then renumbered among the survivors.
func (e *Engine) loadMissing(ctx context.Context, f graph.Filter, p *pool) error {
	var ids []string
	for _, id := range p.order {
		if !p.hits[id].loaded {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		ms, err := e.loadAdmitted(ctx, f, ids)
		if err != nil {
			return err
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
	// Renumber the vector ranks among survivors, best first, keeping at most
	// vectorPool of them.
	var vec []*hit
	for _, id := range p.order {
		if _, ok := p.hits[id].ranks[signalVector]; ok {
			vec = append(vec, p.hits[id])
		}
	}
	slices.SortStableFunc(vec, func(a, b *hit) int { return a.ranks[signalVector] - b.ranks[signalVector] })
	for i, h := range vec {
		if i >= vectorPool && len(h.ranks) == 1 {
			p.remove(h.mem.ID)
			continue
		}
		h.ranks[signalVector] = i + 1
	}
	return nil
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

// remove drops id from the pool.
func (p *pool) remove(id string) {
	delete(p.hits, id)
	p.order = slices.DeleteFunc(p.order, func(x string) bool { return x == id })
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
