// Package stats holds what every mnemo benchmark shares, the bench
// commands (package bench) and the Go benchmarks of every package alike:
// the one latency summary they report (nearest-rank p50, p95 and p99, in
// milliseconds, named p50_ms, p95_ms and p99_ms), the process's CPU time
// (CPUTime, reported as cpu_ms) and the corpus sizes they run at (Sizes).
// It imports nothing of mnemo, so any package's tests may use it.
package stats

import (
	"slices"
	"time"
)

// Latency summarises per-query latencies. Every benchmark reports these
// three, as p50_ms, p95_ms and p99_ms.
type Latency struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ns"`
	P95 time.Duration `json:"p95_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// Percentiles returns the nearest-rank p50, p95 and p99 of ds (ds is not
// modified). With no samples every field is zero.
func Percentiles(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return Latency{N: len(s), P50: Percentile(s, 50), P95: Percentile(s, 95), P99: Percentile(s, 99)}
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, the smallest sample with at least p% of the samples at or below
// it.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100 + 0.999999999) // ceil without float noise
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Milliseconds is d in milliseconds, the unit of every latency figure.
func Milliseconds(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// Reporter is what Report writes to: *testing.B.
type Reporter interface {
	ReportMetric(n float64, unit string)
}

// Report reports p50_ms, p95_ms and p99_ms of ds to a Go benchmark (b
// is a *testing.B); nothing when ds is empty.
func Report(b Reporter, ds []time.Duration) {
	l := Percentiles(ds)
	if l.N == 0 {
		return
	}
	b.ReportMetric(Milliseconds(l.P50), "p50_ms")
	b.ReportMetric(Milliseconds(l.P95), "p95_ms")
	b.ReportMetric(Milliseconds(l.P99), "p99_ms")
}
