package local_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/indextest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// BenchmarkOpen measures a restart of the index at each size of
// MNEMO_BENCH_SIZES (default 10k and 100k): the index is written once with
// the default options (clustered 384-d points in batches of 1000, with
// memory and version ids as long as the engine's, fsync per batch), closed
// with whatever snapshot and log the writes left, then opened b.N times:
//
//	go test ./vector/local -run '^$' -bench Open -benchtime 3x -timeout 60m
//
// It reports first_open_s (the first open after the writes), open_s (the
// median of all b.N opens), and after the last open (and whatever
// checkpoint it started, which Stats waits for) heap_mib (Go heap in use
// after a GC), rss_mib (VmRSS) and rss_peak_mib (VmHWM since just before
// that open). The data set is freed before the opens.
func BenchmarkOpen(b *testing.B) {
	sizes, err := stats.Sizes(10_000, 100_000)
	require.NoError(b, err)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			opts := local.Options{Dimensions: benchDim}
			writeOpenBench(b, dir, opts, n)
			var opens []time.Duration
			var heap, rss, peak int64
			for range b.N {
				runtime.GC()
				debug.FreeOSMemory()
				if err := stats.ResetPeakRSS(); err != nil {
					b.Logf("reset peak RSS: %v", err)
				}
				began := time.Now()
				idx, err := local.Open(dir, opts)
				require.NoError(b, err)
				opens = append(opens, time.Since(began))
				st := idx.Stats()
				require.Equal(b, n, st.Points)
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = int64(ms.HeapInuse >> 20)
				rss, err = stats.RSSMiB("VmRSS")
				require.NoError(b, err)
				peak, err = stats.RSSMiB("VmHWM")
				require.NoError(b, err)
				b.Logf("open %d: %v, %+v", len(opens), opens[len(opens)-1], st)
				require.NoError(b, idx.Close())
			}
			first := opens[0]
			sort.Slice(opens, func(i, j int) bool { return opens[i] < opens[j] })
			b.ReportMetric(first.Seconds(), "first_open_s")
			b.ReportMetric(opens[len(opens)/2].Seconds(), "open_s")
			b.ReportMetric(float64(heap), "heap_mib")
			b.ReportMetric(float64(rss), "rss_mib")
			b.ReportMetric(float64(peak), "rss_peak_mib")
		})
	}
}

// writeOpenBench upserts n clustered points into a new index in dir and
// closes it; the data set is garbage once it returns.
func writeOpenBench(b *testing.B, dir string, opts local.Options, n int) {
	b.Helper()
	idx, err := local.Open(dir, opts)
	require.NoError(b, err)
	d := indextest.NewDataset(n, 0, benchDim, 1000, 11)
	ctx := b.Context()
	for start := 0; start < n; start += 1000 {
		pts := make([]vector.Point, 0, 1000)
		for i := start; i < min(start+1000, n); i++ {
			p := indextest.DatasetPayload(i)
			// Ids as long as the engine's (26-character ULIDs).
			p.VersionID = fmt.Sprintf("v%025d", i)
			pts = append(pts, vector.Point{ID: fmt.Sprintf("m%025d", i), Vector: d.Vecs[i], Payload: p})
		}
		require.NoError(b, idx.Upsert(ctx, pts))
	}
	require.NoError(b, idx.Close())
}
