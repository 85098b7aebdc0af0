package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
)

// TestStartTracing: off without an OTLP endpoint; with one, a span ends up
// at the collector's /v1/traces when tracing stops (an httptest server
// standing in for the collector, reading what the real exporter sends).
func TestStartTracing(t *testing.T) {
	prev := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	stop, on, err := startTracing(t.Context())
	require.NoError(t, err)
	assert.False(t, on)
	require.NoError(t, stop(t.Context()))

	type post struct{ path, body string }
	got := make(chan post, 8)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- post{r.URL.Path, string(body)}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(collector.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	stop, on, err = startTracing(t.Context())
	require.NoError(t, err)
	require.True(t, on)
	_, span := otel.Tracer("test").Start(context.Background(), "mnemo.search")
	span.End()
	require.NoError(t, stop(t.Context()))
	select {
	case p := <-got:
		assert.Equal(t, "/v1/traces", p.path)
		assert.True(t, strings.Contains(p.body, "mnemo.search"), "the span's name is in the export")
		assert.True(t, strings.Contains(p.body, "mnemo"), "the service's name is in the export")
	default:
		t.Fatal("nothing reached the collector")
	}
}
