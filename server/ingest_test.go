package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
)

// ingAPI is a real server on a real SQLite store, with one key per role.
type ingAPI struct {
	url        string
	store      graph.Store
	policyFile string
	handler    http.Handler
}

func newIngAPI(t testing.TB, opts ...func(*server.Options)) *ingAPI {
	t.Helper()
	gin.SetMode(gin.TestMode)
	st := graphtest.Open(t)
	file := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(file, config.DefaultPolicy(), 0o600))
	pol, err := policy.LoadFile(file)
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	eng, err := engine.New(engine.Options{Store: st, Policy: holder})
	require.NoError(t, err)
	keys := map[string]graph.Principal{}
	for _, role := range []string{"reader", "writer", "librarian", "admin", "operator"} {
		keys[role+"-key"] = graph.Principal{ID: role, Roles: []string{role}, Scope: graph.Scope{TenantID: "t1"}}
	}
	o := server.Options{Engine: eng, Keys: keys, PolicyLoader: func() (*policy.Policy, error) {
		return policy.LoadFile(file)
	}}
	for _, opt := range opts {
		opt(&o)
	}
	srv, err := server.New(o)
	require.NoError(t, err)
	hs := httptest.NewServer(conform(t, srv))
	t.Cleanup(hs.Close)
	return &ingAPI{url: hs.URL, store: st, policyFile: file, handler: srv}
}

// call sends body (JSON text) as role and decodes the answer into a map.
func (a *ingAPI) call(t *testing.T, role, method, path, body string) (int, map[string]any) {
	t.Helper()
	return a.callWith(t, role, method, path, body, nil)
}

// callWith is call with more request headers.
func (a *ingAPI) callWith(t *testing.T, role, method, path, body string, header http.Header) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+role+"-key")
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[string]any{}
	require.NoError(t, json.Unmarshal(raw, &out), "body: %s", raw)
	return resp.StatusCode, out
}

func (a *ingAPI) count(t *testing.T) int {
	t.Helper()
	l, err := a.store.ListMemories(context.Background(), graph.Filter{Scope: graph.Scope{TenantID: "t1"}, Reader: graph.System,
		Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}}, graph.Page{Limit: 1000})
	require.NoError(t, err)
	return len(l.Memories)
}

func errField(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	f, _ := e["field"].(string)
	return f
}

func TestIngestHTTP(t *testing.T) {
	a := newIngAPI(t)
	cases := []struct {
		name   string
		role   string
		body   string
		status int
		want   string // result status, or error field for 400
	}{
		{"new note", "writer", `{"type":"note","content":"The API server listens on port 8080."}`, 201, "approved"},
		{"reinforced", "writer", `{"type":"note","content":"The API server listens on port 8080."}`, 200, "reinforced"},
		{"superseded", "writer", `{"type":"note","content":"The API server listens on port 9090."}`, 201, "superseded"},
		{"pending", "writer", `{"content":"We decided to use PostgreSQL for billing."}`, 202, "pending"},
		{"gate rejects", "writer", `{"type":"note","content":"Hello.","channel":"quarantine"}`, 422, "rejected"},
		{"conflict", "writer", `{"type":"note","content":"Anything.","supersedes":"missing-id"}`, 409, "rejected"},
		{"reader forbidden", "reader", `{"type":"note","content":"Anything."}`, 403, ""},
		{"missing content", "writer", `{"type":"note"}`, 400, "content"},
		{"unknown field", "writer", `{"type":"note","content":"x","colour":"red"}`, 400, "colour"},
		{"bad importance", "writer", `{"type":"note","content":"x","importance":3}`, 400, "importance"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := a.count(t)
			code, body := a.call(t, c.role, "POST", "/v1/memories", c.body)
			require.Equal(t, c.status, code, "%v", body)
			switch {
			case code == 400:
				assert.Equal(t, c.want, errField(body))
			case c.want != "":
				assert.Equal(t, c.want, body["status"])
				assert.Contains(t, body, "entities")
			}
			if c.want == "approved" || c.want == "superseded" {
				assert.NotEmpty(t, body["id"])
				assert.NotEmpty(t, body["version_id"])
				assert.NotEmpty(t, body["canonical_key"])
				assert.Equal(t, before+1, a.count(t))
			} else {
				assert.Equal(t, before, a.count(t), "nothing new written")
			}
			if c.want == "rejected" {
				assert.NotEmpty(t, body["reason"])
				assert.NotEmpty(t, body["fix"])
			}
		})
	}
}

func TestIngestBatchHTTP(t *testing.T) {
	a := newIngAPI(t)
	t.Run("one bad item writes none", func(t *testing.T) {
		code, body := a.call(t, "writer", "POST", "/v1/memories:batch",
			`{"items":[{"type":"note","content":"Redis runs on cache-1."},{"type":"note","content":""}]}`)
		require.Equal(t, 400, code, "%v", body)
		assert.Equal(t, "items[1].content", errField(body))
		assert.Equal(t, 0, a.count(t))
	})
	t.Run("results in order", func(t *testing.T) {
		code, body := a.call(t, "writer", "POST", "/v1/memories:batch",
			`{"items":[{"type":"note","content":"Redis runs on cache-1."},{"type":"note","content":"Redis runs on cache-1."},{"content":"We decided to drop Jenkins."}]}`)
		require.Equal(t, 200, code, "%v", body)
		rs := body["results"].([]any)
		require.Len(t, rs, 3)
		var got []string
		for _, r := range rs {
			got = append(got, r.(map[string]any)["status"].(string))
		}
		assert.Equal(t, []string{"approved", "reinforced", "pending"}, got)
	})
	t.Run("memories/:id still routes", func(t *testing.T) {
		code, _ := a.call(t, "writer", "GET", "/v1/memories/nope", "")
		assert.Equal(t, 404, code)
	})
}

func TestLibrarianHTTP(t *testing.T) {
	a := newIngAPI(t)
	_, q := a.call(t, "writer", "POST", "/v1/memories", `{"content":"We decided to use PostgreSQL for billing."}`)
	id := q["request_id"].(string)
	_, q2 := a.call(t, "writer", "POST", "/v1/memories", `{"content":"Never deploy on Fridays."}`)
	id2 := q2["request_id"].(string)

	code, body := a.call(t, "librarian", "GET", "/v1/librarian/requests?status=pending", "")
	require.Equal(t, 200, code, "%v", body)
	assert.Len(t, body["requests"], 2)
	code, _ = a.call(t, "writer", "GET", "/v1/librarian/requests", "")
	assert.Equal(t, 403, code)
	code, body = a.call(t, "librarian", "GET", "/v1/librarian/requests/"+id, "")
	require.Equal(t, 200, code)
	assert.Equal(t, "pending", body["status"])

	code, _ = a.call(t, "writer", "POST", "/v1/librarian/requests/"+id+":approve", "")
	assert.Equal(t, 403, code, "approve needs the approve permission")
	code, body = a.call(t, "librarian", "POST", "/v1/librarian/requests/"+id+":approve", `{"reason":"ok"}`)
	require.Equal(t, 200, code, "%v", body)
	res := body["result"].(map[string]any)
	assert.Equal(t, "approved", res["status"])
	assert.Equal(t, 1, a.count(t))
	code, _ = a.call(t, "librarian", "POST", "/v1/librarian/requests/"+id+":approve", "")
	assert.Equal(t, 409, code)

	code, body = a.call(t, "librarian", "POST", "/v1/librarian/requests/"+id2+":reject", `{"reason":"too broad"}`)
	require.Equal(t, 200, code, "%v", body)
	assert.Equal(t, "too broad", body["reason"])
	assert.NotEmpty(t, body["fix"])
	code, _ = a.call(t, "librarian", "POST", "/v1/librarian/requests/"+id2+":frobnicate", "")
	assert.Equal(t, 404, code)
}

func TestPolicyReloadHTTP(t *testing.T) {
	a := newIngAPI(t)
	for _, role := range []string{"librarian", "admin"} {
		code, body := a.call(t, role, "POST", "/v1/admin/policy/reload", "")
		assert.Equal(t, 403, code, "%s may not reload the process-wide policy: %v", role, body)
	}

	good, err := os.ReadFile(a.policyFile)
	require.NoError(t, err)
	// A policy where the gate rejects everything by default and writers
	// have no approving rule.
	strict := bytes.Replace(good, []byte("match: {types: [note, task, episode], source_kinds: [AUTHORED], roles: [writer]}\n      action: approve"),
		[]byte("match: {types: [note, task, episode], source_kinds: [AUTHORED], roles: [writer]}\n      action: reject"), 1)
	require.NotEqual(t, good, strict)
	require.NoError(t, os.WriteFile(a.policyFile, strict, 0o600))
	code, body := a.call(t, "operator", "POST", "/v1/admin/policy/reload", "")
	require.Equal(t, 200, code, "%v", body)
	code, body = a.call(t, "writer", "POST", "/v1/memories", `{"type":"note","content":"Grafana runs on mon-1."}`)
	assert.Equal(t, 422, code, "the reloaded gate applies: %v", body)

	require.NoError(t, os.WriteFile(a.policyFile, []byte("version: 1\ngate:\n  default: maybe\n"), 0o600))
	code, body = a.call(t, "operator", "POST", "/v1/admin/policy/reload", "")
	require.Equal(t, 400, code)
	msg := body["error"].(map[string]any)["message"].(string)
	assert.Regexp(t, `policy\.yaml:\d+`, msg, "the error names file:line")
	code, _ = a.call(t, "writer", "POST", "/v1/memories", `{"type":"note","content":"Grafana runs on mon-2."}`)
	assert.Equal(t, 422, code, "the running policy stayed")
}
