package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPStdio runs a real `mnemo mcp` (built here) on a temporary data
// directory and talks to it over stdio with the SDK's client: remember,
// then recall (compact and full) and get what was remembered; a missing
// key ends the process with the API's message. Then `mnemo serve` on the same data answers the
// same memory over streamable HTTP at /mcp.
func TestMCPStdio(t *testing.T) {
	requireLong(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "mnemo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	env := append(os.Environ(), "MNEMO_DATA_DIR="+filepath.Join(dir, "data"), "MNEMO_VECTOR=off", "MNEMO_LOG_LEVEL=warn",
		"MNEMO_API_KEYS=agent-key-1:agent:writer:acme")

	t.Run("missing key", func(t *testing.T) {
		cmd := exec.Command(bin, "mcp")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.Error(t, err)
		assert.Contains(t, string(out), "MNEMO_API_KEY: missing API key")
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(env, "MNEMO_API_KEY=agent-key-1")
	cmd.Stderr = os.Stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)

	tool := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %v", name, res.Content)
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(b, &out))
		return out
	}
	written := tool("remember", map[string]any{"type": "note", "content": "The staging cluster runs Kubernetes 1.31."})
	require.Equal(t, "approved", written["status"])
	found := tool("recall", map[string]any{"query": "kubernetes staging", "mode": "keyword"})
	results, _ := found["results"].([]any)
	require.NotEmpty(t, results)
	first, _ := results[0].(map[string]any)["memory"].(map[string]any)
	assert.Equal(t, written["id"], first["id"])
	assert.NotContains(t, results[0], "signals", "recall answers compact by default")
	full := tool("recall", map[string]any{"query": "kubernetes staging", "mode": "keyword", "detail": "full"})
	assert.Contains(t, full["results"].([]any)[0], "signals", "detail full is the HTTP answer")
	got := tool("get", map[string]any{"id": written["id"]})
	assert.Equal(t, written["id"], got["memory"].(map[string]any)["id"])

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get", Arguments: map[string]any{"id": "m-missing"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "m-missing")
	require.NoError(t, cs.Close())

	t.Run("serve /mcp", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		serve := exec.CommandContext(ctx, bin, "serve", "--listen", addr)
		serve.Env, serve.Stderr = env, os.Stderr
		require.NoError(t, serve.Start())
		defer func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() }()
		require.Eventually(t, func() bool {
			resp, err := http.Get("http://" + addr + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 30*time.Second, 50*time.Millisecond)
		hc := &http.Client{Transport: bearerKey("agent-key-1")}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
		require.NoError(t, err)
		defer cs.Close()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get", Arguments: map[string]any{"id": written["id"]}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "Kubernetes 1.31")
	})
}

// bearerKey sends Authorization: Bearer KEY with every request.
type bearerKey string

func (k bearerKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(k))
	return http.DefaultTransport.RoundTrip(r)
}
