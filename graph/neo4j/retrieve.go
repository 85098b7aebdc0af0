package neo4j

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/kwindex"
)

// listMemoriesText is the statement that lists visible memories newest
// first (created_at, then id, descending) after the keyset cursor ($c_at,
// $c_id), one more than the page so the caller knows whether a next page
// exists; seek narrows the index seek (listAfterCypher's starts at the
// cursor: a range the index can seek, which an OR with $c_at IS NULL is
// not).
//
// It reads the tenant's memories in memory_tenant_created's order (ORDER BY
// names the index's properties, tenant first; every memory has a
// created_at) and filters them as they
// come, so a page reads about as many memories as it returns, plus those
// the filter hides. Sorting the filtered memories instead read every
// memory of the store (a label scan: about 0.85 s a page at 100k,
// docs/benchmarks.md), whatever the page.
func listMemoriesText(seek string) string {
	return `
MATCH (m:Memory)
WHERE m.tenant_id = $f_tenant AND m.created_at IS NOT NULL` + seek + `
WITH m ORDER BY m.tenant_id DESC, m.created_at DESC, m.id DESC
WITH m WHERE ` + memoryVisible + `
  AND ($c_at IS NULL OR m.created_at < $c_at OR (m.created_at = $c_at AND m.id < $c_id))
WITH m LIMIT $limit
RETURN ` + memoryProjection + ` AS m`
}

// The first page's statement and the next pages'.
var (
	listFirstCypher = listMemoriesText("")
	listAfterCypher = listMemoriesText(" AND m.created_at <= $c_at")
)

// ListMemories lists memories matching f, newest first, one page at a time.
func (s *Store) ListMemories(ctx context.Context, f graph.Filter, p graph.Page) (graph.Listing, error) {
	if err := f.Validate(); err != nil {
		return graph.Listing{}, fmt.Errorf("neo4j: list memories: %w", err)
	}
	limit := pageLimit(p.Limit)
	at, id, err := decodeCursor(p.Cursor)
	if err != nil {
		return graph.Listing{}, fmt.Errorf("neo4j: list memories: %w", err)
	}
	ms, err := read(ctx, s, func(tx txn) ([]graph.Memory, error) {
		cy := listFirstCypher
		if !at.IsZero() {
			cy = listAfterCypher
		}
		recs, err := collect(ctx, tx, cy, listMemoriesParams(f, at, id, limit+1))
		if err != nil {
			return nil, err
		}
		out := make([]graph.Memory, 0, len(recs))
		for _, r := range recs {
			out = append(out, memoryOf(r, "m"))
		}
		return out, nil
	})
	if err != nil {
		return graph.Listing{}, fmt.Errorf("neo4j: list memories: %w", err)
	}
	l := graph.Listing{Memories: ms}
	if len(ms) > limit {
		l.Memories = ms[:limit]
		last := l.Memories[limit-1]
		l.NextCursor = encodeCursor(last.CreatedAt, last.ID)
	}
	return l, nil
}

// listMemoriesParams binds listMemoriesText's parameters: the keyset
// cursor (at, id; a zero at is the first page) and the rows to read.
func listMemoriesParams(f graph.Filter, at time.Time, id string, rows int) map[string]any {
	return filterParams(f, map[string]any{"c_at": timeParam(at), "c_id": id, "limit": int64(rows)})
}

// candidatesCypher finds visible memories that MENTION an entity of the
// tenant whose norm name or alias is one of $names, most matched entities
// first, then newest. Uses entity_norm for names and entity_tenant for
// aliases.
const candidatesCypher = `
CALL {
  MATCH (e:Entity) WHERE e.tenant_id = $f_tenant AND e.norm_name IN $names RETURN e
  UNION
  MATCH (e:Entity) WHERE e.tenant_id = $f_tenant AND any(a IN e.alias_norms WHERE a IN $names) RETURN e
}
MATCH (m:Memory)-[:MENTIONS]->(e)
WITH m, collect(DISTINCT e.norm_name) AS matched
WHERE ` + memoryVisible + `
WITH m, matched
ORDER BY size(matched) DESC, m.created_at DESC, m.id DESC
LIMIT $limit
RETURN ` + memoryProjection + ` AS m, matched`

// Candidates finds memories that mention any of the named entities.
func (s *Store) Candidates(ctx context.Context, f graph.Filter, names []string, limit int) ([]graph.Candidate, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: candidates: %w", err)
	}
	norms := make([]string, 0, len(names))
	for _, n := range names {
		if n = graph.NormName(n); n != "" {
			norms = append(norms, n)
		}
	}
	norms = dedupe(norms)
	if len(norms) == 0 || limit <= 0 {
		return nil, nil
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Candidate, error) {
		recs, err := collect(ctx, tx, candidatesCypher, filterParams(f, map[string]any{
			"names": norms, "limit": int64(limit),
		}))
		if err != nil {
			return nil, err
		}
		out := make([]graph.Candidate, 0, len(recs))
		for _, r := range recs {
			matched, _ := r.Get("matched")
			out = append(out, graph.Candidate{Memory: memoryOf(r, "m"), Matched: strs(map[string]any{"x": matched}, "x")})
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: candidates: %w", err)
	}
	return out, nil
}

// seedAccess is memoryAccess on the seed: a seed need only be readable (the
// filter's narrowing applies to the neighbours, not the seeds), and one the
// reader may not read yields nothing, lest its entities leak.
var seedAccess = strings.ReplaceAll(memoryAccess, "m.", "seed.")

// neighbourFilterCypher returns the seeds among $seeds the reader may read
// (the access rule, not the narrowing: a seed the reader may not read
// yields nothing, lest its entities leak) and the candidates among $ids the
// filter admits. Uses memory_id.
var neighbourFilterCypher = `
CALL {
  UNWIND $seeds AS sid
  MATCH (seed:Memory {id: sid})
  WHERE ` + seedAccess + `
  RETURN collect(seed.id) AS seeds
}
CALL {
  UNWIND $ids AS id
  MATCH (m:Memory {id: id})
  WHERE ` + memoryVisible + `
  RETURN collect(m.id) AS passed
}
RETURN seeds, passed`

// memoriesByIDCypher projects memories by id (already filtered); bind
// f_known_at for a filter with KnownAt (asKnown).
const memoriesByIDCypher = `
MATCH (m:Memory) WHERE m.id IN $ids AND m.tenant_id = $tenant
RETURN ` + memoryProjection + ` AS m`

// neighbourFilterParams binds neighbourFilterCypher's parameters (idList
// for no candidates).
func neighbourFilterParams(f graph.Filter, seeds, ids []string) map[string]any {
	return filterParams(f, map[string]any{"seeds": seeds, "ids": idList(ids)})
}

// memoriesByID runs memoriesByIDCypher: the memories of ids, already
// filtered, in no order.
func memoriesByID(ctx context.Context, tx txn, f graph.Filter, ids []string) ([]graph.Memory, error) {
	recs, err := collect(ctx, tx, memoriesByIDCypher, memoriesByIDParams(f, ids))
	if err != nil {
		return nil, err
	}
	ms := make([]graph.Memory, len(recs))
	for i, r := range recs {
		ms[i] = memoryOf(r, "m")
	}
	return ms, nil
}

// memoriesByIDParams binds memoriesByIDCypher's parameters.
func memoriesByIDParams(f graph.Filter, ids []string) map[string]any {
	return map[string]any{"ids": ids, "tenant": f.Scope.TenantID, "f_known_at": timeParam(f.KnownAt)}
}

// Neighbours finds, for each seed, up to perSeed memories sharing an entity
// with it. The entities of each seed, their memories newest first and their
// counts of mentions come from the process's mention index (mentions.go),
// caught up to the tenant's keyword sequence in this transaction; the
// filter runs in Neo4j on each entity's newest candidates, a batch at a
// time, until NeighbourFanout pass or none are left (with the seeds'
// access, in the first statement); the ranking (graph.RankNeighbours) runs
// in Go, then the memories kept are read in the same transaction.
func (s *Store) Neighbours(ctx context.Context, f graph.Filter, seedIDs []string, perSeed int) ([]graph.Neighbour, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: neighbours: %w", err)
	}
	seeds := dedupe(seedIDs)
	if len(seeds) == 0 || perSeed <= 0 {
		return nil, nil
	}
	tenant := f.Scope.TenantID
	adm, local := inProcess(f)
	local = local && !s.cypherFilter.Load()
	out, err := read(ctx, s, func(tx txn) ([]graph.Neighbour, error) {
		if !local {
			release, err := s.kw.sync(ctx, tx, tenant)
			defer release()
			if err != nil {
				return nil, err
			}
			entities, lists := s.kw.mentions.seedLists(tenant, seeds)
			if len(lists) == 0 { // no seed mentions anything: no neighbours, whoever reads
				return nil, nil
			}
			readable, walks, err := neighbourWalks(ctx, tx, f, seeds, entities, lists)
			if err != nil {
				return nil, err
			}
			out := rankNeighbours(seeds, perSeed, readable, entities, lists, walks)
			if len(out) == 0 {
				return nil, nil
			}
			ms, err := memoriesByID(ctx, tx, f, neighbourIDs(out))
			return neighboursRead(out, ms), err
		}
		// The filter over the process's copy, as the walk's
		// (walk_local.go): the neighbours kept are read with the whole
		// filter in Neo4j and the keyword sequence (overCopy).
		var out []graph.Neighbour
		err := s.kw.overCopy(ctx, tx, tenant, func() (int64, error) {
			out = nil
			entities, lists := s.kw.mentions.seedLists(tenant, seeds)
			if len(lists) == 0 { // no seed mentions anything: no neighbours, whoever reads
				return -1, nil
			}
			var (
				readable map[string]bool
				walks    map[string][]kwKey
			)
			s.kw.mentions.view(tenant, func(t *tenantMentions) {
				readable, walks = t.neighbourWalks(&adm, seeds, entities, lists)
			})
			ns := rankNeighbours(seeds, perSeed, readable, entities, lists, walks)
			if len(ns) == 0 {
				return -1, nil
			}
			ms, seq, err := readKept(ctx, tx, f, neighbourIDs(ns))
			out = neighboursRead(ns, ms)
			return seq, err
		})
		return out, err
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: neighbours: %w", err)
	}
	return out, nil
}

// rankNeighbours ranks, for each readable seed, the memories its
// entities' walks reached (graph.RankNeighbours), perSeed each.
func rankNeighbours(seeds []string, perSeed int, readable map[string]bool, entities map[string][]string,
	lists, walks map[string][]kwKey) []graph.Neighbour {
	var out []graph.Neighbour
	for _, seed := range seeds {
		if !readable[seed] {
			continue
		}
		var (
			ns     []graph.Neighbour
			shared [][]graph.SharedEntity
			at     = map[string]int{}
		)
		for _, e := range entities[seed] {
			for _, k := range walks[e] {
				i, ok := at[k.id]
				if !ok {
					i = len(ns)
					at[k.id] = i
					ns = append(ns, graph.Neighbour{SeedID: seed, Memory: graph.Memory{ID: k.id, CreatedAt: time.Unix(0, k.at).UTC()}})
					shared = append(shared, nil)
				}
				shared[i] = append(shared[i], graph.SharedEntity{Name: e, Mentions: int64(len(lists[e]))})
			}
		}
		out = append(out, graph.RankNeighbours(ns, shared, perSeed)...)
	}
	return out
}

func neighbourIDs(ns []graph.Neighbour) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.Memory.ID
	}
	return dedupe(ids)
}

// neighboursRead fills the neighbours with the memories read for them,
// leaving out one the read did not return (one the filter in Neo4j does
// not admit: the process's copy was behind).
func neighboursRead(ns []graph.Neighbour, ms []graph.Memory) []graph.Neighbour {
	byID := make(map[string]graph.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	kept := ns[:0]
	for _, n := range ns {
		if m, ok := byID[n.Memory.ID]; ok {
			n.Memory = m
			kept = append(kept, n)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// neighbourWalks filters each entity's memories (lists, read newest first;
// each seed's entities are in entities) in batches, seeds left out, until
// NeighbourFanout pass or the list ends, with neighbourFilterCypher; the
// first statement also reads which seeds are readable, and later ones walk
// only those seeds' entities. A memory two entities reach is filtered once.
func neighbourWalks(ctx context.Context, tx txn, f graph.Filter, seeds []string,
	entities map[string][]string, lists map[string][]kwKey) (readable map[string]bool, walks map[string][]kwKey, err error) {
	type walk struct {
		pos, batch, loaded int
		pending, chosen    []kwKey
	}
	skip := make(map[string]bool, len(seeds))
	for _, id := range seeds {
		skip[id] = true
	}
	ws := make(map[string]*walk, len(lists))
	for e := range lists {
		ws[e] = &walk{batch: graph.NeighbourFanout}
	}
	walks, verdict := map[string][]kwKey{}, map[string]bool{}
	for round := 0; round == 0 || len(ws) > 0; round++ {
		var ids []string
		asked := map[string]bool{}
		for e, w := range ws {
			list := lists[e]
			w.pending = w.pending[:0]
			for ; w.pos < len(list) && len(w.pending) < w.batch; w.pos++ {
				k := list[len(list)-1-w.pos] // newest first
				if skip[k.id] {
					continue
				}
				w.pending = append(w.pending, k)
				if _, ok := verdict[k.id]; !ok && !asked[k.id] {
					asked[k.id] = true
					ids = append(ids, k.id)
				}
			}
		}
		if round == 0 || len(ids) > 0 {
			sd := []string{""}
			if round == 0 {
				sd = seeds
			}
			slices.Sort(ids)
			recs, err := collect(ctx, tx, neighbourFilterCypher, neighbourFilterParams(f, sd, ids))
			if err != nil {
				return nil, nil, err
			}
			p := recs[0].AsMap()
			if round == 0 {
				readable = map[string]bool{}
				for _, id := range p["seeds"].([]any) {
					readable[id.(string)] = true
				}
			}
			for _, id := range ids {
				verdict[id] = false
			}
			for _, id := range p["passed"].([]any) {
				verdict[id.(string)] = true
			}
		}
		for e, w := range ws {
			for _, k := range w.pending {
				if verdict[k.id] && len(w.chosen) < graph.NeighbourFanout {
					w.chosen = append(w.chosen, k)
				}
			}
			w.loaded += len(w.pending)
			if len(w.chosen) == graph.NeighbourFanout || w.pos == len(lists[e]) {
				walks[e] = w.chosen
				delete(ws, e)
				continue
			}
			w.batch = kwindex.Refill(graph.NeighbourFanout-len(w.chosen), w.loaded, len(w.chosen), w.batch, round)
		}
		if round == 0 {
			// Only the readable seeds' entities are walked further.
			keep := map[string]bool{}
			for id, es := range entities {
				for _, e := range es {
					keep[e] = keep[e] || readable[id]
				}
			}
			for e := range ws {
				if !keep[e] {
					delete(ws, e)
				}
			}
		}
	}
	return readable, walks, nil
}

// pageLimit applies graph.Page's default (50) and cap (1000).
func pageLimit(n int) int {
	switch {
	case n <= 0:
		return 50
	case n > 1000:
		return 1000
	}
	return n
}

// encodeCursor makes the opaque keyset cursor for (created_at, id).
func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + "|" + id))
}

// decodeCursor reads a cursor made by encodeCursor; "" is the first page.
func decodeCursor(c string) (time.Time, string, error) {
	if c == "" {
		return time.Time{}, "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", &graph.FieldError{Field: "cursor", Message: "malformed"}
	}
	ns, id, ok := strings.Cut(string(raw), "|")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", &graph.FieldError{Field: "cursor", Message: "malformed"}
	}
	return time.Unix(0, n).UTC(), id, nil
}
