package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
)

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
	floor := vectorFloor(q.rt.Relevance)
	for i, h := range hits { // nearest first
		if float64(h.Score) < floor {
			return hits[:i], nil
		}
	}
	return hits, nil
}

// vectorFloorRelevance is the relevance below which a vector hit is no
// match: the nearest neighbours of a query are whatever the index holds
// nearest, and in a small store or on a topic it does not hold they are
// strangers ("which editor theme do I prefer?" against a note on coffee:
// cosine 0.29). Such a hit would enter fusion as the vector signal's rank
// 2, seed the walk, and reach the results and read_context by no match at
// all.
const vectorFloorRelevance = 1e-4

// vectorFloor is the cosine under which a hit's relevance stays below
// vectorFloorRelevance even when it holds every term of the query
// (relevanceOf with coverage 1): under the default calibration 0.65 -
// 0.05 - 0.02 x ln(1/1e-4 - 1) = 0.416.
func vectorFloor(c policy.Relevance) float64 {
	return c.CosineMid - c.Coverage() - c.CosineWidth*math.Log(1/vectorFloorRelevance-1)
}

// addVector adds the vector signal, hits in rank order. Of the hits loaded
// ahead (hits[:checked]; mems holds those the filter admits) a hit the
// filter hid is left out; the others are added by id, and loadMissing loads
// and filters those it keeps.
func addVector(p *pool, hits []vector.Hit, mems map[string]graph.Memory, checked int) {
	for i, h := range hits {
		if i >= checked {
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
