package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/server"
)

// loopKeys adds the principals of the curation loop: in repository
// t1/o1/r1 a writer, an execution agent, a curator (librarian) and an
// admin; an agent of repository r2 and one of tenant t2.
func loopKeys(o *server.Options) {
	r1 := graph.Scope{TenantID: "t1", OrgID: "o1", RepoID: "r1"}
	for key, p := range map[string]graph.Principal{
		"r1writer-key": {ID: "r1writer", Roles: []string{"writer"}, Scope: r1},
		"agent-key":    {ID: "agent", Roles: []string{"agent"}, Scope: r1},
		"curator-key":  {ID: "curator", Roles: []string{"librarian"}, Scope: r1},
		"r1admin-key":  {ID: "r1admin", Roles: []string{"admin"}, Scope: r1},
		"outsider-key": {ID: "outsider", Roles: []string{"agent"}, Scope: graph.Scope{TenantID: "t1", OrgID: "o1", RepoID: "r2"}},
		"foreign-key":  {ID: "foreign", Roles: []string{"agent"}, Scope: graph.Scope{TenantID: "t2"}},
	} {
		o.Keys[key] = p
	}
}

// expect calls the API and requires status, returning the body.
func (a *ingAPI) expect(t *testing.T, role, method, path, body string, status int) map[string]any {
	t.Helper()
	got, out := a.call(t, role, method, path, body)
	require.Equal(t, status, got, "%s %s as %s: %v", method, path, role, out)
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// items returns read_context's items as maps.
func items(body map[string]any) []map[string]any {
	var out []map[string]any
	raw, _ := body["items"].([]any)
	for _, it := range raw {
		out = append(out, it.(map[string]any))
	}
	return out
}

// TestCurationLoopHTTP is the end-to-end curation loop (issue 13 item 9)
// over HTTP on a real server and store (SQLite; Neo4j with
// MNEMO_TEST_STORE=neo4j): ingest -> read_context with citations ->
// proposal pinned to the version read -> the curator accepts -> promote ->
// read_context returns the new version by default; a stale proposal is
// refused until rebased; an agent only proposes; principals outside the
// scope neither read nor propose; a citation read_context did not hand out
// fails verification; an erased memory is gone from every path.
func TestCurationLoopHTTP(t *testing.T) {
	a := newIngAPI(t, loopKeys)
	const query = "postgres connection pool size"

	// Ingest, publish a first baseline (v1), read it with citations.
	ing := a.expect(t, "r1writer", "POST", "/v1/memories",
		`{"type":"note","visibility":"project","title":"postgres pool","content":"The postgres connection pool size is 10."}`, 201)
	mem, v1 := ing["id"].(string), ing["version_id"].(string)
	a.expect(t, "agent", "POST", "/v1/baselines:promote", `{}`, 403)
	first := a.expect(t, "curator", "POST", "/v1/baselines:promote", `{"name":"release-1"}`, 201)["baseline"].(map[string]any)
	assert.Equal(t, float64(1), first["version_count"])
	ctx1 := a.expect(t, "agent", "POST", "/v1/context", jsonOf(t, map[string]any{"query": query}), 200)
	its := items(ctx1)
	require.Len(t, its, 1, "read_context finds the memory")
	assert.Equal(t, v1, its[0]["version_id"])
	assert.Equal(t, first["id"], ctx1["baseline_selector_used"].(map[string]any)["baseline_id"])
	cites := its[0]["citations"].([]any)
	require.NotEmpty(t, cites)

	// The agent proposes against the version it read; it may not decide.
	p1 := a.expect(t, "agent", "POST", "/v1/proposals",
		jsonOf(t, map[string]any{"memory_id": mem, "version_id": v1, "content": "The postgres connection pool size is 20."}), 201)["proposal"].(map[string]any)
	assert.Equal(t, "open", p1["status"])
	assert.Equal(t, v1, p1["target_version_id"])
	p1id := p1["id"].(string)
	body := a.expect(t, "agent", "POST", "/v1/proposals/"+p1id+":accept", "", 403)
	assert.Equal(t, "forbidden", errCode(body))
	a.expect(t, "agent", "POST", "/v1/proposals/"+p1id+":reject", `{"reason":"no"}`, 403)
	a.expect(t, "agent", "POST", "/v1/proposals", jsonOf(t, map[string]any{"memory_id": mem, "content": "x"}), 400)
	a.expect(t, "agent", "POST", "/v1/proposals", jsonOf(t, map[string]any{"memory_id": mem, "version_number": 7, "content": "x"}), 400)

	// Principals outside r1 neither read nor propose there.
	for _, who := range []string{"outsider", "foreign"} {
		out := a.expect(t, who, "POST", "/v1/context", jsonOf(t, map[string]any{"query": query}), 200)
		assert.Empty(t, items(out), "%s reads nothing of r1", who)
		out = a.expect(t, who, "POST", "/v1/proposals", jsonOf(t, map[string]any{"memory_id": mem, "version_id": v1, "content": "x"}), 404)
		assert.Equal(t, "not_found", errCode(out))
		a.expect(t, who, "GET", "/v1/proposals/"+p1id, "", 404)
		a.expect(t, who, "POST", "/v1/proposals/"+p1id+":rebase", "", 404)
		assert.Empty(t, a.expect(t, who, "GET", "/v1/proposals", "", 200)["proposals"])
	}

	// A second proposal pinned to v1 goes stale once the curator accepts
	// the first.
	p2id := a.expect(t, "agent", "POST", "/v1/proposals",
		jsonOf(t, map[string]any{"memory_id": mem, "version_number": 1, "content": "The postgres connection pool size is 25."}), 201)["proposal"].(map[string]any)["id"].(string)
	acc := a.expect(t, "curator", "POST", "/v1/proposals/"+p1id+":accept", `{"reason":"load test passed"}`, 200)
	assert.Equal(t, "accepted", acc["proposal"].(map[string]any)["status"])
	v2 := acc["version"].(map[string]any)["id"].(string)
	assert.Equal(t, v2, acc["proposal"].(map[string]any)["accepted_version_id"], "ACCEPTED_AS")
	a.expect(t, "curator", "POST", "/v1/proposals/"+p1id+":accept", "", 409)

	body = a.expect(t, "curator", "POST", "/v1/proposals/"+p2id+":accept", "", 409)
	assert.Equal(t, "conflict", errCode(body))
	assert.Contains(t, body["error"].(map[string]any)["message"], "rebase", "a stale accept says to rebase")
	reb := a.expect(t, "agent", "POST", "/v1/proposals/"+p2id+":rebase", "", 201)["proposal"].(map[string]any)
	assert.Equal(t, v2, reb["target_version_id"], "the rebase pins the current version")
	old := a.expect(t, "agent", "GET", "/v1/proposals/"+p2id, "", 200)["proposal"].(map[string]any)
	assert.Equal(t, "rebased", old["status"])
	assert.Equal(t, reb["id"], old["rebased_to_id"], "REBASED_TO")
	a.expect(t, "curator", "POST", "/v1/proposals/"+p2id+":accept", "", 409)
	a.expect(t, "agent", "POST", "/v1/proposals/"+reb["id"].(string)+":rebase", "", 409)
	a.expect(t, "curator", "POST", "/v1/proposals/"+reb["id"].(string)+":reject", "", 400)
	rej := a.expect(t, "curator", "POST", "/v1/proposals/"+reb["id"].(string)+":reject", `{"reason":"25 is staging's size"}`, 200)
	assert.Equal(t, "25 is staging's size", rej["decision"].(map[string]any)["reason"])
	assert.Equal(t, rej["decision"].(map[string]any)["id"], rej["proposal"].(map[string]any)["rejected_decision_id"])

	// Until the promote, the published baseline still reads v1.
	its = items(a.expect(t, "agent", "POST", "/v1/context", jsonOf(t, map[string]any{"query": query}), 200))
	require.Len(t, its, 1)
	assert.Equal(t, v1, its[0]["version_id"], "accepted but not yet promoted")
	second := a.expect(t, "curator", "POST", "/v1/baselines:promote", `{"name":"release-2"}`, 201)["baseline"].(map[string]any)
	list := a.expect(t, "agent", "GET", "/v1/baselines", "", 200)["baselines"].([]any)
	require.Len(t, list, 2)
	assert.Equal(t, second["id"], list[0].(map[string]any)["id"])
	assert.Equal(t, true, list[0].(map[string]any)["published"])
	assert.Equal(t, false, list[1].(map[string]any)["published"])

	// By default read_context now returns the new version; the older
	// baseline still reads the old one.
	ctx2 := a.expect(t, "agent", "POST", "/v1/context", jsonOf(t, map[string]any{"query": query}), 200)
	its = items(ctx2)
	require.Len(t, its, 1)
	assert.Equal(t, v2, its[0]["version_id"])
	assert.Equal(t, "The postgres connection pool size is 20.", its[0]["content"])
	its = items(a.expect(t, "agent", "POST", "/v1/context", jsonOf(t, map[string]any{"query": query, "selector": map[string]any{"baseline_id": first["id"]}}), 200))
	require.Len(t, its, 1)
	assert.Equal(t, v1, its[0]["version_id"], "an older baseline's version")

	// Verification: what read_context handed out passes; anything else fails.
	cur := items(ctx2)[0]["citations"].([]any)[:1]
	ver := a.expect(t, "agent", "POST", "/v1/citations/verify", jsonOf(t, map[string]any{"context_id": ctx2["context_id"], "citations": cur}), 200)
	assert.Equal(t, true, ver["valid"])
	for name, c := range map[string]map[string]any{
		"a version it did not return": {"element_id": mem, "version_id": v1},
		"a memory it did not return":  {"element_id": graph.NewID(), "version_id": graph.NewID()},
	} {
		ver = a.expect(t, "agent", "POST", "/v1/citations/verify", jsonOf(t, map[string]any{"context_id": ctx2["context_id"], "citations": []any{c}}), 200)
		assert.Equal(t, false, ver["valid"], name)
	}

	// Erase: gone from every path.
	a.expect(t, "r1admin", "POST", "/v1/memories/"+mem+":erase", `{"reason":"erasure request"}`, 200)
	a.expect(t, "agent", "GET", "/v1/memories/"+mem, "", 404)
	for _, sel := range []any{nil, map[string]any{"baseline_id": first["id"]}, map[string]any{"baseline_id": second["id"]}} {
		req := map[string]any{"query": query}
		if sel != nil {
			req["selector"] = sel
		}
		assert.Empty(t, items(a.expect(t, "agent", "POST", "/v1/context", jsonOf(t, req), 200)), "read_context %v", sel)
	}
	a.expect(t, "agent", "POST", "/v1/context", jsonOf(t, map[string]any{"element_id": mem}), 404)
	search := a.expect(t, "agent", "POST", "/v1/search", jsonOf(t, map[string]any{"query": query}), 200)
	assert.NotContains(t, fmt.Sprint(search["results"]), mem, "search")
	a.expect(t, "agent", "GET", "/v1/proposals/"+p1id, "", 404)
	props := a.expect(t, "curator", "GET", "/v1/proposals?memory_id="+mem, "", 200)
	assert.NotContains(t, strings.ToLower(fmt.Sprint(props)), "pool size", "proposals keep no text of an erased memory")
	a.expect(t, "curator", "POST", "/v1/proposals/"+p1id+":accept", "", 404)
}
