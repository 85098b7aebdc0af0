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
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

const maxCachedStmts = 256

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// query runs query in t through the cached statement for its text.
func (c *stmtCache) query(ctx context.Context, t *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	c.mu.Lock()
	st, ok := c.m[query]
	if !ok && len(c.m) < maxCachedStmts {
		var err error
		if st, err = c.db.PrepareContext(ctx, query); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		c.m[query], ok = st, true
	}
	c.mu.Unlock()
	if !ok {
		return t.QueryContext(ctx, query, args...)
	}
	// The transaction's copy reuses the statement already prepared on its
	// connection, or prepares it there once.
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
