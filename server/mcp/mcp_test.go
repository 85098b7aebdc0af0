package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

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
	srv.Mount("/mcp", m.Handler(srv))
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
	}, readOnly)
}
