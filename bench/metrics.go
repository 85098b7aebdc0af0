package bench

import (
	"fmt"
	"math"
	"slices"

	"github.com/mnemo-dev/mnemo/bench/stats"
)

// Metric names, the same in every benchmark's report, in the Go
// benchmarks' ReportMetric units and in docs/benchmarks.md: R@k (recall at
// cut-off k), nDCG@10, and p50_ms, p95_ms, p99_ms (nearest-rank
// percentiles of per-query latency in milliseconds, from bench/stats).

// RecallAt is the fraction of relevant found among the first k of ranked;
// no relevant item counts as 1 (nothing was missed).
func RecallAt(ranked, relevant []string, k int) float64 {
	if len(relevant) == 0 {
		return 1
	}
	rel := make(map[string]bool, len(relevant))
	for _, id := range relevant {
		rel[id] = true
	}
	found := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] {
			found++
			rel[id] = false // a duplicate in ranked counts once
		}
	}
	return float64(found) / float64(len(rel))
}

// NDCG is nDCG@k with graded gains rel and log2 discounts, as BEIR's
// evaluation (pytrec_eval) computes it; 0 when rel has no positive gain.
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	var dcg float64
	for i, id := range ranked[:min(k, len(ranked))] {
		dcg += float64(rel[id]) / math.Log2(float64(i)+2)
	}
	ideal := make([]int, 0, len(rel))
	for _, g := range rel {
		ideal = append(ideal, g)
	}
	slices.SortFunc(ideal, func(a, b int) int { return b - a })
	var idcg float64
	for i, g := range ideal[:min(k, len(ideal))] {
		idcg += float64(g) / math.Log2(float64(i)+2)
	}
	if idcg <= 0 {
		return 0
	}
	return dcg / idcg
}

// latencyCells renders l as three markdown cells (p50_ms | p95_ms | p99_ms),
// dashes when nothing was timed.
func latencyCells(l stats.Latency) string {
	if l.N == 0 {
		return "— | — | —"
	}
	return fmt.Sprintf("%.2f | %.2f | %.2f", stats.Milliseconds(l.P50), stats.Milliseconds(l.P95), stats.Milliseconds(l.P99))
}
