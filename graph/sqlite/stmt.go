package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps the reader pool's prepared statements by SQL text, so
// queries run many times per search (a neighbour walk per entity, a filter
// batch) are compiled once per connection instead of on every call. The
// filter's shape (which fields it sets, how many tags or types) makes the
// text vary, so the cache is bounded: past maxCachedStmts texts, the least
// recently used statement nobody holds is closed to make room. A
// statement a caller still holds is closed when the last holder releases
// it, never under a query (rows read through a closed statement keep it
// alive until they close: database/sql closes it only after them).
//
// get must be called before the caller begins its read transaction:
// preparing takes a pooled connection, and a caller that held one while
// waiting for another could deadlock a busy pool.
type stmtCache struct {
	db   *sql.DB
	max  int
	mu   sync.Mutex
	m    map[string]*cachedStmt
	tick uint64 // a use counter: the order of last use
}

type cachedStmt struct {
	st      *sql.Stmt
	holders int
	used    uint64
	evicted bool // out of the map: closed by the last holder's release
}

const maxCachedStmts = 256

func newStmtCache(db *sql.DB, max int) *stmtCache {
	return &stmtCache{db: db, max: max, m: map[string]*cachedStmt{}}
}

// get returns the statement for query, prepared once while it stays
// cached, and the release the caller must call once it has run its last
// query on it.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, func(), error) {
	c.mu.Lock()
	e, ok := c.m[query]
	if ok {
		c.hold(e)
	}
	c.mu.Unlock()
	if ok {
		return e.st, func() { c.release(e) }, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[query]; ok { // prepared meanwhile by another caller
		_ = st.Close()
		c.hold(e)
		return e.st, func() { c.release(e) }, nil
	}
	if len(c.m) >= c.max {
		c.evict()
	}
	e = &cachedStmt{st: st}
	c.m[query] = e
	c.hold(e)
	return st, func() { c.release(e) }, nil
}

func (c *stmtCache) hold(e *cachedStmt) {
	c.tick++
	e.holders++
	e.used = c.tick
}

func (c *stmtCache) release(e *cachedStmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.holders--
	if e.evicted && e.holders == 0 {
		_ = e.st.Close()
	}
}

// evict drops the least recently used statement from the map, closing it
// unless it is held (its last holder closes it then). Called with mu held.
func (c *stmtCache) evict() {
	var (
		oldest string
		lru    *cachedStmt
	)
	for q, e := range c.m {
		if lru == nil || e.used < lru.used {
			oldest, lru = q, e
		}
	}
	delete(c.m, oldest)
	lru.evicted = true
	if lru.holders == 0 {
		_ = lru.st.Close()
	}
}

// query runs the cached statement st in t (the transaction's copy reuses
// the statement already prepared on its connection, or prepares it there
// once).
func query(ctx context.Context, t *sql.Tx, st *sql.Stmt, args ...any) (*sql.Rows, error) {
	return t.StmtContext(ctx, st).QueryContext(ctx, args...)
}

// close closes the cached statements.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for q, e := range c.m {
		if err := e.st.Close(); err != nil && first == nil {
			first = err
		}
		delete(c.m, q)
	}
	return first
}

// cachedQuery runs query on the reader pool through the statement cache.
// Not for use inside a read transaction: see stmtCache.
func (s *Store) cachedQuery(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, release, err := s.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	defer release()
	return st.QueryContext(ctx, args...)
}

// cachedRow is cachedQuery for a statement of one row (sql.ErrNoRows from
// its Scan when there is none).
func (s *Store) cachedRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	st, release, err := s.stmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	defer release()
	return st.QueryRowContext(ctx, args...), nil
}
