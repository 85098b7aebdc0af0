package graph

import (
	"context"
	"math"
)

// WalkRequest asks a store for a personalized PageRank over the graph that
// a filter admits: memories, the entities they MENTION, and the links
// between memories (NEXT within a session, SUPERSEDES, explicit relations).
// The walk restarts at the seeds; a memory scores by how much of the walk's
// time it holds. Everything the walk loads passes the filter inside the
// store's query, and every weight it uses (an entity's specificity) is
// counted over admitted memories only, so a reader's scores depend only on
// what it may read.
type WalkRequest struct {
	// Entities seeds the walk at entities, by norm name or alias (the
	// query's linked entities), each with its weight (> 0).
	Entities map[string]float64
	// Memories seeds the walk at memories by id (the best dense and
	// keyword hits, as HippoRAG 2 seeds passages), each with its weight.
	Memories map[string]float64
	// Damping is the probability of following an edge at each step; the
	// walk restarts at the seeds with 1 - Damping. 0 means DefaultDamping.
	Damping float64
	// Limit is how many memories to return at most.
	Limit int
}

// WalkWarmer is a store whose walks keep what they read for the next walk
// at the same state (graph/sqlite's walk cache: posting lists and mentions
// until the next write). WarmWalk reads the neighbourhood Walk would load
// for r into that cache, and ranks and returns nothing: a search warms the
// walk from the seeds it already has while the rest are found, so that the
// walk reads only what the late seeds add. The walk's results do not
// depend on it.
type WalkWarmer interface {
	WarmWalk(ctx context.Context, f Filter, r WalkRequest) error
}

// KeywordRanker is a store whose keyword search ranks and admits matches in
// its own process before it reads them (graph/neo4j: its keyword index and
// its copy of the filter's attributes). KeywordSearchRanked is
// KeywordSearch(ctx, f, query, limit) that, once it has ranked and before
// it reads the hits, calls ranked at most once with the ids of its first n,
// best first: the hits it returns begin with them whenever the process's
// copy is current. It does not call ranked when it ranks in the store
// itself (a filter the process cannot decide). A search uses the ids to
// seed its walk while the hits load, never as results: the walk admits
// what it returns itself.
type KeywordRanker interface {
	KeywordSearchRanked(ctx context.Context, f Filter, query string, limit, n int, ranked func(ids []string)) ([]Scored, error)
}

// Walked is a memory the walk reached, with its score: the PageRank mass
// that reaches it over its edges, per unit of its degree (walk.Result).
type Walked struct {
	Memory Memory  `json:"memory"`
	Score  float64 `json:"score"`
	// Via names (norm names) the entities that carried the most score to
	// it, at most WalkVia, most first: the path an agent can read.
	Via []string `json:"via,omitempty"`
}

// Bounds of the neighbourhood a walk loads, so that its cost does not grow
// with the corpus: from the seed entities, at most WalkFanout admitted
// memories each (the newest); from those and the seed memories, their
// entities; from those entities again their admitted memories, when there
// are no more than WalkFanout (an entity of this second hop with more is
// not expanded: following it to an arbitrary WalkFanout of its memories
// would say nothing, and counting it exactly would cost more than the rest
// of the walk, so it weighs as walk.CommonDF); at most WalkMaxNodes
// memories in all, the rarest entities' first. Links between memories
// (NEXT, SUPERSEDES) are followed the same way: the admitted memories
// linked to the seed memories and the first hop's join the first hop, and
// those linked to the first hop join the second. A seed entity mentioned by
// more than WalkMaxDF admitted memories is too common to carry a signal
// and is not expanded (it still seeds when the query names it). Last, the
// admitted memories related to any memory loaded by an explicit relation
// the filter sees (Relations) join while there is room, in id order,
// bringing no edge but their relations. The walk holds every MENTIONS edge
// between the memories and entities loaded, and every relation between
// them.
const (
	DefaultDamping = 0.5
	WalkFanout     = 32
	WalkMaxDF      = 500
	WalkMaxNodes   = 2000
	WalkVia        = 3
)

// MaxWalkSeeds caps the seeds of one WalkRequest (entities and memories
// together), so that no walk outgrows a store's parameter limits.
const MaxWalkSeeds = 256

// Validate reports a request no store should run: too many seeds, a seed
// weight that is negative or not finite, a damping outside [0, 1), or a
// negative limit.
func (r WalkRequest) Validate() error {
	if n := len(r.Entities) + len(r.Memories); n > MaxWalkSeeds {
		return invalid("seeds", "lists %d seeds, more than %d", n, MaxWalkSeeds)
	}
	for field, seeds := range map[string]map[string]float64{"entities": r.Entities, "memories": r.Memories} {
		for k, w := range seeds {
			if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
				return invalid(field, "seed %q has weight %v; want a finite weight >= 0", k, w)
			}
			if len(k) > MaxNameLen {
				return invalid(field, "has a seed longer than %d bytes", MaxNameLen)
			}
		}
	}
	if r.Damping < 0 || r.Damping >= 1 || math.IsNaN(r.Damping) {
		return invalid("damping", "is %v; want 0 (the default) or a probability below 1", r.Damping)
	}
	if r.Limit < 0 {
		return invalid("limit", "is %d; want >= 0", r.Limit)
	}
	return nil
}
