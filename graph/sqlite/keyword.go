package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/graph/kwindex"
)

// keywordIndex is the store's keyword index (graph/kwindex: BM25 in
// memory, partitioned by tenant), keyed by memory rowid, newer first at
// equal scores.
//
// The tables stay the source of truth. Every change to a memory's indexed
// text is a new versions row, and versions rowids grow in commit order (one
// writer at a time), so the index is "versions up to rid seq": sync reads the
// versions added since, in the reader's own snapshot, before each search.
// Writes need no hook, a write from another process is seen on the next
// search, and a rolled-back write was never seen.
//
// Why not FTS5: its bm25 ranking scores every row matching any query term
// before it returns the first one, and a query's common words match tens of
// thousands of memories at 100k (about 30 ms a search; docs/benchmarks.md).
// Scoring postings in Go is exact BM25 at a small fraction of that.
type keywordIndex struct {
	syncMu sync.Mutex // one catch-up at a time; held while reading from SQL

	mu     sync.RWMutex // guards seq and erased
	seq    int64        // highest versions.rid applied
	erased int64        // highest erasures.rid applied

	*kwindex.Index[int64]
}

func newKeywordIndex() *keywordIndex {
	return &keywordIndex{Index: kwindex.New(func(a, b int64) bool { return a > b })}
}

// The memories whose indexed text changed in versions (after, upto], with
// that text. Relies on the versions rowid and versions.id.
const keywordDelta = `SELECT m.rid, m.tenant_id, m.org_id, m.repo_id, m.user_id, m.visibility, m.title, cv.index_text, cv.content
FROM (SELECT DISTINCT memory_rid AS r FROM versions WHERE rid > ? AND rid <= ?) d
CROSS JOIN memories m ON m.rid = d.r
JOIN versions cv ON cv.id = m.current_version_id`

// The memories erased in erasures (after, upto]. Relies on the erasures
// rowid.
const keywordErased = `SELECT m.rid, m.tenant_id FROM erasures x JOIN memories m ON m.rid = x.memory_rid
WHERE x.rid > ? AND x.rid <= ?`

// sync brings the index up to the snapshot of t: the versions whose rowid
// exceeds the index's are read and their memories (re)indexed, then the
// memories erased since are dropped (an erase empties versions in place,
// which the versions rowid does not show; the erasures log does).
func (k *keywordIndex) sync(ctx context.Context, t *sql.Tx) error {
	var top, erased sql.NullInt64
	if err := t.QueryRowContext(ctx, `SELECT (SELECT max(rid) FROM versions), (SELECT max(rid) FROM erasures)`).
		Scan(&top, &erased); err != nil {
		return fmt.Errorf("keyword index: %w", err)
	}
	k.mu.RLock()
	seq, gone := k.seq, k.erased
	k.mu.RUnlock()
	if top.Int64 <= seq && erased.Int64 <= gone {
		return nil
	}
	k.syncMu.Lock()
	defer k.syncMu.Unlock()
	k.mu.RLock()
	seq, gone = k.seq, k.erased
	k.mu.RUnlock()
	if top.Int64 <= seq && erased.Int64 <= gone {
		return nil
	}
	if top.Int64 < seq {
		top.Int64 = seq
	}
	// The changes are read and indexed a window at a time, under the
	// index's lock (searches wait for the catch-up on syncMu anyway): a
	// start's catch-up is the whole store, and holding all of its texts
	// at once was the restart's peak of memory.
	var drops []kwDrop
	if erased.Int64 > gone {
		var err error
		if drops, err = readErased(ctx, t, gone, erased.Int64); err != nil {
			return err
		}
	}
	type change struct {
		rid         int64
		scope       graph.Scope
		owner       string
		vis         graph.Visibility
		title, body string
	}
	var (
		win    = make([]change, 0, kwWindow)
		texts  []bm25.Doc
		caches []bm25.StemCache
		err    error
	)
	k.Update(func(w kwindex.Writer[int64]) {
		// flush adds the window's changes in the order read. A window of
		// at least kwParallelFrom (a catch-up of many memories) is
		// analysed by one worker per CPU first: tokenising and stemming
		// are most of its CPU.
		flush := func() {
			if len(win) < kwParallelFrom {
				for _, c := range win {
					w.PutText(c.rid, c.scope, c.owner, c.vis, c.title, c.body)
				}
				win = win[:0]
				return
			}
			if caches == nil {
				texts, caches = make([]bm25.Doc, kwWindow), make([]bm25.StemCache, runtime.GOMAXPROCS(0))
				for i := range caches {
					caches[i] = bm25.StemCache{}
				}
			}
			parallel(len(win), caches, func(i int, stem func(string) string) {
				texts[i] = bm25.IndexWith(win[i].title, win[i].body, stem)
			})
			for i, c := range win {
				w.Put(c.rid, c.scope, c.owner, c.vis, texts[i])
				texts[i], win[i] = bm25.Doc{}, change{} // the texts read are released as they go
			}
			win = win[:0]
		}
		var rows *sql.Rows
		if rows, err = t.QueryContext(ctx, keywordDelta, seq, top.Int64); err != nil {
			return
		}
		for rows.Next() {
			var (
				c              change
				index, content string
			)
			if err = rows.Scan(&c.rid, &c.scope.TenantID, &c.scope.OrgID, &c.scope.RepoID, &c.owner, &c.vis,
				&c.title, &index, &content); err != nil {
				_ = rows.Close()
				return
			}
			c.body = graph.SearchText(index, content)
			if win = append(win, c); len(win) == kwWindow {
				flush()
			}
		}
		if err = rows.Close(); err != nil {
			return
		}
		if err = rows.Err(); err != nil {
			return
		}
		flush()
		for _, d := range drops {
			w.Drop(d.tenant, d.rid)
		}
	})
	if err != nil {
		return fmt.Errorf("keyword index: %w", err)
	}
	k.mu.Lock()
	k.seq = top.Int64
	k.erased = max(k.erased, erased.Int64)
	k.mu.Unlock()
	return nil
}

// A catch-up of at least kwParallelFrom memories is analysed in parallel,
// kwWindow memories at a time.
const (
	kwParallelFrom = 512
	kwWindow       = 4096
)

// parallel runs fn(i, stem) for i in [0, n) on one worker per cache in
// caches, each stemming through its own.
func parallel(n int, caches []bm25.StemCache, fn func(i int, stem func(string) string)) {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for w := range min(len(caches), n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i, caches[w].Stem)
			}
		})
	}
	wg.Wait()
}

// kwDrop is an erased memory the index drops.
type kwDrop struct {
	rid    int64
	tenant string
}

// readErased reads the memories erased in erasures (after, upto].
func readErased(ctx context.Context, t *sql.Tx, after, upto int64) ([]kwDrop, error) {
	rows, err := t.QueryContext(ctx, keywordErased, after, upto)
	if err != nil {
		return nil, fmt.Errorf("keyword index: %w", err)
	}
	defer rows.Close()
	var out []kwDrop
	for rows.Next() {
		var d kwDrop
		if err := rows.Scan(&d.rid, &d.tenant); err != nil {
			return nil, fmt.Errorf("keyword index: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keyword index: %w", err)
	}
	return out, nil
}

// WarmKeywordIndex builds the keyword index now rather than on the first
// keyword search (about 1.4 s per 100k memories). A server calls it in the
// background at start.
func (s *Store) WarmKeywordIndex(ctx context.Context) error {
	t, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("warm keyword index: %w", err)
	}
	defer func() { _ = t.Rollback() }()
	if err := s.kw.sync(ctx, t); err != nil {
		return fmt.Errorf("warm keyword index: %w", err)
	}
	return nil
}
