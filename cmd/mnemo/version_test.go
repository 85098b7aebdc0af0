package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"version"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "mnemo "+version+"\n")
	assert.Contains(t, out.String(), "go        go1.")
}

// TestHealth probes servers answering 200 and 503: the container health
// check passes on the first and fails, naming the status, on the second.
func TestHealth(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
	}{
		{"up", http.StatusOK, `{"status":"ok"}`, true},
		{"degraded", http.StatusServiceUnavailable, `{"status":"degraded","checks":{"graph":"down: closed"}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				assert.Equal(t, "/healthz", r.URL.Path)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			var out, errOut bytes.Buffer
			code := run(context.Background(), []string{"health", "--url", srv.URL + "/healthz"}, &out, &errOut)
			if tc.ok {
				assert.Equal(t, 0, code, errOut.String())
				assert.Contains(t, out.String(), tc.body)
				return
			}
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut.String(), "503")
			assert.Contains(t, errOut.String(), "down: closed")
		})
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"health", "--url", "http://127.0.0.1:1/healthz", "--timeout", "1s"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "connection refused")
}

// TestVersionImageBuild builds the binary as the Dockerfile does (no VCS
// at hand: -buildvcs=false, the version and revision as -X flags) and
// checks that `mnemo version` names both (without -trimpath, which would
// rebuild every package rather than reuse the build cache).
func TestVersionImageBuild(t *testing.T) {
	requireLong(t)
	bin := filepath.Join(t.TempDir(), "mnemo")
	build := exec.Command("go", "build", "-buildvcs=false",
		"-ldflags", "-X main.version=v9.9.9 -X main.revision=0123abc", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	out, err := exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "mnemo v9.9.9\n")
	assert.Contains(t, string(out), "  revision  0123abc\n")
}
