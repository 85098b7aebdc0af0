package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
)

// keywordIndex is the store's keyword index: BM25 over each memory's title
// and indexed body (English-stemmed terms, bm25.Tokens), held in memory and
// partitioned by tenant, so a query touches only its tenant's postings.
//
// A score's statistics (document count, average length, document
// frequencies) are those of the memories the caller may read (graph.Filter
// Admits: its scope and the ones its reader reaches, other users' private
// memories only with AllUsers), whatever their status, and of no other: a
// caller's scores reveal nothing of another tenant, another org or repo, or
// another user's private memories. Inside a tenant, documents fall in groups
// that the rule admits or refuses whole (kwGroup), and each group keeps its
// own count and length.
//
// The tables stay the source of truth. Every change to a memory's indexed
// text is a new versions row, and versions rowids grow in commit order (one
// writer at a time), so the index is "versions up to rid seq": sync reads the
// versions added since, in the reader's own snapshot, before each search.
// Writes need no hook, a write from another process is seen on the next
// search, and a rolled-back write was never seen.
//
// Why not FTS5: its bm25 ranking scores every row matching any query term
// before it returns the first one, and a query's common words match tens of
// thousands of memories at 100k (about 30 ms a search; docs/benchmarks.md).
// Scoring postings in Go is exact BM25 at a small fraction of that.
type keywordIndex struct {
	syncMu sync.Mutex // one catch-up at a time; held while reading from SQL

	mu      sync.RWMutex // guards the fields below
	seq     int64        // highest versions.rid applied
	erased  int64        // highest erasures.rid applied
	tenants map[string]*kwPart

	pool sync.Pool // *kwScratch
}

// kwScratch is a query's score accumulator, one slot per doc id, all zero
// between queries.
type kwScratch struct{ s []float64 }

// scratch returns a zeroed accumulator of at least n slots.
func (k *keywordIndex) scratch(n int) *kwScratch {
	if a, ok := k.pool.Get().(*kwScratch); ok && len(a.s) >= n {
		return a
	}
	return &kwScratch{s: make([]float64, n+n/4)}
}

// kwPart is one tenant's postings.
type kwPart struct {
	termIDs  map[string]uint32
	postings [][]kwPosting // by term id, in doc id order
	df       []int32       // live documents per term id
	docs     []kwDoc       // by doc id; a reindexed memory gets a new doc id
	byRID    map[int64]uint32
	live     int
	dead     int
	groups   []kwGroup // by group id
	groupIDs map[kwGroupKey]uint32
	stems    bm25.StemCache // token -> stem, for indexing (Snowball is slow); under the index's write lock
	termBuf  []byte         // add's scratch for a doc's encoded terms; under the index's write lock
}

// kwGroupKey places a memory for the access rule: its org and repo, and its
// owner when the memory is private to them (else ""). A memory's scope,
// owner and visibility never change, so neither does its group.
type kwGroupKey struct{ org, repo, owner string }

// kwGroup is the live documents of one group key: the units that a filter
// admits or refuses whole, with the counts BM25 needs.
type kwGroup struct {
	probe    graph.Memory // a memory of the group, for graph.Filter.Admits
	live     int
	totalLen int64 // tokens in live documents
}

// group returns the id of the group of a memory in scope sc owned by owner
// with visibility vis, adding the group when it is new.
func (p *kwPart) group(sc graph.Scope, owner string, vis graph.Visibility) uint32 {
	k := kwGroupKey{org: sc.OrgID, repo: sc.RepoID}
	probe := graph.Memory{Scope: sc, Visibility: graph.VisibilityProject}
	if vis.Private() && owner != "" {
		k.owner = owner
		probe.UserID, probe.Visibility = owner, vis
	}
	if id, ok := p.groupIDs[k]; ok {
		return id
	}
	id := uint32(len(p.groups))
	p.groups = append(p.groups, kwGroup{probe: probe})
	p.groupIDs[k] = id
	return id
}

type kwDoc struct {
	rid    int64
	length uint32 // tokens, title and body
	group  uint32 // kwPart.groups
	// terms are the distinct term ids, uvarint-encoded, to undo df when
	// the doc dies: about half the bytes of a []uint32 (at 1M documents
	// the lists are 15% of the index).
	terms string
	dead  bool
}

// kwPosting is one document's title-weighted term frequency
// (bm25.Doc.Freqs).
type kwPosting struct {
	doc, tf uint32
}

func newKeywordIndex() *keywordIndex {
	return &keywordIndex{tenants: map[string]*kwPart{}}
}

// The memories whose indexed text changed in versions (after, upto], with
// that text. Relies on the versions rowid and versions.id.
const keywordDelta = `SELECT m.rid, m.tenant_id, m.org_id, m.repo_id, m.user_id, m.visibility, m.title, cv.index_text, cv.content
FROM (SELECT DISTINCT memory_rid AS r FROM versions WHERE rid > ? AND rid <= ?) d
CROSS JOIN memories m ON m.rid = d.r
JOIN versions cv ON cv.id = m.current_version_id`

// The memories erased in erasures (after, upto]. Relies on the erasures
// rowid.
const keywordErased = `SELECT m.rid, m.tenant_id FROM erasures x JOIN memories m ON m.rid = x.memory_rid
WHERE x.rid > ? AND x.rid <= ?`

// sync brings the index up to the snapshot of t: the versions whose rowid
// exceeds the index's are read and their memories (re)indexed, then the
// memories erased since are dropped (an erase empties versions in place,
// which the versions rowid does not show; the erasures log does).
func (k *keywordIndex) sync(ctx context.Context, t *sql.Tx) error {
	var top, erased sql.NullInt64
	if err := t.QueryRowContext(ctx, `SELECT (SELECT max(rid) FROM versions), (SELECT max(rid) FROM erasures)`).
		Scan(&top, &erased); err != nil {
		return fmt.Errorf("keyword index: %w", err)
	}
	k.mu.RLock()
	seq, gone := k.seq, k.erased
	k.mu.RUnlock()
	if top.Int64 <= seq && erased.Int64 <= gone {
		return nil
	}
	k.syncMu.Lock()
	defer k.syncMu.Unlock()
	k.mu.RLock()
	seq, gone = k.seq, k.erased
	k.mu.RUnlock()
	if top.Int64 <= seq && erased.Int64 <= gone {
		return nil
	}
	if top.Int64 < seq {
		top.Int64 = seq
	}
	// The changes are read and indexed a window at a time, under the
	// index's lock (searches wait for the catch-up on syncMu anyway): a
	// start's catch-up is the whole store, and holding all of its texts
	// at once was the restart's peak of memory.
	var drops []kwDrop
	if erased.Int64 > gone {
		var err error
		if drops, err = readErased(ctx, t, gone, erased.Int64); err != nil {
			return err
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	part := func(tenant string) *kwPart {
		p := k.tenants[tenant]
		if p == nil {
			p = &kwPart{termIDs: map[string]uint32{}, byRID: map[int64]uint32{},
				groupIDs: map[kwGroupKey]uint32{}, stems: bm25.StemCache{}}
			k.tenants[tenant] = p
		}
		return p
	}
	type change struct {
		rid         int64
		scope       graph.Scope
		owner       string
		vis         graph.Visibility
		title, body string
	}
	var (
		win    = make([]change, 0, kwWindow)
		texts  []bm25.Doc
		caches []bm25.StemCache
	)
	// flush adds the window's changes in the order read. A window of at
	// least kwParallelFrom (a catch-up of many memories) is analysed by
	// one worker per CPU first: tokenising and stemming are most of its
	// CPU.
	flush := func() {
		if len(win) < kwParallelFrom {
			for _, c := range win {
				p := part(c.scope.TenantID)
				p.put(c.rid, p.group(c.scope, c.owner, c.vis), c.title, c.body)
			}
			win = win[:0]
			return
		}
		if caches == nil {
			texts, caches = make([]bm25.Doc, kwWindow), make([]bm25.StemCache, runtime.GOMAXPROCS(0))
			for i := range caches {
				caches[i] = bm25.StemCache{}
			}
		}
		parallel(len(win), caches, func(i int, stem func(string) string) {
			texts[i] = bm25.IndexWith(win[i].title, win[i].body, stem)
		})
		for i, c := range win {
			p := part(c.scope.TenantID)
			p.add(c.rid, p.group(c.scope, c.owner, c.vis), texts[i])
			texts[i], win[i] = bm25.Doc{}, change{} // the texts read are released as they go
		}
		win = win[:0]
	}
	rows, err := t.QueryContext(ctx, keywordDelta, seq, top.Int64)
	if err != nil {
		return fmt.Errorf("keyword index: %w", err)
	}
	for rows.Next() {
		var (
			c              change
			index, content string
		)
		if err := rows.Scan(&c.rid, &c.scope.TenantID, &c.scope.OrgID, &c.scope.RepoID, &c.owner, &c.vis,
			&c.title, &index, &content); err != nil {
			_ = rows.Close()
			return fmt.Errorf("keyword index: %w", err)
		}
		c.body = graph.SearchText(index, content)
		if win = append(win, c); len(win) == kwWindow {
			flush()
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("keyword index: %w", err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("keyword index: %w", err)
	}
	flush()
	for _, d := range drops {
		if p := k.tenants[d.tenant]; p != nil {
			if id, ok := p.byRID[d.rid]; ok {
				p.kill(id)
				delete(p.byRID, d.rid)
			}
		}
	}
	for _, p := range k.tenants {
		if p.dead > 1024 && p.dead > p.live {
			p.compact()
		}
	}
	k.seq = top.Int64
	k.erased = max(k.erased, erased.Int64)
	return nil
}

// A catch-up of at least kwParallelFrom memories is analysed in parallel,
// kwWindow memories at a time.
const (
	kwParallelFrom = 512
	kwWindow       = 4096
)

// parallel runs fn(i, stem) for i in [0, n) on one worker per cache in
// caches, each stemming through its own.
func parallel(n int, caches []bm25.StemCache, fn func(i int, stem func(string) string)) {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for w := range min(len(caches), n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i, caches[w].Stem)
			}
		})
	}
	wg.Wait()
}

// kwDrop is an erased memory the index drops.
type kwDrop struct {
	rid    int64
	tenant string
}

// readErased reads the memories erased in erasures (after, upto].
func readErased(ctx context.Context, t *sql.Tx, after, upto int64) ([]kwDrop, error) {
	rows, err := t.QueryContext(ctx, keywordErased, after, upto)
	if err != nil {
		return nil, fmt.Errorf("keyword index: %w", err)
	}
	defer rows.Close()
	var out []kwDrop
	for rows.Next() {
		var d kwDrop
		if err := rows.Scan(&d.rid, &d.tenant); err != nil {
			return nil, fmt.Errorf("keyword index: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keyword index: %w", err)
	}
	return out, nil
}

// put indexes memory rid of group g with its title and body, replacing what
// was indexed for it.
func (p *kwPart) put(rid int64, g uint32, title, body string) {
	p.add(rid, g, bm25.IndexWith(title, body, p.stems.Stem))
}

// add indexes memory rid of group g with its analysed text t, replacing
// what was indexed for it.
func (p *kwPart) add(rid int64, g uint32, t bm25.Doc) {
	if old, ok := p.byRID[rid]; ok {
		p.kill(old)
	}
	id := uint32(len(p.docs))
	d := kwDoc{rid: rid, length: uint32(min(t.Len, math.MaxUint32)), group: g}
	terms := p.termBuf[:0]
	for i, term := range t.Terms {
		tid, ok := p.termIDs[term]
		if !ok {
			tid = uint32(len(p.postings))
			p.termIDs[term] = tid
			p.postings = append(p.postings, nil)
			p.df = append(p.df, 0)
		}
		p.postings[tid] = append(p.postings[tid], kwPosting{doc: id, tf: uint32(min(t.Freqs[i], math.MaxUint32))})
		p.df[tid]++
		terms = binary.AppendUvarint(terms, uint64(tid))
	}
	d.terms, p.termBuf = string(terms), terms
	p.docs = append(p.docs, d)
	p.byRID[rid] = id
	p.live++
	p.groups[g].live++
	p.groups[g].totalLen += int64(d.length)
}

// kill marks doc id dead; its postings stay until compact.
func (p *kwPart) kill(id uint32) {
	d := &p.docs[id]
	d.dead = true
	for b := []byte(d.terms); len(b) > 0; {
		tid, n := binary.Uvarint(b)
		p.df[tid]--
		b = b[n:]
	}
	d.terms = ""
	p.live--
	p.dead++
	p.groups[d.group].live--
	p.groups[d.group].totalLen -= int64(d.length)
}

// compact drops dead documents' postings. Doc ids stay as they are.
func (p *kwPart) compact() {
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

// kwHit is one scored memory.
type kwHit struct {
	rid   int64
	score float64
}

// kwRanking yields a query's matches best first, a batch at a time, so the
// caller filters only as many as it needs. Ties go to the newer memory.
type kwRanking []kwHit

func (h kwRanking) Len() int { return len(h) }
func (h kwRanking) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score > h[j].score
	}
	return h[i].rid > h[j].rid
}
func (h kwRanking) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *kwRanking) Push(x any)   { *h = append(*h, x.(kwHit)) }
func (h *kwRanking) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// next pops up to n hits, best first, appending their rids to dst.
func (h *kwRanking) next(dst []int64, scores map[int64]float64, n int) []int64 {
	for ; n > 0 && h.Len() > 0; n-- {
		x := heap.Pop(h).(kwHit)
		dst = append(dst, x.rid)
		scores[x.rid] = x.score
	}
	return dst
}

// rank scores the live documents of f's tenant that f admits (its scope and
// reader: graph.Filter.Admits) and that contain any of terms, with BM25 (each
// term's idf times its saturated, length-normalised frequency, the title's
// counting bm25.TitleWeight times) over the statistics of the admitted
// documents alone, and returns them as a ranking. The store's filter then
// applies the caller's narrowing (KeywordSearch).
func (k *keywordIndex) rank(f graph.Filter, terms []string) *kwRanking {
	k.mu.RLock()
	defer k.mu.RUnlock()
	p := k.tenants[f.Scope.TenantID]
	if p == nil || p.live == 0 {
		return &kwRanking{}
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
		return &kwRanking{}
	}
	// With every live document admitted (one group, or a reader that
	// reaches them all), the tenant's document frequencies are the
	// admitted ones; else they are counted on the postings.
	everything := live == p.live
	n := float64(live)
	avgdl := float64(totalLen) / n
	acc := k.scratch(len(p.docs))
	defer k.pool.Put(acc)
	var touched []uint32
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
	h := make(kwRanking, len(touched))
	for i, doc := range touched {
		h[i] = kwHit{rid: p.docs[doc].rid, score: acc.s[doc]}
		acc.s[doc] = 0 // leave the scratch zeroed for the next query
	}
	heap.Init(&h)
	return &h
}

// WarmKeywordIndex builds the keyword index now rather than on the first
// keyword search (about 1.4 s per 100k memories). A server calls it in the
// background at start.
func (s *Store) WarmKeywordIndex(ctx context.Context) error {
	t, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("warm keyword index: %w", err)
	}
	defer func() { _ = t.Rollback() }()
	if err := s.kw.sync(ctx, t); err != nil {
		return fmt.Errorf("warm keyword index: %w", err)
	}
	return nil
}
