package sqlite

import "sync"

// seqMap is what the store's read caches (walkCache, editCache) share: a
// map whose entries are held per tenant, each tenant's all read at one
// sequence of that tenant's state, and which serves them only to a reader
// at that sequence.
//
// Every write transaction, of this process or another one on the same
// file, bumps a sequence in the database before it commits (Store.writeIn):
// the file's (table write_seq), or, for a write that names the tenants it
// writes in, each of theirs (table tenant_seq); a write that changes only
// what some caches cannot hold bumps a counter only the others include
// (writeKind). A tenant's sequence is the sum of the file's counter and
// its own, so any write that may change what the tenant's readers see
// moves it, and a write in another tenant does not. A reader reads its
// tenant's sequence first in its read transaction (readSeqs), or in a
// statement before the ones whose rows it caches, so what it reads is at
// least as new as that sequence. Entries put at a sequence older than
// their tenant's part of the map are dropped; a newer sequence starts
// that part over. Each entry counts size(v) rows (at least 1) against
// max, over all tenants; past it the whole map starts over.
type seqMap[K comparable, V any] struct {
	mu    sync.Mutex
	parts map[string]*seqPart[K, V] // by tenant
	rows  int
	max   int
	size  func(V) int // nil: 1 a value
}

// seqPart is one tenant's entries, read at sequence at.
type seqPart[K comparable, V any] struct {
	at   uint64
	m    map[K]V
	rows int
}

// seq names the state a reader sees of one tenant: its sequence n
// (readSeqs).
type seq struct {
	tenant string
	n      uint64
}

func newSeqMap[K comparable, V any](max int, size func(V) int) *seqMap[K, V] {
	return &seqMap[K, V]{parts: map[string]*seqPart[K, V]{}, max: max, size: size}
}

// part returns the tenant's part if it holds entries read at g.
func (c *seqMap[K, V]) part(g seq) *seqPart[K, V] {
	p := c.parts[g.tenant]
	if p == nil || p.at != g.n {
		return nil
	}
	return p
}

// get returns k's entry if the map holds one read at sequence g.
func (c *seqMap[K, V]) get(g seq, k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.part(g)
	if p == nil {
		var zero V
		return zero, false
	}
	v, ok := p.m[k]
	return v, ok
}

// getAll returns the entries of keys held at sequence g, and the keys it
// holds none for, under one lock.
func (c *seqMap[K, V]) getAll(g seq, keys []K) (map[K]V, []K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.part(g)
	if p == nil {
		return map[K]V{}, keys
	}
	got := make(map[K]V, len(keys))
	var miss []K
	for _, k := range keys {
		if v, ok := p.m[k]; ok {
			got[k] = v
		} else {
			miss = append(miss, k)
		}
	}
	return got, miss
}

// put stores entries read at sequence g. keep, when not nil, decides
// whether v replaces an entry already held at g.
func (c *seqMap[K, V]) put(g seq, entries map[K]V, keep func(old, v V) bool) {
	if len(entries) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.parts[g.tenant]
	switch {
	case p == nil:
		p = c.start(g)
	case g.n < p.at:
		return
	case g.n > p.at:
		c.rows -= p.rows
		p = c.start(g)
	}
	for k, v := range entries {
		old, held := p.m[k]
		if held && keep != nil && keep(old, v) {
			continue
		}
		n := c.rowsOf(v)
		if held {
			p.rows -= c.rowsOf(old)
			c.rows -= c.rowsOf(old)
		}
		if c.rows+n > c.max {
			c.parts, c.rows = map[string]*seqPart[K, V]{}, 0
			p = c.start(g)
		}
		p.m[k] = v
		p.rows += n
		c.rows += n
	}
}

// start gives g's tenant an empty part at g (c.mu held).
func (c *seqMap[K, V]) start(g seq) *seqPart[K, V] {
	p := &seqPart[K, V]{at: g.n, m: map[K]V{}}
	c.parts[g.tenant] = p
	return p
}

func (c *seqMap[K, V]) rowsOf(v V) int {
	if c.size == nil {
		return 1
	}
	return max(1, c.size(v))
}
