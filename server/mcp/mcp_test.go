package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/server/mcp"
)

const (
	keyWriter    = "key-writer"
	keyLibrarian = "key-librarian"
	keyOther     = "key-other"
)

var (
	writer    = graph.Principal{ID: "alice", UserID: "alice", Roles: []string{"writer"}, Scope: graph.Scope{TenantID: "t1"}}
	librarian = graph.Principal{ID: "lib", Roles: []string{"librarian"}, Scope: graph.Scope{TenantID: "t1"}}
	other     = graph.Principal{ID: "mallory", UserID: "mallory", Roles: []string{"writer"}, Scope: graph.Scope{TenantID: "t2"}}
)

// fixture is one engine on a real store behind the HTTP API (with /mcp
// mounted) and an MCP server for in-memory sessions.
type fixture struct {
	engine *engine.Engine
	url    string
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	gin.SetMode(gin.ReleaseMode)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(tb, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(tb, err)
	eng, err := engine.New(engine.Options{Store: graphtest.Open(tb), Policy: holder})
	require.NoError(tb, err)
	srv, err := server.New(server.Options{Engine: eng, Keys: map[string]graph.Principal{
		keyWriter: writer, keyLibrarian: librarian, keyOther: other,
	}})
	require.NoError(tb, err)
	m, err := mcp.New(mcp.Options{Engine: eng})
	require.NoError(tb, err)
	srv.Mount("/mcp", m.Handler())
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return &fixture{engine: eng, url: hs.URL}
}

// inMemory connects a client over an in-memory transport to an MCP server
// that serves every call as p (as `mnemo mcp` does with MNEMO_API_KEY).
func (f *fixture) inMemory(tb testing.TB, p graph.Principal) *sdk.ClientSession {
	tb.Helper()
	ctx := context.Background()
	m, err := mcp.New(mcp.Options{Engine: f.engine, Principal: &p})
	require.NoError(tb, err)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := m.Connect(ctx, st)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

// bearer adds an Authorization header to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// overHTTP connects a client to /mcp with key.
func (f *fixture) overHTTP(tb testing.TB, key string) (*sdk.ClientSession, error) {
	tb.Helper()
	t := &sdk.StreamableClientTransport{Endpoint: f.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{key}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), t, nil)
	if err == nil {
		tb.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// call calls a tool and decodes its structured content into out (when not
// nil). It returns the text of a tool error, or "".
func call(tb testing.TB, cs *sdk.ClientSession, tool string, args any, out any) string {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	require.NoError(tb, err, tool)
	if res.StructuredContent != nil {
		conforms(tb, cs, tool, res.StructuredContent)
	}
	if out != nil && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(tb, err)
		require.NoError(tb, json.Unmarshal(b, out), tool)
	}
	if !res.IsError {
		return ""
	}
	require.Len(tb, res.Content, 1, tool)
	text, ok := res.Content[0].(*sdk.TextContent)
	require.True(tb, ok, tool)
	return text.Text
}

func TestToolsAndSchemas(t *testing.T) {
	f := newFixture(t)
	cs := f.inMemory(t, writer)
	assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion, "the newest revision the SDK speaks")
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	readOnly := map[string]bool{}
	for _, tool := range res.Tools {
		assert.NotNil(t, tool.InputSchema, tool.Name)
		assert.NotNil(t, tool.OutputSchema, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
		require.NotNil(t, tool.Annotations, tool.Name)
		readOnly[tool.Name] = tool.Annotations.ReadOnlyHint
	}
	assert.Equal(t, map[string]bool{
		"remember": false, "recall": true, "get": true, "list": true, "read_context": true,
		"verify_citations": true, "librarian_list": true, "librarian_get": true,
		"librarian_approve": false, "librarian_reject": false,
		"edit_propose": false, "edit_list": true, "edit_approve": false, "edit_reject": false, "audit": true,
		"forget": false, "restore": false, "relate": false, "unrelate": false, "relations": true,
		"capsule_create": false, "capsule_list": true,
		"propose": false, "proposal_accept": false, "proposal_reject": false,
	}, readOnly)
}

// TestEveryTool drives each tool through a writer's in-memory session and a
// librarian's HTTP session on the same store.
func TestEveryTool(t *testing.T) {
	f := newFixture(t)
	w := f.inMemory(t, writer)
	lib, err := f.overHTTP(t, keyLibrarian)
	require.NoError(t, err)

	var note engine.IngestResult
	require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "title": "pool",
		"content": "The Postgres connection pool size is 20 on the billing service.", "tags": []string{"db"}}, &note))
	require.Equal(t, engine.StatusApproved, note.Status)
	require.NotEmpty(t, note.ID)

	t.Run("remember refused", func(t *testing.T) {
		var res engine.IngestResult
		msg := call(t, w, "remember", map[string]any{"type": "note", "content": "a quarantined note about billing",
			"metadata": map[string]string{"channel": "quarantine"}}, &res)
		assert.Equal(t, "writes from the quarantine channel are never durable", msg)
		assert.Equal(t, engine.StatusRejected, res.Status, "the result rides along as structured content")
		assert.Equal(t, "reject-quarantined-channel", res.Rule)
	})
	t.Run("recall", func(t *testing.T) {
		var res engine.SearchResponse
		require.Empty(t, call(t, w, "recall", map[string]any{"query": "postgres pool size", "mode": "keyword"}, &res))
		require.NotEmpty(t, res.Results)
		assert.Equal(t, note.ID, res.Results[0].Memory.ID)
	})
	t.Run("get", func(t *testing.T) {
		var v engine.MemoryView
		require.Empty(t, call(t, w, "get", map[string]any{"id": note.ID}, &v))
		assert.Equal(t, "pool", v.Memory.Title)
		assert.Contains(t, v.Version.Content, "pool size is 20")
	})
	t.Run("list", func(t *testing.T) {
		var l graph.Listing
		require.Empty(t, call(t, w, "list", map[string]any{"tags": []string{"db"}}, &l))
		require.Len(t, l.Memories, 1)
		assert.Equal(t, note.ID, l.Memories[0].ID)
	})
	t.Run("read_context and verify_citations", func(t *testing.T) {
		var c engine.ContextResponse
		require.Empty(t, call(t, w, "read_context", map[string]any{"query": "postgres pool"}, &c))
		require.NotEmpty(t, c.ContextID)
		require.NotEmpty(t, c.Items)
		require.NotEmpty(t, c.Items[0].Citations)
		var v engine.VerifyResponse
		require.Empty(t, call(t, w, "verify_citations", map[string]any{"context_id": c.ContextID, "citations": c.Items[0].Citations}, &v))
		assert.True(t, v.Valid)
		forged := c.Items[0].Citations[0]
		forged.VersionID = "v-forged"
		require.Empty(t, call(t, w, "verify_citations", map[string]any{"context_id": c.ContextID, "citations": []graph.Citation{forged}}, &v))
		assert.False(t, v.Valid)
		assert.Len(t, v.Invalid, 1)
	})
	t.Run("edits and audit", func(t *testing.T) {
		var fact, other engine.IngestResult
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "content": "The office wifi password rotates every Monday.", "visibility": "project"}, &fact))
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "content": "The office coffee machine is on floor three.", "visibility": "project"}, &other))

		var proposed engine.EditResult
		require.Empty(t, call(t, w, "edit_propose", map[string]any{"memory_id": fact.ID, "kind": "retract", "reason": "wrong office"}, &proposed))
		assert.Equal(t, graph.EditStatus("pending"), proposed.Edit.Status, "a writer's retraction waits for a librarian")
		var eds mcp.EditListOutput
		require.Empty(t, call(t, lib, "edit_list", map[string]any{"memory_id": fact.ID, "status": "pending"}, &eds))
		require.Len(t, eds.Edits, 1)
		assert.Contains(t, call(t, w, "edit_approve", map[string]any{"id": proposed.Edit.ID}, nil), "approve",
			"a writer may not approve")
		var decided engine.EditResult
		require.Empty(t, call(t, lib, "edit_approve", map[string]any{"id": proposed.Edit.ID, "reason": "agreed"}, &decided))
		assert.Equal(t, graph.EditStatus("approved"), decided.Edit.Status)
		assert.Equal(t, httpError(t, f.url, "GET", "/v1/memories/"+fact.ID, "", keyWriter),
			call(t, w, "get", map[string]any{"id": fact.ID}, nil), "a retracted memory is gone for readers")

		require.Empty(t, call(t, w, "edit_propose", map[string]any{"memory_id": other.ID, "kind": "attenuate", "delta": -0.5, "reason": "minor"}, &proposed))
		require.Empty(t, call(t, lib, "edit_reject", map[string]any{"id": proposed.Edit.ID, "reason": "it matters"}, &decided))
		assert.Equal(t, graph.EditStatus("rejected"), decided.Edit.Status)

		var trail mcp.AuditOutput
		require.Empty(t, call(t, lib, "audit", map[string]any{"memory_id": other.ID}, &trail))
		assert.NotEmpty(t, trail.Events)
		assert.Contains(t, call(t, w, "audit", map[string]any{}, nil), "audit_read", "a writer may not read the audit trail")
	})
	t.Run("capsules", func(t *testing.T) {
		var c graph.Capsule
		require.Empty(t, call(t, w, "capsule_create", map[string]any{"subject": "pool handover",
			"audience": []string{"lib"}, "memory_ids": []string{note.ID}}, &c))
		assert.Equal(t, "alice", c.CreatedBy)
		var page mcp.CapsuleListOutput
		require.Empty(t, call(t, lib, "capsule_list", map[string]any{}, &page))
		require.Len(t, page.Capsules, 1, "addressed to lib")
		require.Len(t, page.Capsules[0].Items, 1)
		assert.Contains(t, page.Capsules[0].Items[0].Content, "pool size is 20")
		require.Empty(t, call(t, w, "capsule_list", map[string]any{}, &page))
		assert.Empty(t, page.Capsules, "none is addressed to alice")
		require.Empty(t, call(t, w, "capsule_list", map[string]any{"sent": true}, &page))
		assert.Len(t, page.Capsules, 1, "alice sent one")
		assert.Equal(t, httpError(t, f.url, "POST", "/v1/capsules", `{"subject":"s","audience":["lib"],"memory_ids":["nope"]}`, keyWriter),
			call(t, w, "capsule_create", map[string]any{"subject": "s", "audience": []string{"lib"}, "memory_ids": []string{"nope"}}, nil),
			"an item alice cannot read reads as HTTP says")
	})
	t.Run("proposals", func(t *testing.T) {
		var fact engine.IngestResult
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "content": "The staging cluster has 3 nodes.", "visibility": "project"}, &fact))
		var first, second mcp.ProposalOutput
		require.Empty(t, call(t, w, "propose", map[string]any{"memory_id": fact.ID, "version_id": fact.VersionID, "content": "The staging cluster has 5 nodes."}, &first))
		assert.Equal(t, graph.ProposalOpen, first.Proposal.Status)
		require.Empty(t, call(t, w, "propose", map[string]any{"memory_id": fact.ID, "version_number": 1, "content": "The staging cluster has 4 nodes."}, &second))
		assert.Contains(t, call(t, w, "proposal_accept", map[string]any{"id": first.Proposal.ID}, nil), "curate", "a writer may not accept")
		var accepted engine.ProposalResult
		require.Empty(t, call(t, lib, "proposal_accept", map[string]any{"id": first.Proposal.ID, "reason": "resized"}, &accepted))
		require.NotNil(t, accepted.Version)
		assert.Equal(t, accepted.Version.ID, accepted.Proposal.AcceptedVersionID)
		assert.Contains(t, call(t, lib, "proposal_accept", map[string]any{"id": second.Proposal.ID}, nil), "rebase", "a stale proposal")
		var rejected engine.ProposalResult
		require.Empty(t, call(t, lib, "proposal_reject", map[string]any{"id": second.Proposal.ID, "reason": "superseded by the resize"}, &rejected))
		require.NotNil(t, rejected.Decision)
		assert.Equal(t, "superseded by the resize", rejected.Decision.Reason)
	})
	t.Run("forget and restore", func(t *testing.T) {
		var m engine.IngestResult
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "content": "My locker code is 4471.", "tags": []string{"locker"}}, &m))
		listed := func() int {
			var l graph.Listing
			require.Empty(t, call(t, w, "list", map[string]any{"tags": []string{"locker"}}, &l))
			return len(l.Memories)
		}
		require.Equal(t, 1, listed())
		var out mcp.ForgetOutput
		require.Empty(t, call(t, w, "forget", map[string]any{"id": m.ID, "reason": "moved"}, &out))
		require.NotNil(t, out.Archived)
		assert.Equal(t, graph.Status("archived"), out.Archived.Memory.Status)
		assert.Equal(t, 0, listed(), "an archived memory is left out of plain reads")
		var back engine.Forgotten
		require.Empty(t, call(t, w, "restore", map[string]any{"id": m.ID}, &back))
		assert.Equal(t, graph.Status("active"), back.Memory.Status)
		assert.Equal(t, 1, listed())
		require.Empty(t, call(t, w, "forget", map[string]any{"id": m.ID, "mode": "erase", "reason": "user request"}, &out))
		require.NotNil(t, out.Erased)
		assert.Equal(t, []string{m.ID}, out.Erased.IDs)
		assert.Equal(t, 0, listed())
		assert.Equal(t, httpError(t, f.url, "GET", "/v1/memories/"+m.ID, "", keyWriter),
			call(t, w, "get", map[string]any{"id": m.ID}, nil), "an erased memory reads as HTTP says")
		assert.Contains(t, call(t, w, "forget", map[string]any{"id": m.ID, "mode": "shred"}, nil), "mode must be archive or erase")
	})
	t.Run("relate, relations and unrelate", func(t *testing.T) {
		var a, b engine.IngestResult
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "content": "The billing cron runs at midnight.", "visibility": "project"}, &a))
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "content": "The invoice mailer waits for the nightly job.", "visibility": "project"}, &b))
		var rel engine.RelationResult
		require.Empty(t, call(t, w, "relate", map[string]any{"from": b.ID, "to": a.ID, "type": "DEPENDS_ON", "reason": "waits"}, &rel))
		assert.True(t, rel.Created)
		var list mcp.RelationsOutput
		require.Empty(t, call(t, lib, "relations", map[string]any{"memory_id": a.ID}, &list))
		require.Len(t, list.Relations, 1)
		assert.Equal(t, graph.DependsOn, list.Relations[0].Type)
		var gone mcp.UnrelateOutput
		require.Empty(t, call(t, w, "unrelate", map[string]any{"id": rel.Relation.ID, "reason": "wrong"}, &gone))
		assert.Equal(t, rel.Relation.ID, gone.Relation.ID)
		require.Empty(t, call(t, lib, "relations", map[string]any{"memory_id": a.ID}, &list))
		assert.Empty(t, list.Relations)
	})
	t.Run("librarian", func(t *testing.T) {
		var queued, other engine.IngestResult
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "decision", "content": "We decided to move billing to Postgres 17."}, &queued))
		require.Equal(t, engine.StatusPending, queued.Status)
		require.Empty(t, call(t, w, "remember", map[string]any{"type": "decision", "content": "We decided to rewrite billing in Haskell."}, &other))
		require.Equal(t, engine.StatusPending, other.Status)

		msg := call(t, w, "librarian_list", map[string]any{}, nil)
		assert.Contains(t, msg, "approve", "a writer may not review")

		var page mcp.LibrarianListOutput
		require.Empty(t, call(t, lib, "librarian_list", map[string]any{}, &page))
		require.Len(t, page.Requests, 2)
		var view engine.GateRequestView
		require.Empty(t, call(t, lib, "librarian_get", map[string]any{"id": queued.RequestID}, &view))
		require.NotNil(t, view.Write)
		assert.Contains(t, view.Write.Content, "Postgres 17")

		var d, r engine.Decision
		require.Empty(t, call(t, lib, "librarian_approve", map[string]any{"id": queued.RequestID, "reason": "agreed"}, &d))
		require.NotNil(t, d.Result)
		assert.Equal(t, engine.StatusApproved, d.Result.Status)
		require.Empty(t, call(t, lib, "librarian_reject", map[string]any{"id": other.RequestID, "reason": "no"}, &r))
		assert.Equal(t, graph.GateStatus("rejected"), r.Request.Status)

		var l graph.Listing
		require.Empty(t, call(t, w, "list", map[string]any{"types": []string{"decision"}}, &l))
		require.Len(t, l.Memories, 1, "the approved decision is written, the rejected one is not")
		assert.Equal(t, d.Result.ID, l.Memories[0].ID)
	})
}

// TestErrorsReadAsHTTP: a tool error's text is the HTTP API's
// error.message for the same failure.
func TestErrorsReadAsHTTP(t *testing.T) {
	f := newFixture(t)
	w := f.inMemory(t, writer)
	cases := []struct {
		name, tool string
		args       map[string]any
		method     string
		path       string
		body       string
	}{
		{"unknown memory", "get", map[string]any{"id": "m-missing"}, "GET", "/v1/memories/m-missing", ""},
		{"bad id", "get", map[string]any{"id": "a b"}, "GET", "/v1/memories/a%20b", ""},
		{"empty query", "recall", map[string]any{"query": " "}, "POST", "/v1/search", `{"query":" "}`},
		{"bad time", "recall", map[string]any{"query": "x", "created_after": "yesterday"}, "POST", "/v1/search", `{"query":"x","created_after":"yesterday"}`},
		{"bad mode", "recall", map[string]any{"query": "x", "mode": "psychic"}, "POST", "/v1/search", `{"query":"x","mode":"psychic"}`},
		{"list limit", "list", map[string]any{"limit": 5000}, "GET", "/v1/memories?limit=5000", ""},
		{"empty content", "remember", map[string]any{"content": ""}, "POST", "/v1/memories", `{"content":""}`},
		{"no receipt", "verify_citations", map[string]any{"context_id": "ctx-missing", "citations": []any{}}, "POST", "/v1/citations/verify", `{"context_id":"ctx-missing","citations":[]}`},
		{"context without query", "read_context", map[string]any{}, "POST", "/v1/context", `{}`},
		{"not a librarian", "librarian_list", map[string]any{}, "GET", "/v1/librarian/requests", ""},
		{"edit of an unknown memory", "edit_propose", map[string]any{"memory_id": "m-missing", "kind": "retract", "reason": "x"},
			"POST", "/v1/memories/m-missing/edits", `{"kind":"retract","reason":"x"}`},
		{"unknown edit", "edit_approve", map[string]any{"id": "e-missing"}, "POST", "/v1/edits/e-missing:approve", ""},
		{"no audit_read", "audit", map[string]any{}, "GET", "/v1/audit", ""},
		{"forget an unknown memory", "forget", map[string]any{"id": "m-missing"}, "DELETE", "/v1/memories/m-missing", ""},
		{"erase an unknown memory", "forget", map[string]any{"id": "m-missing", "mode": "erase"}, "POST", "/v1/memories/m-missing:erase", ""},
		{"restore an unknown memory", "restore", map[string]any{"id": "m-missing"}, "POST", "/v1/memories/m-missing:restore", ""},
		{"relate to an unknown memory", "relate", map[string]any{"from": "m-missing", "to": "m-other", "type": "RELATES_TO"},
			"POST", "/v1/relations", `{"from":"m-missing","to":"m-other","type":"RELATES_TO"}`},
		{"relate with a bad type", "relate", map[string]any{"from": "m-a", "to": "m-b", "type": "LIKES"},
			"POST", "/v1/relations", `{"from":"m-a","to":"m-b","type":"LIKES"}`},
		{"unrelate an unknown relation", "unrelate", map[string]any{"id": "r-missing"}, "DELETE", "/v1/relations/r-missing", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, w, tc.tool, tc.args, nil)
			want := httpError(t, f.url, tc.method, tc.path, tc.body, keyWriter)
			require.NotEmpty(t, want)
			assert.Equal(t, want, got)
		})
	}
}

// httpError is the error.message the HTTP API answers.
func httpError(t *testing.T, url, method, path, body, key string) string {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.GreaterOrEqual(t, resp.StatusCode, 400)
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	return e.Error.Message
}

// TestHTTPAuth: /mcp takes the API's keys; a missing or unknown key is the
// API's 401, and a key's scope holds over MCP as over HTTP.
func TestHTTPAuth(t *testing.T) {
	f := newFixture(t)
	for _, key := range []string{"", "key-unknown"} {
		_, err := f.overHTTP(t, key)
		assert.Error(t, err, "key %q", key)
		status, msg := rawPost(t, f.url+"/mcp", key)
		assert.Equal(t, http.StatusUnauthorized, status)
		want := httpError(t, f.url, "GET", "/v1/memories", "", key)
		assert.Equal(t, want, msg)
	}
	// The key is checked once, by the API's middleware, which takes
	// X-API-Key as well as a bearer key.
	status, msg := rawPostWith(t, f.url+"/mcp", "X-API-Key", keyWriter)
	assert.Equal(t, http.StatusOK, status, msg)
	w, err := f.overHTTP(t, keyWriter)
	require.NoError(t, err)
	var note engine.IngestResult
	require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "content": "Tenant one's secret launch date is March 3."}, &note))
	o, err := f.overHTTP(t, keyOther)
	require.NoError(t, err)
	assert.Equal(t, httpError(t, f.url, "GET", "/v1/memories/"+note.ID, "", keyOther),
		call(t, o, "get", map[string]any{"id": note.ID}, nil), "another tenant's key does not reach the memory")
	var res engine.SearchResponse
	require.Empty(t, call(t, o, "recall", map[string]any{"query": "secret launch date", "mode": "keyword"}, &res))
	assert.Empty(t, res.Results)
}

// rawPost posts an initialize request to url with key and returns the
// status and the error message of the JSON body.
func rawPost(t *testing.T, url, key string) (int, string) {
	t.Helper()
	if key == "" {
		return rawPostWith(t, url, "", "")
	}
	return rawPostWith(t, url, "Authorization", "Bearer "+key)
}

// rawPostWith is rawPost with the key in any header (none when header is
// empty).
func rawPostWith(t *testing.T, url, header, value string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if header != "" {
		req.Header.Set(header, value)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error.Message
}

// conforms checks a tool's structured output against the output schema the
// tool advertises (the server does not validate on every call).
func conforms(tb testing.TB, cs *sdk.ClientSession, tool string, out any) {
	tb.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(tb, err)
	for _, tl := range tools.Tools {
		if tl.Name != tool {
			continue
		}
		raw, err := json.Marshal(tl.OutputSchema)
		require.NoError(tb, err)
		var schema jsonschema.Schema
		require.NoError(tb, json.Unmarshal(raw, &schema))
		resolved, err := schema.Resolve(nil)
		require.NoError(tb, err)
		assert.NoError(tb, resolved.Validate(out), "%s output against its schema", tool)
		return
	}
	tb.Fatalf("no tool %s", tool)
}

// TestUnknownArgument: as the HTTP API refuses unknown fields, a tool
// refuses unknown arguments, naming them.
func TestUnknownArgument(t *testing.T) {
	f := newFixture(t)
	w := f.inMemory(t, writer)
	msg := call(t, w, "recall", map[string]any{"query": "x", "qeury": "typo"}, nil)
	assert.Contains(t, msg, "qeury")
}

// TestRecallDetail: recall answers compact unless asked for full; full is
// the HTTP API's search answer, compact is that answer with fields left
// out (every field it keeps at the same path with the same value), both
// conform to the one output schema recall declares (call checks it), and
// each comes with its own JSON as the text block.
func TestRecallDetail(t *testing.T) {
	f := newFixture(t)
	w := f.inMemory(t, writer)
	var a, b engine.IngestResult
	require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "title": "billing cron",
		"content": "The billing cron job runs at midnight on the Zephyr cluster.", "entities": []string{"Zephyr"}}, &a))
	require.Empty(t, call(t, w, "remember", map[string]any{"type": "note", "title": "invoice mailer",
		"content": "The invoice mailer on Zephyr waits for the billing cron job.", "entities": []string{"Zephyr"}}, &b))
	require.Empty(t, call(t, w, "relate", map[string]any{"from": b.ID, "to": a.ID, "type": "DEPENDS_ON"}, nil))
	query := map[string]any{"query": "midnight", "mode": "keyword"}

	answer := func(detail string) (structured, text map[string]any) {
		t.Helper()
		args := map[string]any{"detail": detail}
		for k, v := range query {
			args[k] = v
		}
		if detail == "" {
			delete(args, "detail")
		}
		res, err := w.CallTool(context.Background(), &sdk.CallToolParams{Name: "recall", Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		conforms(t, w, "recall", res.StructuredContent)
		require.Len(t, res.Content, 1)
		require.NoError(t, json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &text))
		return res.StructuredContent.(map[string]any), text
	}
	full, fullText := answer("full")
	assert.Equal(t, full, fullText, "the text block is the structured content's JSON")
	body, err := json.Marshal(query)
	require.NoError(t, err)
	viaHTTP := httpPost(t, f.url+"/v1/search", string(body), keyWriter)
	assert.Equal(t, unread(t, viaHTTP), unread(t, full), "full is the HTTP API's answer")

	results := full["results"].([]any)
	require.Len(t, results, 1)
	require.NotEmpty(t, results[0].(map[string]any)["neighbours"], "the related memory is appended")

	for _, detail := range []string{"", "compact"} {
		short, text := answer(detail)
		assert.Equal(t, short, text, "the text block is the structured content's JSON")
		within(t, unread(t, short), unread(t, full), "compact")
		hit := short["results"].([]any)[0].(map[string]any)
		for _, dropped := range []string{"why_included", "signals", "path"} {
			assert.NotContains(t, hit, dropped)
		}
		assert.NotContains(t, hit["memory"], "scope")
		assert.Contains(t, hit, "citation")
		n := hit["neighbours"].([]any)[0].(map[string]any)
		assert.NotContains(t, n, "content")
		assert.NotContains(t, n, "version_id")
		assert.Equal(t, "DEPENDS_ON", n["reason"])
		assert.NotEmpty(t, n["relation_id"])
	}

	assert.Equal(t, `detail must be compact or full, not "verbose"`,
		call(t, w, "recall", map[string]any{"query": "billing", "detail": "verbose"}, nil))
}

// unread is an answer without the access bookkeeping each read moves
// (memory.access_count and last_accessed).
func unread(t *testing.T, answer map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(answer)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out))
	for _, r := range out["results"].([]any) {
		m := r.(map[string]any)["memory"].(map[string]any)
		delete(m, "access_count")
		delete(m, "last_accessed")
	}
	return out
}

// within checks that every value in part sits at the same path in whole
// with the same value (arrays element by element, of the same length).
func within(t *testing.T, part, whole any, path string) {
	t.Helper()
	switch p := part.(type) {
	case map[string]any:
		w, ok := whole.(map[string]any)
		if !assert.True(t, ok, "%s: an object in one answer only", path) {
			return
		}
		for k, v := range p {
			if assert.Contains(t, w, k, "%s.%s: not in the full answer", path, k) {
				within(t, v, w[k], path+"."+k)
			}
		}
	case []any:
		w, ok := whole.([]any)
		if !assert.True(t, ok, "%s: an array in one answer only", path) || !assert.Len(t, w, len(p), path) {
			return
		}
		for i := range p {
			within(t, p[i], w[i], fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		assert.Equal(t, whole, part, path)
	}
}

// httpPost posts body to url with key and decodes the JSON answer.
func httpPost(t *testing.T, url, body, key string) map[string]any {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}
