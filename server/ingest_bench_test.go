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
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/vector/embed/embedtest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// BenchmarkIngestHTTP measures writes over HTTP on the embedded store
// (SQLite, the HNSW index in vector/local, the real embedder when ONNX
// Runtime and the model are installed; issue 15 item 5's target: batch
// ingest over HTTP >= 300 notes/s): one op is one request, either POST
// /v1/memories:batch with 100 short notes (batch=100, one client) or POST
// /v1/memories with one note (batch=1, 8 concurrent clients). Each
// reports notes_per_s (notes written per wall-clock second), the
// request's p50/p95/p99 in milliseconds and cpu_ms per note. Every note
// is distinct, so every item is a new memory through the whole write
// path (classification, extraction, canonical key, gate, graph write,
// embedding, vector upsert).
func BenchmarkIngestHTTP(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	emb := embedtest.ONNX(b, filepath.Join("..", ".cache", "mnemo"))
	for _, c := range []struct {
		batch, clients int
	}{{100, 1}, {1, 8}} {
		b.Run(fmt.Sprintf("batch=%d/clients=%d/vectors=%t", c.batch, c.clients, emb != nil), func(b *testing.B) {
			ctx := context.Background()
			store, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
			require.NoError(b, err)
			defer store.Close()
			pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
			require.NoError(b, err)
			holder, err := policy.NewHolder(pol)
			require.NoError(b, err)
			opts := engine.Options{Store: store, Policy: holder}
			if emb != nil {
				idx, err := local.Open(b.TempDir(), local.Options{Dimensions: emb.Dimensions()})
				require.NoError(b, err)
				defer idx.Close()
				opts.Index, opts.Embedder = idx, emb
			}
			eng, err := engine.New(opts)
			require.NoError(b, err)
			srv, err := server.New(server.Options{Engine: eng, Keys: map[string]graph.Principal{
				"k": {ID: "bench", Roles: []string{"writer"}, Scope: graph.Scope{TenantID: "bench"}}}})
			require.NoError(b, err)
			hs := httptest.NewServer(srv)
			defer hs.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			path := "/v1/memories"
			if c.batch > 1 {
				path = "/v1/memories:batch"
			}
			var (
				mu      sync.Mutex
				lat     []time.Duration
				seq     atomic.Int64
				written atomic.Int64
			)
			post := func(i int64) (time.Duration, error) {
				notes := httpNotes(uint64(i), c.batch)
				var body []byte
				if c.batch > 1 {
					body, _ = json.Marshal(map[string]any{"items": notes})
				} else {
					body, _ = json.Marshal(notes[0])
				}
				req, _ := http.NewRequest("POST", hs.URL+path, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer k")
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					return 0, err
				}
				defer resp.Body.Close()
				var out struct {
					Results []struct {
						Status string `json:"status"`
					} `json:"results"`
					Status string `json:"status"`
				}
				err = json.NewDecoder(resp.Body).Decode(&out)
				took := time.Since(start)
				if err != nil || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated) {
					return 0, fmt.Errorf("status %d: %v", resp.StatusCode, err)
				}
				n := len(out.Results)
				if c.batch == 1 && out.Status != "" {
					n = 1
				}
				written.Add(int64(n))
				return took, nil
			}
			cpu0 := stats.CPUTime()
			b.SetParallelism(max(1, c.clients/max(1, testingProcs())))
			b.ResetTimer()
			began := time.Now()
			if c.clients == 1 {
				for i := 0; b.Loop(); i++ {
					took, err := post(int64(i))
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, took)
				}
			} else {
				b.RunParallel(func(pb *testing.PB) {
					var mine []time.Duration
					for pb.Next() {
						took, err := post(seq.Add(1))
						if err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, took)
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
			}
			b.StopTimer()
			elapsed, cpu := time.Since(began), stats.CPUTime()-cpu0
			if written.Load() == 0 {
				b.Fatal("nothing written: nothing measured")
			}
			stats.Report(b, lat)
			b.ReportMetric(float64(written.Load())/elapsed.Seconds(), "notes_per_s")
			b.ReportMetric(stats.Milliseconds(cpu)/float64(written.Load()), "cpu_ms/note")
		})
	}
}

// httpNotes generates n short distinct notes from seed (each request its
// own seed), with varied subjects so their canonical keys differ.
func httpNotes(seed uint64, n int) []map[string]string {
	r := rand.New(rand.NewPCG(seed, 7))
	tools := []string{"PostgreSQL", "Kubernetes", "Docker", "Neo4j", "Qdrant", "SQLite", "Go", "Python"}
	verbs := []string{"listens on port %d", "keeps backups for %d days", "runs %d replicas", "times out after %d seconds", "uses %d workers"}
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"type": "note", "content": fmt.Sprintf("The svc%d-%d service on %s %s.", seed, i,
			tools[r.IntN(len(tools))], fmt.Sprintf(verbs[r.IntN(len(verbs))], 1+r.IntN(9000)))}
	}
	return out
}
