package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
)

// defaultHolder is the default policy, for a test's engine.
func defaultHolder(tb testing.TB) *policy.Holder {
	tb.Helper()
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(tb, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(tb, err)
	return holder
}

// TestMountPrincipal: Mount checks the key once and hands the principal it
// names to the mounted handler in the request's context (how /mcp and /a2a
// learn their caller); a missing or unknown key never reaches the handler,
// and RequirePrincipal refuses a request that did not come through Mount.
func TestMountPrincipal(t *testing.T) {
	gin.SetMode(gin.TestMode)
	holder := defaultHolder(t)
	eng, err := engine.New(engine.Options{Store: graphtest.Open(t), Policy: holder})
	require.NoError(t, err)
	alice := graph.Principal{ID: "alice", Roles: []string{"reader"}, Scope: graph.Scope{TenantID: "t1"}}
	srv, err := server.New(server.Options{Engine: eng, Keys: map[string]graph.Principal{"alice-key-1": alice}})
	require.NoError(t, err)
	calls := 0
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		p, ok := server.PrincipalFrom(r.Context())
		if !ok {
			http.Error(w, "no principal", http.StatusTeapot)
			return
		}
		_, _ = io.WriteString(w, p.ID+"@"+p.Scope.TenantID)
	})
	srv.Mount("/proto", server.RequirePrincipal(echo))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	for _, tc := range []struct {
		name, header, value, path string
		status                    int
		body                      string
	}{
		{"bearer", "Authorization", "Bearer alice-key-1", "/proto", http.StatusOK, "alice@t1"},
		{"x-api-key beneath the path", "X-API-Key", "alice-key-1", "/proto/sub", http.StatusOK, "alice@t1"},
		{"unknown key", "Authorization", "Bearer nobody-key", "/proto", http.StatusUnauthorized, "unknown API key"},
		{"no key", "", "", "/proto", http.StatusUnauthorized, "missing API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls
			req, err := http.NewRequest("POST", hs.URL+tc.path, nil)
			require.NoError(t, err)
			if tc.header != "" {
				req.Header.Set(tc.header, tc.value)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Contains(t, string(body), tc.body)
			if tc.status != http.StatusOK {
				assert.Equal(t, before, calls, "an unauthenticated request reached the mounted handler")
			}
		})
	}

	rec := httptest.NewRecorder()
	server.RequirePrincipal(echo).ServeHTTP(rec, httptest.NewRequest("POST", "/proto", nil))
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "served outside Mount")
	assert.JSONEq(t, `{"error":{"code":"unauthenticated","message":"missing API key (Authorization: Bearer KEY)","field":""}}`, rec.Body.String())
}
