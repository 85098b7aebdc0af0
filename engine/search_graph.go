package engine

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

// The graph signal is a personalized PageRank (Store.Walk) over the
// memory-entity graph the filter admits, seeded, as HippoRAG 2 seeds its
// walk, at the entities the query names and at the best hits of the other
// signals of the same search. docs/search.md, "The graph signal", works an
// example through; docs/benchmarks.md records how the numbers below were
// chosen.
const (
	// walkPool is how many memories the walk hands to fusion.
	walkPool = 100
	// walkSeedHits is how many of the best vector hits, and of the best
	// keyword hits, seed the walk, each weighing 1/rank within its signal:
	// 3 and 5 gave the same R@5 on MuSiQue and HotpotQA, and each seed
	// adds its entities' memories to the neighbourhood the store loads.
	walkSeedHits = 3
	// lowerCaseLink is the seed weight of a query name none of whose words
	// is capitalised in the query, against 1 for a name written as a
	// proper noun ("Hank Snow", "Publix"): "state" or "first" may name an
	// entity of the graph, but a query that capitalises its names means
	// its names. A query without capitals gives every name the same
	// weight (only the ratio matters).
	lowerCaseLink = 0.1
	// walkDamping is the probability that the walk follows an edge at
	// each step rather than restart at a seed. A multi-hop question's
	// bridge passage sits three edges from the entity the question names
	// (entity, passage, entity, passage) and two from a seed passage; at
	// HippoRAG's 0.5 an edge keeps half the mass, at 0.7 seven tenths,
	// so the second hop keeps 0.34 of the mass instead of 0.13. HippoRAG's
	// seeds are filtered by an LLM; these are not, and reach the bridge
	// less often. After the store's 30 iterations 0.7 leaves 2e-5 of the
	// mass unplaced, 0.85 (PageRank's) 8e-3. Measured on the dev sets at
	// 0e4973c (docs/benchmarks.md): MuSiQue R@5 +0.01 hybrid, +0.03 graph
	// mode; LoCoMo R@10 +0.017 hybrid; HotpotQA hybrid the same.
	walkDamping = 0.7
)

// queryEntities links the query to entity seeds: its names (queryNames),
// each weighing 1 when every word of it is capitalised in the query (a
// proper noun) and lowerCaseLink otherwise, and the same names without
// their diacritics. The store resolves them to entities by norm name or
// alias (an entity's folded name is one of its aliases); names that
// resolve to none are ignored.
func queryEntities(query string) map[string]float64 {
	names := queryNames(query)
	if len(names) == 0 {
		return nil
	}
	proper := properNames(query)
	out := make(map[string]float64, len(names))
	for _, n := range names {
		w := lowerCaseLink
		if proper[n] {
			w = 1
		}
		out[n] = max(out[n], w)
		// A name written with its accents also links to the folded
		// alias the write path stores (extract.FoldName).
		if f := extract.FoldName(n); f != n {
			out[f] = max(out[f], w)
		}
	}
	return out
}

// properNames returns the lower-cased 1-3 word spans of query written as
// proper nouns: each word starts with a capital letter or a digit, but for
// stop words inside the span ("Siege of Cassel"). The query's first word,
// capitalised as a sentence, counts only when the next word is capitalised
// too.
func properNames(query string) map[string]bool {
	raw := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	capital := make([]bool, len(raw))
	for i, w := range raw {
		r := []rune(w)[0]
		capital[i] = unicode.IsUpper(r) || unicode.IsDigit(r)
	}
	if len(raw) > 0 && (len(raw) == 1 || !capital[1]) {
		capital[0] = false
	}
	out := map[string]bool{}
	for i := range raw {
		if !capital[i] {
			continue
		}
		for n := 1; n <= 3 && i+n <= len(raw); n++ {
			last := i + n - 1
			if !capital[last] {
				if stopWords[strings.ToLower(raw[last])] {
					continue // inside the span, if a capital follows
				}
				break
			}
			out[strings.ToLower(strings.Join(raw[i:i+n], " "))] = true
		}
	}
	return out
}

// walkSeeds are the seeds of one walk: entities linked from the query and
// memories from the other signals' best hits, and how many memories the
// walk returns. Each kind of seed weighs as much in all as the other (the
// store's Rank normalises the whole).
type walkSeeds struct {
	entities map[string]float64
	memories map[string]float64
	limit    int
}

// addHits seeds the walk at ids, best first, weighing 1/rank.
func (s *walkSeeds) addHits(ids []string) {
	if s.memories == nil {
		s.memories = map[string]float64{}
	}
	for i, id := range ids {
		s.memories[id] += 1 / float64(i+1)
	}
}

// with returns a copy of s with the memories ids added as addHits adds
// them; s is unchanged.
func (s walkSeeds) with(ids []string) walkSeeds {
	s.memories = maps.Clone(s.memories)
	s.addHits(ids)
	return s
}

// request builds the store's request: entity and memory seeds each
// normalised to a total of 1, so that neither kind drowns the other.
func (s walkSeeds) request() graph.WalkRequest {
	return graph.WalkRequest{Entities: normalised(s.entities), Memories: normalised(s.memories),
		Damping: walkDamping, Limit: s.limit}
}

// normalised scales weights to a sum of 1 (nil when empty), summed in key
// order so that the same weights give the same seeds to the last bit.
func normalised(m map[string]float64) map[string]float64 {
	var sum float64
	for _, k := range slices.Sorted(maps.Keys(m)) {
		sum += m[k]
	}
	if sum <= 0 {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, w := range m {
		out[k] = w / sum
	}
	return out
}

// walkSearch adds the graph signal: the memories the walk from seeds
// reaches, by walk score (the PageRank mass that reaches a memory over its
// edges, per unit of its degree: graph/walk.Result), each with the
// entities that carried most of its score as its path. The signal's score
// is the square root of the walk score (graphScore). The store runs the
// walk under q's filter, so a memory the reader may not read is neither
// returned nor crossed.
func (e *Engine) walkSearch(ctx context.Context, q searchPlan, p *pool, seeds walkSeeds) error {
	ws, err := e.walk(ctx, q, seeds)
	addWalked(p, ws)
	return err
}

// walk runs the store's walk from seeds (nothing when nothing seeds it).
func (e *Engine) walk(ctx context.Context, q searchPlan, seeds walkSeeds) ([]graph.Walked, error) {
	r := seeds.request()
	if len(r.Entities) == 0 && len(r.Memories) == 0 {
		return nil, nil
	}
	ws, err := e.store.Walk(ctx, q.f, r)
	if err != nil {
		return nil, fmt.Errorf("graph walk: %w", err)
	}
	return ws, nil
}

// warmWalk starts warming the store's walk from seeds (graph.WalkWarmer)
// and returns a channel closed when it ends: at once when the store cannot
// warm or nothing seeds the walk. Its error is dropped: the walk itself
// meets it.
func (e *Engine) warmWalk(ctx context.Context, q searchPlan, seeds walkSeeds) <-chan struct{} {
	done := make(chan struct{})
	r := seeds.request()
	if e.caps.warmer == nil || (len(r.Entities) == 0 && len(r.Memories) == 0) {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		_ = e.caps.warmer.WarmWalk(ctx, q.f, r)
	}()
	return done
}

// addWalked adds the graph signal, the walk's memories in its order.
func addWalked(p *pool, ws []graph.Walked) {
	for i := range ws {
		w := &ws[i]
		h := p.add(signalGraph, i+1, w.Memory.ID, &w.Memory, graphScore(w.Score))
		h.path = w.Via
	}
}

// graphScore is the graph signal's score of a walk score: its square
// root. A walk score is the mass a random walk leaves at a memory, a visit
// rate, heavy-tailed: a few memories next to the seeds hold most of it and
// the rest a long tail, so under z-score fusion the first few drowned every
// other memory the walk reached and the tail's order counted for nothing.
// The square root is the variance-stabilising transform of a count (as
// Anscombe's for Poisson counts): it keeps the walk's order and evens its
// spread, like the cosines and BM25 scores it is fused with. Measured at
// 8456381 (docs/benchmarks.md, "The graph signal's scale"): LoCoMo R@10
// 0.731 -> 0.739 (multi-hop 0.414 -> 0.422), MuSiQue R@5 0.703 -> 0.707,
// HotpotQA 0.950 either way; the logarithm went further on LoCoMo (0.740)
// but cost MuSiQue 0.033.
func graphScore(walk float64) float64 { return math.Sqrt(walk) }

// keywordIDs lists the ids of the first n keyword hits, best first.
func keywordIDs(hits []graph.Scored, n int) []string {
	out := make([]string, min(len(hits), n))
	for i := range out {
		out[i] = hits[i].Memory.ID
	}
	return out
}

// vectorIDs lists the ids of the vector hits the filter admitted (all of
// them when they were not loaded ahead), best first.
func vectorIDs(hits []vector.Hit, admitted map[string]graph.Memory) []string {
	var out []string
	for _, h := range hits {
		if len(out) == walkSeedHits {
			break
		}
		if _, ok := admitted[h.ID]; ok || admitted == nil {
			out = append(out, h.ID)
		}
	}
	return out
}
