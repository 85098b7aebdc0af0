package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
)

// BenchmarkSearchHTTP measures POST /v1/search under 8 concurrent clients
// on a 10k-memory synthetic corpus in SQLite (graph + keyword; the vector
// path is measured by engine's BenchmarkSearch), reporting p50/p95/p99 in
// milliseconds.
func BenchmarkSearchHTTP(b *testing.B) {
	gin.SetMode(gin.ReleaseMode) // no debug lines in the benchmark output
	ctx := context.Background()
	store, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
	require.NoError(b, err)
	defer store.Close()
	scope := graph.Scope{TenantID: "bench"}
	corpus := storetest.Corpus(scope, 42, 10_000)
	for i := 0; i < len(corpus.Inputs); i += 1000 {
		_, err := store.CreateMemories(ctx, corpus.Inputs[i:min(i+1000, len(corpus.Inputs))])
		require.NoError(b, err)
	}
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(b, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(b, err)
	eng, err := engine.New(engine.Options{Store: store, Policy: holder})
	require.NoError(b, err)
	srv, err := server.New(server.Options{Engine: eng, Keys: map[string]graph.Principal{
		// The corpus is private to 20 users: the searcher reads all of them
		// (admin holds read_all_users), so no search times an empty answer.
		"k": {ID: "bench", Roles: []string{"admin"}, Scope: scope}}})
	require.NoError(b, err)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ents, words := corpus.EntityQueries(200), corpus.KeywordQueries(200)
	bodies := make([][]byte, len(ents))
	for i := range ents {
		bodies[i], _ = json.Marshal(map[string]any{"query": "what about " + strings.Join(ents[i], " and ") + " " + words[i]})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var (
		mu    sync.Mutex
		lat   []time.Duration
		seq   atomic.Int64
		found atomic.Int64
	)
	b.SetParallelism(max(1, 8/max(1, testingProcs())))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			body := bodies[int(seq.Add(1))%len(bodies)]
			req, _ := http.NewRequest("POST", hs.URL+"/v1/search", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer k")
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			var out struct {
				Results []json.RawMessage `json:"results"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if len(out.Results) > 0 {
				found.Add(1)
			}
			mine = append(mine, time.Since(start))
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	if found.Load() == 0 {
		b.Fatal("no search found anything: the benchmark would time empty answers")
	}
	stats.Report(b, lat)
}

// testingProcs is GOMAXPROCS: RunParallel starts parallelism × GOMAXPROCS
// goroutines, so 8 clients need parallelism 8 / GOMAXPROCS.
func testingProcs() int { return runtime.GOMAXPROCS(0) }
