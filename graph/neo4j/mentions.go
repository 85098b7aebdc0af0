package neo4j

import (
	"maps"
	"slices"
	"sync"
)

// mentionCounts holds, per tenant, the number of memories that mention
// each entity (graph.SharedEntity.Mentions, which Neighbours weighs
// neighbours by) as of one keyword sequence of the tenant: every write that
// adds or removes a memory's MENTIONS (a create, a new version, an erase)
// moves that sequence (keyword.go), so a count read at a sequence holds
// until it moves. Neighbours counts a popular entity's mentions by
// expanding each of its edges; with the count here it skips that.
//
// A count read in a transaction that began at sequence S may already hold a
// write committed after S: it is then newer than S, never older, and a
// reader that sees that write reads a later sequence and counts again.
type mentionCounts struct {
	mu      sync.Mutex
	tenants map[string]*tenantCounts
	size    int // counts held, over all tenants
}

// maxMentionCounts bounds the counts held; past it they start over.
const maxMentionCounts = 1 << 16

// tenantCounts are one tenant's counts at one sequence.
type tenantCounts struct {
	c   *mentionCounts
	seq int64
	mu  sync.Mutex
	n   map[string]int64
}

func newMentionCounts() *mentionCounts { return &mentionCounts{tenants: map[string]*tenantCounts{}} }

// at returns tenant's counts at sequence seq, empty when the sequence has
// moved since they were read (a reader at an older sequence gets counts of
// its own, not kept).
func (c *mentionCounts) at(tenant string, seq int64) *tenantCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tenants[tenant]
	switch {
	case t != nil && t.seq == seq:
		return t
	case t != nil && t.seq > seq:
		return &tenantCounts{seq: seq, n: map[string]int64{}}
	}
	if t != nil {
		t.mu.Lock() // c.mu, then t.mu: mentions takes them one at a time
		c.size -= len(t.n)
		t.mu.Unlock()
	}
	t = &tenantCounts{c: c, seq: seq, n: map[string]int64{}}
	c.tenants[tenant] = t
	return t
}

// names are the entities whose count t holds.
func (t *tenantCounts) names() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Collect(maps.Keys(t.n))
}

// mentions is the count of entity name: the one t holds when the statement
// reported it known, else got, which t keeps.
func (t *tenantCounts) mentions(name string, got int64, known bool) int64 {
	t.mu.Lock()
	n, ok := t.n[name]
	if ok && known {
		t.mu.Unlock()
		return n
	}
	t.n[name] = got
	t.mu.Unlock()
	if !ok && t.c != nil {
		t.c.mu.Lock()
		if t.c.size >= maxMentionCounts {
			clear(t.c.tenants)
			t.c.size = 0
		}
		t.c.size++
		t.c.mu.Unlock()
	}
	return got
}
