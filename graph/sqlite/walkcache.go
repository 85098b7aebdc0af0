package sqlite

import (
	"encoding/json"
	"sync"

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
// When an entry holds: every write transaction, of this process or
// another one on the same file, bumps the write sequence in the database
// (table write_seq, Store.write) before it commits. A walk reads the
// sequence first in its read transaction, so it is the sequence of the
// walk's snapshot; the lists it reads belong to that state and are stored
// under it, and it serves an entry only when the entry's sequence is its
// own. An entry of another sequence is never served, and a write by
// another client is seen by the next walk (storetest Walk/SecondClient).
type walkCache struct {
	mu   sync.Mutex
	at   uint64 // the sequence of the entries in m
	rows int    // memories held in m, bounded by maxWalkCacheRows
	m    map[postingKey]posting
}

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
func (p posting) valid(at int64, n int) ([]postingMem, bool) {
	out := make([]postingMem, 0, min(n, len(p.mems)))
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

func newWalkCache() *walkCache { return &walkCache{m: map[postingKey]posting{}} }

// get returns the entry of k at sequence g.
func (c *walkCache) get(g uint64, k postingKey) (posting, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != g {
		return posting{}, false
	}
	p, ok := c.m[k]
	return p, ok
}

// put stores entries read at sequence g: entries of an older sequence are
// dropped, and a newer sequence starts the cache over.
func (c *walkCache) put(g uint64, ps map[postingKey]posting) {
	if len(ps) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case g < c.at:
		return
	case g > c.at:
		c.at, c.rows, c.m = g, 0, map[postingKey]posting{}
	}
	for k, p := range ps {
		if old, ok := c.m[k]; ok && (old.complete || len(old.mems) >= len(p.mems)) {
			continue // the same list at the same sequence, as long or longer
		}
		if c.rows+len(p.mems) > maxWalkCacheRows {
			c.rows, c.m = 0, map[postingKey]posting{}
		}
		if old, ok := c.m[k]; ok {
			c.rows -= len(old.mems)
		}
		c.m[k] = p
		c.rows += len(p.mems)
	}
}

// filterKey renders f without ValidAt as a cache key: memoryFilter's SQL
// and its arguments. It returns that filter too.
func filterKey(f graph.Filter) (string, *where, error) {
	f.ValidAt = graph.Filter{}.ValidAt
	w, err := memoryFilter(f, false)
	if err != nil {
		return "", nil, err
	}
	args, err := json.Marshal(w.args)
	if err != nil {
		return "", nil, err
	}
	return w.sql() + "\x00" + string(args), w, nil
}
