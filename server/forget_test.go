package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// TestForgetHTTP archives, restores and erases over HTTP, and then reads
// every path the API has (search in each mode, get, list, context,
// verification) as the owner and as an admin, and finds nothing of the
// erased content; the routes refuse what the principal may not do.
func TestForgetHTTP(t *testing.T) {
	a := newAccessAPI(t, accessKeys)
	ctx := context.Background()
	do := func(t *testing.T, key, method, path string, body, out any) int {
		t.Helper()
		code, err := a.call(ctx, key, method, path, body, out)
		if code == 0 {
			require.NoError(t, err)
		}
		return code
	}
	const marker = "zqxmarker"
	clean := func(t *testing.T, what string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.NotContains(t, strings.ToLower(string(b)), marker, what)
	}
	var note, other engine.IngestResult
	require.Equal(t, 201, do(t, "alice-key-1", "POST", "/v1/memories", map[string]any{"type": "note",
		"title": "zqxmarker plan", "content": "Zqxmarker Quill keeps the harbour key under the zqxmarker stone."}, &note))
	require.Equal(t, 201, do(t, "alice-key-1", "POST", "/v1/memories", map[string]any{"type": "note",
		"content": "Oskar keeps the harbour crane running."}, &other))
	var ctxBefore engine.ContextResponse
	require.Equal(t, 200, do(t, "alice-key-1", "POST", "/v1/context", map[string]any{"query": "zqxmarker harbour key"}, &ctxBefore))
	require.NotEmpty(t, ctxBefore.Items)
	b, _ := json.Marshal(ctxBefore.Items)
	require.Contains(t, strings.ToLower(string(b)), marker, "precondition: the content is read before the erase")

	t.Run("archive and restore", func(t *testing.T) {
		var got engine.Forgotten
		require.Equal(t, 200, do(t, "alice-key-1", "DELETE", "/v1/memories/"+note.ID, nil, &got))
		assert.Equal(t, graph.StatusArchived, got.Memory.Status)
		var l graph.Listing
		require.Equal(t, 200, do(t, "alice-key-1", "GET", "/v1/memories", nil, &l))
		assert.NotContains(t, listIDs(l), note.ID, "an archived memory is not listed")
		assert.Equal(t, 404, do(t, "bob-key-001", "POST", "/v1/memories/"+note.ID+":restore", nil, nil))
		require.Equal(t, 200, do(t, "alice-key-1", "POST", "/v1/memories/"+note.ID+":restore",
			map[string]string{"reason": "needed again"}, &got))
		assert.Equal(t, graph.StatusActive, got.Memory.Status)
		assert.Equal(t, 409, do(t, "alice-key-1", "POST", "/v1/memories/"+note.ID+":restore", nil, nil))
		assert.Equal(t, 404, do(t, "alice-key-1", "POST", "/v1/memories/"+note.ID+":forget", nil, nil), "unknown verb")
		assert.Equal(t, 400, do(t, "alice-key-1", "DELETE", "/v1/memories/"+note.ID, map[string]string{"why": "x"}, nil),
			"unknown fields are refused")
	})
	t.Run("erase", func(t *testing.T) {
		assert.Equal(t, 404, do(t, "bob-key-001", "POST", "/v1/memories/"+note.ID+":erase", nil, nil))
		var res engine.EraseResult
		require.Equal(t, 200, do(t, "alice-key-1", "POST", "/v1/memories/"+note.ID+":erase",
			map[string]string{"reason": "ticket 9"}, &res))
		assert.Equal(t, []string{note.ID}, res.IDs)
		assert.Equal(t, 1, res.Memories)
		for _, key := range []string{"alice-key-1", "admin-key-1"} {
			for _, mode := range []string{"graph", "keyword", "vector", "hybrid"} {
				var s engine.SearchResponse
				require.Equal(t, 200, do(t, key, "POST", "/v1/search", map[string]any{"query": "zqxmarker Quill harbour key stone",
					"mode": mode, "include_archived": true, "include_superseded": true}, &s))
				clean(t, key+" search "+mode, s.Results)
			}
			assert.Equal(t, 404, do(t, key, "GET", "/v1/memories/"+note.ID, nil, nil))
			var l graph.Listing
			require.Equal(t, 200, do(t, key, "GET", "/v1/memories?status=active,archived,superseded,retracted,erased", nil, &l))
			assert.Contains(t, listIDs(l), note.ID, "the tombstone is listed when asked for")
			clean(t, key+" list", l)
			var c engine.ContextResponse
			require.Equal(t, 200, do(t, key, "POST", "/v1/context", map[string]any{"query": "zqxmarker harbour key"}, &c))
			clean(t, key+" context", c.Items)
			require.Equal(t, 200, do(t, key, "POST", "/v1/context", map[string]any{"element_id": other.ID}, &c))
			clean(t, key+" context with neighbours", c.Items)
			var v engine.VerifyResponse
			require.Equal(t, 200, do(t, key, "POST", "/v1/citations/verify", map[string]any{"context_id": ctxBefore.ContextID,
				"citations": ctxBefore.Items[0].Citations}, &v))
			assert.False(t, v.Valid, "a citation of the erased memory no longer verifies")
		}
		evs, _, err := a.store.ListAudit(ctx, graph.Filter{Scope: graph.Scope{TenantID: "t1"}, Reader: graph.System},
			graph.AuditQuery{}, graph.Page{Limit: 1000})
		require.NoError(t, err)
		clean(t, "audit", evs)
		var trail map[string]any
		require.Equal(t, 200, do(t, "admin-key-1", "GET", "/v1/audit?memory_id="+note.ID, nil, &trail))
		clean(t, "GET /v1/audit", trail)
		b, _ := json.Marshal(trail)
		assert.Contains(t, string(b), engine.AuditErase, "the erase is in the memory's audit trail")
	})
	t.Run("erase a user", func(t *testing.T) {
		assert.Equal(t, 403, do(t, "bob-key-001", "POST", "/v1/users/alice:erase", nil, nil))
		assert.Equal(t, 404, do(t, "admin-key-1", "POST", "/v1/users/alice:forget", nil, nil))
		var res engine.EraseResult
		require.Equal(t, 200, do(t, "admin-key-1", "POST", "/v1/users/alice:erase", map[string]string{"reason": "account closed"}, &res))
		assert.Equal(t, []string{other.ID}, res.IDs, "the one memory of alice's left")
	})
}

func listIDs(l graph.Listing) []string {
	ids := []string{}
	for _, m := range l.Memories {
		ids = append(ids, m.ID)
	}
	return ids
}
