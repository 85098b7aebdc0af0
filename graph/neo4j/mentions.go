package neo4j

import (
	"slices"
	"sync"
)

// mentionIndex holds, per tenant, the entities each memory MENTIONS and,
// for each entity, the memories that mention it, oldest first (created_at,
// then id: a new memory is appended). It rides the keyword index's
// catch-up (keywords.sync): every write that adds or removes a memory's
// MENTIONS (a create, a new version, an erase) moves the tenant's keyword
// sequence and stamps the memory, and the rows the catch-up reads carry the
// memory's entities. Neighbours takes an entity's newest memories and its
// count of mentions from here, then filters the candidates in Neo4j: no
// index orders an entity's MENTIONS by time, so finding them in Cypher read
// and sorted every edge of a popular entity, or the tenant's newest memories
// in a window (docs/benchmarks.md).
//
// It holds every memory the keyword index holds (an erased memory has
// neither keywords nor MENTIONS), whatever its status or scope: the
// filter runs in Neo4j.
type mentionIndex struct {
	mu      sync.RWMutex
	tenants map[string]*tenantMentions
}

type tenantMentions struct {
	byEntity map[string][]kwKey    // norm name -> memories, oldest first
	byMemory map[string]memMention // memory id -> its key and entities
	// aliases maps an alias (in norm form) to the norm names of the
	// entities that carry it, from the rows of the memories that mention
	// them. Entities only gain aliases (mergeEntitiesCypher, in the write
	// that mentions them), so entries are only added; one left by an
	// entity an erasure deleted resolves to an entity without memories,
	// which the walk ignores as Neo4j's resolution would.
	aliases map[string][]string
}

type memMention struct {
	key      kwKey
	entities []string
	attrs    *memAttrs // what memoryVisible reads (admit.go)
	links    []memLink // its NEXT and SUPERSEDES edges, either direction
	rels     []memRel  // its relations (graph.RelationTypes), either direction
}

// memLink is an edge between two memories the walk follows: the memory at
// the other end and the edge's type.
type memLink struct{ id, typ string }

// memRel is a relation between two memories: the memory at the other end
// and the relation's own org and repo, which the filter's scope rule reads
// (inScope; its tenant is the memories').
type memRel struct{ id, org, repo string }

func newMentionIndex() *mentionIndex { return &mentionIndex{tenants: map[string]*tenantMentions{}} }

// drop forgets tenant's lists (keywords.victims).
func (x *mentionIndex) drop(tenant string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.tenants, tenant)
}

// mentionRow is one memory read by the keyword catch-up: its entities, or
// gone when it has left the index (erased).
type mentionRow struct {
	key      kwKey
	entities []string
	attrs    memAttrs
	links    []memLink
	rels     []memRel
	aliases  [][2]string // (alias norm, entity norm) of the entities it mentions
	gone     bool
}

// apply brings tenant's lists to rows. A list is never changed where a
// search may be reading it (seedLists hands lists out): a memory newer than
// every one in its entity's list (a create, nearly always) is appended past
// the list's end, which no reader's copy of the list reaches; any other
// change rebuilds the list by one merge, its remaining memories in order
// with the new ones sorted in.
func (x *mentionIndex) apply(tenant string, rows []mentionRow) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t := x.tenants[tenant]
	if t == nil {
		t = &tenantMentions{byEntity: map[string][]kwKey{}, byMemory: map[string]memMention{}, aliases: map[string][]string{}}
		x.tenants[tenant] = t
	}
	drop := map[string]map[string]bool{} // entity -> ids leaving its list
	add := map[string][]kwKey{}          // entity -> keys joining it
	for _, r := range rows {
		old, had := t.byMemory[r.key.id]
		if had {
			for _, e := range old.entities {
				if drop[e] == nil {
					drop[e] = map[string]bool{}
				}
				drop[e][r.key.id] = true
			}
			delete(t.byMemory, r.key.id)
		}
		var links []memLink
		var rels []memRel
		if !r.gone {
			links, rels = r.links, r.rels
		}
		relink(t, r.key.id, old.links, links, func(m *memMention) *[]memLink { return &m.links },
			func(l memLink, id string) memLink { return memLink{id, l.typ} })
		relink(t, r.key.id, old.rels, rels, func(m *memMention) *[]memRel { return &m.rels },
			func(l memRel, id string) memRel { return memRel{id, l.org, l.repo} })
		if r.gone {
			continue
		}
		for _, a := range r.aliases {
			if !slices.Contains(t.aliases[a[0]], a[1]) {
				t.aliases[a[0]] = append(t.aliases[a[0]], a[1])
			}
		}
		ents := slices.Compact(slices.Sorted(slices.Values(r.entities)))
		attrs := r.attrs
		t.byMemory[r.key.id] = memMention{key: r.key, entities: ents, attrs: &attrs, links: links, rels: rels}
		for _, e := range ents {
			add[e] = append(add[e], r.key)
		}
	}
	for e := range drop {
		if _, ok := add[e]; !ok {
			add[e] = nil // dropped from, nothing added
		}
	}
	for e, keys := range add {
		slices.SortFunc(keys, kwOldestFirst)
		old, gone := t.byEntity[e], drop[e]
		var list []kwKey
		if len(gone) == 0 && (len(old) == 0 || kwNewer(keys[0], old[len(old)-1])) {
			list = append(old, keys...)
		} else {
			list = make([]kwKey, 0, len(old)+len(keys))
			i := 0
			for _, k := range old {
				if gone[k.id] {
					continue
				}
				for i < len(keys) && kwNewer(k, keys[i]) {
					list = append(list, keys[i])
					i++
				}
				list = append(list, k)
			}
			list = append(list, keys[i:]...)
		}
		if len(list) == 0 {
			delete(t.byEntity, e)
		} else {
			t.byEntity[e] = list
		}
	}
}

// relink makes the edges held at the other ends of id's edges (its links,
// or its relations: list picks which) agree with its row: a row is the
// truth about the edges it touches when it was read (a write that adds or
// removes an edge stamps an end of it, and the catch-up reads that end's
// row; the other end may not be stamped). from turns an edge of id into the
// same edge as the other end holds it. The other ends' lists are replaced,
// never changed in place.
func relink[E interface {
	comparable
	end() string
}](t *tenantMentions, id string, was, now []E,
	list func(*memMention) *[]E, from func(e E, id string) E) {
	for _, l := range was {
		if slices.Contains(now, l) {
			continue
		}
		if o, ok := t.byMemory[l.end()]; ok {
			back := from(l, id)
			*list(&o) = slices.DeleteFunc(slices.Clone(*list(&o)), func(x E) bool { return x == back })
			t.byMemory[l.end()] = o
		}
	}
	for _, l := range now {
		if o, ok := t.byMemory[l.end()]; ok && !slices.Contains(*list(&o), from(l, id)) {
			*list(&o) = append(slices.Clip(*list(&o)), from(l, id))
			t.byMemory[l.end()] = o
		}
	}
}

func (l memLink) end() string { return l.id }
func (r memRel) end() string  { return r.id }

// kwOldestFirst orders keys oldest first, the lists' order.
func kwOldestFirst(a, b kwKey) int {
	switch {
	case kwNewer(b, a):
		return -1
	case kwNewer(a, b):
		return 1
	}
	return 0
}

// seedLists returns the entities each of seeds mentions and, for each of
// those entities, its memories oldest first (read them from the end for
// the newest). The lists are the index's own: apply never changes what a
// list handed out holds, so they stay as they were when read.
func (x *mentionIndex) seedLists(tenant string, seeds []string) (entities map[string][]string, lists map[string][]kwKey) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	entities, lists = map[string][]string{}, map[string][]kwKey{}
	t := x.tenants[tenant]
	if t == nil {
		return entities, lists
	}
	for _, id := range seeds {
		m, ok := t.byMemory[id]
		if !ok {
			continue
		}
		entities[id] = m.entities
		for _, e := range m.entities {
			lists[e] = t.byEntity[e]
		}
	}
	return entities, lists
}
