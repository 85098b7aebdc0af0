//go:build cgo

package embed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/bench/stats"
)

// benchWords feeds shortTexts.
var benchWords = strings.Fields(`the a user prefers dark mode editor meeting moved to thursday
	because design review ran long database migration finished last night without errors alice
	bob deploy staging cluster load tests quarterly revenue grew percent api key rotated
	memory graph entity search vector index query latency budget token context agent tool
	decided postgres replaced sqlite for analytics team roadmap release notes bug fix`)

// shortTexts returns n deterministic texts of 10 to 20 words.
func shortTexts(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 42))
	out := make([]string, n)
	for i := range out {
		words := make([]string, 10+r.IntN(11))
		for j := range words {
			words[j] = benchWords[r.IntN(len(benchWords))]
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

// BenchmarkEmbed measures short texts (10-20 words) at 1 (a query) and 32
// (ingest) texts per Embed call, per Config.Threads (texts embedded at
// once): texts/s, and p50/p95 latency of one Embed call.
func BenchmarkEmbed(b *testing.B) {
	cfg := installedConfig(b)
	texts := shortTexts(1024, 1)
	for _, threads := range []int{1, 2} {
		cfg.Threads = threads
		e := openInstalled(b, cfg)
		for _, batch := range []int{1, 32} {
			b.Run(fmt.Sprintf("threads=%d/batch=%d", threads, batch), func(b *testing.B) {
				ctx := context.Background()
				if _, err := e.Embed(ctx, texts[:batch]); err != nil { // warm up
					b.Fatal(err)
				}
				lat := make([]time.Duration, 0, b.N)
				cpu0 := stats.CPUTime()
				b.ResetTimer()
				for i := range b.N {
					off := (i * batch) % (len(texts) - batch)
					start := time.Now()
					if _, err := e.Embed(ctx, texts[off:off+batch]); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				reportLatency(b, lat, batch)
				// CPU time shows the cost apart from other load on the machine.
				b.ReportMetric(float64((stats.CPUTime()-cpu0).Microseconds())/1000/float64(b.N*batch), "cpu-ms/text")
			})
		}
	}
}

// reportLatency reports texts/s and p50_ms, p95_ms and p99_ms of one call.
func reportLatency(b *testing.B, lat []time.Duration, batch int) {
	var total time.Duration
	for _, d := range lat {
		total += d
	}
	b.ReportMetric(float64(batch*len(lat))/total.Seconds(), "texts/s")
	stats.Report(b, lat)
}
