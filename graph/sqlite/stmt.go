package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps the reader pool's prepared statements by SQL text, so
// queries run many times per search (a neighbour walk per entity, a filter
// batch) are compiled once per connection instead of on every call. The
// filter makes the text vary; past maxCachedStmts distinct texts, new ones
// are prepared per call instead of cached.
//
// get must be called before the caller begins its read transaction:
// preparing takes a pooled connection, and a caller that held one while
// waiting for another could deadlock a busy pool.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

const maxCachedStmts = 256

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// get returns the cached statement for query, preparing it once; nil when
// the cache is full (the caller then runs the text).
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.m[query]
	full := len(c.m) >= maxCachedStmts
	c.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[query]; ok { // prepared meanwhile by another caller
		_ = st.Close()
		return old, nil
	}
	c.m[query] = st
	return st, nil
}

// query runs query in t, through st when there is one (the transaction's
// copy reuses the statement already prepared on its connection, or
// prepares it there once).
func query(ctx context.Context, t *sql.Tx, st *sql.Stmt, query string, args ...any) (*sql.Rows, error) {
	if st == nil {
		return t.QueryContext(ctx, query, args...)
	}
	return t.StmtContext(ctx, st).QueryContext(ctx, args...)
}

// close closes the cached statements.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for q, st := range c.m {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
		delete(c.m, q)
	}
	return first
}

// cachedQuery runs query on the reader pool through the statement cache
// (prepared once per connection; the text prepared per call once the
// cache is full). Not for use inside a read transaction: see stmtCache.
func (s *Store) cachedQuery(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return s.r.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}
