package neo4j

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
)

// listMemoriesText is the statement that lists visible memories newest
// first (created_at, then id, descending) after the keyset cursor ($c_at,
// $c_id), one more than the page so the caller knows whether a next page
// exists; seek narrows the index seek (listAfterCypher's starts at the
// cursor: a range the index can seek, which an OR with $c_at IS NULL is
// not).
//
// It reads the tenant's memories in memory_tenant_created's order (ORDER BY
// names the index's properties, tenant first, as neighbourWalksCypher's
// window does; every memory has a created_at) and filters them as they
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
	ms, err := read(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]graph.Memory, error) {
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
	out, err := read(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]graph.Candidate, error) {
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

// neighbourWalksCypher walks each distinct entity of the readable seeds
// once and returns the (seed position, entity) pairs and, per entity,
// [norm name, mentions, [[id, created_at] of each memory reached]]: the
// first $fanout of its memories, newest first (created_at, then id), that
// are not seeds and pass the filter; mentions is the number of memories
// mentioning it, whatever their status or scope.
//
// No index orders an entity's MENTIONS by the memories' time, so finding an
// entity's newest memories by its edges means reading and sorting all of
// them (9,313 edges for the ~30 entities of 10 seeds at 10k memories:
// docs/benchmarks.md). So the statement first reads the tenant's $window
// newest memories in index order (memory_tenant_created, ordered because
// ORDER BY names the index's properties, tenant first) with the entities
// each mentions: that prefix of the order holds a popular entity's newest
// memories (every memory has a created_at: normalisation sets it, so the
// window's IS NOT NULL leaves none out), and when $fanout of them pass,
// they are its answer. Only an entity the window does not settle (fewer
// pass, and the window is not the whole tenant) is walked by its edges,
// sorted as before; its count of mentions comes with that walk, and a
// settled entity's is counted without reading the memories' properties,
// unless it is in $known: the entities whose count this process holds at
// the tenant's keyword sequence (mentionCounts), returned with known true
// and a count of 0 for the caller to fill in. Counting a popular entity's
// mentions expanded every one of its MENTIONS edges: ~176,000 of the
// statement's ~225,000 db hits at 100k memories (docs/benchmarks.md).
// Uses memory_id and memory_tenant_created.
var neighbourWalksCypher = `
UNWIND range(0, size($seeds) - 1) AS i
MATCH (seed:Memory {id: $seeds[i]})
WHERE ` + seedAccess + `
MATCH (seed)-[:MENTIONS]->(e:Entity)
WITH collect([i, e.norm_name]) AS pairs, collect(DISTINCT e) AS es
CALL {
  MATCH (m:Memory) WHERE m.tenant_id = $f_tenant AND m.created_at IS NOT NULL
  WITH m ORDER BY m.tenant_id DESC, m.created_at DESC, m.id DESC LIMIT $window
  RETURN collect([m, [(m)-[:MENTIONS]->(x:Entity) | x]]) AS recent
}
CALL {
  WITH es, recent
  UNWIND es AS e
  CALL {
    WITH e, recent
    UNWIND [r IN recent WHERE e IN r[1] | r[0]] AS m
    WITH m WHERE NOT m.id IN $seeds AND ` + memoryVisible + `
    WITH m LIMIT $fanout
    RETURN collect(m) AS early
  }
  WITH e, early, size(early) < $fanout AND size(recent) = $window AS walk
  CALL {
    WITH e, walk
    MATCH (e)<-[:MENTIONS]-(m:Memory) WHERE walk
    WITH m ORDER BY m.created_at DESC, m.id DESC
    RETURN collect(m) AS newest
  }
  CALL {
    WITH newest
    UNWIND newest AS m
    WITH m WHERE NOT m.id IN $seeds AND ` + memoryVisible + `
    WITH m LIMIT $fanout
    RETURN collect(m) AS late
  }
  WITH e, walk, late, early, newest, NOT walk AND e.norm_name IN $known AS known
  CALL {
    WITH e, walk, known
    MATCH (e)<-[:MENTIONS]-(m:Memory) WHERE NOT walk AND NOT known
    RETURN count(m) AS counted
  }
  WITH e, known, CASE WHEN walk THEN [size(newest), late] ELSE [counted, early] END AS w
  RETURN collect([e.norm_name, w[0], [m IN w[1] | [m.id, m.created_at]], known]) AS walks
}
RETURN pairs, walks`

// memoriesByIDCypher projects memories by id (already filtered); bind
// f_known_at for a filter with KnownAt (asKnown).
const memoriesByIDCypher = `
MATCH (m:Memory) WHERE m.id IN $ids AND m.tenant_id = $tenant
RETURN ` + memoryProjection + ` AS m`

// neighbourWindow is how many of the tenant's newest memories
// neighbourWalksCypher reads to settle popular entities without walking
// their edges.
const neighbourWindow = 512

// neighbourWalksParams binds neighbourWalksCypher's parameters.
func neighbourWalksParams(f graph.Filter, seeds, known []string) map[string]any {
	return filterParams(f, map[string]any{"seeds": seeds, "fanout": int64(graph.NeighbourFanout), "window": int64(neighbourWindow),
		// "" (no entity's norm name) keeps the list's type the same when
		// no count is known: an empty list would be planned apart.
		"known": append(known, "")})
}

// memoriesByIDParams binds memoriesByIDCypher's parameters.
func memoriesByIDParams(f graph.Filter, ids []string) map[string]any {
	return map[string]any{"ids": ids, "tenant": f.Scope.TenantID, "f_known_at": timeParam(f.KnownAt)}
}

// Neighbours finds, for each seed, up to perSeed memories sharing an entity
// with it: the walks run in Cypher, the ranking (graph.RankNeighbours) in
// Go, then the memories kept are read in the same transaction.
func (s *Store) Neighbours(ctx context.Context, f graph.Filter, seedIDs []string, perSeed int) ([]graph.Neighbour, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: neighbours: %w", err)
	}
	seeds := dedupe(seedIDs)
	if len(seeds) == 0 || perSeed <= 0 {
		return nil, nil
	}
	out, err := read(ctx, s, func(tx neo4jdrv.ManagedTransaction) ([]graph.Neighbour, error) {
		seq, err := keywordSeq(ctx, tx, f.Scope.TenantID)
		if err != nil {
			return nil, err
		}
		counts := s.mentions.at(f.Scope.TenantID, seq)
		recs, err := collect(ctx, tx, neighbourWalksCypher, neighbourWalksParams(f, seeds, counts.names()))
		if err != nil {
			return nil, err
		}
		out := neighboursOf(recs[0].AsMap(), seeds, perSeed, counts)
		if len(out) == 0 {
			return nil, nil
		}
		ids := make([]string, len(out))
		for i, n := range out {
			ids[i] = n.Memory.ID
		}
		recs, err = collect(ctx, tx, memoriesByIDCypher, memoriesByIDParams(f, dedupe(ids)))
		if err != nil {
			return nil, err
		}
		byID := make(map[string]graph.Memory, len(recs))
		for _, r := range recs {
			m := memoryOf(r, "m")
			byID[m.ID] = m
		}
		for i := range out {
			out[i].Memory = byID[out[i].Memory.ID]
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: neighbours: %w", err)
	}
	return out, nil
}

// neighboursOf assembles neighbourWalksCypher's answer per seed, in seed
// order: each memory an entity of the seed reached, with the entities
// (and their mentions) that reached it, ranked by graph.RankNeighbours.
func neighboursOf(p map[string]any, seeds []string, perSeed int, counts *tenantCounts) []graph.Neighbour {
	type reach struct {
		id string
		at time.Time
	}
	type walk struct {
		mentions int64
		reached  []reach
	}
	walks := map[string]walk{}
	for _, x := range p["walks"].([]any) {
		row := x.([]any)
		w := walk{mentions: counts.mentions(row[0].(string), row[1].(int64), row[3].(bool))}
		for _, r := range row[2].([]any) {
			pair := r.([]any)
			at, _ := pair[1].(time.Time)
			w.reached = append(w.reached, reach{id: pair[0].(string), at: at.UTC()})
		}
		walks[row[0].(string)] = w
	}
	bySeed := make([][]string, len(seeds))
	for _, x := range p["pairs"].([]any) {
		pair := x.([]any)
		i := pair[0].(int64)
		bySeed[i] = append(bySeed[i], pair[1].(string))
	}
	var out []graph.Neighbour
	for i, names := range bySeed {
		var (
			ns     []graph.Neighbour
			shared [][]graph.SharedEntity
			at     = map[string]int{}
		)
		for _, name := range names {
			w := walks[name]
			for _, r := range w.reached {
				k, ok := at[r.id]
				if !ok {
					k = len(ns)
					at[r.id] = k
					ns = append(ns, graph.Neighbour{SeedID: seeds[i], Memory: graph.Memory{ID: r.id, CreatedAt: r.at}})
					shared = append(shared, nil)
				}
				shared[k] = append(shared[k], graph.SharedEntity{Name: name, Mentions: w.mentions})
			}
		}
		out = append(out, graph.RankNeighbours(ns, shared, perSeed)...)
	}
	return out
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
