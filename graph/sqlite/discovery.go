package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/graph/kwindex"
)

// queryer is a connection or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// page resolves a Page's limit (default 50, capped at 1000).
func pageLimit(p graph.Page) int {
	switch {
	case p.Limit <= 0:
		return 50
	case p.Limit > 1000:
		return 1000
	}
	return p.Limit
}

// cursor is the position after the last row of a page: (created_at, key).
type cursor struct {
	At  int64  `json:"a"`
	Key string `json:"k"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, bool, error) {
	if s == "" {
		return cursor{}, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return c, false, &graph.FieldError{Field: "cursor", Message: "malformed cursor"}
	}
	return c, true, nil
}

// One page of memories, newest first, seeking past the cursor. Relies on
// memories_tenant_created.
const listMemories = `SELECT ` + memoryCols + `
FROM memories m
WHERE %s
ORDER BY m.created_at DESC, m.id DESC
LIMIT ?`

// ListMemories implements graph.Store. New memories are created "now", i.e.
// before the cursor, so a listing never repeats nor skips one that existed
// when it began.
func (s *Store) ListMemories(ctx context.Context, f graph.Filter, p graph.Page) (graph.Listing, error) {
	w, err := memoryFilter(f, false)
	if err != nil {
		return graph.Listing{}, fmt.Errorf("list memories: %w", err)
	}
	c, ok, err := decodeCursor(p.Cursor)
	if err != nil {
		return graph.Listing{}, fmt.Errorf("list memories: %w", err)
	}
	if ok {
		w.add("(m.created_at < ? OR (m.created_at = ? AND m.id < ?))", c.At, c.At, c.Key)
	}
	limit := pageLimit(p)
	rows, err := s.cachedQuery(ctx, fmt.Sprintf(listMemories, w.sql()), append(w.args, limit+1)...)
	if err != nil {
		return graph.Listing{}, fmt.Errorf("list memories: %w", err)
	}
	ms, err := scanMemories(rows)
	if err == nil {
		err = asKnown(ctx, s.r, f, ms)
	}
	if err != nil {
		return graph.Listing{}, fmt.Errorf("list memories: %w", err)
	}
	var l graph.Listing
	if len(ms) > limit {
		ms = ms[:limit]
		last := ms[limit-1]
		l.NextCursor = cursor{At: nanos(last.CreatedAt), Key: last.ID}.encode()
	}
	l.Memories = ms
	return l, nil
}

// The tenant's entities whose norm name or alias is one of the names.
// Relies on the entities (tenant_id, norm_name) and entity_aliases keys.
const resolveNames = `SELECT rid, norm_name FROM entities
WHERE tenant_id = ? AND norm_name IN (SELECT value FROM json_each(?))
UNION
SELECT e.rid, e.norm_name FROM entity_aliases a JOIN entities e ON e.rid = a.entity_rid
WHERE a.tenant_id = ? AND a.alias_norm IN (SELECT value FROM json_each(?))`

// entityRIDs resolves names (normalised) to entity rids and norm names.
func entityRIDs(ctx context.Context, conn queryer, tenant string, names []string) (map[int64]string, error) {
	norm := make([]string, 0, len(names))
	for _, n := range names {
		if nn := graph.NormName(n); nn != "" {
			norm = append(norm, nn)
		}
	}
	out := map[int64]string{}
	if len(norm) == 0 {
		return out, nil
	}
	list := jsonList(norm)
	rows, err := conn.QueryContext(ctx, resolveNames, tenant, list, tenant, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			rid  int64
			name string
		)
		if err := rows.Scan(&rid, &name); err != nil {
			return nil, err
		}
		out[rid] = name
	}
	return out, rows.Err()
}

// Candidates implements graph.Store.
//
// Results are ordered by c(m), the number of query entities m mentions,
// then newest. Counting every posting list would read tens of thousands of
// rows for a popular entity, so the ranking is built tier by tier, from
// c = k down to 1, with early-terminating index walks: a memory mentioning
// exactly c of the k entities appears in at least one of the k-c+1 smallest
// posting lists, so each tier walks those lists newest first (assigning
// each memory to the first list holding it), counts membership in the other
// lists by primary-key probes, applies the filter in the same statement and
// stops after the rows the tier still needs. The result is exact.
func (s *Store) Candidates(ctx context.Context, f graph.Filter, names []string, limit int) ([]graph.Candidate, error) {
	w, err := memoryFilter(f, false)
	if err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	if limit <= 0 {
		return nil, nil
	}
	conn, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for every statement
	if err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	defer func() { _ = conn.Rollback() }()
	ents, err := entityRIDs(ctx, conn, f.Scope.TenantID, names)
	if err != nil || len(ents) == 0 {
		return nil, err
	}
	lists, err := postingSizes(ctx, conn, ents)
	if err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	hits, err := rankByTiers(ctx, conn, w, lists, limit)
	if err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	cs, err := candidatesOf(ctx, conn, hits, ents)
	if err != nil || f.KnownAt.IsZero() {
		return cs, err
	}
	ms := make([]graph.Memory, len(cs))
	for i, c := range cs {
		ms[i] = c.Memory
	}
	if err := asKnown(ctx, conn, f, ms); err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	for i := range cs {
		cs[i].Memory = ms[i]
	}
	return cs, nil
}

// hit is one ranked memory.
type hit struct {
	at, rid int64
}

// Posting-list size, maintained by every write (migration 4).
const postingSize = `SELECT mention_count FROM entities WHERE rid = ?`

// postingSizes returns the entity rids, smallest posting list first.
func postingSizes(ctx context.Context, conn queryer, ents map[int64]string) ([]int64, error) {
	type sized struct{ rid, n int64 }
	var ls []sized
	for rid := range ents {
		var n int64
		if err := conn.QueryRowContext(ctx, postingSize, rid).Scan(&n); err != nil {
			return nil, err
		}
		ls = append(ls, sized{rid, n})
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].n < ls[j].n || (ls[i].n == ls[j].n && ls[i].rid < ls[j].rid) })
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.rid
	}
	return out, nil
}

// One tier walk over a posting list, newest first (the mentions primary key
// read backwards), with membership probes into the other lists (the same key)
// and the filter on memories (joined by rowid). CROSS JOIN keeps the posting
// list as the outer loop so the walk stops at the LIMIT.
// The two %s lists are the earlier and the other lists' rids (placeholders),
// the third the filter.
const tierWalk = `SELECT x.created_at, x.memory_rid
FROM mentions x CROSS JOIN memories m ON m.rid = x.memory_rid
WHERE x.entity_rid = ?
  AND NOT EXISTS (SELECT 1 FROM mentions y WHERE y.entity_rid IN (%s)
                  AND y.created_at = x.created_at AND y.memory_rid = x.memory_rid)
  AND (SELECT count(*) FROM mentions y WHERE y.entity_rid IN (%s)
       AND y.created_at = x.created_at AND y.memory_rid = x.memory_rid) = ?
  AND %s
ORDER BY x.created_at DESC, x.memory_rid DESC
LIMIT ?`

func rankByTiers(ctx context.Context, conn queryer, w *where, lists []int64, limit int) ([]hit, error) {
	k := len(lists)
	var out []hit
	for c := k; c >= 1 && len(out) < limit; c-- {
		need := limit - len(out)
		var tier []hit
		for j := 0; j <= k-c; j++ {
			earlier, others := lists[:j], lists[j+1:]
			query := fmt.Sprintf(tierWalk, ridList(earlier), ridList(others), w.sql())
			args := []any{lists[j]}
			for _, r := range earlier {
				args = append(args, r)
			}
			for _, r := range others {
				args = append(args, r)
			}
			args = append(append(args, c-1), w.args...)
			rows, err := conn.QueryContext(ctx, query, append(args, need)...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var h hit
				if err := rows.Scan(&h.at, &h.rid); err != nil {
					rows.Close()
					return nil, err
				}
				tier = append(tier, h)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
		sort.Slice(tier, func(a, b int) bool {
			return tier[a].at > tier[b].at || (tier[a].at == tier[b].at && tier[a].rid > tier[b].rid)
		})
		out = append(out, tier[:min(need, len(tier))]...)
	}
	return out, nil
}

// ridList renders placeholders for rids, or NULL (matches nothing) when
// there are none.
func ridList(rids []int64) string {
	if len(rids) == 0 {
		return "NULL"
	}
	return placeholders(len(rids))
}

// Memories by rowid, in the order given. Relies on the memories rowid.
const memoriesByRID = `SELECT ` + memoryCols + ` FROM json_each(?) j CROSS JOIN memories m ON m.rid = j.value ORDER BY j.key`

// The query entities each memory mentions. Relies on mentions_memory.
const matchedEntities = `SELECT memory_rid, entity_rid FROM mentions
WHERE memory_rid IN (SELECT value FROM json_each(?)) AND entity_rid IN (SELECT value FROM json_each(?))`

func candidatesOf(ctx context.Context, conn queryer, hits []hit, ents map[int64]string) ([]graph.Candidate, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	rids := make([]int64, len(hits))
	for i, h := range hits {
		rids[i] = h.rid
	}
	eids := make([]int64, 0, len(ents))
	for rid := range ents {
		eids = append(eids, rid)
	}
	ridJSON, _ := json.Marshal(rids)
	eidJSON, _ := json.Marshal(eids)
	matched := map[int64][]string{}
	rows, err := conn.QueryContext(ctx, matchedEntities, string(ridJSON), string(eidJSON))
	if err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	for rows.Next() {
		var m, e int64
		if err := rows.Scan(&m, &e); err != nil {
			rows.Close()
			return nil, fmt.Errorf("candidates: %w", err)
		}
		matched[m] = append(matched[m], ents[e])
	}
	rows.Close()
	rows, err = conn.QueryContext(ctx, memoriesByRID, string(ridJSON))
	if err != nil {
		return nil, fmt.Errorf("candidates: %w", err)
	}
	defer rows.Close()
	out := make([]graph.Candidate, 0, len(hits))
	for rows.Next() {
		m, rid, err := scanMemory(rows)
		if err != nil {
			return nil, fmt.Errorf("candidates: %w", err)
		}
		names := matched[rid]
		sort.Strings(names)
		out = append(out, graph.Candidate{Memory: m, Matched: names})
	}
	return out, rows.Err()
}

// The entities of the seeds, with their posting-list sizes. Relies on
// mentions_memory.
const seedEntities = `SELECT x.memory_rid, e.rid, e.norm_name, e.mention_count
FROM mentions x JOIN entities e ON e.rid = x.entity_rid
WHERE x.memory_rid IN (SELECT value FROM json_each(?))`

// Neighbours implements graph.Store. Each distinct entity of the seeds is
// walked once: its graph.NeighbourFanout newest admitted memories that are
// not seeds, read from the entity's posting list as Walk reads it
// (walkPostings, through the walk cache, which the searches' walks have
// mostly filled with the same entities' lists); the walks are scored per
// seed in Go and only the memories kept are loaded.
func (s *Store) Neighbours(ctx context.Context, f graph.Filter, seedIDs []string, perSeed int) ([]graph.Neighbour, error) {
	w, err := memoryFilter(f, false)
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	if perSeed <= 0 || len(seedIDs) == 0 {
		return nil, nil
	}
	key, w0, err := filterKey(f)
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	// Seeds need only be readable: the access rule, not the narrowing (a
	// seed the reader may not read yields nothing, lest its entities leak).
	sw, err := memoryFilter(graph.Filter{Scope: f.Scope, Reader: f.Reader}, true)
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	seedsQuery := fmt.Sprintf(selectSeeds, sw.sql())
	postings := [2]string{fmt.Sprintf(walkPostings, w.sql()), fmt.Sprintf(walkPostings, w0.sql())}
	var stmts [5]*sql.Stmt // before the transaction: see stmtCache
	for i, q := range []string{seedsQuery, seedEntities, memoriesByRID, postings[0], postings[1]} {
		var release func()
		if stmts[i], release, err = s.stmts.get(ctx, q); err != nil {
			return nil, fmt.Errorf("neighbours: %w", err)
		}
		defer release()
	}
	conn, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for every statement
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	defer func() { _ = conn.Rollback() }()
	// The first read fixes the snapshot: the write sequence in it names
	// the state the posting lists belong to (walkcache.go).
	l := &walkLoad{f: f, w: w, w0: w0, key: key, at: nanos(f.ValidAt), cache: s.walks, cached: true,
		fresh: map[postingKey]posting{}}
	if l.gen, l.rowGen, err = scanSeqs(conn.QueryRowContext(ctx, readSeqs, f.Scope.TenantID), f.Scope.TenantID); err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	l.run = func(i int, args ...any) (*sql.Rows, error) {
		st := 3 // wsPostings
		if i == wsPostingsAll {
			st = 4
		}
		return query(ctx, conn, stmts[st], args...)
	}
	seeds, err := visibleSeeds(ctx, conn, stmts[0], append([]any{jsonList(seedIDs)}, sw.args...))
	if err != nil || len(seeds) == 0 {
		return nil, err
	}
	seedRIDs := make([]int64, len(seeds))
	for i, sd := range seeds {
		seedRIDs[i] = sd.rid
	}
	seedJSON, _ := json.Marshal(seedRIDs)
	type entity struct {
		rid  int64
		name graph.SharedEntity
	}
	type seedEntity struct {
		seed int64
		entity
	}
	rows, err := query(ctx, conn, stmts[1], string(seedJSON))
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	ses, err := collect(rows, func(r scanner) (se seedEntity, err error) {
		return se, r.Scan(&se.seed, &se.rid, &se.name.Name, &se.name.Mentions)
	})
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	entsOf := map[int64][]entity{}
	for _, se := range ses {
		entsOf[se.seed] = append(entsOf[se.seed], se.entity)
	}
	// Walk each distinct entity once: its first NeighbourFanout admitted
	// memories that are not seeds are among its first NeighbourFanout +
	// len(seeds) admitted ones.
	var ents []int64
	seen := map[int64]bool{}
	for _, sd := range seeds {
		for _, e := range entsOf[sd.rid] {
			if !seen[e.rid] {
				seen[e.rid] = true
				ents = append(ents, e.rid)
			}
		}
	}
	lists, err := l.postings(ents, graph.NeighbourFanout+len(seeds))
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	s.walks.put(l.gen, l.fresh)
	isSeed := make(map[int64]bool, len(seeds))
	for _, sd := range seeds {
		isSeed[sd.rid] = true
	}
	walks := make(map[int64][]postingMem, len(lists))
	for _, x := range lists {
		kept := make([]postingMem, 0, graph.NeighbourFanout)
		for _, m := range x.mems {
			if len(kept) == graph.NeighbourFanout {
				break
			}
			if !isSeed[m.rid] {
				kept = append(kept, m)
			}
		}
		walks[x.rid] = kept
	}
	// Rank per seed on what the walks know (id, created_at), then load the
	// memories kept. The seeds' candidates go through buffers they share,
	// sized for the largest (a memory two of its entities reach takes one
	// slot): a graph.Neighbour is large, and RankNeighbours copies out the
	// ones it keeps.
	n := 0
	for _, sd := range seeds {
		m := 0
		for _, e := range entsOf[sd.rid] {
			m += len(walks[e.rid])
		}
		n = max(n, m)
	}
	var (
		out    = make([]graph.Neighbour, 0, len(seeds)*min(n, perSeed))
		rids   = make([]int64, 0, cap(out))
		at     = make(map[int64]int, n)
		ns     = make([]graph.Neighbour, 0, n)
		shared = make([][]graph.SharedEntity, 0, n)
		ridOf  = make(map[string]int64, n)
	)
	for _, sd := range seeds {
		clear(at)
		ns, shared = ns[:0], shared[:0]
		for _, e := range entsOf[sd.rid] {
			for _, r := range walks[e.rid] {
				i, ok := at[r.rid]
				if !ok {
					i = len(ns)
					at[r.rid] = i
					ns = append(ns, graph.Neighbour{SeedID: sd.id, Memory: graph.Memory{ID: r.id, CreatedAt: fromNanos(r.at)}})
					shared = append(shared, nil)
					ridOf[r.id] = r.rid
				}
				shared[i] = append(shared[i], e.name)
			}
		}
		kept := graph.RankNeighbours(ns, shared, perSeed)
		out = append(out, kept...)
		for _, n := range kept {
			rids = append(rids, ridOf[n.Memory.ID])
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	ms, err := s.walks.loadByRID(l.rowGen, rids, func(js string) (*sql.Rows, error) {
		return query(ctx, conn, stmts[2], js)
	})
	if err == nil {
		err = asKnown(ctx, conn, f, ms)
	}
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	byID := make(map[string]graph.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	for i := range out {
		out[i].Memory = byID[out[i].Memory.ID]
	}
	return out, nil
}

// Seeds visible under the direct-fetch rule, in the order given.
const selectSeeds = `SELECT m.rid, m.id FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value WHERE %s ORDER BY j.key`

type seed struct {
	rid int64
	id  string
}

// visibleSeeds resolves seed ids to rids with selectSeeds (prepared as st,
// args the id list and the access filter's): seeds need only be
// readable (the filter narrows the neighbours, not the seeds). Duplicates
// count once.
func visibleSeeds(ctx context.Context, tx *sql.Tx, st *sql.Stmt, args []any) ([]seed, error) {
	rows, err := query(ctx, tx, st, args...)
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	all, err := collect(rows, func(r scanner) (sd seed, err error) {
		return sd, r.Scan(&sd.rid, &sd.id)
	})
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	seen := map[int64]bool{}
	return slices.DeleteFunc(all, func(sd seed) bool {
		dup := seen[sd.rid]
		seen[sd.rid] = true
		return dup
	}), nil
}

// The matches among a batch of rowids that pass the filter. Relies on the
// memories rowid; CROSS JOIN keeps the batch as the outer loop (with IN, the
// planner may scan the tenant's memories and probe the batch).
const keywordFilter = `SELECT ` + memoryCols + `
FROM json_each(?) j CROSS JOIN memories m ON m.rid = j.value WHERE %s`

// KeywordSearch implements graph.Store. Any query term matches (OR); more
// matching terms and rarer terms rank higher: BM25 over title (weight 2) and
// body, computed by the store's in-memory keyword index with the statistics
// of the memories f admits (keywordIndex). Matches are taken in rank order
// and filtered in growing batches until limit pass, so the filter is applied
// before the limit, never after.
func (s *Store) KeywordSearch(ctx context.Context, f graph.Filter, query string, limit int) ([]graph.Scored, error) {
	w, err := memoryFilter(f, false)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	terms := bm25.QueryTerms(query)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	if !f.KnownAt.IsZero() {
		out, err := s.keywordAsKnown(ctx, f, w, terms, limit)
		if err != nil {
			return nil, fmt.Errorf("keyword search: %w", err)
		}
		return out, nil
	}
	filter := fmt.Sprintf(keywordFilter, w.sql())
	filterStmt, release, err := s.stmts.get(ctx, filter) // before the transaction: see stmtCache
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer release()
	t, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for the index and the filter
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer func() { _ = t.Rollback() }()
	if err := s.kw.sync(ctx, t); err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	ranking := s.kw.Rank(f, terms)
	defer ranking.Release()
	var (
		out    []graph.Scored
		rids   []int64
		scores = map[int64]float64{}
	)
	// The first batch is what the filter's pass rate in earlier searches
	// says limit passing matches need: the limit when it passed them all
	// (a search's usual case), so nothing is loaded to be dropped. The
	// next ones are sized by refill.
	key := w.key()
	loaded, passed := 0, 0
	for batch, round := s.kwPass.FirstBatch(key, limit), 0; len(out) < limit && ranking.Len() > 0; round++ {
		rids = ranking.Next(rids[:0], scores, batch)
		got, err := filterBatch(ctx, t, filterStmt, w.args, rids)
		if err != nil {
			return nil, fmt.Errorf("keyword search: %w", err)
		}
		loaded, passed = loaded+len(rids), passed+len(got)
		for _, rid := range rids {
			if m, ok := got[rid]; ok && len(out) < limit {
				out = append(out, graph.Scored{Memory: m, Score: scores[rid]})
			}
		}
		batch = kwindex.Refill(limit-len(out), loaded, passed, batch, round)
	}
	s.kwPass.Observe(key, loaded, passed)
	return out, nil
}

func filterBatch(ctx context.Context, t *sql.Tx, st *sql.Stmt, args []any, rids []int64) (map[int64]graph.Memory, error) {
	ridJSON, _ := json.Marshal(rids)
	rows, err := query(ctx, t, st, append([]any{string(ridJSON)}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]graph.Memory, len(rids))
	for rows.Next() {
		m, rid, err := scanMemory(rows)
		if err != nil {
			return nil, err
		}
		out[rid] = m
	}
	return out, rows.Err()
}
