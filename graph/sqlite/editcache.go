package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// editCache keeps the edits ListEdits read for a memory (none, most
// often), per filter and memory id, until the next write: every search
// asks for the edits of its hits and of their neighbours, and at 100k
// memories with 10k edits the index seeks of those lists were most of what
// the effective view added to a search (docs/curation.md, "Cost of the
// effective view").
//
// Who may see an entry: the key is the edit filter's rendered SQL and its
// arguments (scope, statuses), so two readers share an entry only when
// their filters are the same predicate. As-known-at reads (KnownAt) are
// not cached.
//
// When an entry holds (seqMap): as for walkCache, every write transaction bumps the
// sequence of each tenant it may change before it commits. ListEdits reads its tenant's sequence first and
// the edits after it, in statements of their own, so what it reads is at
// least as new as that sequence: an entry stored under sequence g is never
// older than g. It serves an entry only when the sequence it has just read
// is the entry's, so a write of this process or of another one on the
// same file (storetest Edits/SecondClient) is seen by the next read.
//
// Beside the edits of each memory it keeps, per filter, the set of memory
// ids any edit it admits targets (targets): most memories have none, and a
// memory outside the set needs no lookup at all. The set is read once per
// sequence (a scan of the filter's edits in edits_target), and not kept
// for a filter admitting more than maxEditTargets memories.
type editCache struct {
	m       *seqMap[editKey, []editRow]      // a memory's edits under a filter: 1 + its edits rows
	targets *seqMap[string, map[string]bool] // filter -> target memory ids (nil: too many): 1 + ids rows
}

// maxEditTargets bounds a filter's target set.
const maxEditTargets = 1 << 16

// maxEditCacheRows bounds each of the cache's maps (a memory id or a
// filter counts one, and each of its edits or targets one); past it the
// map starts over.
const maxEditCacheRows = 1 << 18

// editKey is an edit list's filter and target memory id.
type editKey struct {
	filter string
	memory string
}

// editRow is an edit with what orders ListEdits' answer (created_at, rid).
type editRow struct {
	rid, created int64
	e            graph.Edit
}

func newEditCache() *editCache {
	return &editCache{
		m:       newSeqMap[editKey](maxEditCacheRows, func(rs []editRow) int { return 1 + len(rs) }),
		targets: newSeqMap[string](maxEditCacheRows, func(set map[string]bool) int { return 1 + len(set) }),
	}
}

// get returns the entries of ids under filter at sequence g, and the ids
// it holds none for.
func (c *editCache) get(g seq, filter string, ids []string) (rows []editRow, misses []string) {
	keys := make([]editKey, len(ids))
	for i, id := range ids {
		keys[i] = editKey{filter, id}
	}
	got, miss := c.m.getAll(g, keys)
	for _, k := range keys {
		rows = append(rows, got[k]...)
	}
	for _, k := range miss {
		misses = append(misses, k.memory)
	}
	return rows, misses
}

// put stores the edits of ids (rows, grouped here by target) read at
// sequence g under filter.
func (c *editCache) put(g seq, filter string, ids []string, rows []editRow) {
	by := make(map[string][]editRow, len(ids))
	for _, r := range rows {
		by[r.e.TargetMemoryID] = append(by[r.e.TargetMemoryID], r)
	}
	entries := make(map[editKey][]editRow, len(ids))
	for _, id := range ids {
		entries[editKey{filter, id}] = by[id]
	}
	c.m.put(g, entries, nil)
}

// editsOf returns the edits of ids admitted by w (ListEdits' filter, no
// KnownAt), oldest first, through s.edits.
func (s *Store) editsOf(ctx context.Context, w *where, tenant string, ids []string) ([]graph.Edit, error) {
	row, err := s.cachedRow(ctx, readSeqs, tenant)
	if err != nil {
		return nil, err
	}
	g, _, err := scanSeqs(row, tenant)
	if err != nil {
		return nil, err
	}
	filter := w.key() + "\x00" + tenant
	targets, err := s.editTargets(ctx, g, filter, w)
	if err != nil {
		return nil, err
	}
	if targets != nil { // only the memories some edit targets need a lookup
		ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !targets[id] })
		if len(ids) == 0 {
			return nil, nil
		}
	}
	rows, misses := s.edits.get(g, filter, slices.Compact(slices.Sorted(slices.Values(ids))))
	if len(misses) > 0 {
		rs, err := s.cachedQuery(ctx, fmt.Sprintf(listEditsOf, w.sql()), append([]any{jsonList(misses), tenant}, w.args...)...)
		if err != nil {
			return nil, err
		}
		read, err := collect(rs, scanEditRow)
		if err != nil {
			return nil, err
		}
		s.edits.put(g, filter, misses, read)
		rows = append(rows, read...)
	}
	slices.SortFunc(rows, func(a, b editRow) int { return cmp.Or(cmp.Compare(a.created, b.created), cmp.Compare(a.rid, b.rid)) })
	return editsIn(rows), nil
}

// The memories the edits admitted by a filter target, at most one more than
// a target set keeps. Relies on edits_target (tenant first).
const editTargetsOf = `SELECT DISTINCT ed.target_memory_id FROM edits ed INDEXED BY edits_target WHERE %s LIMIT ?`

// editTargets returns the target set of filter (w) at sequence g, read
// when the cache lacks it; nil when it holds more than maxEditTargets.
func (s *Store) editTargets(ctx context.Context, g seq, filter string, w *where) (map[string]bool, error) {
	if set, ok := s.edits.targets.get(g, filter); ok {
		return set, nil
	}
	rows, err := s.cachedQuery(ctx, fmt.Sprintf(editTargetsOf, w.sql()), append(slices.Clone(w.args), maxEditTargets+1)...)
	if err != nil {
		return nil, err
	}
	ids, err := collect(rows, func(sc scanner) (string, error) {
		var id string
		return id, sc.Scan(&id)
	})
	if err != nil {
		return nil, err
	}
	var set map[string]bool
	if len(ids) <= maxEditTargets {
		set = make(map[string]bool, len(ids))
		for _, id := range ids {
			set[id] = true
		}
	}
	s.edits.targets.put(g, map[string]map[string]bool{filter: set}, nil)
	return set, nil
}

// editsIn returns the edits of rows, their pointer fields copied: a cached
// edit is shared by every reader.
func editsIn(rows []editRow) []graph.Edit {
	out := make([]graph.Edit, len(rows))
	for i, r := range rows {
		out[i] = r.e
		if v := r.e.Importance; v != nil {
			out[i].Importance = ptr(*v)
		}
		if v := r.e.Delta; v != nil {
			out[i].Delta = ptr(*v)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// scanEditRow scans listEditsOf's rows: the rid, then editCols.
func scanEditRow(sc scanner) (editRow, error) {
	var r editRow
	e, err := scanEdit(ridFirst{sc, &r.rid})
	r.e, r.created = e, nanos(e.CreatedAt)
	return r, err
}

// ridFirst scans a row's first column into rid and the rest as sc would.
type ridFirst struct {
	sc  scanner
	rid *int64
}

func (r ridFirst) Scan(dest ...any) error { return r.sc.Scan(append([]any{r.rid}, dest...)...) }
