package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeMetricsListener: with --metrics-addr and --pprof, /metrics and
// /debug/pprof answer on the metrics listener without a key; the API
// listener serves no pprof and /metrics only to an admin key; both stop
// with the server.
func TestServeMetricsListener(t *testing.T) {
	api, mx := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, []string{"--listen", api, "--metrics-addr", mx, "--pprof", "--vector", "off",
			"--data-dir", t.TempDir(), "--api-keys", "admin-secret-key:ops:admin:acme,reader-secret-key:bob:reader:acme"},
			io.Discard, io.Discard)
	}()
	get := func(url, key string) int {
		req, err := http.NewRequest("GET", url, nil)
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	require.Eventually(t, func() bool { return get("http://"+api+"/healthz", "") == http.StatusOK }, 20*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { return get("http://"+mx+"/metrics", "") == http.StatusOK }, 5*time.Second, 50*time.Millisecond)
	for _, tc := range []struct {
		name, url, key string
		want           int
	}{
		{"metrics listener, no key", "http://" + mx + "/metrics", "", http.StatusOK},
		{"pprof on the metrics listener", "http://" + mx + "/debug/pprof/", "", http.StatusOK},
		{"no pprof on the API", "http://" + api + "/debug/pprof/", "admin-secret-key", http.StatusNotFound},
		{"API metrics without a key", "http://" + api + "/metrics", "", http.StatusUnauthorized},
		{"API metrics to a reader", "http://" + api + "/metrics", "reader-secret-key", http.StatusForbidden},
		{"API metrics to an admin", "http://" + api + "/metrics", "admin-secret-key", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, get(tc.url, tc.key)) })
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("mnemo serve did not stop")
	}
	assert.Zero(t, get("http://"+mx+"/metrics", ""), "the metrics listener closed")
}
