package server_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// TestTimeTravelHTTP reads get, search and context over HTTP as known at an
// instant before a late correction, and as of a valid time; bad as_of and
// known_at values are 400 naming the field.
func TestTimeTravelHTTP(t *testing.T) {
	a := newAccessAPI(t, accessKeys)
	ctx := context.Background()
	var old, correction engine.IngestResult
	code, err := a.call(ctx, "alice-key-1", "POST", "/v1/memories", map[string]any{"type": "note",
		"title": "quarn harbour fee", "content": "The quarn harbour fee is ten crowns."}, &old)
	require.Equal(t, 201, code, "%v", err)
	time.Sleep(3 * time.Millisecond)
	k1 := time.Now().UTC()
	time.Sleep(3 * time.Millisecond)
	code, err = a.call(ctx, "alice-key-1", "POST", "/v1/memories", map[string]any{"type": "note",
		"title": "quarn harbour fee", "content": "The quarn harbour fee is twelve crowns.", "supersedes": old.ID}, &correction)
	require.Equal(t, 201, code, "%v", err)
	known := k1.Format(time.RFC3339Nano)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)

	t.Run("Get", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			query  url.Values
			status graph.Status
			head   string
		}{
			{"KnownBeforeTheCorrection", url.Values{"known_at": {known}}, graph.StatusActive, ""},
			{"Now", nil, graph.StatusSuperseded, correction.ID},
		} {
			t.Run(c.name, func(t *testing.T) {
				var v engine.MemoryView
				code, err := a.call(ctx, "alice-key-1", "GET", "/v1/memories/"+old.ID+"?"+c.query.Encode(), nil, &v)
				require.Equal(t, 200, code, "%v", err)
				assert.Equal(t, c.status, v.Memory.Status)
				assert.Equal(t, c.head, v.HeadID)
				assert.Contains(t, v.Content, "ten crowns")
			})
		}
		code, _ := a.call(ctx, "alice-key-1", "GET", "/v1/memories/"+correction.ID+"?known_at="+url.QueryEscape(known), nil, nil)
		assert.Equal(t, 404, code, "a memory written after known_at does not exist then")
	})

	t.Run("SearchAndContext", func(t *testing.T) {
		for _, c := range []struct {
			name string
			body map[string]any
			want string
		}{
			{"KnownBeforeTheCorrection", map[string]any{"known_at": known}, old.ID},
			{"Now", map[string]any{}, correction.ID},
			{"ValidNow", map[string]any{"as_of": time.Now().UTC().Format("2006-01-02")}, correction.ID},
		} {
			t.Run(c.name, func(t *testing.T) {
				body := map[string]any{"query": "quarn harbour fee crowns", "mode": "keyword"}
				for k, v := range c.body {
					body[k] = v
				}
				var sr engine.SearchResponse
				code, err := a.call(ctx, "alice-key-1", "POST", "/v1/search", body, &sr)
				require.Equal(t, 200, code, "%v", err)
				require.NotEmpty(t, sr.Results)
				assert.Equal(t, c.want, sr.Results[0].Memory.ID)
				for _, r := range sr.Results {
					assert.NotEqual(t, map[string]string{old.ID: correction.ID, correction.ID: old.ID}[c.want], r.Memory.ID)
				}
				delete(body, "mode")
				var cr engine.ContextResponse
				code, err = a.call(ctx, "alice-key-1", "POST", "/v1/context", body, &cr)
				require.Equal(t, 200, code, "%v", err)
				require.NotEmpty(t, cr.Items)
				assert.Equal(t, c.want, cr.Items[0].ElementID)
			})
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		for _, c := range []struct {
			name, method, path string
			body               map[string]any
			field              string
		}{
			{"SearchAsOfNotATime", "POST", "/v1/search", map[string]any{"query": "fee", "as_of": "yesterday"}, "as_of"},
			{"SearchKnownAtFuture", "POST", "/v1/search", map[string]any{"query": "fee", "known_at": future}, "known_at"},
			{"SearchVectorModeKnownAt", "POST", "/v1/search", map[string]any{"query": "fee", "mode": "vector", "known_at": known}, "known_at"},
			{"SearchAsOfWithIncludeExpired", "POST", "/v1/search", map[string]any{"query": "fee", "as_of": known, "include_expired": true}, "as_of"},
			{"ContextKnownAtNotATime", "POST", "/v1/context", map[string]any{"query": "fee", "known_at": "soon"}, "known_at"},
			{"GetKnownAtNotATime", "GET", "/v1/memories/" + old.ID + "?known_at=soon", nil, "known_at"},
			{"GetKnownAtFuture", "GET", "/v1/memories/" + old.ID + "?known_at=" + url.QueryEscape(future), nil, "known_at"},
		} {
			t.Run(c.name, func(t *testing.T) {
				var body any
				if c.body != nil {
					body = c.body
				}
				code, err := a.call(ctx, "alice-key-1", c.method, c.path, body, nil)
				assert.Equal(t, 400, code)
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"field":"`+c.field+`"`)
			})
		}
	})
}
