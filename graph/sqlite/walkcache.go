package sqlite

import (
	"database/sql"
	"encoding/json"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// walkCache keeps the posting lists a walk reads (walkPostings: an
// entity's newest admitted memories), per filter and entity, until the next
// write: most of a walk's time at 100k memories went to reading the same
// popular entities' lists again on every search (docs/search.md, "The
// walk").
//
// Who may see an entry: the key is the filter's rendered SQL and its
// arguments (scope, reader, narrowing, statuses, edits), so two readers
// share an entry only when their filters are the same predicate, which
// admits the same memories at the same state. The one exception is
// ValidAt, which search sets to "now": it is left out of the key and the
// list is read without it, with each memory's validity, and applied in Go
// (postingMem.validAt), so one entry serves every instant.
//
// When an entry holds (seqMap): every write transaction, of this process or
// another one on the same file, bumps a sequence in the database before it
// commits: the file's, or each of the tenants it writes in (Store.writeIn).
// A walk reads its tenant's sequence first in its read transaction
// (readSeqs), so it is the sequence of the walk's snapshot of the tenant;
// the lists it reads belong to that state and are stored under it, and it
// serves an entry only when the entry's sequence is its own. An entry of
// another sequence is never served, and a write by another client is seen
// by the next walk (storetest Walk/SecondClient); a write in another
// tenant leaves the entries as they are (TestWalkCacheByWriteKind).
//
// It also keeps memory rows by rid (memoriesByRID, what Walk and
// Neighbours load last) and the entities each memory mentions
// (walkMentions): the mentions under the same sequence, the rows under the
// sequence of memory rows (readSeqs), which a write of read counters
// (Touch: every read_context) bumps too while the lists and mentions stay
// cached, since they hold no counter (store.go, writeKind). The statements that decide which rids a
// reader reaches apply its filter in SQL; the cache only spares reading
// and decoding the rows of memories already admitted.
type walkCache struct {
	postings *seqMap[postingKey, posting] // rows: the memories of the lists, at most maxWalkCacheRows
	mems     *seqMap[int64, graph.Memory] // memory rows by rid, at most maxCachedMemories
	ents     *seqMap[int64, []mention]    // the entities each memory mentions, by rid, at most maxCachedMemories
}

// mention is an entity a memory mentions (walkMentions' row).
type mention struct {
	mem, ent int64
	name     string
}

// maxCachedMemories bounds the memory rows the cache holds (about 1 KiB
// each: some 32 MiB); past it the rows start over.
const maxCachedMemories = 1 << 15

// maxWalkCacheRows bounds the cache (about 70 bytes a memory: some 35 MiB);
// past it the cache starts over.
const maxWalkCacheRows = 1 << 19

// postingKey is a posting list's filter (filterKey) and entity rid.
type postingKey struct {
	filter string
	ent    int64
}

// posting is an entity's newest admitted memories, newest first, as
// walkPostings read them without ValidAt; complete when the limit was not
// reached (the list is all of them).
type posting struct {
	mems     []postingMem
	complete bool
}

// postingMem is one memory of a posting list with its validity
// (valid_from, valid_to in nanoseconds, 0 for unbounded) and the time of
// the mention (the posting list's order, which Neighbours ranks by).
type postingMem struct {
	rid      int64
	id       string
	from, to int64
	at       int64
}

// validAt reports whether the memory is valid at instant at (nanoseconds;
// 0: no ValidAt), as memoryFilter's ValidAt predicate says.
func (p postingMem) validAt(at int64) bool {
	return at == 0 || ((p.from == 0 || p.from <= at) && (p.to == 0 || p.to > at))
}

// valid returns the first n memories of p valid at at, and whether they
// are exactly what walkPostings would read with ValidAt in the filter: p is
// complete, or holds n valid memories.
// The result shares p's array (capacity capped) when the first n are all
// valid, as without ValidAt: callers read it and never write.
func (p posting) valid(at int64, n int) ([]postingMem, bool) {
	k := min(n, len(p.mems))
	if !slices.ContainsFunc(p.mems[:k], func(m postingMem) bool { return !m.validAt(at) }) {
		return p.mems[:k:k], p.complete || k == n
	}
	out := make([]postingMem, 0, k)
	for _, m := range p.mems {
		if len(out) == n {
			break
		}
		if m.validAt(at) {
			out = append(out, m)
		}
	}
	return out, p.complete || len(out) == n
}

func newWalkCache() *walkCache {
	return &walkCache{
		postings: newSeqMap[postingKey](maxWalkCacheRows, func(p posting) int { return len(p.mems) }),
		mems:     newSeqMap[int64, graph.Memory](maxCachedMemories, nil),
		ents:     newSeqMap[int64, []mention](maxCachedMemories, nil),
	}
}

// get returns the list of k read at sequence g.
func (c *walkCache) get(g seq, k postingKey) (posting, bool) { return c.postings.get(g, k) }

// put stores lists read at sequence g; a list already held at g stays
// when it is complete or as long.
func (c *walkCache) put(g seq, ps map[postingKey]posting) {
	c.postings.put(g, ps, func(old, p posting) bool { return old.complete || len(old.mems) >= len(p.mems) })
}

// loadByRID returns the memories rids in that order (memoriesByRID, run by
// run in a transaction whose snapshot is at sequence g), from the cache
// where it holds them. Each memory returned has its own Tags.
func (c *walkCache) loadByRID(g seq, rids []int64, run func(ridJSON string) (*sql.Rows, error)) ([]graph.Memory, error) {
	got, miss := c.mems.getAll(g, rids)
	if len(miss) > 0 {
		js, _ := json.Marshal(miss)
		rows, err := run(string(js))
		if err != nil {
			return nil, err
		}
		type row struct {
			m   graph.Memory
			rid int64
		}
		read, err := collect(rows, func(sc scanner) (r row, err error) {
			r.m, r.rid, err = scanMemory(sc)
			return r, err
		})
		if err != nil {
			return nil, err
		}
		fresh := make(map[int64]graph.Memory, len(read))
		for _, r := range read {
			fresh[r.rid], got[r.rid] = r.m, r.m
		}
		c.mems.put(g, fresh, nil)
	}
	out := make([]graph.Memory, 0, len(rids))
	for _, rid := range rids {
		if m, ok := got[rid]; ok {
			m.Tags = slices.Clone(m.Tags)
			out = append(out, m)
		}
	}
	return out, nil
}

// mentionsOf returns the entities each memory of rids mentions
// (walkMentions, run by run in a transaction whose snapshot is at sequence
// g), from the cache where it holds them. The memories were admitted by
// the statements that reached them; a memory's mentions are not filtered.
func (c *walkCache) mentionsOf(g seq, rids []int64, run func(ridJSON string) (*sql.Rows, error)) (map[int64][]mention, error) {
	out, miss := c.ents.getAll(g, rids)
	if len(miss) == 0 {
		return out, nil
	}
	js, _ := json.Marshal(miss)
	rows, err := run(string(js))
	if err != nil {
		return nil, err
	}
	read, err := collect(rows, func(sc scanner) (x mention, err error) { return x, sc.Scan(&x.mem, &x.ent, &x.name) })
	if err != nil {
		return nil, err
	}
	fresh := make(map[int64][]mention, len(miss))
	for _, rid := range miss {
		fresh[rid] = []mention{} // a memory without entities is known too
	}
	for _, x := range read {
		fresh[x.mem] = append(fresh[x.mem], x)
	}
	for rid, ms := range fresh {
		out[rid] = ms
	}
	c.ents.put(g, fresh, nil)
	return out, nil
}

// filterKey renders f without ValidAt as a cache key: memoryFilter's SQL
// and its arguments. It returns that filter too.
func filterKey(f graph.Filter) (string, *where, error) {
	f.ValidAt = graph.Filter{}.ValidAt
	w, err := memoryFilter(f, false)
	if err != nil {
		return "", nil, err
	}
	return w.key(), w, nil
}
