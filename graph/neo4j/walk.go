package neo4j

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/walk"
)

// memoryDetail projects a memory m of the neighbourhood as [id, the norm
// names of the entities it MENTIONS, its links to other memories as
// [id, type]]: the caller keeps the edges whose other end it loaded.
const memoryDetail = `[m.id, [(m)-[:MENTIONS]->(x:Entity) | x.norm_name],
  [(m)-[rel:SUPERSEDES|NEXT]-(o:Memory) | [o.id, type(rel)]]]`

// walkHop1Cypher loads the first hop of a walk: the seed memories the
// filter admits; the seed names resolved to the tenant's entities by norm
// name or alias (as [name, norm name]); for each seed entity its df (the
// admitted memories that mention it, counted up to $max_df + 1) and, when
// that is no more than $max_df, its $fanout newest admitted memories (the
// newest among those the count admitted, so the filter runs once per
// memory, not twice); and
// the admitted memories linked to the seed memories and those (NEXT,
// SUPERSEDES, either way); the detail (memoryDetail) of them all. Uses
// memory_id, entity_norm, and entity_tenant for aliases: one scan of the
// tenant's entities for all the names, as candidatesCypher does (it was one
// scan per name, 40,000-44,000 of hop 1's db hits for 12-13 names at 10,000
// memories of 3,392 entities: docs/benchmarks.md). PROFILEd at 3577335 on that corpus,
// a 3-entity query with 10 seed memories: 1 ms planned, 6 ms consumed;
// walkHop2Cypher on the 74 entities of its first hop, ~8,000 db hits
// (1,617 memories filtered), 14 ms.
var walkHop1Cypher = `
CALL {
  UNWIND $seed_ids AS sid
  MATCH (m:Memory {id: sid})
  WHERE ` + memoryVisible + `
  RETURN collect(m) AS seeds
}
CALL {
  CALL {
    UNWIND $names AS name
    MATCH (e:Entity {tenant_id: $f_tenant, norm_name: name}) RETURN name, e
    UNION
    MATCH (e:Entity) WHERE e.tenant_id = $f_tenant AND any(a IN e.alias_norms WHERE a IN $names)
    UNWIND [a IN e.alias_norms WHERE a IN $names] AS name
    RETURN name, e
  }
  RETURN collect([name, e]) AS resolved
}
CALL {
  WITH resolved
  UNWIND resolved AS pair
  WITH DISTINCT pair[1] AS e
  CALL {
    WITH e
    MATCH (e)<-[:MENTIONS]-(m:Memory)
    WHERE ` + memoryVisible + `
    WITH m LIMIT $max_df + 1
    RETURN collect(m) AS admitted
  }
  CALL {
    WITH admitted
    UNWIND CASE WHEN size(admitted) <= $max_df THEN admitted ELSE [] END AS m
    WITH m ORDER BY m.created_at DESC, m.id DESC LIMIT $fanout
    RETURN collect(m) AS ms
  }
  RETURN collect([e.norm_name, size(admitted), [m IN ms | m.id]]) AS hop1, collect(ms) AS lists
}
CALL {
  WITH seeds, lists
  UNWIND seeds + reduce(acc = [], l IN lists | acc + l) AS m
  RETURN collect(DISTINCT m) AS m0
}
CALL {
  WITH m0
  UNWIND m0 AS a
  MATCH (a)-[:NEXT|SUPERSEDES]-(m:Memory)
  WHERE ` + memoryVisible + `
  RETURN collect(DISTINCT m) AS linked
}
CALL {
  WITH m0, linked
  UNWIND m0 + linked AS m
  WITH DISTINCT m
  RETURN collect(` + memoryDetail + `) AS details
}
RETURN [m IN seeds | m.id] AS seeds, [pair IN resolved | [pair[0], pair[1].norm_name]] AS resolved, hop1,
       [m IN linked | m.id] AS linked, details`

// walkHop2Cypher loads the second hop: for each entity of $names, its
// first $fanout + 1 admitted memories, and the detail of them all when
// there are no more than $fanout (a more common entity is not expanded;
// no order is needed: an entity is expanded whole or not at all); then
// the detail of the memories of $linked the filter admits (those linked
// to the first hop), with a null name. Uses entity_norm and memory_id.
var walkHop2Cypher = `
UNWIND $names AS name
MATCH (e:Entity {tenant_id: $f_tenant, norm_name: name})
CALL {
  WITH e
  MATCH (e)<-[:MENTIONS]-(m:Memory)
  WHERE ` + memoryVisible + `
  WITH m LIMIT $fanout + 1
  RETURN collect(m) AS ms
}
RETURN name, size(ms) AS n, CASE WHEN size(ms) <= $fanout THEN [m IN ms | ` + memoryDetail + `] ELSE [] END AS details
UNION ALL
UNWIND $linked AS id
MATCH (m:Memory {id: id})
WHERE ` + memoryVisible + `
RETURN null AS name, 1 AS n, [` + memoryDetail + `] AS details`

// Walk implements graph.Store in three queries of one read transaction:
// the first hop (walkHop1Cypher), the second (walkHop2Cypher), and the
// memories returned once walk.Rank has run in Go (memoriesByIDCypher).
// Every query that reaches a memory applies the filter; the details only
// add edges between memories and entities already admitted.
func (s *Store) Walk(ctx context.Context, f graph.Filter, r graph.WalkRequest) ([]graph.Walked, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: walk: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: walk: %w", err)
	}
	names := map[string]float64{}
	for n, w := range r.Entities {
		if nn := graph.NormName(n); nn != "" && w > 0 {
			names[nn] = max(names[nn], w)
		}
	}
	var ids []string
	for id, w := range r.Memories {
		if id != "" && w > 0 {
			ids = append(ids, id)
		}
	}
	if r.Limit <= 0 || (len(names) == 0 && len(ids) == 0) {
		return nil, nil
	}
	slices.Sort(ids)
	list := slices.Sorted(maps.Keys(names))
	adm, local := inProcess(f)
	local = local && !s.cypherFilter.Load()
	out, err := read(ctx, s, func(tx txn) ([]graph.Walked, error) {
		if !local {
			l := newHood(r)
			d, err := cypherHop1(ctx, tx, f, ids, list)
			if err != nil {
				return nil, err
			}
			l.takeHop1(r, names, d)
			if names, linked := l.hop2Wants(); len(names) > 0 || len(linked) > 0 {
				d, err := cypherHop2(ctx, tx, f, names, linked)
				if err != nil {
					return nil, err
				}
				l.takeHop2(d)
			}
			res, err := l.finish(ctx, tx, f)
			if err != nil || len(res) == 0 {
				return nil, err
			}
			ms, err := memoriesByID(ctx, tx, f, walkedIDs(res))
			return walked(res, ms), err
		}
		// The two hops and the relation step in the process: the mention
		// index's names, lists, links and relations, admitted by memAttrs
		// (admit.go); the memories kept
		// read with the whole filter, so that Neo4j, not only the
		// process's copy, admits what is returned, and with the keyword
		// sequence, which says whether the copy was current (overCopy).
		var out []graph.Walked
		err := s.kw.overCopy(ctx, tx, f.Scope.TenantID, func() (int64, error) {
			l := newHood(r)
			s.kw.mentions.view(f.Scope.TenantID, func(t *tenantMentions) {
				l.takeHop1(r, names, t.hop1(&adm, ids, t.resolve(list)))
				names, linked := l.hop2Wants()
				l.takeHop2(t.hop2(&adm, names, linked))
				l.relatedOver(t, &adm)
			})
			res := l.rank()
			if len(res) == 0 {
				out = nil
				return -1, nil
			}
			ms, seq, err := readKept(ctx, tx, f, walkedIDs(res))
			out = walked(res, ms)
			return seq, err
		})
		return out, err
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: walk: %w", err)
	}
	return out, nil
}

// finish runs the relation step and the walk over what was loaded.
func (h *hood) finish(ctx context.Context, tx txn, f graph.Filter) ([]walk.Result, error) {
	if err := h.related(ctx, tx, f); err != nil {
		return nil, err
	}
	return h.rank(), nil
}

func walkedIDs(res []walk.Result) []string {
	ids := make([]string, len(res))
	for i, x := range res {
		ids[i] = x.ID
	}
	return ids
}

// walked pairs the walk's results with the memories read for them, in the
// results' order, leaving out a result the read did not return (one the
// filter in Neo4j does not admit: the process's copy was behind).
func walked(res []walk.Result, ms []graph.Memory) []graph.Walked {
	byID := make(map[string]graph.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := make([]graph.Walked, 0, len(res))
	for _, x := range res {
		if m, ok := byID[x.ID]; ok {
			out = append(out, graph.Walked{Memory: m, Score: x.Score, Via: x.Via})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// hood is a neighbourhood being loaded, under the bounds graph.WalkRequest
// documents (the same rules as the SQLite store's).
type hood struct {
	mems  map[string]bool  // loaded memories
	df    map[string]int64 // entity -> admitted memories mentioning it
	pairs map[[2]string]bool
	links map[[2]string]string // (a, b), a < b -> type
	seen  map[string]bool      // memories whose detail was read
	req   graph.WalkRequest
	rels  map[[2]string]bool // relations among loaded memories (walk_relations.go)
	byRel map[string]bool    // memories only a relation loaded
}

func newHood(r graph.WalkRequest) *hood {
	return &hood{mems: map[string]bool{}, df: map[string]int64{}, pairs: map[[2]string]bool{},
		links: map[[2]string]string{}, seen: map[string]bool{},
		req: graph.WalkRequest{Entities: map[string]float64{}, Memories: map[string]float64{}, Damping: r.Damping, Limit: r.Limit}}
}

// add loads memory id unless the neighbourhood is full; it reports whether
// id is loaded.
func (h *hood) add(id string) bool {
	if h.mems[id] {
		return true
	}
	if len(h.mems) >= graph.WalkMaxNodes {
		return false
	}
	h.mems[id] = true
	return true
}

// detailRow is a memory of the neighbourhood with the norm names of the
// entities it mentions and its links to other memories (memoryDetail).
type detailRow struct {
	id       string
	entities []string
	links    []memLink
}

// detailOf reads a memoryDetail row.
func detailOf(d any) detailRow {
	row := d.([]any)
	out := detailRow{id: row[0].(string)}
	for _, e := range row[1].([]any) {
		out.entities = append(out.entities, e.(string))
	}
	for _, l := range row[2].([]any) {
		ln := l.([]any)
		out.links = append(out.links, memLink{id: ln[0].(string), typ: ln[1].(string)})
	}
	return out
}

func detailsOf(ds []any) []detailRow {
	out := make([]detailRow, len(ds))
	for i, d := range ds {
		out[i] = detailOf(d)
	}
	return out
}

// detail records the edges of one memory; entities are kept later only
// when the neighbourhood holds them.
func (h *hood) detail(d detailRow) {
	id := d.id
	if h.seen[id] {
		return
	}
	h.seen[id] = true
	for _, e := range d.entities {
		h.pairs[[2]string{id, e}] = true
	}
	for _, l := range d.links {
		a, b := id, l.id
		if b < a {
			a, b = b, a
		}
		// One link per pair, NEXT before SUPERSEDES (as on every store).
		if typ, ok := h.links[[2]string{a, b}]; !ok || l.typ < typ {
			h.links[[2]string{a, b}] = l.typ
		}
	}
}

type hop1Entity struct {
	name string
	df   int64
	ids  []string
}

// hop1Data is what the first hop loads (walkHop1Cypher, or
// tenantMentions.hop1 in the process): the admitted seeds in $seed_ids'
// order, the names resolved as [name, norm name], each seed entity's df
// and newest memories, the admitted memories linked to those, and the
// detail of them all.
type hop1Data struct {
	seeds    []string
	resolved [][2]string
	entities []hop1Entity
	linked   []string
	details  []detailRow
}

func cypherHop1(ctx context.Context, tx txn, f graph.Filter, ids, names []string) (hop1Data, error) {
	recs, err := collect(ctx, tx, walkHop1Cypher, walkHop1Params(f, ids, names))
	if err != nil {
		return hop1Data{}, err
	}
	p := recs[0].AsMap()
	var d hop1Data
	for _, id := range p["seeds"].([]any) {
		d.seeds = append(d.seeds, id.(string))
	}
	for _, x := range p["resolved"].([]any) {
		pair := x.([]any)
		d.resolved = append(d.resolved, [2]string{pair[0].(string), pair[1].(string)})
	}
	for _, x := range p["hop1"].([]any) {
		row := x.([]any)
		e := hop1Entity{name: row[0].(string), df: row[1].(int64)}
		for _, id := range row[2].([]any) {
			e.ids = append(e.ids, id.(string))
		}
		d.entities = append(d.entities, e)
	}
	for _, id := range p["linked"].([]any) {
		d.linked = append(d.linked, id.(string))
	}
	d.details = detailsOf(p["details"].([]any))
	return d, nil
}

// takeHop1 loads the first hop (names are the request's seed names by norm
// name, with their weights).
func (h *hood) takeHop1(r graph.WalkRequest, names map[string]float64, d hop1Data) {
	for _, id := range d.seeds {
		h.add(id)
		h.req.Memories[id] = r.Memories[id]
	}
	for _, pair := range d.resolved {
		h.req.Entities[pair[1]] = max(h.req.Entities[pair[1]], names[pair[0]])
	}
	es := d.entities
	slices.SortFunc(es, func(a, b hop1Entity) int { return cmp.Or(cmp.Compare(a.df, b.df), cmp.Compare(a.name, b.name)) })
	for _, e := range es {
		h.df[e.name] = e.df
		for _, id := range e.ids {
			if h.add(id) {
				h.pairs[[2]string{id, e.name}] = true
			}
		}
	}
	linked := slices.Sorted(slices.Values(d.linked))
	for _, id := range linked {
		h.add(id)
	}
	for _, x := range d.details {
		h.detail(x)
	}
}

// walkHop1Params binds walkHop1Cypher's parameters: the seed memories' ids
// and the seed names. An empty list is sent as [""] (idList), which
// matches no memory id, norm name or alias.
func walkHop1Params(f graph.Filter, ids, names []string) map[string]any {
	return filterParams(f, map[string]any{
		"seed_ids": idList(ids), "names": idList(names), "max_df": int64(graph.WalkMaxDF), "fanout": int64(graph.WalkFanout),
	})
}

// walkHop2Params binds walkHop2Cypher's parameters: the entities to
// expand and the memories linked to the first hop (idList for empty ones).
func walkHop2Params(f graph.Filter, names, linked []string) map[string]any {
	return filterParams(f, map[string]any{"names": idList(names), "fanout": int64(graph.WalkFanout), "linked": idList(linked)})
}

type hop2Entity struct {
	name    string
	n       int64
	details []detailRow
}

// hop2Wants lists what the second hop expands: the entities the first
// hop's memories mention that it did not, and the memories linked to the
// first hop that it did not load, each sorted.
func (h *hood) hop2Wants() (names, linked []string) {
	seen := map[string]bool{}
	for p := range h.pairs {
		if _, ok := h.df[p[1]]; !ok && h.mems[p[0]] && !seen[p[1]] {
			seen[p[1]] = true
			names = append(names, p[1])
		}
	}
	for l := range h.links {
		if h.mems[l[0]] != h.mems[l[1]] {
			linked = append(linked, l[0])
			if h.mems[l[0]] {
				linked[len(linked)-1] = l[1]
			}
		}
	}
	slices.Sort(names)
	slices.Sort(linked)
	return names, slices.Compact(linked)
}

// hop2Data is what the second hop loads (walkHop2Cypher, or
// tenantMentions.hop2): per entity its count of admitted memories up to
// WalkFanout + 1 and, when no more, their detail; and the detail of the
// admitted memories of the linked ones.
type hop2Data struct {
	entities []hop2Entity
	linked   []detailRow
}

func cypherHop2(ctx context.Context, tx txn, f graph.Filter, names, linked []string) (hop2Data, error) {
	recs, err := collect(ctx, tx, walkHop2Cypher, walkHop2Params(f, names, linked))
	if err != nil {
		return hop2Data{}, err
	}
	var d hop2Data
	for _, rec := range recs {
		p := rec.AsMap()
		if p["name"] == nil {
			d.linked = append(d.linked, detailsOf(p["details"].([]any))...)
			continue
		}
		d.entities = append(d.entities, hop2Entity{name: p["name"].(string), n: p["n"].(int64), details: detailsOf(p["details"].([]any))})
	}
	return d, nil
}

// takeHop2 loads the second hop.
func (h *hood) takeHop2(d hop2Data) {
	es := d.entities
	slices.SortFunc(es, func(a, b hop2Entity) int { return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.name, b.name)) })
	for _, e := range es {
		if e.n > graph.WalkFanout {
			h.df[e.name] = walk.CommonDF
			continue
		}
		h.df[e.name] = e.n
		for _, x := range e.details {
			if h.add(x.id) {
				h.pairs[[2]string{x.id, e.name}] = true
				h.detail(x)
			}
		}
	}
	for _, x := range d.linked {
		if h.add(x.id) {
			h.detail(x)
		}
	}
}

// rank builds the walk's graph from what was loaded and runs it.
func (h *hood) rank() []walk.Result {
	// Nodes and edges in a fixed order, so that equal neighbourhoods score
	// alike to the last bit on every store (walk.Rank sums in adjacency
	// order).
	g := walk.New()
	mems := slices.Sorted(maps.Keys(h.mems))
	for _, id := range mems {
		g.Memory(id)
	}
	pairs := make([][2]string, 0, len(h.pairs))
	for p := range h.pairs {
		if _, ok := h.df[p[1]]; ok && h.mems[p[0]] {
			pairs = append(pairs, p)
		}
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, p := range pairs {
		g.Mention(p[0], p[1])
		g.DF(p[1], h.df[p[1]])
	}
	links := make([][2]string, 0, len(h.links))
	for l := range h.links {
		if h.mems[l[0]] && h.mems[l[1]] && !h.byRel[l[0]] && !h.byRel[l[1]] {
			links = append(links, l)
		}
	}
	slices.SortFunc(links, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, l := range links {
		g.Link(l[0], l[1], walk.LinkWeight(h.links[l]))
	}
	for _, l := range slices.SortedFunc(maps.Keys(h.rels), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		g.Link(l[0], l[1], walk.RelationWeight)
	}
	return g.Rank(h.req)
}
