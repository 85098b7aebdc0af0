package engine

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/policy"
)

// Relevance is absolute: how well one memory answers the query, the same
// number whatever else the query found. The fused score is relative (a
// lone hit, or the best of a pool of strangers, scores high), so it orders
// results but cannot say whether any of them is worth returning. A result's
// confidence starts from its relevance, and search abstains when no result
// is relevant enough (policy retrieval.abstention_threshold).
//
// Relevance is the query-memory cosine of the embedder plus a little for
// the share of the query's keyword terms (stems, stop words left out) that
// the memory's title and text contain, mapped through the policy's
// calibrated logistic (policy.Relevance). Without a cosine (no vector index
// or embedder, or a memory not indexed yet) it is that share alone:
// absolute too, but not calibrated, so without vectors search never
// abstains.

// relevanceOf maps a cosine and a keyword coverage to a relevance in [0,1]
// with calibration c.
func relevanceOf(c policy.Relevance, cosine, coverage float64) float64 {
	return 1 / (1 + math.Exp(-(cosine+c.Coverage()*coverage-c.CosineMid)/c.CosineWidth))
}

// scoreRelevance loads the versions of hs and sets their relevance. A hit
// the vector signal returned carries its cosine; the others (keyword or
// graph hits outside the vector pool) are scored against the query vector
// qvec with Index.Score under q's filter; content is the embedding of the
// query without its calendar dates, when it has any, and a hit takes the
// better of its two cosines. When the vector signal did not run (keyword
// mode, graph mode without rerank) qvec is nil and the query is embedded
// here; without vectors relevance is coverage alone.
func (e *Engine) scoreRelevance(ctx context.Context, q searchPlan, qvec, content []float32, hs []*hit) error {
	if len(hs) == 0 {
		return nil
	}
	if err := e.loadVersions(ctx, q.f, hs); err != nil {
		return err
	}
	if qvec == nil && q.withVectors {
		var err error
		if qvec, content, err = e.embedQuery(ctx, q); err != nil {
			return err
		}
	}
	var missing []*hit
	for _, h := range hs {
		if c, ok := h.rawScore(signalVector); ok {
			h.cosine, h.hasCosine = c, true
		} else if !h.hasCosine {
			missing = append(missing, h)
		}
	}
	if qvec != nil {
		if err := e.indexCosines(ctx, q, qvec, missing, func(h *hit, c float64) { h.cosine, h.hasCosine = c, true }); err != nil {
			return err
		}
	}
	// With dates in the query, the better of the cosines with and without
	// them (contentQuery): the dates are judged against the memory's own
	// date (dateWords), and need not be in what it says.
	if content != nil {
		scored := slices.DeleteFunc(slices.Clone(hs), func(h *hit) bool { return !h.hasCosine })
		if err := e.indexCosines(ctx, q, content, scored, func(h *hit, c float64) { h.cosine = max(h.cosine, c) }); err != nil {
			return err
		}
	}
	terms := bm25.QueryTerms(keywordQuery(q.text))
	for _, h := range hs {
		cov := coverage(terms, h.mem.Title+"\n"+h.text()+"\n"+dateWords(h.mem), e.stems.Stem)
		if h.hasCosine {
			h.relevance = relevanceOf(q.rt.Relevance, h.cosine, cov)
			// The embedder cannot judge a word it does not know (an id, a
			// code, an invented name): a memory that holds every term of
			// the query is relevant enough to answer, however low the
			// cosine — an exact match never abstains.
			if cov == 1 {
				h.relevance = max(h.relevance, q.rt.AbstentionThreshold)
			}
		} else {
			h.relevance = cov
		}
	}
	return nil
}

// indexCosines scores hs against vec with Index.Score under q's filter
// and hands each hit the index scored, with its cosine, to set.
func (e *Engine) indexCosines(ctx context.Context, q searchPlan, vec []float32, hs []*hit, set func(*hit, float64)) error {
	if len(hs) == 0 {
		return nil
	}
	ids := make([]string, len(hs))
	byID := make(map[string]*hit, len(hs))
	for i, h := range hs {
		ids[i], byID[h.mem.ID] = h.mem.ID, h
	}
	scored, err := e.index.Score(ctx, vec, vectorFilter(q.f), ids)
	if err != nil {
		return fmt.Errorf("relevance: %w", err)
	}
	for _, s := range scored {
		if h := byID[s.ID]; h != nil {
			set(h, float64(s.Score))
		}
	}
	return nil
}

// dateWords is the date a memory speaks of, in words ("3 May 2023"): its
// validity's start, else its creation. A memory's time is part of what it
// says — "What setback did Melanie face in October 2023?" asks of a turn
// written in October 2023 that never says so — so a query's day, month
// and year count as covered by a memory of that date, as its words do.
func dateWords(m graph.Memory) string {
	t := graph.EventTime(m)
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2 January 2006")
}

// coverage is the share of terms found among text's terms, stemmed by
// stem (bm25.Stem or a cache of it; 0 without terms).
func coverage(terms []string, text string, stem func(string) string) float64 {
	if len(terms) == 0 {
		return 0
	}
	want := make(map[string]bool, len(terms))
	for _, t := range terms {
		want[t] = true
	}
	found := 0
	bm25.TokensWith(text, stem, func(t string) {
		if want[t] {
			found++
			delete(want, t)
		}
	})
	return float64(found) / float64(len(terms))
}

// abstains reports whether search under plan q should abstain on hs, the
// results it would return: when the policy sets a threshold, vectors are
// on (relevance is calibrated on the cosine) and no result's relevance
// reaches the threshold.
func abstains(q searchPlan, hs []*hit) bool {
	rt := q.rt
	if rt.AbstentionThreshold <= 0 || !q.withVectors {
		return false
	}
	for _, h := range hs {
		if h.relevance >= rt.AbstentionThreshold {
			return false
		}
	}
	return true
}
