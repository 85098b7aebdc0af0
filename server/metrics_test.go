package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/server/metrics"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// metricsAPI is a real server on a real store and vector index, with
// metrics wired as cmd/mnemo wires them.
type metricsAPI struct {
	url string
	eng *engine.Engine
}

func newMetricsAPI(t *testing.T) *metricsAPI {
	t.Helper()
	gin.SetMode(gin.TestMode)
	st := graphtest.Open(t)
	holder := defaultHolder(t)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: 8})
	require.NoError(t, err)
	t.Cleanup(func() { idx.Close() })
	var eng *engine.Engine
	m := metrics.New(metrics.Options{Stats: func(ctx context.Context) (engine.Stats, error) { return eng.Stats(ctx) },
		StatsTTL: 1, StatsWait: time.Minute}) // fresh figures on every scrape: the values are under test here, the bound in server/metrics
	eng, err = engine.New(engine.Options{Store: st, Policy: holder, Index: idx, Embedder: &switchEmbedder{}, Observer: m})
	require.NoError(t, err)
	keys := map[string]graph.Principal{}
	for _, role := range []string{"reader", "writer", "admin"} {
		keys[role+"-key"] = graph.Principal{ID: role, Roles: []string{role}, Scope: graph.Scope{TenantID: "t1"}}
	}
	srv, err := server.New(server.Options{Engine: eng, Keys: keys, Metrics: m})
	require.NoError(t, err)
	hs := httptest.NewServer(conform(t, srv))
	t.Cleanup(hs.Close)
	return &metricsAPI{url: hs.URL, eng: eng}
}

func (a *metricsAPI) do(t *testing.T, method, path, key string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.url+path, r)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// scrape reads /metrics as the admin and parses it.
func (a *metricsAPI) scrape(t *testing.T) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	code, body := a.do(t, "GET", "/metrics", "admin-key", nil)
	require.Equal(t, http.StatusOK, code, string(body))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	return fams, string(body)
}

// value is the value of the series of family name with exactly labels
// among its labels (a histogram's sample count), or -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics: after ingests, searches and reads, /metrics shows request
// latency per route pattern and status, ingest and search counters by mode
// and outcome, embedder time and the store gauges; no raw id appears; the
// endpoint needs an admin key.
func TestMetrics(t *testing.T) {
	api := newMetricsAPI(t)
	var ids []string
	for _, c := range []string{"Alice moved to Lisbon in 2024.", "Bob prefers tea over coffee."} {
		code, body := api.do(t, "POST", "/v1/memories", "writer-key", map[string]any{"content": c, "type": "note"})
		require.Equal(t, http.StatusCreated, code, string(body))
		var res engine.IngestResult
		require.NoError(t, json.Unmarshal(body, &res))
		require.Equal(t, engine.StatusApproved, res.Status)
		ids = append(ids, res.ID)
	}
	code, body := api.do(t, "POST", "/v1/memories", "writer-key",
		map[string]any{"content": "Carol proposes a weekly sync.", "type": "note", "source_kind": "PROPOSED"})
	require.Equal(t, http.StatusAccepted, code, string(body))
	code, body = api.do(t, "POST", "/v1/memories", "writer-key", map[string]any{"content": ""})
	require.Equal(t, http.StatusBadRequest, code, string(body))
	for _, mode := range []string{"keyword", "keyword", "hybrid"} {
		code, body := api.do(t, "POST", "/v1/search", "writer-key", map[string]any{"query": "Lisbon Alice", "mode": mode})
		require.Equal(t, http.StatusOK, code, string(body))
	}
	code, _ = api.do(t, "POST", "/v1/search", "writer-key", map[string]any{"query": "x", "mode": "telepathy-" + ids[0]})
	require.Equal(t, http.StatusBadRequest, code)
	for _, id := range ids {
		code, body := api.do(t, "GET", "/v1/memories/"+id, "writer-key", nil)
		require.Equal(t, http.StatusOK, code, string(body))
	}
	code, _ = api.do(t, "GET", "/v1/memories/mem_missing_"+ids[0], "reader-key", nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = api.do(t, "GET", "/v1/nowhere/"+ids[1], "reader-key", nil)
	require.Equal(t, http.StatusNotFound, code)

	fams, text := api.scrape(t)
	const lat = "mnemo_http_request_duration_seconds"
	for _, tc := range []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"created", lat, map[string]string{"route": "/v1/memories", "method": "POST", "status": "201"}, 2},
		{"queued", lat, map[string]string{"route": "/v1/memories", "method": "POST", "status": "202"}, 1},
		{"refused", lat, map[string]string{"route": "/v1/memories", "method": "POST", "status": "400"}, 1},
		{"get by pattern", lat, map[string]string{"route": "/v1/memories/:id", "method": "GET", "status": "200"}, 2},
		{"get missing", lat, map[string]string{"route": "/v1/memories/:id", "method": "GET", "status": "404"}, 1},
		{"no route", lat, map[string]string{"route": metrics.Unmatched, "status": "404"}, 1},
		{"searches", lat, map[string]string{"route": "/v1/search", "status": "200"}, 3},
		{"ingest approved", "mnemo_ingest_items_total", map[string]string{"mode": "single", "outcome": "approved"}, 2},
		{"ingest pending", "mnemo_ingest_items_total", map[string]string{"mode": "single", "outcome": "pending"}, 1},
		{"ingest invalid", "mnemo_ingest_items_total", map[string]string{"mode": "single", "outcome": "invalid"}, 1},
		{"keyword hits", "mnemo_searches_total", map[string]string{"mode": "keyword", "outcome": "hits"}, 2},
		{"hybrid hits", "mnemo_searches_total", map[string]string{"mode": "hybrid", "outcome": "hits"}, 1},
		{"bad mode", "mnemo_searches_total", map[string]string{"mode": "invalid", "outcome": "invalid"}, 1},
		{"active memories", "mnemo_memories", map[string]string{"status": "active"}, 2},
		{"gate queue", "mnemo_gate_pending_requests", nil, 1},
		{"vector points", "mnemo_vector_points", nil, 2},
		{"outbox pending", "mnemo_outbox_pending_items", nil, 2},
		{"dead letters", "mnemo_outbox_dead_letters", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, value(fams, tc.metric, tc.labels))
		})
	}
	assert.Positive(t, value(fams, "mnemo_embed_duration_seconds", map[string]string{"outcome": "ok"}), "embedder calls timed")
	assert.Positive(t, value(fams, "mnemo_embed_texts_total", nil))
	for _, id := range ids {
		assert.NotContains(t, text, id, "a raw id is a label value")
	}
	assert.NotContains(t, text, "telepathy")

	assert.Positive(t, value(fams, "mnemo_outbox_lag_seconds", nil), "undelivered items age")

	// The series move: one more search counts once more; a drained
	// outbox has no lag.
	code, _ = api.do(t, "POST", "/v1/search", "writer-key", map[string]any{"query": "Bob tea", "mode": "keyword"})
	require.Equal(t, http.StatusOK, code)
	_, err := api.eng.DrainOutbox(t.Context(), 100)
	require.NoError(t, err)
	fams, _ = api.scrape(t)
	assert.Equal(t, 3.0, value(fams, "mnemo_searches_total", map[string]string{"mode": "keyword", "outcome": "hits"}))
	assert.Equal(t, 0.0, value(fams, "mnemo_outbox_pending_items", nil))
	assert.Equal(t, 0.0, value(fams, "mnemo_outbox_lag_seconds", nil))

	t.Run("needs an admin key", func(t *testing.T) {
		code, _ := api.do(t, "GET", "/metrics", "", nil)
		assert.Equal(t, http.StatusUnauthorized, code)
		code, body := api.do(t, "GET", "/metrics", "reader-key", nil)
		assert.Equal(t, http.StatusForbidden, code)
		assert.False(t, strings.Contains(string(body), "mnemo_"), "no figures to a reader")
	})
}
