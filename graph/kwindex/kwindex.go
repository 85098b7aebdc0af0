// Package kwindex is the stores' in-memory keyword index: BM25 over each
// memory's title and indexed body (English-stemmed terms, bm25.Tokens),
// partitioned by tenant, so a query touches only its tenant's postings.
// Each store keeps it in step with its tables or graph (graph/sqlite by the
// versions rowid, graph/neo4j by a per-tenant keyword sequence) and filters
// its ranking with the store's own filter.
//
// A score's statistics (document count, average length, document
// frequencies) are those of the memories the caller may read (graph.Filter
// Admits: its scope and the ones its reader reaches, other users' private
// memories only with AllUsers), whatever their status, and of no other: a
// caller's scores reveal nothing of another tenant, another org or repo, or
// another user's private memories. Inside a tenant, documents fall in groups
// that the rule admits or refuses whole, and each group keeps its own count
// and length.
package kwindex

import (
	"container/heap"
	"encoding/binary"
	"math"
	"sync"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
)

// Index is the keyword index of memories keyed by K (a store's memory
// key: graph/sqlite's rowid, graph/neo4j's creation time and id).
type Index[K comparable] struct {
	mu      sync.RWMutex
	tenants map[string]*part[K]
	first   func(a, b K) bool // at equal scores, a ranks before b

	pool sync.Pool // *scratch
	hits sync.Pool // *[]hit[K]: rankings' heaps, back from Ranking.Release
}

// New returns an empty index whose rankings put a before b at equal
// scores when first(a, b) (the stores: the newer memory first).
func New[K comparable](first func(a, b K) bool) *Index[K] {
	return &Index[K]{tenants: map[string]*part[K]{}, first: first}
}

// scratch is a query's score accumulator, one slot per doc id, all zero
// between queries.
type scratch struct {
	s       []float64
	touched []uint32 // the docs of s that are not 0, in the order first scored
}

// scratch returns a zeroed accumulator of at least n slots.
func (x *Index[K]) scratch(n int) *scratch {
	if a, ok := x.pool.Get().(*scratch); ok && len(a.s) >= n {
		return a
	}
	return &scratch{s: make([]float64, n+n/4)}
}

// part is one tenant's postings.
type part[K comparable] struct {
	termIDs  map[string]uint32
	postings [][]posting // by term id, in doc id order
	df       []int32     // live documents per term id
	docs     []doc[K]    // by doc id; a reindexed memory gets a new doc id
	byKey    map[K]uint32
	live     int
	terms    int // distinct terms of the live documents, summed: their postings
	dead     int
	groups   []group // by group id
	groupIDs map[groupKey]uint32
	stems    bm25.StemCache // token -> stem, for indexing (Snowball is slow); under the index's write lock
	termBuf  []byte         // add's scratch for a doc's encoded terms; under the index's write lock
}

// groupKey places a memory for the access rule: its org and repo, and its
// owner when the memory is private to them (else ""). A memory's scope,
// owner and visibility never change, so neither does its group.
type groupKey struct{ org, repo, owner string }

// group is the live documents of one group key: the units that a filter
// admits or refuses whole, with the counts BM25 needs.
type group struct {
	probe    graph.Memory // a memory of the group, for graph.Filter.Admits
	live     int
	totalLen int64 // tokens in live documents
}

// group returns the id of the group of a memory in scope sc owned by owner
// with visibility vis, adding the group when it is new.
func (p *part[K]) group(sc graph.Scope, owner string, vis graph.Visibility) uint32 {
	k := groupKey{org: sc.OrgID, repo: sc.RepoID}
	probe := graph.Memory{Scope: sc, Visibility: graph.VisibilityProject}
	if vis.Private() && owner != "" {
		k.owner = owner
		probe.UserID, probe.Visibility = owner, vis
	}
	if id, ok := p.groupIDs[k]; ok {
		return id
	}
	id := uint32(len(p.groups))
	p.groups = append(p.groups, group{probe: probe})
	p.groupIDs[k] = id
	return id
}

type doc[K comparable] struct {
	key    K
	length uint32 // tokens, title and body
	group  uint32 // part.groups
	// terms are the distinct term ids, uvarint-encoded, to undo df when
	// the doc dies: about half the bytes of a []uint32 (at 1M documents
	// the lists are 15% of the index).
	terms string
	dead  bool
}

// posting is one document's title-weighted term frequency (bm25.Doc.Freqs).
type posting struct {
	doc, tf uint32
}

// Writer changes the index; it is valid inside Update only.
type Writer[K comparable] struct{ x *Index[K] }

// Update runs fn with the index locked for writing (searches wait), then
// drops the postings of tenants mostly dead.
func (x *Index[K]) Update(fn func(w Writer[K])) {
	x.mu.Lock()
	defer x.mu.Unlock()
	fn(Writer[K]{x})
	for _, p := range x.tenants {
		if p.dead > 1024 && p.dead > p.live {
			p.compact()
		}
	}
}

func (w Writer[K]) part(tenant string) *part[K] {
	p := w.x.tenants[tenant]
	if p == nil {
		p = &part[K]{termIDs: map[string]uint32{}, byKey: map[K]uint32{},
			groupIDs: map[groupKey]uint32{}, stems: bm25.StemCache{}}
		w.x.tenants[tenant] = p
	}
	return p
}

// Put indexes memory key in scope sc, owned by owner with visibility vis,
// with its analysed text t, replacing what was indexed for it.
func (w Writer[K]) Put(key K, sc graph.Scope, owner string, vis graph.Visibility, t bm25.Doc) {
	p := w.part(sc.TenantID)
	p.add(key, p.group(sc, owner, vis), t)
}

// PutText is Put of a title and body, analysed here.
func (w Writer[K]) PutText(key K, sc graph.Scope, owner string, vis graph.Visibility, title, body string) {
	p := w.part(sc.TenantID)
	p.add(key, p.group(sc, owner, vis), bm25.IndexWith(title, body, p.stems.Stem))
}

// Drop removes memory key of tenant from the index, if it is there.
func (w Writer[K]) Drop(tenant string, key K) {
	if p := w.x.tenants[tenant]; p != nil {
		if id, ok := p.byKey[key]; ok {
			p.kill(id)
			delete(p.byKey, key)
		}
	}
}

// DropTenant forgets tenant's part whole: a store that bounds what it
// holds drops a tenant it can read again from its own tables.
func (w Writer[K]) DropTenant(tenant string) { delete(w.x.tenants, tenant) }

// Live returns how many of tenant's memories the index holds.
func (x *Index[K]) Live(tenant string) int {
	n, _ := x.Held(tenant)
	return n
}

// Held returns how many of tenant's memories the index holds and their
// postings: the distinct terms of each, summed, which is what their
// memory grows with (a long document holds hundreds, a note a few dozen).
func (x *Index[K]) Held(tenant string) (memories, postings int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if p := x.tenants[tenant]; p != nil {
		return p.live, p.terms
	}
	return 0, 0
}

// add indexes memory key of group g with its analysed text t, replacing
// what was indexed for it.
func (p *part[K]) add(key K, g uint32, t bm25.Doc) {
	if old, ok := p.byKey[key]; ok {
		p.kill(old)
	}
	id := uint32(len(p.docs))
	d := doc[K]{key: key, length: uint32(min(t.Len, math.MaxUint32)), group: g}
	terms := p.termBuf[:0]
	for i, term := range t.Terms {
		tid, ok := p.termIDs[term]
		if !ok {
			tid = uint32(len(p.postings))
			p.termIDs[term] = tid
			p.postings = append(p.postings, nil)
			p.df = append(p.df, 0)
		}
		p.postings[tid] = append(p.postings[tid], posting{doc: id, tf: uint32(min(t.Freqs[i], math.MaxUint32))})
		p.df[tid]++
		terms = binary.AppendUvarint(terms, uint64(tid))
	}
	d.terms, p.termBuf = string(terms), terms
	p.docs = append(p.docs, d)
	p.byKey[key] = id
	p.live++
	p.terms += len(t.Terms)
	p.groups[g].live++
	p.groups[g].totalLen += int64(d.length)
}

// kill marks doc id dead; its postings stay until compact.
func (p *part[K]) kill(id uint32) {
	d := &p.docs[id]
	d.dead = true
	for b := []byte(d.terms); len(b) > 0; {
		tid, n := binary.Uvarint(b)
		p.df[tid]--
		p.terms--
		b = b[n:]
	}
	d.terms = ""
	p.live--
	p.dead++
	p.groups[d.group].live--
	p.groups[d.group].totalLen -= int64(d.length)
}

// compact drops dead documents' postings. Doc ids stay as they are.
func (p *part[K]) compact() {
	for tid, ps := range p.postings {
		kept := ps[:0]
		for _, x := range ps {
			if !p.docs[x.doc].dead {
				kept = append(kept, x)
			}
		}
		p.postings[tid] = kept
	}
	p.dead = 0
}

// hit is one scored memory.
type hit[K comparable] struct {
	key   K
	score float64
}

// Ranking yields a query's matches best first, a batch at a time, so the
// caller filters only as many as it needs. Ties go as the index's first
// says. A caller done with it calls Release.
type Ranking[K comparable] struct {
	hits  []hit[K]
	first func(a, b K) bool
	pool  *sync.Pool // where Release returns hits; nil once released
}

// Release hands the ranking's heap back to its index for the next query
// (a common term matches thousands of documents at 100k); the ranking is
// empty afterwards.
func (h *Ranking[K]) Release() {
	if h.pool != nil && cap(h.hits) > 0 {
		b := h.hits[:0]
		h.pool.Put(&b)
	}
	h.hits, h.pool = nil, nil
}

func (h *Ranking[K]) Len() int { return len(h.hits) }
func (h *Ranking[K]) Less(i, j int) bool {
	if h.hits[i].score != h.hits[j].score {
		return h.hits[i].score > h.hits[j].score
	}
	return h.first(h.hits[i].key, h.hits[j].key)
}
func (h *Ranking[K]) Swap(i, j int) { h.hits[i], h.hits[j] = h.hits[j], h.hits[i] }
func (h *Ranking[K]) Push(x any)    { h.hits = append(h.hits, x.(hit[K])) }
func (h *Ranking[K]) Pop() any {
	old := h.hits
	x := old[len(old)-1]
	h.hits = old[:len(old)-1]
	return x
}

// Next pops up to n hits, best first, appending their keys to dst and
// recording their scores in scores.
func (h *Ranking[K]) Next(dst []K, scores map[K]float64, n int) []K {
	for ; n > 0 && h.Len() > 0; n-- {
		x := heap.Pop(h).(hit[K])
		dst = append(dst, x.key)
		scores[x.key] = x.score
	}
	return dst
}

// Rank scores the live documents of f's tenant that f admits (its scope and
// reader: graph.Filter.Admits) and that contain any of terms, with BM25
// (each term's idf times its saturated, length-normalised frequency, the
// title's counting bm25.TitleWeight times) over the statistics of the
// admitted documents alone, and returns them as a ranking. The store's
// filter then applies the caller's narrowing.
func (x *Index[K]) Rank(f graph.Filter, terms []string) *Ranking[K] {
	x.mu.RLock()
	defer x.mu.RUnlock()
	empty := &Ranking[K]{first: x.first}
	p := x.tenants[f.Scope.TenantID]
	if p == nil || p.live == 0 {
		return empty
	}
	admitted := make([]bool, len(p.groups))
	var (
		live     int
		totalLen int64
	)
	for g := range p.groups {
		if admitted[g] = f.Admits(p.groups[g].probe); admitted[g] {
			live += p.groups[g].live
			totalLen += p.groups[g].totalLen
		}
	}
	if live == 0 {
		return empty
	}
	// With every live document admitted (one group, or a reader that
	// reaches them all), the tenant's document frequencies are the
	// admitted ones; else they are counted on the postings.
	everything := live == p.live
	n := float64(live)
	avgdl := float64(totalLen) / n
	acc := x.scratch(len(p.docs))
	defer x.pool.Put(acc)
	touched := acc.touched[:0]
	for _, term := range terms {
		tid, ok := p.termIDs[term]
		if !ok || p.df[tid] == 0 {
			continue
		}
		postings := p.postings[tid]
		df := int(p.df[tid])
		if !everything {
			df = 0
			for _, x := range postings {
				if d := &p.docs[x.doc]; !d.dead && admitted[d.group] {
					df++
				}
			}
			if df == 0 {
				continue
			}
		}
		idf := bm25.IDF(n, float64(df))
		for _, x := range postings {
			d := &p.docs[x.doc]
			if d.dead || !admitted[d.group] {
				continue
			}
			tf := float64(x.tf)
			if acc.s[x.doc] == 0 {
				touched = append(touched, x.doc)
			}
			acc.s[x.doc] += idf * bm25.Saturate(tf, float64(d.length), avgdl)
		}
	}
	var hits []hit[K]
	if b, ok := x.hits.Get().(*[]hit[K]); ok && cap(*b) >= len(touched) {
		hits = (*b)[:len(touched)]
	} else {
		hits = make([]hit[K], len(touched))
	}
	h := &Ranking[K]{hits: hits, first: x.first, pool: &x.hits}
	for i, d := range touched {
		h.hits[i] = hit[K]{key: p.docs[d].key, score: acc.s[d]}
		acc.s[d] = 0 // leave the scratch zeroed for the next query
	}
	acc.touched = touched
	heap.Init(h)
	return h
}
