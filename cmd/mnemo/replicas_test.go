package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
)

// TestReplicasTwoProcesses: two `mnemo serve` processes on one Neo4j, as
// replicas behind a load balancer (docs/scale.md): writers racing on one
// canonical key across both make one active memory; a policy reload on
// one reaches the other (the policy mark, within the 5 s poll); a context
// read on one verifies on the other. Without a Neo4j it skips, or fails
// under MNEMO_REQUIRE_NEO4J=1 (neo4jtest).
func TestReplicasTwoProcesses(t *testing.T) {
	cfg := neo4jtest.Config(t)
	wiped := neo4jtest.Open(t, cfg) // wipes the database and holds it for this test binary
	require.NoError(t, wiped.Close())

	work := t.TempDir()
	bin := filepath.Join(work, "mnemo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run(), "build mnemo")
	policyFile := filepath.Join(work, "policy.yaml")
	require.NoError(t, os.WriteFile(policyFile, config.DefaultPolicy(), 0o600))

	const (
		writerKey    = "replica-writer-key"
		adminKey     = "replica-admin-key"
		archivistKey = "replica-archivist-key"
	)
	keys := strings.Join([]string{
		writerKey + ":w1:writer|reader:acme:u1",
		adminKey + ":ops:admin|operator:acme",
		archivistKey + ":ar:archivist:acme",
	}, ",")
	start := func(name string) string {
		addr := freeAddr(t)
		logf, err := os.Create(filepath.Join(work, name+".log"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = logf.Close() })
		cmd := exec.Command(bin, "serve", "--listen", addr, "--store", "neo4j", "--neo4j-uri", cfg.URI,
			"--vector", "off", "--policy", policyFile, "--data-dir", filepath.Join(work, name))
		cmd.Env = append(os.Environ(), "MNEMO_API_KEYS="+keys, "NEO4J_USERNAME="+cfg.Username, "NEO4J_PASSWORD="+cfg.Password)
		cmd.Stdout, cmd.Stderr = logf, logf
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		base := "http://" + addr
		require.Eventually(t, func() bool {
			resp, err := http.Get(base + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 2*time.Minute, 100*time.Millisecond, "%s did not come up (log %s)", name, logf.Name())
		return base
	}
	a, b := start("a"), start("b")
	client := &http.Client{Timeout: time.Minute}
	do := func(base, key, method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, base+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if len(raw) > 0 {
			require.NoError(t, json.Unmarshal(raw, &out), "%s %s: %s", method, path, raw)
		}
		return resp.StatusCode, out
	}

	t.Run("racing writes of one key on both make one memory", func(t *testing.T) {
		const writers = 8
		codes := make([]int, writers)
		results := make([]map[string]any, writers)
		var wg sync.WaitGroup
		for i := range writers {
			base := a
			if i%2 == 1 {
				base = b
			}
			wg.Go(func() {
				codes[i], results[i] = do(base, writerKey, http.MethodPost, "/v1/memories",
					map[string]any{"type": "note", "content": fmt.Sprintf("The API server listens on port %d.", 8000+i%4)})
			})
		}
		wg.Wait()
		key := ""
		for i := range writers {
			require.Less(t, codes[i], 300, "write %d: %d %v", i, codes[i], results[i])
			k, _ := results[i]["canonical_key"].(string)
			if key == "" {
				key = k
			}
			require.Equal(t, key, k, "one fact, one key")
		}
		code, list := do(a, writerKey, http.MethodGet, "/v1/memories?limit=100", nil)
		require.Equal(t, http.StatusOK, code)
		mems, _ := list["memories"].([]any)
		active := 0
		for _, m := range mems {
			m, _ := m.(map[string]any)
			if m["canonical_key"] == key && m["status"] == "active" {
				active++
			}
		}
		assert.Equal(t, 1, active, "exactly one active memory for %q", key)
	})

	t.Run("a policy reload on one reaches the other", func(t *testing.T) {
		code, _ := do(b, archivistKey, http.MethodGet, "/v1/memories", nil)
		require.Equal(t, http.StatusForbidden, code, "no archivist role yet")
		doc := strings.Replace(string(config.DefaultPolicy()), "\nroles:\n", "\nroles:\n  archivist: [read]\n", 1)
		require.NoError(t, os.WriteFile(policyFile, []byte(doc), 0o600))
		code, body := do(a, adminKey, http.MethodPost, "/v1/admin/policy/reload", nil)
		require.Equal(t, http.StatusOK, code, "%v", body)
		code, _ = do(a, archivistKey, http.MethodGet, "/v1/memories", nil)
		require.Equal(t, http.StatusOK, code, "the reloading replica has the role")
		require.Eventually(t, func() bool {
			code, _ := do(b, archivistKey, http.MethodGet, "/v1/memories", nil)
			return code == http.StatusOK
		}, 30*time.Second, 200*time.Millisecond, "the other replica follows the reload")
	})

	t.Run("a context read on one verifies on the other", func(t *testing.T) {
		code, w := do(a, writerKey, http.MethodPost, "/v1/memories", map[string]any{"type": "note", "content": "The kiln fires at 1200 degrees on Tuesdays."})
		require.Less(t, code, 300, "%v", w)
		code, c := do(a, writerKey, http.MethodPost, "/v1/context", map[string]any{"element_id": w["id"]})
		require.Equal(t, http.StatusOK, code, "%v", c)
		items, _ := c["items"].([]any)
		require.NotEmpty(t, items)
		cites := items[0].(map[string]any)["citations"]
		code, v := do(b, writerKey, http.MethodPost, "/v1/citations/verify", map[string]any{"context_id": c["context_id"], "citations": cites})
		require.Equal(t, http.StatusOK, code, "%v", v)
		assert.Equal(t, true, v["valid"], "%v", v)
	})
}
