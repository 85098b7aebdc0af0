package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// TestRelationsHTTP walks relations over HTTP, one request a step, in
// order: each step's status, and the error code (or field) of a failure.
func TestRelationsHTTP(t *testing.T) {
	a := newIngAPI(t)
	mem := func(title, content, entity string) string {
		c, err := graphtest.CreateMemory(context.Background(), a.store, graph.MemoryInput{
			Memory:  graph.Memory{Scope: graph.Scope{TenantID: "t1"}, Type: "note", Title: title, Visibility: graph.VisibilityProject},
			Version: graph.VersionInput{Content: content, Entities: []graph.EntityRef{{Name: entity}}},
			Audit:   []graph.AuditEvent{{Scope: graph.Scope{TenantID: "t1"}, Action: "gate.approve", ActorID: "writer"}},
		})
		require.NoError(t, err)
		return c.Memory.ID
	}
	pool := mem("pool", "postgres pool size is 10", "PostgreSQL")
	cache := mem("cache", "the cache evicts after an hour", "Memcached")
	body := func(typ string) string {
		return fmt.Sprintf(`{"from":%q,"to":%q,"type":%q,"reason":"sizing"}`, pool, cache, typ)
	}
	var relID string
	a.runSteps(t, []httpStep{
		{"reader may not relate", "reader", "POST", fixed("/v1/relations"), body("DEPENDS_ON"), 403, "forbidden", nil},
		{"unknown type", "writer", "POST", fixed("/v1/relations"), body("LIKES"), 400, "type", nil},
		{"unknown field", "writer", "POST", fixed("/v1/relations"), `{"from":"a","to":"b","type":"RELATES_TO","weight":2}`, 400, "weight", nil},
		{"self", "writer", "POST", fixed("/v1/relations"), fmt.Sprintf(`{"from":%q,"to":%q,"type":"RELATES_TO"}`, pool, pool), 400, "to", nil},
		{"unknown end", "writer", "POST", fixed("/v1/relations"), fmt.Sprintf(`{"from":%q,"to":%q,"type":"RELATES_TO"}`, pool, graph.NewID()), 404, "not_found", nil},
		{"writer relates", "writer", "POST", fixed("/v1/relations"), body("DEPENDS_ON"), 201, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, true, body["created"])
			r := body["relation"].(map[string]any)
			assert.Equal(t, "DEPENDS_ON", r["type"])
			assert.Equal(t, pool, r["from"])
			relID = r["id"].(string)
		}},
		{"again: the same relation, 200", "writer", "POST", fixed("/v1/relations"), body("DEPENDS_ON"), 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, false, body["created"])
			assert.Equal(t, relID, body["relation"].(map[string]any)["id"])
		}},
		{"list from the other end", "reader", "GET", fixed("/v1/memories/" + cache + "/relations"), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Len(t, body["relations"], 1)
		}},
		{"list with a bad limit", "reader", "GET", fixed("/v1/memories/" + cache + "/relations?limit=0"), "", 400, "limit", nil},
		{"list of an unknown memory", "reader", "GET", fixed("/v1/memories/" + graph.NewID() + "/relations"), "", 404, "not_found", nil},
		{"search appends the related memory", "reader", "POST", fixed("/v1/search"), `{"query":"postgres pool size","mode":"keyword"}`, 200, "", func(t *testing.T, body map[string]any) {
			rs := body["results"].([]any)
			require.NotEmpty(t, rs)
			nbs, _ := rs[0].(map[string]any)["neighbours"].([]any)
			require.NotEmpty(t, nbs)
			nb := nbs[0].(map[string]any)
			assert.Equal(t, cache, nb["id"])
			assert.Equal(t, "DEPENDS_ON", nb["reason"])
			assert.Equal(t, "out", nb["direction"])
		}},
		{"reader may not delete", "reader", "DELETE", func() string { return "/v1/relations/" + relID }, "", 403, "forbidden", nil},
		{"unknown relation", "writer", "DELETE", fixed("/v1/relations/" + graph.NewID()), "", 404, "not_found", nil},
		{"writer deletes", "writer", "DELETE", func() string { return "/v1/relations/" + relID }, `{"reason":"wrong"}`, 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, relID, body["relation"].(map[string]any)["id"])
		}},
		{"deleted twice", "writer", "DELETE", func() string { return "/v1/relations/" + relID }, "", 404, "not_found", nil},
		{"audit of the memory", "librarian", "GET", fixed("/v1/audit?memory_id=" + cache), "", 200, "", func(t *testing.T, body map[string]any) {
			var actions []string
			for _, ev := range body["events"].([]any) {
				actions = append(actions, ev.(map[string]any)["action"].(string))
			}
			assert.Equal(t, []string{"gate.approve", "relation.create", "relation.delete"}, actions)
		}},
	})
}
