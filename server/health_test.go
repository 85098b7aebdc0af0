package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// switchEmbedder embeds every text as the same unit vector, or fails while
// down is set: /healthz is under test, not the vectors.
type switchEmbedder struct{ down atomic.Bool }

func (e *switchEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.down.Load() {
		return nil, errors.New("model not loaded")
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, 8)
		out[i][0] = 1
	}
	return out, nil
}
func (e *switchEmbedder) Dimensions() int { return 8 }
func (e *switchEmbedder) ModelID() string { return "test/unit" }

// TestHealthz: /healthz reports the graph store, the vector index and the
// embedder, each on its own, and answers 503 when any is down.
func TestHealthz(t *testing.T) {
	gin.SetMode(gin.TestMode)
	st := graphtest.Open(t)
	holder := defaultHolder(t)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: 8})
	require.NoError(t, err)
	emb := &switchEmbedder{}
	eng, err := engine.New(engine.Options{Store: st, Policy: holder, Index: idx, Embedder: emb})
	require.NoError(t, err)
	srv, err := server.New(server.Options{Engine: eng, Health: map[string]server.HealthCheck{"graph": st.Health}})
	require.NoError(t, err)
	hs := httptest.NewServer(conform(t, srv))
	t.Cleanup(hs.Close)

	get := func(t *testing.T) (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(hs.URL + "/healthz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	for _, tc := range []struct {
		name       string
		setup      func()
		wantStatus int
		wantChecks map[string]any
	}{
		{"all up", func() {}, http.StatusOK,
			map[string]any{"graph": "ok", "vector_index": "ok", "embedder": "ok"}},
		{"embedder down", func() { emb.down.Store(true) }, http.StatusServiceUnavailable,
			map[string]any{"graph": "ok", "vector_index": "ok", "embedder": "down: embed: model not loaded"}},
		{"index closed too", func() { require.NoError(t, idx.Close()) }, http.StatusServiceUnavailable,
			map[string]any{"graph": "ok", "vector_index": "down: count points: vector index closed", "embedder": "down: embed: model not loaded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			code, body := get(t)
			assert.Equal(t, tc.wantStatus, code)
			assert.Equal(t, tc.wantChecks, body["checks"])
		})
	}
}
