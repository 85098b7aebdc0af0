package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/extract"
)

// TestStatementsCache: the cache answers for the extractor that made a
// statement only, keeps at most two generations, keeps a statement still in
// use, and clear forgets everything.
func TestStatementsCache(t *testing.T) {
	x1, x2 := &extract.Extractor{}, &extract.Extractor{}
	var c statements
	st := extract.Statement{}
	c.put(x1, "v0", st)
	_, ok := c.get(x1, "v0")
	assert.True(t, ok, "cached")
	_, ok = c.get(x2, "v0")
	assert.False(t, ok, "another extractor (a reloaded policy) does not see it")
	_, ok = c.get(x1, "")
	assert.False(t, ok, "no version id, no statement")

	for i := 1; i <= maxStatements; i++ { // v0 moves to the older generation
		c.put(x1, fmt.Sprintf("v%d", i), st)
	}
	_, ok = c.get(x1, "v0") // and back: it is in use
	assert.True(t, ok, "the older generation still answers")
	for i := maxStatements + 1; i <= 2*maxStatements; i++ {
		c.put(x1, fmt.Sprintf("v%d", i), st)
	}
	_, ok = c.get(x1, "v0")
	assert.True(t, ok, "a statement in use survives a generation")
	_, ok = c.get(x1, "v1")
	assert.False(t, ok, "an unused one ages out")
	assert.LessOrEqual(t, len(c.cur)+len(c.prev), 2*maxStatements)

	c.put(x2, "v0", st)
	_, ok = c.get(x1, "v2")
	assert.False(t, ok, "a new extractor starts over")
	c.clear()
	_, ok = c.get(x2, "v0")
	assert.False(t, ok, "cleared")
}
