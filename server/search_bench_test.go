package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/embed"
	"github.com/mnemo-dev/mnemo/vector/embed/embedtest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// BenchmarkSearchHTTP measures POST /v1/search under 8 concurrent clients
// on a synthetic corpus (storetest.Corpus) in SQLite, 10k memories
// (MNEMO_BENCH_SIZES, comma-separated, overrides), under the default
// policy, reporting p50/p95/p99 in milliseconds and searches_per_s. With
// the ONNX embedder installed (MNEMO_ORT_LIB and MNEMO_MODEL_DIR, or
// ../.cache/mnemo) the search is the default hybrid one with vectors: each
// memory gets a seeded random vector in vector/local (embedding 100k texts
// would take longer than the benchmark) and every query is embedded by the
// real model; without it, graph + keyword.
func BenchmarkSearchHTTP(b *testing.B) {
	gin.SetMode(gin.ReleaseMode) // no debug lines in the benchmark output
	sizes, err := stats.Sizes(10_000)
	require.NoError(b, err)
	emb := embedtest.ONNX(b, filepath.Join("..", ".cache", "mnemo"))
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d/vectors=%t", n, emb != nil), func(b *testing.B) { benchSearchHTTP(b, n, emb) })
	}
}

func benchSearchHTTP(b *testing.B, n int, emb *embed.ONNX) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
	require.NoError(b, err)
	defer store.Close()
	scope := graph.Scope{TenantID: "bench"}
	corpus := storetest.Corpus(scope, 42, n)
	var created []graph.Created
	for i := 0; i < len(corpus.Inputs); i += 1000 {
		cs, err := store.CreateMemories(ctx, corpus.Inputs[i:min(i+1000, len(corpus.Inputs))])
		require.NoError(b, err)
		created = append(created, cs...)
	}
	// The first search would build the keyword index (about 1.4 s per 100k
	// memories); a server builds it at start (cmd/mnemo serve).
	require.NoError(b, store.WarmKeywordIndex(ctx))
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(b, err)
	opts := engine.Options{Store: store}
	if emb != nil {
		// Random vectors match no query: the default policy would abstain
		// on every search (after all the work measured here), and its
		// vector floor would cut every hit.
		embedtest.Uncalibrated(&pol.Retrieval)
		idx, err := local.Open(b.TempDir(), local.Options{Dimensions: emb.Dimensions()})
		require.NoError(b, err)
		defer idx.Close()
		r := rand.New(rand.NewPCG(42, 1))
		for i := 0; i < len(created); i += 1000 {
			part := created[i:min(i+1000, len(created))]
			pts := make([]vector.Point, len(part))
			for j, c := range part {
				v := make([]float32, emb.Dimensions())
				for k := range v {
					v[k] = float32(r.NormFloat64())
				}
				pts[j] = vector.Point{ID: c.Memory.ID, Vector: v, Payload: engine.VectorPayload(c.Memory, c.Version.ID)}
			}
			require.NoError(b, idx.Upsert(ctx, pts))
		}
		opts.Index, opts.Embedder = idx, emb
	}
	if opts.Policy, err = policy.NewHolder(pol); err != nil {
		b.Fatal(err)
	}
	eng, err := engine.New(opts)
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
	began := time.Now()
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
	elapsed := time.Since(began)
	if len(lat) == 0 {
		return
	}
	if found.Load() == 0 {
		b.Fatal("no search found anything: the benchmark would time empty answers")
	}
	stats.Report(b, lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "searches_per_s")
}

// testingProcs is GOMAXPROCS: RunParallel starts parallelism × GOMAXPROCS
// goroutines, so 8 clients need parallelism 8 / GOMAXPROCS.
func testingProcs() int { return runtime.GOMAXPROCS(0) }
