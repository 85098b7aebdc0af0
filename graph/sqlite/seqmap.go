package sqlite

import "sync"

// seqMap is what the store's read caches (walkCache, editCache) share: a
// map whose entries were all read at one write sequence, and which serves
// them only to a reader at that sequence.
//
// Every write transaction, of this process or another one on the same
// file, bumps the write sequence in the database (table write_seq,
// Store.write) before it commits; a write that changes only what some
// caches cannot hold bumps a counter only the others include (writeKind). A reader reads the sequence first in its
// read transaction, or in a statement before the ones whose rows it
// caches, so what it reads is at least as new as that sequence. Entries
// put at a sequence older than the map's are dropped; a newer sequence
// starts the map over. Each entry counts size(v) rows (at least 1) against
// max; past it the map starts over too.
type seqMap[K comparable, V any] struct {
	mu   sync.Mutex
	at   uint64
	m    map[K]V
	rows int
	max  int
	size func(V) int // nil: 1 a value
}

func newSeqMap[K comparable, V any](max int, size func(V) int) *seqMap[K, V] {
	return &seqMap[K, V]{m: map[K]V{}, max: max, size: size}
}

// get returns k's entry if the map holds one read at sequence g.
func (c *seqMap[K, V]) get(g uint64, k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	if c.at != g {
		var zero V
		return zero, false
	}
	return v, ok
}

// getAll returns the entries of keys held at sequence g, and the keys it
// holds none for, under one lock.
func (c *seqMap[K, V]) getAll(g uint64, keys []K) (map[K]V, []K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != g {
		return map[K]V{}, keys
	}
	got := make(map[K]V, len(keys))
	var miss []K
	for _, k := range keys {
		if v, ok := c.m[k]; ok {
			got[k] = v
		} else {
			miss = append(miss, k)
		}
	}
	return got, miss
}

// put stores entries read at sequence g. keep, when not nil, decides
// whether v replaces an entry already held at g.
func (c *seqMap[K, V]) put(g uint64, entries map[K]V, keep func(old, v V) bool) {
	if len(entries) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case g < c.at:
		return
	case g > c.at:
		c.clear(g)
	}
	for k, v := range entries {
		old, held := c.m[k]
		if held && keep != nil && keep(old, v) {
			continue
		}
		n := c.rowsOf(v)
		if held {
			c.rows -= c.rowsOf(old)
		}
		if c.rows+n > c.max {
			c.clear(g)
		}
		c.m[k] = v
		c.rows += n
	}
}

// clear empties the map for sequence g (c.mu held).
func (c *seqMap[K, V]) clear(g uint64) {
	c.at, c.rows, c.m = g, 0, map[K]V{}
}

func (c *seqMap[K, V]) rowsOf(v V) int {
	if c.size == nil {
		return 1
	}
	return max(1, c.size(v))
}
