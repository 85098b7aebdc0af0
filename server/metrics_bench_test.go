package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/server"
	"github.com/mnemo-dev/mnemo/server/metrics"
)

// BenchmarkMetricsScrape measures GET /metrics (admin key, over HTTP) on a
// SQLite store of 10k and 100k synthetic memories (100k skipped with
// -short), reporting p50/p95 in milliseconds. "cached" is a scrape within
// the store figures' TTL; "cold" starts a store read on every scrape (TTL
// 1ns, what a Prometheus scrape every 15 s or more meets), waits for it at
// most the default StatsWait, and pauses untimed between scrapes so the
// read ends before the next one, as it does between scrapes 15 s apart
// (3 ms per 1k memories); "inline" waits for every read (StatsWait 10s),
// so it measures the store read itself. Run it with a fixed -benchtime
// (e.g. 40x): the untimed pause misleads the automatic one.
func BenchmarkMetricsScrape(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	for _, n := range []int{10_000, 100_000} {
		if n > 10_000 && testing.Short() {
			continue
		}
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			ctx := context.Background()
			store, err := sqlite.Open(ctx, b.TempDir(), sqlite.Options{})
			require.NoError(b, err)
			defer store.Close()
			scope := graph.Scope{TenantID: "bench"}
			corpus := storetest.Corpus(scope, 42, n)
			for i := 0; i < len(corpus.Inputs); i += 1000 {
				_, err := store.CreateMemories(ctx, corpus.Inputs[i:min(i+1000, len(corpus.Inputs))])
				require.NoError(b, err)
			}
			pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
			require.NoError(b, err)
			holder, err := policy.NewHolder(pol)
			require.NoError(b, err)
			for _, v := range []struct {
				name             string
				ttl, wait, pause time.Duration
			}{
				{"cached", time.Hour, 0, 0},
				{"cold", 1, 0, time.Duration(n/1000) * 3 * time.Millisecond},
				{"cold-nowait", 1, time.Nanosecond, time.Duration(n/1000) * 3 * time.Millisecond},
				{"inline", 1, 10 * time.Second, 0},
			} {
				b.Run(v.name, func(b *testing.B) {
					var eng *engine.Engine
					m := metrics.New(metrics.Options{StatsTTL: v.ttl, StatsWait: v.wait,
						Stats: func(ctx context.Context) (engine.Stats, error) { return eng.Stats(ctx) }})
					eng, err = engine.New(engine.Options{Store: store, Policy: holder, Observer: m})
					require.NoError(b, err)
					srv, err := server.New(server.Options{Engine: eng, Metrics: m, Keys: map[string]graph.Principal{
						"k": {ID: "ops", Roles: []string{"admin"}, Scope: scope}}})
					require.NoError(b, err)
					hs := httptest.NewServer(srv)
					defer hs.Close()
					scrape := func() {
						req, _ := http.NewRequest("GET", hs.URL+"/metrics", nil)
						req.Header.Set("Authorization", "Bearer k")
						resp, err := hs.Client().Do(req)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Fatalf("status %d", resp.StatusCode)
						}
					}
					scrape() // the first read, and the request series exist
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for range b.N {
						if v.pause > 0 {
							b.StopTimer()
							time.Sleep(v.pause)
							b.StartTimer()
						}
						start := time.Now()
						scrape()
						lat = append(lat, time.Since(start))
					}
					b.StopTimer()
					slices.Sort(lat)
					at := func(q float64) float64 {
						return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
					}
					b.ReportMetric(at(0.50), "p50-ms")
					b.ReportMetric(at(0.95), "p95-ms")
				})
			}
		})
	}
}
