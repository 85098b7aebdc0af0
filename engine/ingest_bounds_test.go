package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// TestIngestBounds: text over the limits is refused by name before any
// extraction, and a done context stops a batch; nothing is written.
func TestIngestBounds(t *testing.T) {
	f := newIngFixture(t, ingOpts{})
	ctx := ingCtx(t)
	w := f.as("writer")
	big := strings.Repeat("The cache keeps results. ", graph.MaxContentLen/25+1)
	tests := []struct {
		name  string
		req   engine.IngestRequest
		field string
	}{
		{"content over the limit", engine.IngestRequest{Type: "note", Content: big}, "content"},
		{"summary over the limit", engine.IngestRequest{Type: "note", Content: "x", Summary: big}, "summary"},
		{"title over the limit", engine.IngestRequest{Type: "note", Content: "x", Title: big[:graph.MaxTitleLen+1]}, "title"},
		{"too many tags", engine.IngestRequest{Type: "note", Content: "x", Tags: make([]string, graph.MaxTags+1)}, "tags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.eng.Ingest(ctx, w, tt.req)
			var fe *graph.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tt.field, fe.Field)
			_, err = f.eng.IngestBatch(ctx, w, []engine.IngestRequest{{Type: "note", Content: "Redis runs on cache-1."}, tt.req})
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, "items[1]."+tt.field, fe.Field)
		})
	}
	t.Run("the message names the limit", func(t *testing.T) {
		_, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: big})
		assert.ErrorContains(t, err, "1 MiB (1048576 bytes)")
	})
	t.Run("a done context stops the batch", func(t *testing.T) {
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err := f.eng.IngestBatch(done, w, []engine.IngestRequest{{Type: "note", Content: "Redis runs on cache-2."}})
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("a single write names no item", func(t *testing.T) {
		_, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: "x", Scope: &graph.Scope{TenantID: "other"}})
		require.ErrorIs(t, err, graph.ErrForbidden)
		assert.NotContains(t, err.Error(), "items[0]")
	})
	assert.Empty(t, f.memories(t))
}
