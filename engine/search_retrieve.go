package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/kwindex"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
)

// Candidate pool sizes: how many memories each signal hands to fusion. They
// trade recall for latency; docs/search.md records how they were tuned.
const (
	// graphPool caps Store.Candidates and Store.Neighbours of the
	// node_distance reranker.
	graphPool = 200
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
	// walkSeedHead is how many of the best vector hits load ahead of the
	// rest, to find the walk's vector seeds among them (queryVector.seeds):
	// room for a few the filter hides.
	walkSeedHead = 2 * walkSeedHits
)

// retrieve runs the signals of q's mode into one pool. It reports whether
// graph mode fell back to the other signals.
func (e *Engine) retrieve(ctx context.Context, q searchPlan) (*pool, bool, error) {
	switch q.mode {
	case policy.ModeKeyword:
		p, err := e.retrieveKeyword(ctx, q)
		return p, false, err
	case policy.ModeVector:
		p, err := e.retrieveVector(ctx, q)
		return p, false, err
	case policy.ModeHybrid:
		p, err := e.retrieveHybrid(ctx, q)
		return p, false, err
	}
	return e.retrieveGraph(ctx, q)
}

// retrieveKeyword runs the keyword signal alone.
func (e *Engine) retrieveKeyword(ctx context.Context, q searchPlan) (*pool, error) {
	p := newPool()
	return p, e.keywordSearch(ctx, q, p, nil)
}

// retrieveVector runs the vector signal alone (nothing without vectors).
func (e *Engine) retrieveVector(ctx context.Context, q searchPlan) (*pool, error) {
	p := newPool()
	v := e.startQueryVector(ctx, q, aheadSearch)
	defer v.wait()
	return p, v.search(ctx, p)
}

// retrieveHybrid runs the three signals. The query is embedded, the index
// searched and its hits loaded while the store answers the keyword signal;
// then the graph walk starts from the entities the query names and from the
// best hits of both (search_graph.go). A signal whose fusion weight is 0
// could only add unscored hits, so it does not run, and it seeds no walk.
func (e *Engine) retrieveHybrid(ctx context.Context, q searchPlan) (*pool, error) {
	runs := func(signal string) bool { return weight(q.rt.FusionWeights, signal) > 0 }
	p := newPool()
	var v *queryVector
	if runs(signalVector) {
		v = e.startQueryVector(ctx, q, aheadSearch)
		defer v.wait()
	}
	var kw []graph.Scored
	if runs(signalKeyword) {
		var err error
		if kw, err = e.keywordHits(ctx, q); err != nil {
			return nil, err
		}
	}
	// The walk starts as soon as its vector seeds are known, while the
	// rest of the vector hits load (queryVector.seeds): the two store
	// reads overlap, and the pool takes the signals in the same order.
	// Until the seeds are known, a store that can warms the walk from
	// the query's entities and the keyword seeds (graph.WalkWarmer), on
	// the core the embedding leaves free; the walk then reads only what
	// the vector seeds add.
	var walked []graph.Walked
	if runs(signalGraph) {
		seeds := walkSeeds{entities: queryEntities(q.text), limit: walkPool}
		kwIDs := keywordIDs(kw, walkSeedHits)
		if v != nil {
			warmed := e.warmWalk(ctx, q, seeds.with(kwIDs))
			ids, err := v.seeds(ctx)
			<-warmed
			if err != nil {
				return nil, err
			}
			seeds.addHits(ids)
		}
		seeds.addHits(kwIDs)
		var err error
		if walked, err = e.walk(ctx, q, seeds); err != nil {
			return nil, err
		}
	}
	if v != nil {
		if err := v.search(ctx, p); err != nil {
			return nil, err
		}
	}
	addKeyword(p, kw, nil)
	addWalked(p, walked)
	return p, nil
}

// retrieveGraph runs the graph signal: a walk from the entities the query
// names and from the best keyword hits (graph mode has no dense pass of its
// own; the keyword hits are the store's). With rerank on, the walk's
// memories and the keyword hits are the candidates, scored by vector
// similarity and keyword rank besides the walk, so graph mode adds to
// keyword search what the walk reaches; with rerank off, the walk's
// memories in its order, then the keyword seeds it did not return
// (addUnwalkedSeeds). When nothing seeds the walk and no keyword hit is
// found, the vector signal runs instead (the fallback, reported). The query embeds
// ahead only for the rerank; without rerank, only when the fallback needs
// it.
func (e *Engine) retrieveGraph(ctx context.Context, q searchPlan) (*pool, bool, error) {
	p := newPool()
	ahead := aheadNone
	if q.rt.RerankEnabled() {
		ahead = aheadEmbed
	}
	v := e.startQueryVector(ctx, q, ahead)
	defer v.wait()
	kw, err := e.graphSignal(ctx, q, p)
	if err != nil {
		return nil, false, err
	}
	if len(p.order) == 0 && len(kw) == 0 {
		return p, true, v.search(ctx, p)
	}
	if !q.rt.RerankEnabled() {
		addUnwalkedSeeds(p, kw)
		return p, false, nil
	}
	addKeyword(p, kw, nil)
	if q.withVectors {
		qvec, err := v.embedding(ctx)
		if err != nil {
			return nil, false, err
		}
		hits, err := e.index.Score(ctx, qvec, vectorFilter(q.f), slices.Clone(p.order))
		if err != nil {
			return nil, false, fmt.Errorf("vector rerank: %w", err)
		}
		for i, h := range hits {
			p.add(signalVector, i+1, h.ID, nil, float64(h.Score))
		}
		p.qvec, p.qcontent = qvec, v.content
	}
	return p, false, nil
}

// addUnwalkedSeeds adds, as keyword hits, the walk's keyword seeds (the
// best walkSeedHits keyword hits) that the walk did not return: it gives
// no score to a seed nothing in the graph relates to the rest (graph/walk,
// Result), and graph mode without the rerank has no other signal to keep
// its best keyword matches. rank puts them after the walk's memories.
func addUnwalkedSeeds(p *pool, kw []graph.Scored) {
	seeds := kw[:min(len(kw), walkSeedHits)]
	unwalked := make(map[string]bool, len(seeds))
	for _, s := range seeds {
		if _, ok := p.hits[s.Memory.ID]; !ok {
			unwalked[s.Memory.ID] = true
		}
	}
	if len(unwalked) > 0 {
		addKeyword(p, seeds, unwalked)
	}
}

// graphSignal runs graph mode's keyword search and its walk, seeded by the
// query's entities and the best keyword hits. A store that ranks keyword
// matches before reading them (graph.KeywordRanker) names those seeds
// while its search runs, and the walk starts then, beside the hits' read;
// otherwise, or when it names none, the walk waits for the hits. Either
// way the walk gets the seeds the hits would give whenever the store's
// copy is current (the ranker's contract).
func (e *Engine) graphSignal(ctx context.Context, q searchPlan, p *pool) ([]graph.Scored, error) {
	seeds := walkSeeds{entities: queryEntities(q.text), limit: walkPool}
	if e.caps.ranker == nil {
		kw, err := e.keywordHits(ctx, q)
		if err != nil {
			return nil, err
		}
		seeds.addHits(keywordIDs(kw, walkSeedHits))
		return kw, e.walkSearch(ctx, q, p, seeds)
	}
	var (
		kw     []graph.Scored
		kwErr  error
		done   = make(chan struct{})
		ranked = make(chan []string, 1) // KeywordSearchRanked calls back at most once
	)
	go func() {
		defer close(done)
		kw, kwErr = e.caps.ranker.KeywordSearchRanked(ctx, q.f, keywordQuery(q.text), keywordPool, walkSeedHits,
			func(ids []string) { ranked <- ids })
		if kwErr != nil {
			kwErr = fmt.Errorf("keyword search: %w", kwErr)
		}
	}()
	var ids []string
	select {
	case ids = <-ranked:
	case <-done:
		select {
		case ids = <-ranked:
		default: // named none: the hits seed the walk
			if kwErr != nil {
				return nil, kwErr
			}
			ids = keywordIDs(kw, walkSeedHits)
		}
	}
	seeds.addHits(ids)
	err := e.walkSearch(ctx, q, p, seeds)
	<-done
	return kw, cmp.Or(kwErr, err)
}

// What a queryVector does ahead, on a goroutine of its own (the embedder
// runs ONNX Runtime on its own threads) while the store answers.
type aheadWork int

const (
	aheadNone   aheadWork = iota // nothing: embed when first asked (graph mode's fallback)
	aheadEmbed                   // embed the query (graph mode's rerank)
	aheadSearch                  // embed, search the index and load the admitted hits (vector and hybrid mode)
)

// queryVector is the vector side of one search: the query's embedding and
// its nearest-neighbour hits, computed ahead where the mode allows. Without
// vectors (q.withVectors false) it does nothing and adds nothing.
type queryVector struct {
	e     *Engine
	q     searchPlan
	ahead aheadWork
	done  chan struct{} // closed when the work ahead ends; nil if none started

	// seeded is closed when walkIDs is final (aheadSearch): before done when
	// the best walkSeedHead hits hold walkSeedHits admitted ones.
	seeded chan struct{}

	vec     []float32
	content []float32 // the query without its dates, when it has any (contentQuery)
	hits    []vector.Hit
	mems    map[string]graph.Memory // hits the filter admits, loaded ahead (aheadSearch)
	checked int                     // hits[:checked] were loaded ahead: mems holds those admitted
	walkIDs []string                // the walk's vector seeds: vectorIDs(hits[:checked], mems)
	err     error
	seedErr error // err when seeded closed
}

// startQueryVector starts the work ahead. The caller must defer wait, so the
// work never runs past the search.
func (e *Engine) startQueryVector(ctx context.Context, q searchPlan, ahead aheadWork) *queryVector {
	v := &queryVector{e: e, q: q, ahead: ahead}
	if !q.withVectors || ahead == aheadNone {
		return v
	}
	v.done, v.seeded = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(v.done)
		seeded := sync.OnceFunc(func() { v.seedErr = v.err; close(v.seeded) })
		defer seeded()
		if v.vec, v.content, v.err = e.embedQuery(ctx, q); v.err != nil || ahead != aheadSearch {
			return
		}
		if v.hits, v.err = e.vectorHits(ctx, q, v.vec); v.err != nil || len(v.hits) == 0 {
			return
		}
		ids := make([]string, len(v.hits))
		for i, h := range v.hits {
			ids[i] = h.ID
		}
		// The best hits load first: when walkSeedHits of them are admitted,
		// they are the walk's vector seeds whatever the rest hold, and the
		// walk need not wait for the rest. The rest load in batches until
		// vectorPool are admitted: a hit past that point stays in the pool
		// only if another signal found it too (loadMissing).
		v.mems = map[string]graph.Memory{}
		batch := min(len(ids), walkSeedHead)
		for round := 1; v.checked < len(ids) && len(v.mems) < vectorPool; round++ {
			next := ids[v.checked:min(len(ids), v.checked+batch)]
			got, err := e.loadAdmitted(ctx, q.f, next)
			if v.err = err; err != nil {
				return
			}
			maps.Copy(v.mems, got)
			v.checked += len(next)
			if len(v.walkIDs) < walkSeedHits { // not seeded yet
				if v.walkIDs = vectorIDs(v.hits[:v.checked], v.mems); len(v.walkIDs) == walkSeedHits {
					seeded() // walkIDs and seedErr stay as they are from here
				}
			}
			batch = nextVectorBatch(round, vectorPool-len(v.mems), v.checked, len(v.mems), len(next))
		}
	}()
	return v
}

// nextVectorBatch sizes batch round (1, 2, ...) of the vector hits loaded
// after the head, when need more must be admitted, checked having been
// loaded and admitted of them passed (last in the batch before). The first
// is the need itself: the filter admits nearly every hit the index returns,
// as the index applies the access rule and every narrowing field but
// statuses, validity and entity types. Later ones follow the keyword
// filter's rule (kwindex.Refill: the need over the pass rate seen, and half
// again; at least twice the last from the third on).
func nextVectorBatch(round, need, checked, admitted, last int) int {
	if round == 1 {
		return need
	}
	return kwindex.Refill(need, checked, admitted, last, round-2)
}

// wait waits for the work ahead, if any.
func (v *queryVector) wait() {
	if v.done != nil {
		<-v.done
	}
}

// embedding returns the query vector: the one embedded ahead, or embedded
// now when nothing ran ahead.
func (v *queryVector) embedding(ctx context.Context) ([]float32, error) {
	switch {
	case v.done != nil:
		<-v.done
	case v.q.withVectors && v.vec == nil && v.err == nil:
		v.vec, v.content, v.err = v.e.embedQuery(ctx, v.q)
	}
	return v.vec, v.err
}

// seeds returns the walk's vector seeds, found ahead (aheadSearch): the
// ids of the best walkSeedHits hits the filter admits. It may return before
// the rest of the hits have loaded; search waits for them.
func (v *queryVector) seeds(ctx context.Context) ([]string, error) {
	if v.seeded == nil {
		return nil, nil
	}
	select {
	case <-v.seeded:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if v.seedErr != nil {
		return nil, v.seedErr
	}
	return v.walkIDs, nil
}

// search adds the vector signal to p: the hits found ahead, or found now.
func (v *queryVector) search(ctx context.Context, p *pool) error {
	if !v.q.withVectors {
		return nil
	}
	if _, err := v.embedding(ctx); err != nil {
		return err
	}
	if v.ahead != aheadSearch {
		var err error
		if v.hits, err = v.e.vectorHits(ctx, v.q, v.vec); err != nil {
			return err
		}
	}
	addVector(p, v.hits, v.mems, v.checked)
	p.qvec, p.qcontent = v.vec, v.content
	return nil
}

// embedQuery embeds q's text and, when it names calendar dates, the text
// without them (q.content; nil otherwise), for relevance. The two go in
// one Embed call, which runs them at once on the embedder's threads.
func (e *Engine) embedQuery(ctx context.Context, q searchPlan) (vec, content []float32, err error) {
	texts := []string{q.text}
	if q.content != "" {
		texts = append(texts, q.content)
	}
	vs, err := e.embedder.Embed(ctx, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != len(texts) {
		return nil, nil, fmt.Errorf("embed query: got %d vectors for %d texts", len(vs), len(texts))
	}
	if len(vs) == 2 {
		content = vs[1]
	}
	return vs[0], content, nil
}
