package neo4j

import (
	"context"

	"github.com/mnemo-dev/mnemo/graph"
)

// The walk's two hops in the process. At 100k memories walkHop1Cypher and
// walkHop2Cypher took ~20 ms of a graph-mode search's ~55 ms of statements,
// nearly all of it reading records (~5 µs a memory reached by traversal,
// whatever the plan: docs/benchmarks.md, "Neo4j read path: what did not
// help"). The process already holds each memory's entities and each
// entity's memories (mentionIndex); with what memoryVisible reads
// (memAttrs) and each memory's NEXT and SUPERSEDES links beside them, the
// hops are the same rules over maps (the seed names resolved by the
// aliases the index holds too), and so is the relation step (relatedOver,
// by the relations the index holds). Neo4j reads the memories kept with
// the whole filter (keptCypher), so what the walk returns is admitted by
// Neo4j whatever the process holds: a copy behind the store can change
// scores, never what a reader sees.

// resolve is walkHop1Cypher's resolution over the index: each name that
// is an entity's norm name, and each entity that carries it as an alias,
// as [name, norm name]. An entity is known to the index by the memories that
// mention it; one without any resolves in Neo4j and not here, which
// changes nothing (the walk seeds only entities its neighbourhood holds).
func (t *tenantMentions) resolve(names []string) [][2]string {
	var out [][2]string
	for _, n := range names {
		if len(t.byEntity[n]) > 0 {
			out = append(out, [2]string{n, n})
		}
		for _, e := range t.aliases[n] {
			out = append(out, [2]string{n, e})
		}
	}
	return out
}

// view runs fn over tenant's part of the index, under its read lock (a
// tenant not held reads as empty).
func (x *mentionIndex) view(tenant string, fn func(t *tenantMentions)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t := x.tenants[tenant]
	if t == nil {
		t = &tenantMentions{}
	}
	fn(t)
}

// admitted reports whether the index holds memory id and a admits it.
func (t *tenantMentions) admitted(a *admission, id string) bool {
	m, ok := t.byMemory[id]
	return ok && a.admits(m.key.at, m.attrs)
}

func (t *tenantMentions) detailOf(id string) detailRow {
	m := t.byMemory[id]
	return detailRow{id: id, entities: m.entities, links: m.links}
}

// hop1 is walkHop1Cypher over the index: the admitted seeds (seedIDs in
// order), for each resolved entity its df (admitted memories, counted up to
// WalkMaxDF + 1) and, when no more, its WalkFanout newest admitted
// memories; the admitted memories linked to those and to the seeds; the
// detail of them all.
func (t *tenantMentions) hop1(a *admission, seedIDs []string, resolved [][2]string) hop1Data {
	d := hop1Data{resolved: resolved}
	var m0 []string
	in := map[string]bool{}
	keep := func(id string) {
		if !in[id] {
			in[id] = true
			m0 = append(m0, id)
		}
	}
	for _, id := range seedIDs {
		if t.admitted(a, id) {
			d.seeds = append(d.seeds, id)
			keep(id)
		}
	}
	done := map[string]bool{}
	for _, pair := range resolved {
		name := pair[1]
		if done[name] {
			continue
		}
		done[name] = true
		e := hop1Entity{name: name}
		list := t.byEntity[name]
		for i := len(list) - 1; i >= 0 && e.df <= graph.WalkMaxDF; i-- {
			if t.admitted(a, list[i].id) {
				e.df++
				if len(e.ids) < graph.WalkFanout {
					e.ids = append(e.ids, list[i].id)
				}
			}
		}
		if e.df > graph.WalkMaxDF {
			e.ids = nil
		}
		for _, id := range e.ids {
			keep(id)
		}
		d.entities = append(d.entities, e)
	}
	linked := map[string]bool{}
	for _, id := range m0 {
		for _, l := range t.byMemory[id].links {
			if t.admitted(a, l.id) && !linked[l.id] {
				linked[l.id] = true
				d.linked = append(d.linked, l.id)
			}
		}
	}
	for _, id := range d.linked {
		keep(id)
	}
	for _, id := range m0 {
		d.details = append(d.details, t.detailOf(id))
	}
	return d
}

// hop2 is walkHop2Cypher over the index: for each entity of names its
// admitted memories counted up to WalkFanout + 1, with their detail when
// there are no more; and the detail of each admitted memory of linked.
func (t *tenantMentions) hop2(a *admission, names, linked []string) hop2Data {
	var d hop2Data
	for _, name := range names {
		e := hop2Entity{name: name}
		list := t.byEntity[name]
		for i := len(list) - 1; i >= 0 && e.n <= graph.WalkFanout; i-- {
			if t.admitted(a, list[i].id) {
				e.n++
				e.details = append(e.details, t.detailOf(list[i].id))
			}
		}
		if e.n > graph.WalkFanout {
			e.details = nil
		}
		d.entities = append(d.entities, e)
	}
	for _, id := range linked {
		if t.admitted(a, id) {
			d.linked = append(d.linked, t.detailOf(id))
		}
	}
	return d
}

// neighbourWalks is neighbourWalks (retrieve.go) over the index: the
// seeds the reader may read (memoryAccess: the narrowing applies to the
// neighbours, not the seeds; a seed the index does not hold has no
// entities to walk), and for each entity of a readable seed its
// NeighbourFanout newest admitted memories, seeds left out.
func (t *tenantMentions) neighbourWalks(a *admission, seeds []string, entities map[string][]string,
	lists map[string][]kwKey) (readable map[string]bool, walks map[string][]kwKey) {
	readable, walks = map[string]bool{}, map[string][]kwKey{}
	skip := make(map[string]bool, len(seeds))
	for _, id := range seeds {
		skip[id] = true
		if m, ok := t.byMemory[id]; ok && a.reads(m.attrs) {
			readable[id] = true
		}
	}
	for id, es := range entities {
		if !readable[id] {
			continue
		}
		for _, e := range es {
			if _, done := walks[e]; done {
				continue
			}
			list := lists[e]
			chosen := []kwKey{}
			for i := len(list) - 1; i >= 0 && len(chosen) < graph.NeighbourFanout; i-- {
				if k := list[i]; !skip[k.id] {
					if t.admitted(a, k.id) {
						chosen = append(chosen, k)
					}
				}
			}
			walks[e] = chosen
		}
	}
	return readable, walks
}

// keptCypher reads the memories of $ids the filter admits, in $ids' order
// (getMemoriesCypher), and in the same statement the tenant's keyword
// sequence: a call that worked over the process's copy learns from its one
// read whether the copy was current (overCopy). Uses keyword_log and
// memory_id.
var keptCypher = `
CALL {
  OPTIONAL MATCH (k:KeywordLog {tenant_id: $f_tenant})
  RETURN coalesce(k.seq, 0) AS seq
}
CALL {
  UNWIND range(0, size($ids) - 1) AS i
  MATCH (m:Memory {id: $ids[i]})
  WHERE ` + memoryVisible + `
  WITH i, m ORDER BY i
  RETURN collect(` + memoryProjection + `) AS ms
}
RETURN seq, ms`

// readKept runs keptCypher: the memories of ids f admits, in ids' order,
// and the tenant's keyword sequence.
func readKept(ctx context.Context, tx txn, f graph.Filter, ids []string) ([]graph.Memory, int64, error) {
	recs, err := collect(ctx, tx, keptCypher, filterParams(f, map[string]any{"ids": idList(ids)}))
	if err != nil {
		return nil, 0, err
	}
	p := recs[0].AsMap()
	ms := p["ms"].([]any)
	out := make([]graph.Memory, len(ms))
	for i, m := range ms {
		out[i] = toMemory(m.(map[string]any))
	}
	return out, p["seq"].(int64), nil
}

// overCopy runs fn over tenant's part of the process's copy (the keyword
// and mention indexes) in as few statements as it can. When the tenant is
// held, fn runs on what was applied and returns the keyword sequence its
// last statement read (readKept), or -1 when it read none; if that has
// moved past what fn ran on, the copy catches up in tx and fn runs again,
// as it does at once for a tenant not held. So a call over a current copy
// pays no statement of its own for the sequence, and what it returns
// reflects every write its last statement could see. The tenant stays
// pinned (keywords.pin) until overCopy returns.
func (k *keywords) overCopy(ctx context.Context, tx txn, tenant string, fn func() (int64, error)) error {
	release := k.pin(tenant)
	defer release()
	k.mu.RLock()
	applied, held := k.applied[tenant]
	k.mu.RUnlock()
	if held {
		seq, err := fn()
		if err != nil {
			return err
		}
		if seq < 0 {
			if seq, err = keywordSeq(ctx, tx, tenant); err != nil {
				return err
			}
		}
		if seq <= applied {
			return nil
		}
	}
	if err := k.catchUp(ctx, tx, tenant); err != nil {
		return err
	}
	_, err := fn()
	return err
}
