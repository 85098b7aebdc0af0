package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSupersessionChainHTTP: over HTTP, a superseded memory names the head
// of its chain (head_id) on GET and in read_context, a different fact
// under one key is kept, and an unsure one is kept and listed in
// contradicts.
// The notes are shared (visibility project) so that another user's key can
// read them.
func TestSupersessionChainHTTP(t *testing.T) {
	api := newIngAPI(t)
	write := func(content string) map[string]any {
		t.Helper()
		code, body := api.call(t, "librarian", http.MethodPost, "/v1/memories", fmt.Sprintf(`{"type":"note","visibility":"project","content":%q}`, content))
		require.Equal(t, http.StatusCreated, code, "%v", body)
		return body
	}
	a := write("The API server listens on port 8080.")
	b := write("The API server listens on port 9090.")
	c := write("The API server listens on port 7070.")
	require.Equal(t, "superseded", c["status"])
	require.Equal(t, b["id"], c["supersedes"])

	code, got := api.call(t, "reader", http.MethodGet, "/v1/memories/"+a["id"].(string), "")
	require.Equal(t, http.StatusOK, code, "%v", got)
	assert.Equal(t, c["id"], got["head_id"], "the head, not the next hop")
	assert.Equal(t, b["id"], got["memory"].(map[string]any)["superseded_by"])

	code, got = api.call(t, "reader", http.MethodGet, "/v1/memories/"+c["id"].(string), "")
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, got, "head_id", "the head has no head_id")

	code, got = api.call(t, "reader", http.MethodPost, "/v1/context", fmt.Sprintf(`{"element_id":%q}`, a["id"]))
	require.Equal(t, http.StatusOK, code, "%v", got)
	items := got["items"].([]any)
	require.Len(t, items, 1)
	item := items[0].(map[string]any)
	assert.Equal(t, "superseded", item["status"])
	assert.Equal(t, c["id"], item["head_id"])

	one := write("Orca seed observation number 1")
	two := write("Orca seed observation number 2")
	assert.Equal(t, "approved", two["status"], "a different fact under one key is kept")
	assert.NotEqual(t, one["canonical_key"], two["canonical_key"])

	write("Jonas called the bank on Monday.")
	flagged := write("Jonas called the bank on Thursday.")
	assert.Equal(t, "approved", flagged["status"])
	assert.NotEmpty(t, flagged["contradicts"], "kept and flagged: %v", flagged)
}
