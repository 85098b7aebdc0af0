package engine

import (
	"sync"

	"github.com/mnemo-dev/mnemo/extract"
)

// statements caches the analysed statement (extract.Statement) of stored
// versions by version id, for the write path's integrity checks: every
// later note that meets a stored memory as the holder of a key or as a
// near-duplicate candidate relates to its statement, and analysing it again
// each time was a fifth of the write path (docs/benchmarks.md, "Ingest").
// A version is immutable, so its statement never goes stale; statements
// are made by the policy's extractor, so a reloaded policy starts over. A
// new memory's statement is put when it is written (the write path has it
// already). Nothing reads a Statement's slices for writing
// (extract.TestStatementReuse), so one may be shared by concurrent ingests.
//
// It is a cache: safe to lose, never the only copy of anything. It holds
// two generations of at most maxStatements each and drops the older when
// the newer fills. An erase clears it, so that erased content is not kept
// here (an ingest that read the content just before the erase may put its
// statement back, until it ages out; the memory is no candidate any more).
// The zero value is ready to use.
type statements struct {
	mu        sync.Mutex
	x         *extract.Extractor // the extractor the statements were made by
	cur, prev map[string]extract.Statement
}

// maxStatements bounds one generation: a short note's statement is a few
// hundred bytes, so the cache stays within a few megabytes.
const maxStatements = 8192

// get returns the statement of version vid made by x, if cached.
func (c *statements) get(x *extract.Extractor, vid string) (extract.Statement, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x != x || vid == "" {
		return extract.Statement{}, false
	}
	if st, ok := c.cur[vid]; ok {
		return st, true
	}
	st, ok := c.prev[vid]
	if ok { // still in use: keep it in the current generation
		c.putLocked(vid, st)
	}
	return st, ok
}

// put records st, made by x, as the statement of version vid.
func (c *statements) put(x *extract.Extractor, vid string, st extract.Statement) {
	if vid == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.x != x {
		c.x, c.cur, c.prev = x, nil, nil
	}
	c.putLocked(vid, st)
}

func (c *statements) putLocked(vid string, st extract.Statement) {
	if len(c.cur) >= maxStatements {
		c.prev, c.cur = c.cur, nil
	}
	if c.cur == nil {
		c.cur = map[string]extract.Statement{}
	}
	c.cur[vid] = st
}

// clear forgets every statement.
func (c *statements) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur, c.prev = nil, nil
}

// statementOf is the statement of version vid with content, analysed by x:
// from the cache, or analysed now and cached.
func (e *Engine) statementOf(x *extract.Extractor, vid, content string) extract.Statement {
	if st, ok := e.stmts.get(x, vid); ok {
		return st
	}
	st := x.Statement(content)
	e.stmts.put(x, vid, st)
	return st
}
