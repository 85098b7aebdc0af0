package local

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/viterin/vek/vek32"
)

// vecBlockBits sets the slots per block of vectors: 1024, 1.5 MiB at 384
// dimensions.
const vecBlockBits = 10

// vectors is the store of unit vectors, one per slot, in blocks of
// 1<<vecBlockBits slots. Growing it allocates one block and copies nothing:
// one append-grown slice (1.5 GB at 1M points of 384 dimensions) copied
// itself at every growth, holding old and new at once, and kept up to a
// quarter of its size unused.
//
// The blocks live outside the Go heap where the platform allows
// (allocVecs), so a state's vectors are freed explicitly (release), once
// no reader can hold the state: see Index.compact and Index.Close.
type vectors struct {
	dim    int
	n      int // slots
	blocks [][]float32
	maps   [][]byte // the blocks' mappings (allocVecs), to free
}

func (v *vectors) at(s int32) []float32 {
	b := v.blocks[s>>vecBlockBits]
	o := int(s&(1<<vecBlockBits-1)) * v.dim
	return b[o : o+v.dim : o+v.dim]
}

// push appends x as the vector of the next slot.
func (v *vectors) push(x []float32) {
	b := v.n >> vecBlockBits
	if b == len(v.blocks) {
		blk, m := allocVecs(v.dim << vecBlockBits)
		v.blocks, v.maps = append(v.blocks, blk), append(v.maps, m)
	}
	v.blocks[b] = append(v.blocks[b], x...)
	v.n++
}

// release frees the blocks; v holds no vectors after. Nothing may read
// them after: the caller makes sure no reader holds v.
func (v *vectors) release() {
	for _, m := range v.maps {
		freeVecs(m)
	}
	v.blocks, v.maps, v.n = nil, nil, 0
}

// dist is the cosine distance (1 - cosine similarity) between a unit query
// and slot s.
func (v *vectors) dist(q []float32, s int32) float32 {
	return 1 - vek32.Dot(q, v.at(s))
}

// visitSet marks slots seen during one traversal; a generation counter makes
// reset O(1). Sets are pooled by the Index and used by one search at a time.
type visitSet struct {
	marks []uint32
	gen   uint32
}

func (v *visitSet) reset(n int) {
	if len(v.marks) < n {
		v.marks = make([]uint32, n+n/4)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.marks)
		v.gen = 1
	}
}

// first reports whether s is seen for the first time, and marks it.
func (v *visitSet) first(s int32) bool {
	if v.marks[s] == v.gen {
		return false
	}
	v.marks[s] = v.gen
	return true
}

// hnsw is a Hierarchical Navigable Small World graph (Malkov & Yashunin)
// over slots. Nodes are never removed: a deleted or replaced slot stays as a
// navigation node and is excluded from results by the caller's allow
// function, until compaction rebuilds the graph.
type hnsw struct {
	m, m0, efC int
	ml         float64
	rng        *rand.Rand

	levels []uint8
	l0     []int32 // level-0 links, m0 per node
	l0n    []uint8 // level-0 link counts
	upper  [][][]int32
	entry  int32
	top    int
}

const maxLevel = 16

func newHNSW(m, efC int, seed uint64) *hnsw {
	return &hnsw{
		m:     m,
		m0:    2 * m,
		efC:   efC,
		ml:    1 / math.Log(float64(m)),
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		entry: -1,
	}
}

// len is the number of slots the graph covers (slots [0, len)).
func (g *hnsw) len() int { return len(g.levels) }

func (g *hnsw) links(n int32, level int) []int32 {
	if level == 0 {
		o := int(n) * g.m0
		return g.l0[o : o+int(g.l0n[n])]
	}
	return g.upper[n][level-1]
}

func (g *hnsw) setLinks(n int32, level int, ls []int32) {
	if level == 0 {
		o := int(n) * g.m0
		copy(g.l0[o:o+g.m0], ls)
		g.l0n[n] = uint8(len(ls))
		return
	}
	g.upper[n][level-1] = append(g.upper[n][level-1][:0], ls...)
}

func (g *hnsw) maxLinks(level int) int {
	if level == 0 {
		return g.m0
	}
	return g.m
}

func (g *hnsw) randomLevel() int {
	l := int(-math.Log(1-g.rng.Float64()) * g.ml)
	return min(l, maxLevel)
}

// add appends a node for slot n, which must equal g.len(), and links it.
func (g *hnsw) add(vs *vectors, n int32, visit *visitSet) {
	level := g.randomLevel()
	g.levels = append(g.levels, uint8(level))
	g.l0 = append(g.l0, make([]int32, g.m0)...)
	g.l0n = append(g.l0n, 0)
	var up [][]int32
	if level > 0 {
		up = make([][]int32, level)
		for i := range up {
			up[i] = make([]int32, 0, g.m)
		}
	}
	g.upper = append(g.upper, up)
	if g.entry < 0 {
		g.entry, g.top = n, level
		return
	}
	q := vs.at(n)
	ep := item{vs.dist(q, g.entry), g.entry}
	for l := g.top; l > level; l-- {
		ep = g.greedy(vs, q, ep, l)
	}
	eps := []item{ep}
	for l := min(level, g.top); l >= 0; l-- {
		visit.reset(g.len())
		res, _ := g.searchLayer(vs, q, eps, g.efC, l, nil, visit, 0)
		cands := sortedAsc(res)
		chosen := g.selectNeighbors(vs, cands, g.m)
		g.setLinks(n, l, chosen)
		for _, c := range chosen {
			g.linkBack(vs, c, n, l)
		}
		eps = cands
	}
	if level > g.top {
		g.entry, g.top = n, level
	}
}

// linkBack adds n to c's links at level, shrinking them with the neighbour
// heuristic when full.
func (g *hnsw) linkBack(vs *vectors, c, n int32, level int) {
	ls := g.links(c, level)
	if len(ls) < g.maxLinks(level) {
		g.setLinks(c, level, append(slices.Clone(ls), n))
		return
	}
	cv := vs.at(c)
	cands := make([]item, 0, len(ls)+1)
	for _, s := range append(slices.Clone(ls), n) {
		cands = append(cands, item{vs.dist(cv, s), s})
	}
	slices.SortFunc(cands, byDist)
	g.setLinks(c, level, g.selectNeighbors(vs, cands, g.maxLinks(level)))
}

// selectNeighbors is the HNSW heuristic (algorithm 4): keep a candidate only
// when it is closer to the base than to every neighbour already kept, so
// links spread in different directions. cands must be sorted by distance.
func (g *hnsw) selectNeighbors(vs *vectors, cands []item, m int) []int32 {
	out := make([]int32, 0, m)
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		cv := vs.at(c.slot)
		keep := true
		for _, r := range out {
			if vs.dist(cv, r) < c.dist {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c.slot)
		}
	}
	return out
}

// greedy walks level l towards q from ep and returns the closest node found.
func (g *hnsw) greedy(vs *vectors, q []float32, ep item, l int) item {
	for changed := true; changed; {
		changed = false
		for _, s := range g.links(ep.slot, l) {
			if d := vs.dist(q, s); d < ep.dist {
				ep, changed = item{d, s}, true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of one level. Every node is used for
// navigation; only nodes allow accepts (all when allow is nil) enter the
// results, so a filter is applied inside the traversal. budget, when > 0,
// caps the distance evaluations; exhausted reports that it was hit.
func (g *hnsw) searchLayer(vs *vectors, q []float32, eps []item, ef, l int, allow func(int32) bool, visit *visitSet, budget int) (res maxHeap, exhausted bool) {
	cand := make(minHeap, 0, ef*2)
	res = make(maxHeap, 0, ef+1)
	for _, ep := range eps {
		if !visit.first(ep.slot) {
			continue
		}
		cand.push(ep)
		if allow == nil || allow(ep.slot) {
			res.pushBounded(ep, ef)
		}
	}
	evals := 0
	for len(cand) > 0 {
		c := cand.pop()
		if len(res) >= ef && c.dist > res[0].dist {
			break
		}
		for _, s := range g.links(c.slot, l) {
			if !visit.first(s) {
				continue
			}
			d := vs.dist(q, s)
			evals++
			if len(res) < ef || d < res[0].dist {
				cand.push(item{d, s})
				if allow == nil || allow(s) {
					res.pushBounded(item{d, s}, ef)
				}
			}
		}
		if budget > 0 && evals > budget {
			return res, true
		}
	}
	return res, false
}

// search returns up to ef results that allow accepts, closest first.
func (g *hnsw) search(vs *vectors, q []float32, ef int, allow func(int32) bool, visit *visitSet, budget int) ([]item, bool) {
	if g.entry < 0 {
		return nil, false
	}
	ep := item{vs.dist(q, g.entry), g.entry}
	for l := g.top; l > 0; l-- {
		ep = g.greedy(vs, q, ep, l)
	}
	visit.reset(g.len())
	res, exhausted := g.searchLayer(vs, q, []item{ep}, ef, 0, allow, visit, budget)
	return sortedAsc(res), exhausted
}

func sortedAsc(h maxHeap) []item {
	out := slices.Clone([]item(h))
	slices.SortFunc(out, byDist)
	return out
}

func byDist(a, b item) int {
	switch {
	case a.dist < b.dist:
		return -1
	case a.dist > b.dist:
		return 1
	}
	return int(a.slot) - int(b.slot)
}
