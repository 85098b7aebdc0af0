package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/server"
)

// readAPI is a real server on a real SQLite store with two tenants' keys.
type readAPI struct {
	t   *testing.T
	url string
	ids map[string]string // title -> memory id
}

const (
	keyT1 = "key-t1"
	keyT2 = "key-t2"
)

func newReadAPI(t *testing.T) *readAPI {
	t.Helper()
	ctx := context.Background()
	store := graphtest.Open(t)
	holder := defaultHolder(t)
	eng, err := engine.New(engine.Options{Store: store, Policy: holder})
	require.NoError(t, err)
	srv, err := server.New(server.Options{Engine: eng, Keys: map[string]graph.Principal{
		// alice's key is the repository's, where the memories live: a
		// tenant-wide key would not reach them (Scope.Sees).
		keyT1: {ID: "alice", Roles: []string{"reader"}, Scope: graph.Scope{TenantID: "t1", RepoID: "r1"}},
		keyT2: {ID: "mallory", Roles: []string{"reader"}, Scope: graph.Scope{TenantID: "t2"}},
	}})
	require.NoError(t, err)
	hs := httptest.NewServer(conform(t, srv))
	t.Cleanup(hs.Close)
	api := &readAPI{t: t, url: hs.URL, ids: map[string]string{}}
	due := time.Now().UTC().Add(-time.Hour)
	for _, m := range []struct{ title, typ, content string }{
		{"pool", "note", "postgres connection pool is 20"},
		{"release", "task", "release postgres 17 upgrade"},
		{"ops", "note", "kubernetes rollout of the api"},
	} {
		c, err := graphtest.CreateMemory(ctx, store, graph.MemoryInput{
			Memory: graph.Memory{Scope: graph.Scope{TenantID: "t1", RepoID: "r1"}, UserID: "alice", Type: m.typ,
				Title: m.title, Tags: []string{"status:todo"}, CreatedAt: due},
			Version: graph.VersionInput{Content: m.content, Entities: []graph.EntityRef{{Name: "PostgreSQL", Aliases: []string{"postgres"}}}},
		})
		require.NoError(t, err)
		api.ids[m.title] = c.Memory.ID
	}
	return api
}

// do sends a JSON request and decodes the JSON answer into out (when not nil).
func (a *readAPI) do(method, path, key string, body any, out any) int {
	a.t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		raw, err := json.Marshal(b)
		require.NoError(a.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	require.NoError(a.t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	if out != nil {
		require.NoError(a.t, json.NewDecoder(resp.Body).Decode(out))
	}
	return resp.StatusCode
}

type errorBody struct {
	Error struct {
		Code, Message, Field string
	} `json:"error"`
}

func TestSearchAPI(t *testing.T) {
	api := newReadAPI(t)
	var got engine.SearchResponse
	require.Equal(t, http.StatusOK, api.do("POST", "/v1/search", keyT1, map[string]any{"query": "postgres pool", "limit": 5}, &got))
	require.NotEmpty(t, got.Results)
	assert.Equal(t, api.ids["pool"], got.Results[0].Memory.ID)
	assert.Contains(t, got.Results[0].WhyIncluded, engine.WhyKeyword)
	assert.Equal(t, "r1", got.Results[0].Citation.RepositoryID)

	var other engine.SearchResponse
	require.Equal(t, http.StatusOK, api.do("POST", "/v1/search", keyT2, map[string]any{"query": "postgres pool"}, &other))
	assert.Empty(t, other.Results, "another tenant sees nothing")

	bad := []struct {
		name, body, field string
	}{
		{"unknown field", `{"query":"x","bogus":1}`, "bogus"},
		{"missing query", `{}`, "query"},
		{"bad mode", `{"query":"x","mode":"psychic"}`, "mode"},
		{"bad limit", `{"query":"x","limit":1000}`, "limit"},
		{"bad time", `{"query":"x","created_after":"yesterday"}`, "created_after"},
		{"bad visibility", `{"query":"x","visibility":["everyone"]}`, "visibility"},
		{"wrong type", `{"query":7}`, "query"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			var eb errorBody
			assert.Equal(t, http.StatusBadRequest, api.do("POST", "/v1/search", keyT1, tc.body, &eb))
			assert.Equal(t, tc.field, eb.Error.Field)
		})
	}
}

func TestContextAndVerifyAPI(t *testing.T) {
	api := newReadAPI(t)
	var ctxResp engine.ContextResponse
	require.Equal(t, http.StatusOK, api.do("POST", "/v1/context", keyT1, map[string]any{"query": "postgres pool"}, &ctxResp))
	require.NotEmpty(t, ctxResp.Items)
	require.NotEmpty(t, ctxResp.ContextID)
	assert.Equal(t, engine.ContextSelector{Kind: "published"}, ctxResp.BaselineSelectorUsed)
	assert.Equal(t, "t1", ctxResp.Scope.TenantID)
	item := ctxResp.Items[0]
	assert.Equal(t, "r1", item.RepositoryID)
	require.NotEmpty(t, item.Citations)
	real := item.Citations[0]
	assert.Equal(t, item.VersionID, real.VersionID)

	verify := func(key, contextID string, cites ...graph.Citation) (int, engine.VerifyResponse) {
		var vr engine.VerifyResponse
		code := api.do("POST", "/v1/citations/verify", key, map[string]any{"context_id": contextID, "citations": cites}, &vr)
		return code, vr
	}
	code, vr := verify(keyT1, ctxResp.ContextID, real)
	require.Equal(t, http.StatusOK, code)
	assert.True(t, vr.Valid)
	assert.Empty(t, vr.Invalid)

	invented := graph.Citation{RepositoryID: "r1", ElementID: api.ids["ops"], VersionID: "made-up"}
	code, vr = verify(keyT1, ctxResp.ContextID, real, invented)
	require.Equal(t, http.StatusOK, code)
	assert.False(t, vr.Valid)
	require.Len(t, vr.Invalid, 1)
	assert.Equal(t, invented, vr.Invalid[0].Citation)

	code, _ = verify(keyT2, ctxResp.ContextID, real)
	assert.Equal(t, http.StatusNotFound, code, "another tenant's context_id is not found")

	var direct engine.ContextResponse
	require.Equal(t, http.StatusOK, api.do("POST", "/v1/context", keyT1, map[string]any{"element_id": api.ids["release"], "selector": "published"}, &direct))
	require.Len(t, direct.Items, 1)
	assert.Equal(t, []string{engine.WhyDirect}, direct.Items[0].WhyIncluded)
	assert.Equal(t, "release postgres 17 upgrade", direct.Items[0].Content)

	var eb errorBody
	assert.Equal(t, http.StatusNotFound, api.do("POST", "/v1/context", keyT2, map[string]any{"element_id": api.ids["release"]}, &eb))
	assert.Equal(t, http.StatusNotFound, api.do("POST", "/v1/context", keyT1, map[string]any{"query": "x", "selector": map[string]string{"baseline_id": "nope"}}, &eb))
	for _, tc := range []struct{ name, body, field string }{
		{"neither query nor element", `{}`, "query"},
		{"both", `{"query":"x","element_id":"y"}`, "element_id"},
		{"bad selector", `{"query":"x","selector":"latest"}`, "selector"},
		{"bad selector object", `{"query":"x","selector":{"kind":"published","extra":1}}`, "selector"},
		{"bad limits", `{"query":"x","limits":{"max_items":500}}`, "limits.max_items"},
		{"unknown field", `{"query":"x","scopes":{}}`, "scopes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var eb errorBody
			assert.Equal(t, http.StatusBadRequest, api.do("POST", "/v1/context", keyT1, tc.body, &eb))
			assert.Equal(t, tc.field, eb.Error.Field)
		})
	}
	assert.Equal(t, http.StatusBadRequest, api.do("POST", "/v1/citations/verify", keyT1, `{"context_id":"x"}`, &eb))
	assert.Equal(t, "citations", eb.Error.Field)
}

func TestListTasksAfter(t *testing.T) {
	api := newReadAPI(t)
	var l graph.Listing
	after := time.Now().UTC().Add(-2 * time.Hour).Format(time.RFC3339)
	require.Equal(t, http.StatusOK, api.do("GET", "/v1/memories?type=task&after="+after, keyT1, nil, &l))
	require.Len(t, l.Memories, 1)
	assert.Equal(t, api.ids["release"], l.Memories[0].ID)
	require.Equal(t, http.StatusOK, api.do("GET", "/v1/memories?type=task&after="+time.Now().UTC().Format(time.RFC3339), keyT1, nil, &l))
	assert.Empty(t, l.Memories)
}
