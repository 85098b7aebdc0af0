// Package walk is the personalized PageRank both stores run for
// graph.Store.Walk, so that one neighbourhood scores the same on SQLite and
// Neo4j. A store loads the bounded neighbourhood its filter admits (see
// graph.WalkRequest) into a Graph — which memories mention which entities,
// each entity's mention count over admitted memories, links between
// memories — and Rank walks it.
//
// The graph is undirected and weighted. A MENTIONS edge between a memory
// and an entity weighs the entity's specificity, 1/ln(1 + df) with df the
// admitted memories that mention it (HippoRAG's node specificity, softened
// so an entity in two memories still walks); a link between memories
// weighs what its kind says (the store chooses; docs/search.md). From a
// node the walk follows an edge with probability proportional to its
// weight, and with probability 1 - damping restarts at a seed drawn by the
// seeds' weights.
package walk

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// Weights of the links between memories, against a MENTIONS edge's
// Specificity (1.44 for an entity two admitted memories mention, 0.72 for
// one in four, 0.16 at graph.WalkMaxDF). A link says less than a shared
// rare entity and about as much as a shared common one: the next turn of a
// conversation or chunk of a document, or the memory that replaced this
// one, is often about the same thing, but not always (docs/graph.md).
const (
	NextWeight       = 0.5
	SupersedesWeight = 0.5
)

// RelationWeight is the weight of an explicit relation between two
// memories (graph.Relation, of any type): someone said these two belong
// together, which says more than a NEXT or SUPERSEDES link and about as
// much as an entity three admitted memories share (0.91), less than one
// only two share (1.44). A pair already linked by NEXT or SUPERSEDES keeps
// that link alone (one link per pair).
const RelationWeight = 1.0

// LinkWeight is the weight of a link of kind NEXT or SUPERSEDES (the
// relationship types; 0, no link, for any other).
func LinkWeight(kind string) float64 {
	switch kind {
	case "NEXT":
		return NextWeight
	case "SUPERSEDES":
		return SupersedesWeight
	}
	return 0
}

// CommonDF is the df a store gives an entity of the second hop that more
// than graph.WalkFanout admitted memories mention: it is not expanded, and
// counting it exactly would cost more than the rest of the walk, so it
// weighs as the commonest entity a walk expands (Specificity 0.16; an
// exact count up to graph.WalkMaxDF would say between 0.16 and 0.28).
const CommonDF = graph.WalkMaxDF

// Iterations bounds the power iteration; Tolerance ends it early once the
// scores move less than this in L1.
const (
	Iterations = 30
	Tolerance  = 1e-6
)

// Graph is a walk's neighbourhood. The zero value is not ready: use New.
type Graph struct {
	mem   map[string]int // memory id -> node
	ent   map[string]int // entity norm name -> node
	ids   []string       // node -> memory id or entity name
	isEnt []bool
	df    map[string]int64
	adj   [][]edge
	seen  map[[2]int]bool // undirected pairs already linked
}

type edge struct {
	to int
	w  float64
}

// New returns an empty neighbourhood.
func New() *Graph {
	return &Graph{mem: map[string]int{}, ent: map[string]int{}, df: map[string]int64{}, seen: map[[2]int]bool{}}
}

func (g *Graph) node(id string, entity bool) int {
	idx := g.mem
	if entity {
		idx = g.ent
	}
	if n, ok := idx[id]; ok {
		return n
	}
	n := len(g.ids)
	idx[id] = n
	g.ids = append(g.ids, id)
	g.isEnt = append(g.isEnt, entity)
	g.adj = append(g.adj, nil)
	return n
}

// Memory adds a memory node (a seed or a loaded memory without entities).
func (g *Graph) Memory(id string) { g.node(id, false) }

// Mention records that memory id mentions entity (a norm name). Repeats
// are ignored.
func (g *Graph) Mention(id, entity string) {
	g.link(g.node(id, false), g.node(entity, true), 0)
}

// DF sets how many admitted memories mention entity (at least 1 is
// assumed). Entities without a DF count the mentions the Graph holds.
func (g *Graph) DF(entity string, df int64) { g.df[entity] = df }

// Link records an undirected link of weight w > 0 between two memories.
func (g *Graph) Link(a, b string, w float64) {
	if a == b || w <= 0 {
		return
	}
	g.link(g.node(a, false), g.node(b, false), w)
}

func (g *Graph) link(a, b int, w float64) {
	k := [2]int{min(a, b), max(a, b)}
	if g.seen[k] {
		return
	}
	g.seen[k] = true
	g.adj[a] = append(g.adj[a], edge{b, w})
	g.adj[b] = append(g.adj[b], edge{a, w})
}

// Memories is how many memory nodes the Graph holds.
func (g *Graph) Memories() int { return len(g.mem) }

// HasEntity reports whether the Graph holds entity.
func (g *Graph) HasEntity(name string) bool { _, ok := g.ent[name]; return ok }

// Specificity is the weight of a MENTIONS edge to an entity that df
// admitted memories mention.
func Specificity(df int64) float64 { return 1 / math.Log(1+float64(max(df, 1))) }

// Result is a memory's score and the entities that carried the most of
// it.
//
// Score is the PageRank mass that reaches the memory over its edges,
// divided by the memory's edge weight in the neighbourhood (its degree).
// Two corrections to the raw PageRank p(v), which the dev sets confirmed
// (docs/benchmarks.md, "Degree-normalised walk scores"):
//
//   - Per unit of degree. A memory with more, or more specific, entities
//     collects more mass whatever the seeds: on an undirected graph p(v)
//     grows with deg(v) even without personalization. p(v) / deg(v) is
//     the sweep order of Andersen, Chung and Lang's local partitioning
//     (PageRank-Nibble), and by the walk's reversibility it equals
//     sum over seeds s of weight(s) * p_v(s) / deg(s), with p_v a walk
//     that restarts at v: how close v is to the seeds, seen from v.
//   - Without the restart. The walk restarts at a seed memory with mass
//     (1 - damping) times its seed weight, and that weight comes from the
//     other signals (the best vector and keyword hits): counted again in
//     the graph signal it would only repeat them. What reaches a memory
//     over its edges is what the graph adds, for a seed and a non-seed
//     alike.
//
// A memory with no edge (no entity, no link) has no score and is not
// returned, seed or not; nor is a seed whose entities no other memory of
// the neighbourhood mentions and none of which is a seed, and that has
// no link: all that reaches it is its own restart mass come back (a
// vector hit on another topic, in a small store), and a path through
// itself alone relates it to nothing.
type Result struct {
	ID    string
	Score float64
	Via   []string
}

// Rank runs personalized PageRank from the seeds of r that the Graph
// holds and returns memories by Score, highest first (ties by id), at most
// r.Limit (all when 0). Seed memories are returned too, scored by what the
// graph sends back to them (unless only they send it). No seed in the
// Graph: nil.
func (g *Graph) Rank(r graph.WalkRequest) []Result {
	n := len(g.ids)
	// Weights of MENTIONS edges come from the entities' specificity.
	for a := range g.adj {
		for i, e := range g.adj[a] {
			if e.w == 0 {
				ent := g.ids[e.to]
				if !g.isEnt[e.to] {
					ent = g.ids[a]
				}
				df, ok := g.df[ent]
				if !ok {
					df = int64(len(g.adj[g.ent[ent]]))
				}
				g.adj[a][i].w = Specificity(df)
			}
		}
	}
	// Seeds summed in name order: a sum in map order differs in its last
	// bits from one walk to the next, and so would every score.
	reset := make([]float64, n)
	var total float64
	for _, name := range slices.Sorted(maps.Keys(r.Entities)) {
		if k, ok := g.ent[name]; ok && r.Entities[name] > 0 {
			reset[k] += r.Entities[name]
			total += r.Entities[name]
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.Memories)) {
		if k, ok := g.mem[id]; ok && r.Memories[id] > 0 {
			reset[k] += r.Memories[id]
			total += r.Memories[id]
		}
	}
	if total == 0 {
		return nil
	}
	for i := range reset {
		reset[i] /= total
	}
	d := r.Damping
	if d <= 0 || d >= 1 {
		d = graph.DefaultDamping
	}
	out := make([]float64, n) // total edge weight from each node, in the whole graph
	for a, es := range g.adj {
		for _, e := range es {
			out[a] += e.w
		}
	}
	// An entity the store counted more mentions for than it loaded (a
	// seed entity's newest WalkFanout, a common entity of the second hop)
	// walks to each memory with the chance the whole graph gives it, 1/df:
	// the share of its unloaded memories leaves the neighbourhood. Were it
	// spread over the memories loaded, a memory that hangs on a common
	// entity alone would be as close to the seeds as one on a rare entity.
	deg := slices.Clone(out) // the edge weight each node has in the neighbourhood
	for a := range out {
		if df, ok := g.df[g.ids[a]]; ok && g.isEnt[a] {
			out[a] = max(out[a], float64(df)*Specificity(df))
		}
	}
	p := slices.Clone(reset)
	next := make([]float64, n)
	for range Iterations {
		var dangling float64
		for i := range next {
			next[i] = 0
		}
		for a, es := range g.adj {
			if out[a] == 0 {
				dangling += p[a]
				continue
			}
			for _, e := range es {
				next[e.to] += d * p[a] * e.w / out[a]
			}
		}
		// The walk restarts at the seeds, and so does the mass of nodes
		// with no edge.
		var delta float64
		for i := range next {
			next[i] += (1 - d + d*dangling) * reset[i]
			delta += math.Abs(next[i] - p[i])
		}
		p, next = next, p
		if delta < Tolerance {
			break
		}
	}
	// A memory's score is the mass that reaches it over its edges at the
	// fixed point — not the restart mass a seed memory receives, which is
	// the seed weight the other signals already gave it — per unit of its
	// own edge weight (Score).
	arrived := make([]float64, n)
	for a, es := range g.adj {
		if out[a] == 0 || p[a] == 0 {
			continue
		}
		for _, e := range es {
			arrived[e.to] += d * p[a] * e.w / out[a]
		}
	}
	// A seed memory whose edges all lead to entities only it mentions
	// here, none of them a seed, gets back only what it sent: nothing
	// relates it to the rest, and it has no score (alone).
	res := make([]Result, 0, len(g.mem))
	for id, k := range g.mem {
		if arrived[k] > 0 && (reset[k] == 0 || !g.alone(k, reset)) {
			res = append(res, Result{ID: id, Score: arrived[k] / deg[k]})
		}
	}
	slices.SortFunc(res, func(a, b Result) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
	})
	if r.Limit > 0 && len(res) > r.Limit {
		res = res[:r.Limit]
	}
	for i := range res {
		res[i].Via = g.via(res[i].ID, p)
	}
	return res
}

// via names the entities that sent the most score to memory id.
func (g *Graph) via(id string, p []float64) []string {
	k := g.mem[id]
	type c struct {
		name string
		s    float64
	}
	var cs []c
	for _, e := range g.adj[k] {
		if g.isEnt[e.to] {
			cs = append(cs, c{g.ids[e.to], p[e.to] * e.w})
		}
	}
	slices.SortFunc(cs, func(a, b c) int { return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.name, b.name)) })
	out := make([]string, 0, graph.WalkVia)
	for _, x := range cs[:min(len(cs), graph.WalkVia)] {
		out = append(out, x.name)
	}
	return out
}

// alone reports whether every edge of memory k leads to an entity that
// only k mentions in the neighbourhood and that is no seed: whatever mass
// reaches k over its edges is mass k sent out (its restart as a seed),
// which the score leaves out (Result).
func (g *Graph) alone(k int, reset []float64) bool {
	for _, e := range g.adj[k] {
		if !g.isEnt[e.to] || reset[e.to] > 0 || len(g.adj[e.to]) > 1 {
			return false
		}
	}
	return true
}
