package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/engine/accesstest"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/vector/embed/embedtest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// accessAPI is a real server on a real store and the embedded vector index,
// under the default policy plus accesstest's roles, with the keys given in
// the compact key:principal:roles:scope[:user] format.
type accessAPI struct {
	url   string
	store graph.Store
}

func newAccessAPI(t *testing.T, keys string) *accessAPI {
	t.Helper()
	gin.SetMode(gin.TestMode)
	st := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	accesstest.Roles(pol)
	// The default relevance is calibrated on bge-small's cosines, not on
	// the bag-of-words test embedder's: every vector hit is a candidate,
	// and the access tests check the vector branch on all of them.
	embedtest.Uncalibrated(&pol.Retrieval)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: 16})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	eng, err := engine.New(engine.Options{Store: st, Policy: holder, Index: idx, Embedder: embedtest.Bag{Dim: 16}})
	require.NoError(t, err)
	parsed, err := config.ParseAPIKeys(keys)
	require.NoError(t, err)
	principals := map[string]graph.Principal{}
	for _, k := range parsed { // as cmd/mnemo wires them
		principals[k.Key] = graph.Principal{ID: k.Principal, UserID: k.User, Roles: k.Roles,
			Scope: graph.Scope{TenantID: k.Tenant, OrgID: k.Org, RepoID: k.Repo}}
	}
	srv, err := server.New(server.Options{Engine: eng, Keys: principals, PolicyLoader: func() (*policy.Policy, error) {
		p, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
		if err == nil {
			accesstest.Roles(p)
			embedtest.Uncalibrated(&p.Retrieval)
		}
		return p, err
	}})
	require.NoError(t, err)
	hs := httptest.NewServer(conform(t, srv))
	t.Cleanup(hs.Close)
	return &accessAPI{url: hs.URL, store: st}
}

// call sends body (nil, or a value sent as JSON) with key and decodes a 2xx
// answer into out. Any other status is an error wrapping the graph
// sentinel the status stands for.
func (a *accessAPI) call(ctx context.Context, key, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusConflict && resp.StatusCode != http.StatusUnprocessableEntity {
		sentinel := map[int]error{http.StatusNotFound: graph.ErrNotFound, http.StatusForbidden: graph.ErrForbidden,
			http.StatusBadRequest: graph.ErrInvalid}[resp.StatusCode]
		if sentinel == nil {
			sentinel = fmt.Errorf("status %d", resp.StatusCode)
		}
		return resp.StatusCode, fmt.Errorf("%s %s: %w: %s", method, path, sentinel, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode %s: %w", method, path, raw, err)
		}
	}
	return resp.StatusCode, nil
}

// httpClient is accesstest.Client over the HTTP API, each principal with
// its key (accesstest.Key).
type httpClient struct{ a *accessAPI }

func (c httpClient) Ingest(ctx context.Context, p graph.Principal, r engine.IngestRequest) (engine.IngestResult, error) {
	var res engine.IngestResult
	_, err := c.a.call(ctx, accesstest.Key(p), "POST", "/v1/memories", r, &res)
	return res, err
}

func (c httpClient) Get(ctx context.Context, p graph.Principal, id string) (graph.Memory, error) {
	var v engine.MemoryView
	_, err := c.a.call(ctx, accesstest.Key(p), "GET", "/v1/memories/"+url.PathEscape(id), nil, &v)
	return v.Memory, err
}

func (c httpClient) List(ctx context.Context, p graph.Principal, r engine.ListRequest) ([]graph.Memory, error) {
	q := url.Values{}
	if r.UserID != "" {
		q.Set("user_id", r.UserID)
	}
	if r.Scope != nil {
		q.Set("org_id", r.Scope.OrgID)
		q.Set("repo_id", r.Scope.RepoID)
	}
	if r.Limit > 0 {
		q.Set("limit", fmt.Sprint(r.Limit))
	}
	var l graph.Listing
	_, err := c.a.call(ctx, accesstest.Key(p), "GET", "/v1/memories?"+q.Encode(), nil, &l)
	return l.Memories, err
}

func (c httpClient) Search(ctx context.Context, p graph.Principal, r engine.SearchRequest) (engine.SearchResponse, error) {
	body := map[string]any{"query": r.Query, "mode": r.Mode, "limit": r.Limit, "user_id": r.UserID}
	if r.Scope != nil {
		body["scope"] = r.Scope
	}
	var res engine.SearchResponse
	_, err := c.a.call(ctx, accesstest.Key(p), "POST", "/v1/search", body, &res)
	return res, err
}

func (c httpClient) ReadContext(ctx context.Context, p graph.Principal, r engine.ContextRequest) (engine.ContextResponse, error) {
	body := map[string]any{}
	if r.Query != "" {
		body["query"] = r.Query
	}
	if r.ElementID != "" {
		body["element_id"] = r.ElementID
	}
	if r.Scope != nil {
		body["scope"] = r.Scope
	}
	var res engine.ContextResponse
	_, err := c.a.call(ctx, accesstest.Key(p), "POST", "/v1/context", body, &res)
	return res, err
}

func (c httpClient) Verify(ctx context.Context, p graph.Principal, r engine.VerifyRequest) (engine.VerifyResponse, error) {
	body := map[string]any{"context_id": r.ContextID, "citations": r.Citations}
	if r.Scope != nil {
		body["scope"] = r.Scope
	}
	var res engine.VerifyResponse
	_, err := c.a.call(ctx, accesstest.Key(p), "POST", "/v1/citations/verify", body, &res)
	return res, err
}

func (c httpClient) Audit(ctx context.Context, p graph.Principal, r engine.AuditRequest) ([]graph.AuditEvent, error) {
	q := url.Values{"limit": {strconv.Itoa(r.Limit)}}
	if r.MemoryID != "" {
		q.Set("memory_id", r.MemoryID)
	}
	var res struct {
		Events []graph.AuditEvent `json:"events"`
	}
	_, err := c.a.call(ctx, accesstest.Key(p), "GET", "/v1/audit?"+q.Encode(), nil, &res)
	return res.Events, err
}

func (c httpClient) GateRequests(ctx context.Context, p graph.Principal) ([]graph.GateRequest, error) {
	var res struct {
		Requests []graph.GateRequest `json:"requests"`
	}
	_, err := c.a.call(ctx, accesstest.Key(p), "GET", "/v1/librarian/requests?limit=100", nil, &res)
	return res.Requests, err
}

func (c httpClient) GateRequest(ctx context.Context, p graph.Principal, id string) (graph.GateRequest, error) {
	var v engine.GateRequestView
	_, err := c.a.call(ctx, accesstest.Key(p), "GET", "/v1/librarian/requests/"+url.PathEscape(id), nil, &v)
	return v.GateRequest, err
}

func (c httpClient) Approve(ctx context.Context, p graph.Principal, id string) (engine.Decision, error) {
	var d engine.Decision
	code, err := c.a.call(ctx, accesstest.Key(p), "POST", "/v1/librarian/requests/"+url.PathEscape(id)+":approve", map[string]string{}, &d)
	if err == nil && code == http.StatusConflict {
		err = fmt.Errorf("approve %s: %w", id, graph.ErrConflict)
	}
	return d, err
}

// TestAccessPropertyHTTP is issue 11's property test over HTTP: the same
// random world as the engine's (other seed), every principal with its own
// key in the five-field format. MNEMO_PROPERTY_READS sets the reads.
func TestAccessPropertyHTTP(t *testing.T) {
	w := accesstest.NewWorld(t, accesstest.Config{Seed: 1111})
	a := newAccessAPI(t, w.Keys())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	st := w.Run(ctx, httpClient{a})
	t.Logf("%s backend, over HTTP: %s", graphtest.Backend(), st)
}

// The scenarios, as a new user meets them over HTTP.
const accessKeys = "alice-key-1:alice:writer:t1," +
	"bob-key-001:bob:writer:t1," +
	"agent-key-1:agent-7:writer:t1:alice," +
	"tenant-reader:tr:reader:t1," +
	"deep-reader:dr:reader|deep:t1," +
	"org-writer-1:ow:writer:t1/o1," +
	"tenant-writer:tw:writer:t1," +
	"org-librarian:ol:librarian:t1/o1," +
	"tenant-librarian:tl:librarian:t1," +
	"admin-key-1:root:admin:t1," +
	"operator-key:op:operator:t1"

func TestAccessHTTP(t *testing.T) {
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
	var alice, bob engine.IngestResult
	require.Equal(t, 201, do(t, "alice-key-1", "POST", "/v1/memories", map[string]string{"type": "note", "content": "note content"}, &alice))
	require.Equal(t, 201, do(t, "bob-key-001", "POST", "/v1/memories", map[string]string{"type": "note", "content": "note content"}, &bob))
	count := func(t *testing.T, id string) int64 {
		t.Helper()
		m, err := a.store.GetMemory(ctx, graph.Filter{Scope: graph.Scope{TenantID: "t1"}, Reader: graph.System}, id)
		require.NoError(t, err)
		return m.AccessCount
	}
	bobCount := count(t, bob.ID)

	t.Run("a search without user_id returns each user's own copy only, in every mode", func(t *testing.T) {
		for _, mode := range []string{"graph", "keyword", "vector", "hybrid"} {
			for key, want := range map[string]engine.IngestResult{"alice-key-1": alice, "bob-key-001": bob} {
				var res engine.SearchResponse
				require.Equal(t, 200, do(t, key, "POST", "/v1/search", map[string]string{"query": "note content", "mode": mode}, &res))
				var ids []string
				for _, r := range res.Results {
					ids = append(ids, r.Memory.ID)
					for _, n := range r.Neighbours {
						ids = append(ids, n.ID)
					}
				}
				if mode != "graph" {
					assert.Equal(t, []string{want.ID}, ids, "%s, mode %s", key, mode)
				} else {
					assert.Subset(t, []string{want.ID}, ids, "%s, mode %s", key, mode)
				}
			}
		}
	})
	t.Run("alice cannot read bob's memory", func(t *testing.T) {
		var l graph.Listing
		assert.Equal(t, 404, do(t, "alice-key-1", "GET", "/v1/memories/"+bob.ID, nil, nil), "GET /v1/memories/{id}")
		require.Equal(t, 200, do(t, "alice-key-1", "GET", "/v1/memories?user_id=bob", nil, &l))
		assert.Empty(t, l.Memories, "GET /v1/memories?user_id=bob")
		assert.Equal(t, 404, do(t, "alice-key-1", "POST", "/v1/context", map[string]string{"element_id": bob.ID}, nil), "read_context of the element")
		var c engine.ContextResponse
		require.Equal(t, 200, do(t, "alice-key-1", "POST", "/v1/context", map[string]string{"query": "note content"}, &c))
		for _, it := range c.Items {
			assert.NotEqual(t, bob.ID, it.ElementID, "read_context by query")
		}
		for _, mode := range []string{"graph", "keyword", "vector", "hybrid"} {
			var res engine.SearchResponse
			require.Equal(t, 200, do(t, "alice-key-1", "POST", "/v1/search", map[string]string{"query": "note content", "mode": mode, "user_id": "bob"}, &res))
			assert.Empty(t, res.Results, "search user_id=bob, mode %s", mode)
		}
		assert.Equal(t, bobCount, count(t, bob.ID), "alice's reads did not bump bob's access count")
	})
	t.Run("a key with a user reads as that user", func(t *testing.T) {
		var v engine.MemoryView
		require.Equal(t, 200, do(t, "agent-key-1", "GET", "/v1/memories/"+alice.ID, nil, &v))
		assert.Equal(t, "alice", v.Memory.UserID)
		assert.Equal(t, 404, do(t, "agent-key-1", "GET", "/v1/memories/"+bob.ID, nil, nil))
	})
	t.Run("writing as another user needs act_as_user", func(t *testing.T) {
		var l graph.Listing
		require.Equal(t, 200, do(t, "admin-key-1", "GET", "/v1/memories?limit=1000", nil, &l))
		before := len(l.Memories)
		code, err := a.call(ctx, "alice-key-1", "POST", "/v1/memories", map[string]string{"type": "note", "content": "uA likes tea.", "user_id": "uA"}, nil)
		assert.Equal(t, 403, code)
		assert.ErrorContains(t, err, `"message":"principal \"alice\" may not write as user \"uA\": needs permission act_as_user"`,
			"a sentence without the code's own word in front")
		code, _ = a.call(ctx, "alice-key-1", "POST", "/v1/memories:batch", map[string]any{"items": []map[string]string{
			{"type": "note", "content": "Alice likes coffee."}, {"type": "note", "content": "uA likes tea.", "user_id": "uA"}}}, nil)
		assert.Equal(t, 403, code, "batch")
		require.Equal(t, 200, do(t, "admin-key-1", "GET", "/v1/memories?limit=1000", nil, &l))
		assert.Len(t, l.Memories, before, "nothing is written")
		var res engine.IngestResult
		require.Equal(t, 201, do(t, "admin-key-1", "POST", "/v1/memories", map[string]string{"type": "note", "content": "uA likes tea.", "user_id": "uA"}, &res))
		var v engine.MemoryView
		require.Equal(t, 200, do(t, "admin-key-1", "GET", "/v1/memories/"+res.ID, nil, &v))
		assert.Equal(t, "uA", v.Memory.UserID)
		assert.Equal(t, "root", v.Version.Provenance.ActorID, "the provenance actor is the real writer")
	})
	t.Run("a tenant-wide key does not read an org-scoped memory without subscopes", func(t *testing.T) {
		var res engine.IngestResult
		require.Equal(t, 201, do(t, "org-writer-1", "POST", "/v1/memories",
			map[string]string{"type": "note", "content": "The orca log is in bucket seven.", "visibility": "project"}, &res))
		assert.Equal(t, 404, do(t, "tenant-reader", "GET", "/v1/memories/"+res.ID, nil, nil))
		var sr engine.SearchResponse
		require.Equal(t, 200, do(t, "tenant-reader", "POST", "/v1/search", map[string]string{"query": "orca log bucket", "mode": "keyword"}, &sr))
		assert.Empty(t, sr.Results)
		code, err := a.call(ctx, "tenant-reader", "POST", "/v1/search", map[string]any{"query": "orca", "scope": map[string]string{"org_id": "o1"}}, nil)
		assert.Equal(t, 403, code)
		assert.ErrorContains(t, err, "needs permission subscopes")
		assert.Equal(t, 200, do(t, "deep-reader", "GET", "/v1/memories/"+res.ID, nil, nil), "with subscopes")
	})
	t.Run("an org-scoped librarian cannot approve a tenant-wide write queued by someone else", func(t *testing.T) {
		var res engine.IngestResult
		require.Equal(t, 202, do(t, "tenant-writer", "POST", "/v1/memories", map[string]string{"content": "We decided to use PostgreSQL for billing."}, &res))
		assert.Equal(t, 404, do(t, "org-librarian", "POST", "/v1/librarian/requests/"+res.RequestID+":approve", map[string]string{}, nil))
		assert.Equal(t, 404, do(t, "org-librarian", "GET", "/v1/librarian/requests/"+res.RequestID, nil, nil))
		var list struct {
			Requests []graph.GateRequest `json:"requests"`
		}
		require.Equal(t, 200, do(t, "org-librarian", "GET", "/v1/librarian/requests", nil, &list))
		assert.Empty(t, list.Requests)
		assert.Equal(t, 200, do(t, "tenant-librarian", "POST", "/v1/librarian/requests/"+res.RequestID+":approve", map[string]string{}, nil))
	})
	t.Run("a tenant admin cannot reload the policy, an operator can", func(t *testing.T) {
		assert.Equal(t, 403, do(t, "admin-key-1", "POST", "/v1/admin/policy/reload", nil, nil))
		assert.Equal(t, 200, do(t, "operator-key", "POST", "/v1/admin/policy/reload", nil, nil))
	})
	t.Run("the bearer scheme in any case", func(t *testing.T) {
		for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
			req, err := http.NewRequest("GET", a.url+"/v1/memories/"+alice.ID, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", scheme+" alice-key-1")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, 200, resp.StatusCode, scheme)
		}
	})
}
