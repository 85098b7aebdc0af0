package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mnemo-dev/mnemo/engine"
)

// TestTracingSpans: with a tracer provider installed, ingest (single and
// batch) and search each open a span with their steps beneath it, carrying
// counts, modes and outcomes and never the content, ids or principal; a
// failed call's span is an error with the failure's class.
func TestTracingSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev); _ = tp.Shutdown(context.Background()) })

	f := newIngFixture(t, ingOpts{})
	ctx := t.Context()
	secret := "The vault combination is 31-17-42."
	one, err := f.eng.Ingest(ctx, f.as("writer"), engine.IngestRequest{Type: "note", Content: secret})
	require.NoError(t, err)
	_, err = f.eng.IngestBatch(ctx, f.as("writer"), []engine.IngestRequest{
		{Type: "note", Content: "The staging cluster deploys nightly."}, {Type: "note", Content: "Backups run at 02:00."}})
	require.NoError(t, err)
	_, err = f.eng.Search(ctx, f.as("writer"), engine.SearchRequest{Query: "vault combination", Mode: "keyword"})
	require.NoError(t, err)
	_, err = f.eng.Search(ctx, f.as("reader"), engine.SearchRequest{Query: "x", Mode: "sideways"})
	require.Error(t, err)

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
		for _, kv := range s.Attributes() {
			v := kv.Value.String()
			assert.NotContains(t, v, "vault", "span %s attribute %s carries content", s.Name(), kv.Key)
			assert.NotContains(t, v, one.ID, "span %s attribute %s carries an id", s.Name(), kv.Key)
			assert.False(t, strings.Contains(v, f.as("writer").ID) && v != "", "span %s attribute %s carries the principal", s.Name(), kv.Key)
		}
	}
	require.Len(t, byName["mnemo.ingest"], 2)
	require.Len(t, byName["mnemo.search"], 2)
	for _, step := range []string{"mnemo.ingest.prepare", "mnemo.ingest.write", "mnemo.ingest.index"} {
		require.Len(t, byName[step], 2, step)
		assert.Equal(t, byName["mnemo.ingest"][0].SpanContext().TraceID(), byName[step][0].SpanContext().TraceID(), "%s is under mnemo.ingest", step)
		assert.Equal(t, byName["mnemo.ingest"][0].SpanContext().SpanID(), byName[step][0].Parent().SpanID(), "%s is under mnemo.ingest", step)
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, kv := range s.Attributes() {
			m[string(kv.Key)] = kv.Value.String()
		}
		return m
	}
	batch := attrs(byName["mnemo.ingest"][1])
	assert.Equal(t, "2", batch["mnemo.items"])
	assert.Equal(t, "true", batch["mnemo.batch"])
	assert.Equal(t, "2", batch["mnemo.ingest.approved"])
	found := attrs(byName["mnemo.search"][0])
	assert.Equal(t, "keyword", found["mnemo.mode"])
	assert.Equal(t, "1", found["mnemo.results"])
	require.Len(t, byName["mnemo.search.rank"], 1, "a refused search ranks nothing")
	failed := byName["mnemo.search"][1]
	assert.Equal(t, "Error", failed.Status().Code.String())
	assert.Equal(t, "invalid", failed.Status().Description)
}
