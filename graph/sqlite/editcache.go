package sqlite

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

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
// When an entry holds: as for walkCache, every write transaction bumps the
// write sequence before it commits. ListEdits reads the sequence first and
// the edits after it, in statements of their own, so what it reads is at
// least as new as that sequence: an entry stored under sequence g is never
// older than g. It serves an entry only when the sequence it has just read
// is the entry's, so a write of this process or of another one on the
// same file (storetest Edits/SecondClient) is seen by the next read.
type editCache struct {
	mu sync.Mutex
	at uint64 // the sequence of the entries in m
	n  int    // entries and edits held in m, bounded by maxEditCacheRows
	m  map[editKey][]editRow
}

// maxEditCacheRows bounds the cache (a memory id and its edits each
// count one); past it the cache starts over.
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

func newEditCache() *editCache { return &editCache{m: map[editKey][]editRow{}} }

// get returns the entries of ids under filter at sequence g, and the ids
// it holds none for.
func (c *editCache) get(g uint64, filter string, ids []string) (rows []editRow, misses []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != g {
		return nil, ids
	}
	for _, id := range ids {
		if r, ok := c.m[editKey{filter, id}]; ok {
			rows = append(rows, r...)
		} else {
			misses = append(misses, id)
		}
	}
	return rows, misses
}

// put stores the edits of ids (rows, grouped here by target) read at
// sequence g under filter: entries of an older sequence are dropped, and a
// newer sequence starts the cache over.
func (c *editCache) put(g uint64, filter string, ids []string, rows []editRow) {
	by := make(map[string][]editRow, len(ids))
	for _, r := range rows {
		by[r.e.TargetMemoryID] = append(by[r.e.TargetMemoryID], r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case g < c.at:
		return
	case g > c.at:
		c.at, c.n, c.m = g, 0, map[editKey][]editRow{}
	}
	for _, id := range ids {
		k, rs := editKey{filter, id}, by[id]
		if c.n+1+len(rs) > maxEditCacheRows {
			c.n, c.m = 0, map[editKey][]editRow{}
		}
		if old, ok := c.m[k]; ok {
			c.n -= 1 + len(old)
		}
		c.m[k] = rs
		c.n += 1 + len(rs)
	}
}

// editsOf returns the edits of ids admitted by w (ListEdits' filter, no
// KnownAt), oldest first, through s.edits.
func (s *Store) editsOf(ctx context.Context, w *where, tenant string, ids []string) ([]graph.Edit, error) {
	var g uint64
	if err := s.queryRow(ctx, `SELECT n FROM write_seq`, &g); err != nil {
		return nil, err
	}
	args, err := json.Marshal(w.args)
	if err != nil {
		return nil, err
	}
	filter := w.sql() + "\x00" + tenant + "\x00" + string(args)
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

// queryRow reads one row of query into dest through the statement cache.
func (s *Store) queryRow(ctx context.Context, query string, dest ...any) error {
	rows, err := s.cachedQuery(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%s: no row", query)
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}
