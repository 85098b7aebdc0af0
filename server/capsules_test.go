package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// TestCapsulesHTTP walks capsules and the context bundle over HTTP, one
// request a step, in order: writer hands a capsule to reader; librarian is
// in no audience.
func TestCapsulesHTTP(t *testing.T) {
	a := newIngAPI(t)
	c, err := graphtest.CreateMemory(context.Background(), a.store, graph.MemoryInput{
		Memory:  graph.Memory{Scope: graph.Scope{TenantID: "t1"}, Type: "note", Title: "pool", Visibility: graph.VisibilityProject},
		Version: graph.VersionInput{Content: "postgres pool size is 10"},
	})
	require.NoError(t, err)
	mem := c.Memory.ID
	create := fmt.Sprintf(`{"subject":"handover","audience":["reader"],"memory_ids":[%q]}`, mem)
	var id string
	capsule := func(verb string) func() string { return func() string { return "/v1/capsules/" + id + verb } }
	steps := []httpStep{
		{"reader may not create", "reader", "POST", fixed("/v1/capsules"), create, 403, "forbidden", nil},
		{"ttl past the maximum", "writer", "POST", fixed("/v1/capsules"),
			fmt.Sprintf(`{"subject":"s","audience":["reader"],"memory_ids":[%q],"ttl_seconds":99999999}`, mem), 400, "ttl_seconds", nil},
		{"unknown field", "writer", "POST", fixed("/v1/capsules"), `{"subject":"s","audience":["reader"],"memories":["x"]}`, 400, "memories", nil},
		{"no audience", "writer", "POST", fixed("/v1/capsules"), fmt.Sprintf(`{"subject":"s","memory_ids":[%q]}`, mem), 400, "audience", nil},
		{"an item the creator cannot read", "writer", "POST", fixed("/v1/capsules"),
			fmt.Sprintf(`{"subject":"s","audience":["reader"],"memory_ids":[%q]}`, graph.NewID()), 404, "not_found", nil},
		{"writer creates one for reader", "writer", "POST", fixed("/v1/capsules"), create, 201, "", func(t *testing.T, body map[string]any) {
			id = body["id"].(string)
			assert.Equal(t, "writer", body["created_by"])
			exp, err := time.Parse(time.RFC3339Nano, body["expires_at"].(string))
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now().Add(7*24*time.Hour), exp, time.Minute, "7 days by default")
		}},
		{"reader lists it, with its items", "reader", "GET", fixed("/v1/capsules"), "", 200, "", func(t *testing.T, body map[string]any) {
			cs := body["capsules"].([]any)
			require.Len(t, cs, 1)
			items := cs[0].(map[string]any)["items"].([]any)
			require.Len(t, items, 1)
			assert.Equal(t, "postgres pool size is 10", items[0].(map[string]any)["content"])
			assert.Equal(t, "", body["next_cursor"])
		}},
		{"librarian is not its audience", "librarian", "GET", fixed("/v1/capsules"), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Empty(t, body["capsules"])
		}},
		{"writer lists what it sent", "writer", "GET", fixed("/v1/capsules?sent=true&limit=5"), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Len(t, body["capsules"], 1)
		}},
		{"bad limit", "reader", "GET", fixed("/v1/capsules?limit=0"), "", 400, "limit", nil},
		{"bad sent", "reader", "GET", fixed("/v1/capsules?sent=maybe"), "", 400, "sent", nil},
		{"reader gets it", "reader", "GET", capsule(""), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, "handover", body["subject"])
		}},
		{"librarian gets 404: its existence is not disclosed", "librarian", "GET", capsule(""), "", 404, "not_found", nil},
		{"bundle holds it", "reader", "POST", fixed("/v1/context/bundle"), `{"token_budget":2000}`, 200, "", func(t *testing.T, body map[string]any) {
			require.Len(t, body["capsules"], 1)
			assert.Equal(t, "reader", body["agent_id"])
			assert.Equal(t, float64(2000), body["budget"].(map[string]any)["tokens"])
		}},
		{"bundle with a bad budget", "reader", "POST", fixed("/v1/context/bundle"), `{"token_budget":-1}`, 400, "token_budget", nil},
		{"read_context still needs a query", "reader", "POST", fixed("/v1/context"), `{}`, 400, "query", nil},
		{"reader may not revoke", "reader", "POST", capsule(":revoke"), "", 403, "forbidden", nil},
		{"librarian cannot see it to revoke", "librarian", "POST", capsule(":revoke"), "", 404, "not_found", nil},
		{"unknown verb", "writer", "POST", capsule(":frobnicate"), "", 404, "not_found", nil},
		{"writer revokes", "writer", "POST", capsule(":revoke"), `{"reason":"plans changed"}`, 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, "writer", body["revoked_by"])
		}},
		{"revoked: gone", "reader", "GET", capsule(""), "", 404, "not_found", nil},
		{"revoked: not listed", "reader", "GET", fixed("/v1/capsules"), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Empty(t, body["capsules"])
		}},
		{"audit of the capsule", "librarian", "GET", func() string { return "/v1/audit?action=capsule.revoke" }, "", 200, "", func(t *testing.T, body map[string]any) {
			evs := body["events"].([]any)
			require.Len(t, evs, 1)
			assert.Equal(t, id, evs[0].(map[string]any)["subject_id"])
		}},
	}
	a.runSteps(t, steps)
}
