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

// For each entity of a list: its df, the admitted memories that mention
// it, counted up to a cap (graph.WalkMaxDF + 1: past it the exact number
// changes nothing), and, when df is within graph.WalkMaxDF, its
// graph.WalkFanout newest admitted memories as "rid id rid id ..." (ids
// hold no space: graph.CheckID).
// Both walk the entity's posting list (the mentions primary key, backwards
// for the newest) with the filter on memories joined by rowid, and stop at
// their LIMIT. %[1]s: the filter, whose parameters come twice.
const walkExpand = `WITH q AS MATERIALIZED (
  SELECT j.value AS rid, (SELECT count(*) FROM (
      SELECT 1 FROM mentions x CROSS JOIN memories m ON m.rid = x.memory_rid
      WHERE x.entity_rid = j.value AND %[1]s LIMIT ?)) AS df
  FROM json_each(?) j)
SELECT q.rid, q.df, CASE WHEN q.df <= ? THEN (
  SELECT group_concat(rid || ' ' || id, ' ') FROM (
    SELECT x.memory_rid AS rid, m.id AS id FROM mentions x CROSS JOIN memories m ON m.rid = x.memory_rid
    WHERE x.entity_rid = q.rid AND %[1]s
    ORDER BY x.created_at DESC, x.memory_rid DESC LIMIT ?)) END
FROM q`

// The entities a list of memories mention. Relies on mentions_memory.
const walkMentions = `SELECT x.memory_rid, x.entity_rid, e.norm_name
FROM json_each(?) j CROSS JOIN mentions x ON x.memory_rid = j.value JOIN entities e ON e.rid = x.entity_rid`

// The MENTIONS edges from a list of memories to a list of entities.
// Relies on mentions_memory, read by memory only: the unary + keeps the
// planner from probing every (memory, entity) pair of the two lists.
const walkPairs = `SELECT x.memory_rid, x.entity_rid
FROM json_each(?) j CROSS JOIN mentions x ON x.memory_rid = j.value
WHERE +x.entity_rid IN (SELECT value FROM json_each(?))`

// For each entity of a list, its graph.WalkFanout + 1 newest admitted
// memories as walkExpand lists them: all of them when it has no more
// than graph.WalkFanout. A walk of its posting list as in walkExpand.
// %[1]s: the filter.
const walkHop2 = `SELECT j.value, (
  SELECT group_concat(rid || ' ' || id, ' ') FROM (
    SELECT x.memory_rid AS rid, m.id AS id FROM mentions x CROSS JOIN memories m ON m.rid = x.memory_rid
    WHERE x.entity_rid = j.value AND %[1]s
    ORDER BY x.created_at DESC, x.memory_rid DESC LIMIT ?))
FROM json_each(?) j`

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

// Walk implements graph.Store: it loads the neighbourhood on one snapshot
// in eight prepared statements — resolve the seed names (walkResolve),
// admit the seed memories (walkSeeds), expand the seed entities
// (walkExpand), add the memories linked to those (walkLinked), read the
// entities of the memories reached (walkMentions), expand those
// (walkHop2) and add the memories linked to the first hop (walkLinked
// again), complete the MENTIONS edges of the second hop's memories
// (walkPairs), read the links among them all (walkLinks) — runs walk.Rank
// in Go, and loads the memories returned (memoriesByRID). Every statement
// that reaches a memory applies the filter; the others start from
// memories already admitted.
func (s *Store) Walk(ctx context.Context, f graph.Filter, r graph.WalkRequest) ([]graph.Walked, error) {
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
	texts := []string{walkResolve, fmt.Sprintf(walkSeeds, w.sql()), fmt.Sprintf(walkExpand, w.sql()), walkMentions,
		walkPairs, walkLinks, fmt.Sprintf(walkHop2, w.sql()), memoriesByRID, fmt.Sprintf(walkLinked, w.sql())}
	stmts := make([]*sql.Stmt, len(texts)) // before the transaction: see stmtCache
	for i, q := range texts {
		if stmts[i], err = s.stmts.get(ctx, q); err != nil {
			return nil, fmt.Errorf("walk: %w", err)
		}
	}
	t, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for every statement
	if err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	defer func() { _ = t.Rollback() }()
	l := &walkLoad{g: walk.New(), ids: map[int64]string{}, rids: map[string]int64{}, ents: map[int64]string{},
		df: map[int64]int64{}, pairs: map[[2]int64]bool{},
		req: graph.WalkRequest{Entities: map[string]float64{}, Memories: map[string]float64{}, Damping: r.Damping, Limit: r.Limit}}
	run := func(i int, args ...any) (*sql.Rows, error) { return query(ctx, t, stmts[i], texts[i], args...) }
	if err := l.load(ctx, run, f, w, r, names, ids); err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	res := l.g.Rank(l.req)
	if len(res) == 0 {
		return nil, nil
	}
	rids := make([]int64, len(res))
	for i, x := range res {
		rids[i] = l.rids[x.ID]
	}
	ridJSON, _ := json.Marshal(rids)
	rows, err := run(7, string(ridJSON))
	if err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	ms, err := scanMemories(rows)
	if err == nil {
		err = asKnown(ctx, t, f, ms)
	}
	if err != nil {
		return nil, fmt.Errorf("walk: %w", err)
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
	g     *walk.Graph
	ids   map[int64]string // loaded memory rid -> id
	rids  map[string]int64
	order []int64          // loaded memories, in the order they were
	ents  map[int64]string // entity rid -> norm name
	df    map[int64]int64  // entity rid -> admitted memories mentioning it
	pairs map[[2]int64]bool
	req   graph.WalkRequest
}

// expanded is one row of walkExpand.
type expanded struct {
	rid, df int64
	list    sql.NullString
}

// load fills l.g and l.req (see Walk).
func (l *walkLoad) load(ctx context.Context, run func(int, ...any) (*sql.Rows, error), f graph.Filter, w *where,
	r graph.WalkRequest, names map[string]float64, ids []string) error {
	e1, err := l.seedEntities(run, f, names)
	if err != nil {
		return err
	}
	if err := l.seedMemories(run, w, r, ids); err != nil {
		return err
	}
	// First hop: the seed entities' newest memories, unless too common.
	if err := l.expand(run, w, e1); err != nil {
		return err
	}
	// The memories linked to those (the next turn of a session, the
	// memory that replaced one) join the first hop.
	if err := l.linked(run, w, l.order); err != nil {
		return err
	}
	hop1 := len(l.order)
	// The entities of the seed memories and of the first hop.
	js, _ := json.Marshal(l.order)
	rows, err := run(3, string(js))
	if err != nil {
		return err
	}
	type mention struct {
		mem, ent int64
		name     string
	}
	ms, err := collect(rows, func(sc scanner) (x mention, err error) { return x, sc.Scan(&x.mem, &x.ent, &x.name) })
	if err != nil {
		return err
	}
	var e2 []int64
	for _, x := range ms {
		if _, ok := l.ents[x.ent]; !ok {
			l.ents[x.ent] = x.name
			e2 = append(e2, x.ent)
		}
		l.pairs[[2]int64{x.mem, x.ent}] = true
	}
	// Second hop: the memories of those entities whose admitted memories
	// all fit in the fanout, and the MENTIONS edges of the memories reached
	// to every entity of the neighbourhood.
	if err := l.expandHop2(run, w, e2); err != nil {
		return err
	}
	if err := l.linked(run, w, l.order[:hop1]); err != nil {
		return err
	}
	if len(l.order) > hop1 {
		ents := make([]int64, 0, len(l.ents))
		for rid := range l.ents {
			ents = append(ents, rid)
		}
		mjs, _ := json.Marshal(l.order[hop1:])
		ejs, _ := json.Marshal(ents)
		rows, err := run(4, string(mjs), string(ejs))
		if err != nil {
			return err
		}
		pairs, err := collect(rows, func(sc scanner) (p [2]int64, err error) { return p, sc.Scan(&p[0], &p[1]) })
		if err != nil {
			return err
		}
		for _, p := range pairs {
			l.pairs[p] = true
		}
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
	all, _ := json.Marshal(l.order)
	rows, err = run(5, string(all), string(all), string(all), string(all))
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
	return ctx.Err()
}

// seedEntities resolves the seed names to entities and returns their rids.
func (l *walkLoad) seedEntities(run func(int, ...any) (*sql.Rows, error), f graph.Filter, names map[string]float64) ([]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	slices.Sort(list)
	js := jsonList(list)
	rows, err := run(0, js, f.Scope.TenantID, js, f.Scope.TenantID)
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
		l.req.Entities[x.norm] = max(l.req.Entities[x.norm], names[x.name])
	}
	return out, nil
}

// seedMemories loads the seed memories the filter admits.
func (l *walkLoad) seedMemories(run func(int, ...any) (*sql.Rows, error), w *where, r graph.WalkRequest, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := run(1, append([]any{jsonList(ids)}, w.args...)...)
	if err != nil {
		return err
	}
	got, err := collect(rows, func(sc scanner) (sd seed, err error) { return sd, sc.Scan(&sd.rid, &sd.id) })
	if err != nil {
		return err
	}
	for _, sd := range got {
		l.add(sd.rid, sd.id)
		l.req.Memories[sd.id] = r.Memories[sd.id]
	}
	return nil
}

// expand runs walkExpand on the seed entities: each gets its df (counted
// up to graph.WalkMaxDF + 1) and, unless that is more than
// graph.WalkMaxDF, adds its graph.WalkFanout newest admitted memories, the
// rarest entities first, until the neighbourhood holds graph.WalkMaxNodes
// memories.
func (l *walkLoad) expand(run func(int, ...any) (*sql.Rows, error), w *where, ents []int64) error {
	if len(ents) == 0 {
		return nil
	}
	js, _ := json.Marshal(ents)
	args := append(append(append([]any{}, w.args...), graph.WalkMaxDF+1, string(js), graph.WalkMaxDF), w.args...)
	rows, err := run(2, append(args, graph.WalkFanout)...)
	if err != nil {
		return err
	}
	got, err := collect(rows, func(sc scanner) (x expanded, err error) { return x, sc.Scan(&x.rid, &x.df, &x.list) })
	if err != nil {
		return err
	}
	slices.SortFunc(got, func(a, b expanded) int { return cmp.Or(cmp.Compare(a.df, b.df), cmp.Compare(a.rid, b.rid)) })
	for _, x := range got {
		l.df[x.rid] = x.df
		if !x.list.Valid {
			continue
		}
		list, err := parseMemList(x.list.String)
		if err != nil {
			return fmt.Errorf("entity %s: %w", l.ents[x.rid], err)
		}
		l.addMems(x.rid, list)
	}
	return nil
}

// expandHop2 runs walkHop2 on the entities of the first hop: one with no
// more than graph.WalkFanout admitted memories adds them all (its df is
// exact), rarest first, until the neighbourhood holds graph.WalkMaxNodes
// memories; a more common one is not expanded and weighs as one that
// walk.CommonDF memories mention.
func (l *walkLoad) expandHop2(run func(int, ...any) (*sql.Rows, error), w *where, ents []int64) error {
	if len(ents) == 0 {
		return nil
	}
	js, _ := json.Marshal(ents)
	rows, err := run(6, append(append([]any{}, w.args...), graph.WalkFanout+1, string(js))...)
	if err != nil {
		return err
	}
	type reached struct {
		rid  int64
		list memList
	}
	got, err := collect(rows, func(sc scanner) (x reached, err error) {
		var list sql.NullString
		if err := sc.Scan(&x.rid, &list); err != nil {
			return x, err
		}
		x.list, err = parseMemList(list.String)
		return x, err
	})
	if err != nil {
		return err
	}
	slices.SortFunc(got, func(a, b reached) int {
		return cmp.Or(cmp.Compare(len(a.list.R), len(b.list.R)), cmp.Compare(a.rid, b.rid))
	})
	for _, x := range got {
		if len(x.list.R) > graph.WalkFanout {
			l.df[x.rid] = walk.CommonDF
			continue
		}
		l.df[x.rid] = int64(len(x.list.R))
		l.addMems(x.rid, x.list)
	}
	return nil
}

// linked adds the admitted memories linked to from (walkLinked), while
// there is room.
func (l *walkLoad) linked(run func(int, ...any) (*sql.Rows, error), w *where, from []int64) error {
	if len(from) == 0 {
		return nil
	}
	js, _ := json.Marshal(from)
	rows, err := run(8, append([]any{string(js), string(js), string(js), string(js)}, w.args...)...)
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

// memList is a list of memories as walkExpand and walkHop2 return it.
type memList struct {
	R []int64
	I []string
}

// parseMemList reads "rid id rid id ...".
func parseMemList(s string) (memList, error) {
	var l memList
	f := strings.Fields(s)
	if len(f)%2 != 0 {
		return l, fmt.Errorf("malformed memory list %q", s)
	}
	for i := 0; i < len(f); i += 2 {
		rid, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return l, fmt.Errorf("malformed memory list: %w", err)
		}
		l.R, l.I = append(l.R, rid), append(l.I, f[i+1])
	}
	return l, nil
}

// addMems adds the memories entity ent reaches, while there is room.
func (l *walkLoad) addMems(ent int64, list memList) {
	for i, rid := range list.R {
		if i < len(list.I) && l.add(rid, list.I[i]) {
			l.pairs[[2]int64{rid, ent}] = true
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
