package local_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/indextest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// Benchmarks use seeded 384-d unit vectors (the size of bge-small-en-v1.5),
// either clustered like sentence embeddings or uniform on the sphere.
//
//	go test ./vector/local -run '^$' -bench 'Search/clustered/n=100k' -benchtime 2000x -count 3 -timeout 60m
//
// Each leaf reports p50_ms, p95_ms and p99_ms per search (k=10, tenant filter over
// 90% of the points), R@10 against exact search over 100 queries, and
// build-s, the time to upsert the whole set in batches of 1000 (fsync per
// batch, graph included).

const benchDim = 384

var benchSizes = []struct {
	name string
	n    int
}{{"n=2k", 2000}, {"n=5k", 5000}, {"n=10k", 10000}, {"n=20k", 20000}, {"n=50k", 50000}, {"n=100k", 100000}, {"n=1M", 1000000}}

// BenchmarkSearch measures the default configuration (graph past the
// threshold) and, beside it, a forced exact scan (the graph never built), so
// that the threshold can be read off the crossover.
func BenchmarkSearch(b *testing.B) {
	for _, kind := range []struct {
		name     string
		clusters int
	}{{"clustered", 1000}, {"uniform", 0}} {
		b.Run(kind.name, func(b *testing.B) {
			for _, size := range benchSizes {
				b.Run(size.name, func(b *testing.B) {
					d := indextest.NewDataset(size.n, 100, benchDim, kind.clusters, 7)
					for _, mode := range []struct {
						name      string
						threshold int
					}{{"graph", 1}, {"exact", size.n + 1}} {
						b.Run(mode.name, func(b *testing.B) {
							benchSearch(b, d, local.Options{Dimensions: benchDim, ExactThreshold: mode.threshold})
						})
					}
				})
			}
		})
	}
}

func benchSearch(b *testing.B, d indextest.Dataset, opts local.Options) {
	idx, err := local.Open(b.TempDir(), opts)
	require.NoError(b, err)
	defer idx.Close()
	start := time.Now()
	d.Load(b, idx)
	build := time.Since(start)
	d.Bench(b, idx, vector.Filter{TenantID: "acme", AllUsers: true, Subscopes: true})
	b.ReportMetric(build.Seconds(), "build-s")
	st := idx.Stats()
	if st.Fallbacks > 0 {
		b.Logf("stats: %s", fmt.Sprintf("%+v", st))
	}
}
