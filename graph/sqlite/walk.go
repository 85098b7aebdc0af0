package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/walk"
)

// Seed names resolved to the tenant's entities by norm name or alias: the
// name given, the entity's rid and norm name. Relies on the entities
// (tenant_id, norm_name) key and the entity_aliases key.
const walkResolve = `SELECT j.value, e.rid, e.norm_name
FROM json_each(?) j CROSS JOIN entities e ON e.tenant_id = ? AND e.norm_name = j.value
UNION
SELECT j.value, e.rid, e.norm_name
FROM json_each(?) j CROSS JOIN entity_aliases a ON a.tenant_id = ? AND a.alias_norm = j.value
JOIN entities e ON e.rid = a.entity_rid`

// Seed memories the filter admits. Relies on the unique index on
// memories.id. %s: the filter.
const walkSeeds = `SELECT m.rid, m.id FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value WHERE %s`

// For each entity of a list, its first ? admitted memories, newest
// first, as "rid id valid_from valid_to mentioned_at rid id ..." (ids hold
// no space: graph.CheckID); NULL for none. It walks the entity's posting list (the
// mentions primary key, backwards) with the filter on memories joined by
// rowid, and stops at its LIMIT. The first hop reads graph.WalkMaxDF + 1
// (the df, counted as far as it matters, and the newest graph.WalkFanout),
// the second graph.WalkFanout + 1 (an entity is expanded whole or not at
// all). %[1]s: the filter; its parameters come first, then the limit and
// the list.
const walkPostings = `SELECT j.value, (
  SELECT group_concat(rid || ' ' || id || ' ' || vf || ' ' || vt || ' ' || at, ' ') FROM (
    SELECT x.memory_rid AS rid, m.id AS id, m.valid_from AS vf, m.valid_to AS vt, x.created_at AS at
    FROM mentions x CROSS JOIN memories m ON m.rid = x.memory_rid
    WHERE x.entity_rid = j.value AND %[1]s
    ORDER BY x.created_at DESC, x.memory_rid DESC LIMIT ?))
FROM json_each(?) j`

// The entities a list of memories mention. Relies on mentions_memory.
const walkMentions = `SELECT x.memory_rid, x.entity_rid, e.norm_name
FROM json_each(?) j CROSS JOIN mentions x ON x.memory_rid = j.value JOIN entities e ON e.rid = x.entity_rid`

// Links among a list of memories: SUPERSEDES and NEXT, with their kind.
// Relies on the supersedes and memory_next primary keys, read by the
// first column only: the unary + keeps the planner from probing every pair
// of the two lists through supersedes_old or memory_next_next.
const walkLinks = `SELECT s.new_rid, s.old_rid, 'SUPERSEDES'
FROM json_each(?) j CROSS JOIN supersedes s ON s.new_rid = j.value
WHERE +s.old_rid IN (SELECT value FROM json_each(?))
UNION ALL
SELECT n.prev_rid, n.next_rid, 'NEXT'
FROM json_each(?) j CROSS JOIN memory_next n ON n.prev_rid = j.value
WHERE +n.next_rid IN (SELECT value FROM json_each(?))`

// The admitted memories linked to a list of memories by NEXT or
// SUPERSEDES, either way. Relies on the memory_next and supersedes primary
// keys and on memory_next_next and supersedes_old. %s: the filter.
const walkLinked = `SELECT m.rid, m.id FROM (
  SELECT n.next_rid AS rid FROM json_each(?) j CROSS JOIN memory_next n ON n.prev_rid = j.value
  UNION SELECT n.prev_rid FROM json_each(?) j CROSS JOIN memory_next n ON n.next_rid = j.value
  UNION SELECT s.old_rid FROM json_each(?) j CROSS JOIN supersedes s ON s.new_rid = j.value
  UNION SELECT s.new_rid FROM json_each(?) j CROSS JOIN supersedes s ON s.old_rid = j.value
) r CROSS JOIN memories m ON m.rid = r.rid
WHERE %s
ORDER BY m.rid`

// The statements of a walk, by their place in walkStatements.
const (
	wsResolve     = iota // walkResolve
	wsSeeds              // walkSeeds
	wsPostings           // walkPostings under the filter
	wsPostingsAll        // walkPostings under the filter without ValidAt (walkCache)
	wsMentions           // walkMentions
	wsLinks              // walkLinks
	wsLinked             // walkLinked
	wsByRID              // memoriesByRID
	wsRelated            // walkRelatedText: explicit relations (walk_relations.go)
)

// walkStatements renders the statements of a walk under filter w (and w0,
// the same without ValidAt), in the order of the ws constants.
func walkStatements(f graph.Filter, w, w0 *where) []string {
	return []string{walkResolve, fmt.Sprintf(walkSeeds, w.sql()), fmt.Sprintf(walkPostings, w.sql()),
		fmt.Sprintf(walkPostings, w0.sql()), walkMentions, walkLinks, fmt.Sprintf(walkLinked, w.sql()),
		memoriesByRID, walkRelatedText(f, w)}
}

// Walk implements graph.Store: it loads the neighbourhood on one snapshot
// in prepared statements — resolve the seed names (walkResolve), admit the
// seed memories (walkSeeds), expand the seed entities (walkPostings), add
// the memories linked to those (walkLinked), read the entities of the
// memories reached (walkMentions), expand those (walkPostings again) and
// add the memories linked to the first hop (walkLinked again), complete
// the MENTIONS edges of the second hop's memories to the entities loaded
// (walkMentions again), read the links among them all (walkLinks) — runs
// walk.Rank in Go, and loads the memories returned (memoriesByRID). Every
// statement that reaches a memory applies the filter; the others start
// from memories already admitted. Posting lists, the memories' entities
// and the rows returned come from the walk cache when it holds them
// (walkCache: same filter, no write since).
func (s *Store) Walk(ctx context.Context, f graph.Filter, r graph.WalkRequest) ([]graph.Walked, error) {
	return s.runWalk(ctx, f, r, false)
}

// WarmWalk implements graph.WalkWarmer: it reads the posting lists and the
// mentions Walk would for r into the walk cache, and stops there.
func (s *Store) WarmWalk(ctx context.Context, f graph.Filter, r graph.WalkRequest) error {
	_, err := s.runWalk(ctx, f, r, true)
	return err
}

var _ graph.WalkWarmer = (*Store)(nil)

// runWalk is Walk, or WarmWalk when warm.
func (s *Store) runWalk(ctx context.Context, f graph.Filter, r graph.WalkRequest, warm bool) ([]graph.Walked, error) {
	w, err := memoryFilter(f, false)
	if err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	names, ids := walkSeedNames(r), walkSeedIDs(r)
	if r.Limit <= 0 || (len(names) == 0 && len(ids) == 0) {
		return nil, nil
	}
	key, w0, err := filterKey(f)
	if err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	texts := walkStatements(f, w, w0)
	stmts := make([]*sql.Stmt, len(texts)) // before the transaction: see stmtCache
	for i, q := range texts {
		var release func()
		if stmts[i], release, err = s.stmts.get(ctx, q); err != nil {
			return nil, fmt.Errorf("walk: %w", err)
		}
		defer release()
	}
	l := &walkLoad{f: f, w: w, w0: w0, r: r, names: names, seedIDs: ids, key: key, at: nanos(f.ValidAt), cache: s.walks, warm: warm}
	l.cached = true
	out, err := s.walk(ctx, l, stmts)
	if err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	s.walks.put(l.gen, l.fresh)
	return out, nil
}

// walk loads l's neighbourhood in one read transaction, ranks it and loads
// the memories returned.
func (s *Store) walk(ctx context.Context, l *walkLoad, stmts []*sql.Stmt) ([]graph.Walked, error) {
	t, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for every statement
	if err != nil {
		return nil, err
	}
	defer func() { _ = t.Rollback() }()
	l.reset()
	// The first read fixes the snapshot: the write sequence in it names
	// the state every list this walk reads belongs to (walkcache.go).
	if l.gen, l.rowGen, err = scanSeqs(t.QueryRowContext(ctx, readSeqs, l.f.Scope.TenantID), l.f.Scope.TenantID); err != nil {
		return nil, err
	}
	l.run = func(i int, args ...any) (*sql.Rows, error) { return query(ctx, t, stmts[i], args...) }
	if err := l.load(ctx); err != nil || l.warm {
		return nil, err
	}
	res := l.g.Rank(l.req)
	if len(res) == 0 {
		return nil, nil
	}
	rids := make([]int64, len(res))
	for i, x := range res {
		rids[i] = l.rids[x.ID]
	}
	ms, err := l.cache.loadByRID(l.rowGen, rids, func(js string) (*sql.Rows, error) { return l.run(wsByRID, js) })
	if err == nil {
		err = asKnown(ctx, t, l.f, ms)
	}
	if err != nil {
		return nil, err
	}
	byID := make(map[string]graph.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	out := make([]graph.Walked, 0, len(res))
	for _, x := range res {
		if m, ok := byID[x.ID]; ok { // every one, read in this snapshot
			out = append(out, graph.Walked{Memory: m, Score: x.Score, Via: x.Via})
		}
	}
	return out, nil
}

// walkSeedNames normalises the request's entity seeds of positive weight
// (the highest weight when two names normalise alike).
func walkSeedNames(r graph.WalkRequest) map[string]float64 {
	out := map[string]float64{}
	for n, wt := range r.Entities {
		if nn := graph.NormName(n); nn != "" && wt > 0 {
			out[nn] = max(out[nn], wt)
		}
	}
	return out
}

// walkSeedIDs lists the request's memory seeds of positive weight.
func walkSeedIDs(r graph.WalkRequest) []string {
	var out []string
	for id, wt := range r.Memories {
		if id != "" && wt > 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// walkLoad is a neighbourhood being loaded.
type walkLoad struct {
	// The request: filter (w, and w0 without ValidAt), seeds.
	f       graph.Filter
	w, w0   *where
	r       graph.WalkRequest
	names   map[string]float64
	seedIDs []string
	run     func(int, ...any) (*sql.Rows, error) // runs a ws statement in the walk's transaction

	// The walk cache: the filter's key, ValidAt in nanoseconds (0 for
	// none), the filter's tenant's sequences in the walk's snapshot (of the
	// graph, for the lists and mentions; of memory rows, readSeqs), whether it may use
	// the cache, and the lists it read, to store there.
	cache  *walkCache
	key    string
	at     int64
	gen    seq
	rowGen seq
	cached bool
	fresh  map[postingKey]posting
	// warm: load only what the cache keeps (WarmWalk).
	warm bool

	g     *walk.Graph
	ids   map[int64]string // loaded memory rid -> id
	rids  map[string]int64
	order []int64          // loaded memories, in the order they were
	ents  map[int64]string // entity rid -> norm name
	df    map[int64]int64  // entity rid -> admitted memories mentioning it
	pairs map[[2]int64]bool
	req   graph.WalkRequest
}

// reset empties the neighbourhood.
func (l *walkLoad) reset() {
	l.g, l.ids, l.rids, l.order = walk.New(), map[int64]string{}, map[string]int64{}, nil
	l.ents, l.df, l.pairs, l.fresh = map[int64]string{}, map[int64]int64{}, map[[2]int64]bool{}, map[postingKey]posting{}
	l.req = graph.WalkRequest{Entities: map[string]float64{}, Memories: map[string]float64{}, Damping: l.r.Damping, Limit: l.r.Limit}
}

// load fills l.g and l.req (see Walk).
func (l *walkLoad) load(ctx context.Context) error {
	e1, err := l.seedEntities()
	if err != nil {
		return err
	}
	if err := l.seedMemories(); err != nil {
		return err
	}
	// First hop: the seed entities' newest memories, unless too common.
	if err := l.expand(e1); err != nil {
		return err
	}
	// The memories linked to those (the next turn of a session, the
	// memory that replaced one) join the first hop.
	if err := l.linked(l.order); err != nil {
		return err
	}
	hop1 := len(l.order)
	// The entities of the seed memories and of the first hop.
	mentions := func(rids []int64) (map[int64][]mention, error) {
		return l.cache.mentionsOf(l.gen, rids, func(js string) (*sql.Rows, error) { return l.run(wsMentions, js) })
	}
	ms, err := mentions(l.order)
	if err != nil {
		return err
	}
	var e2 []int64
	for _, rid := range l.order {
		for _, x := range ms[rid] {
			if _, ok := l.ents[x.ent]; !ok {
				l.ents[x.ent] = x.name
				e2 = append(e2, x.ent)
			}
			l.pairs[[2]int64{x.mem, x.ent}] = true
		}
	}
	// Second hop: the memories of those entities whose admitted memories
	// all fit in the fanout, and the MENTIONS edges of the memories reached
	// to every entity of the neighbourhood.
	if err := l.expandHop2(e2); err != nil {
		return err
	}
	if err := l.linked(l.order[:hop1]); err != nil {
		return err
	}
	if len(l.order) > hop1 {
		ms, err := mentions(l.order[hop1:])
		if err != nil {
			return err
		}
		for _, rid := range l.order[hop1:] {
			for _, x := range ms[rid] {
				if _, ok := l.ents[x.ent]; ok {
					l.pairs[[2]int64{x.mem, x.ent}] = true
				}
			}
		}
	}
	if l.warm {
		return ctx.Err() // the rest is neither cached nor needed to read it
	}
	// Explicit relations: the related memories join (walk_relations.go),
	// bringing no other edge.
	loaded := l.order
	rels, err := l.related(l.run, wsRelated, l.f, l.w)
	if err != nil {
		return err
	}
	// Nodes and edges in a fixed order, so that equal neighbourhoods score
	// alike to the last bit on every store (walk.Rank sums in adjacency
	// order).
	mems := make([]string, 0, len(l.order))
	for _, rid := range l.order {
		mems = append(mems, l.ids[rid])
	}
	slices.Sort(mems)
	for _, id := range mems {
		l.g.Memory(id)
	}
	pairs := make([][2]string, 0, len(l.pairs))
	for p := range l.pairs {
		if _, ok := l.df[p[1]]; ok {
			pairs = append(pairs, [2]string{l.ids[p[0]], l.ents[p[1]]})
			l.g.DF(l.ents[p[1]], l.df[p[1]])
		}
	}
	slices.SortFunc(pairs, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, p := range pairs {
		l.g.Mention(p[0], p[1])
	}
	// Links among the memories loaded: one per pair, NEXT before
	// SUPERSEDES (as on every store).
	all, _ := json.Marshal(loaded)
	rows, err := l.run(wsLinks, string(all), string(all), string(all), string(all))
	if err != nil {
		return err
	}
	type link struct{ a, b, kind string }
	links, err := collect(rows, func(sc scanner) (x link, err error) {
		var a, b int64
		err = sc.Scan(&a, &b, &x.kind)
		x.a, x.b = min(l.ids[a], l.ids[b]), max(l.ids[a], l.ids[b])
		return x, err
	})
	if err != nil {
		return err
	}
	slices.SortFunc(links, func(x, y link) int {
		return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b), cmp.Compare(x.kind, y.kind))
	})
	for _, x := range links {
		l.g.Link(x.a, x.b, walk.LinkWeight(x.kind))
	}
	for _, p := range rels {
		l.g.Link(p[0], p[1], walk.RelationWeight)
	}
	return ctx.Err()
}

// seedEntities resolves the seed names to entities and returns their rids.
func (l *walkLoad) seedEntities() ([]int64, error) {
	if len(l.names) == 0 {
		return nil, nil
	}
	list := make([]string, 0, len(l.names))
	for n := range l.names {
		list = append(list, n)
	}
	slices.Sort(list)
	js := jsonList(list)
	rows, err := l.run(wsResolve, js, l.f.Scope.TenantID, js, l.f.Scope.TenantID)
	if err != nil {
		return nil, err
	}
	type resolved struct {
		name, norm string
		rid        int64
	}
	got, err := collect(rows, func(sc scanner) (x resolved, err error) { return x, sc.Scan(&x.name, &x.rid, &x.norm) })
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, x := range got {
		if _, ok := l.ents[x.rid]; !ok {
			out = append(out, x.rid)
		}
		l.ents[x.rid] = x.norm
		l.req.Entities[x.norm] = max(l.req.Entities[x.norm], l.names[x.name])
	}
	return out, nil
}

// seedMemories loads the seed memories the filter admits.
func (l *walkLoad) seedMemories() error {
	if len(l.seedIDs) == 0 {
		return nil
	}
	rows, err := l.run(wsSeeds, append([]any{jsonList(l.seedIDs)}, l.w.args...)...)
	if err != nil {
		return err
	}
	got, err := collect(rows, func(sc scanner) (sd seed, err error) { return sd, sc.Scan(&sd.rid, &sd.id) })
	if err != nil {
		return err
	}
	for _, sd := range got {
		l.add(sd.rid, sd.id)
		l.req.Memories[sd.id] = l.r.Memories[sd.id]
	}
	return nil
}

// reached is an entity and the first admitted memories of its posting
// list (walkPostings).
type reached struct {
	rid  int64
	mems []postingMem
}

// postings returns each entity's first n admitted memories, newest first
// (walkPostings), from the walk cache where it holds them, the rarest
// entities first (ties by rid).
func (l *walkLoad) postings(ents []int64, n int) ([]reached, error) {
	out := make([]reached, 0, len(ents))
	var miss, exact []int64 // not cached; to read under the whole filter
	for _, e := range ents {
		p, ok := l.cachedPosting(e)
		switch {
		case !l.cached:
			exact = append(exact, e)
		case !ok || !(p.complete || len(p.mems) >= n):
			miss = append(miss, e)
		default:
			if ms, ok := p.valid(l.at, n); ok {
				out = append(out, reached{e, ms})
			} else {
				exact = append(exact, e)
			}
		}
	}
	if len(miss) > 0 {
		// Read without ValidAt and keep them for the cache; a list whose
		// invalid memories leave fewer than n is read again under it.
		got, err := l.readPostings(wsPostingsAll, l.w0, miss, n)
		if err != nil {
			return nil, err
		}
		for _, e := range miss {
			p := got[e]
			l.fresh[postingKey{l.key, e}] = p
			if ms, ok := p.valid(l.at, n); ok {
				out = append(out, reached{e, ms})
			} else {
				exact = append(exact, e)
			}
		}
	}
	if len(exact) > 0 {
		got, err := l.readPostings(wsPostings, l.w, exact, n)
		if err != nil {
			return nil, err
		}
		for _, e := range exact {
			out = append(out, reached{e, got[e].mems})
		}
	}
	slices.SortFunc(out, func(a, b reached) int {
		return cmp.Or(cmp.Compare(len(a.mems), len(b.mems)), cmp.Compare(a.rid, b.rid))
	})
	return out, nil
}

// cachedPosting returns entity e's posting list read by this walk or held
// by the cache at its sequence.
func (l *walkLoad) cachedPosting(e int64) (posting, bool) {
	k := postingKey{l.key, e}
	if p, ok := l.fresh[k]; ok {
		return p, true
	}
	if !l.cached {
		return posting{}, false
	}
	return l.cache.get(l.gen, k)
}

// readPostings runs statement st (walkPostings under filter w) on ents
// with limit n.
func (l *walkLoad) readPostings(st int, w *where, ents []int64, n int) (map[int64]posting, error) {
	js, _ := json.Marshal(ents)
	rows, err := l.run(st, append(append([]any{}, w.args...), n, string(js))...)
	if err != nil {
		return nil, err
	}
	type row struct {
		rid int64
		p   posting
	}
	got, err := collect(rows, func(sc scanner) (x row, err error) {
		var list sql.NullString
		if err := sc.Scan(&x.rid, &list); err != nil {
			return x, err
		}
		x.p.mems, err = parsePostings(list.String)
		x.p.complete = len(x.p.mems) < n
		return x, err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]posting, len(got))
	for _, x := range got {
		out[x.rid] = x.p
	}
	return out, nil
}

// expand expands the seed entities: each gets its df (counted up to
// graph.WalkMaxDF + 1) and, unless that is more than graph.WalkMaxDF,
// adds its graph.WalkFanout newest admitted memories, the rarest entities
// first, until the neighbourhood holds graph.WalkMaxNodes memories.
func (l *walkLoad) expand(ents []int64) error {
	if len(ents) == 0 {
		return nil
	}
	got, err := l.postings(ents, graph.WalkMaxDF+1)
	if err != nil {
		return err
	}
	for _, x := range got {
		l.df[x.rid] = int64(len(x.mems))
		if len(x.mems) <= graph.WalkMaxDF {
			l.addMems(x.rid, x.mems[:min(len(x.mems), graph.WalkFanout)])
		}
	}
	return nil
}

// expandHop2 expands the entities of the first hop: one with no more than
// graph.WalkFanout admitted memories adds them all (its df is exact),
// rarest first, until the neighbourhood holds graph.WalkMaxNodes memories;
// a more common one is not expanded and weighs as one that walk.CommonDF
// memories mention.
func (l *walkLoad) expandHop2(ents []int64) error {
	if len(ents) == 0 {
		return nil
	}
	got, err := l.postings(ents, graph.WalkFanout+1)
	if err != nil {
		return err
	}
	for _, x := range got {
		if len(x.mems) > graph.WalkFanout {
			l.df[x.rid] = walk.CommonDF
			continue
		}
		l.df[x.rid] = int64(len(x.mems))
		l.addMems(x.rid, x.mems)
	}
	return nil
}

// linked adds the admitted memories linked to from (walkLinked), while
// there is room.
func (l *walkLoad) linked(from []int64) error {
	if len(from) == 0 {
		return nil
	}
	js, _ := json.Marshal(from)
	rows, err := l.run(wsLinked, append([]any{string(js), string(js), string(js), string(js)}, l.w.args...)...)
	if err != nil {
		return err
	}
	got, err := collect(rows, func(sc scanner) (sd seed, err error) { return sd, sc.Scan(&sd.rid, &sd.id) })
	if err != nil {
		return err
	}
	for _, sd := range got {
		l.add(sd.rid, sd.id)
	}
	return nil
}

// parsePostings reads walkPostings' "rid id valid_from valid_to
// mentioned_at ...".
func parsePostings(s string) ([]postingMem, error) {
	f := strings.Fields(s)
	if len(f)%5 != 0 {
		return nil, fmt.Errorf("malformed posting list %q", s)
	}
	out := make([]postingMem, 0, len(f)/5)
	for i := 0; i < len(f); i += 5 {
		var n [4]int64
		for j, k := range [4]int{0, 2, 3, 4} {
			v, err := strconv.ParseInt(f[i+k], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("malformed posting list: %w", err)
			}
			n[j] = v
		}
		out = append(out, postingMem{rid: n[0], id: f[i+1], from: n[1], to: n[2], at: n[3]})
	}
	return out, nil
}

// addMems adds the memories entity ent reaches, while there is room.
func (l *walkLoad) addMems(ent int64, mems []postingMem) {
	for _, m := range mems {
		if l.add(m.rid, m.id) {
			l.pairs[[2]int64{m.rid, ent}] = true
		}
	}
}

// add loads memory rid unless the neighbourhood is full; it reports
// whether rid is loaded.
func (l *walkLoad) add(rid int64, id string) bool {
	if _, ok := l.ids[rid]; ok {
		return true
	}
	if len(l.ids) >= graph.WalkMaxNodes {
		return false
	}
	l.ids[rid], l.rids[id] = id, rid
	l.order = append(l.order, rid)
	return true
}
