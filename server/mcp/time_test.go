package mcp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// TestTimeTravelTools: recall, get and read_context take as_of and
// known_at, as HTTP does, and read the version known before a late
// correction.
func TestTimeTravelTools(t *testing.T) {
	f := newFixture(t)
	w := f.inMemory(t, writer)
	var old, correction engine.IngestResult
	require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "title": "vell toll",
		"content": "The vell bridge toll is three coins."}, &old))
	time.Sleep(3 * time.Millisecond)
	known := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(3 * time.Millisecond)
	require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "title": "vell toll",
		"content": "The vell bridge toll is five coins.", "supersedes": old.ID}, &correction))
	for _, c := range []struct {
		name    string
		knownAt string
		want    string
		status  graph.Status
	}{
		{"KnownBeforeTheCorrection", known, old.ID, graph.StatusActive},
		{"Now", "", correction.ID, graph.StatusSuperseded},
	} {
		t.Run(c.name, func(t *testing.T) {
			var res engine.SearchResponse
			require.Empty(t, call(t, w, "recall", map[string]any{"query": "vell bridge toll coins", "mode": "keyword",
				"known_at": c.knownAt}, &res))
			require.NotEmpty(t, res.Results)
			assert.Equal(t, c.want, res.Results[0].Memory.ID)
			var v engine.MemoryView
			require.Empty(t, call(t, w, "get", map[string]any{"id": old.ID, "known_at": c.knownAt}, &v))
			assert.Equal(t, c.status, v.Memory.Status)
			var cr engine.ContextResponse
			require.Empty(t, call(t, w, "read_context", map[string]any{"query": "vell bridge toll coins", "known_at": c.knownAt}, &cr))
			require.NotEmpty(t, cr.Items)
			assert.Equal(t, c.want, cr.Items[0].ElementID)
		})
	}
	msg := call(t, w, "get", map[string]any{"id": old.ID, "as_of": "someday"}, nil)
	assert.Contains(t, msg, "as_of")
}
