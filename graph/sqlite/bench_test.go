package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// Benchmarks run on a synthetic corpus (storetest.Corpus) of benchN()
// memories, 3-5 entities each from a Zipf vocabulary. The query benchmarks
// build the database once and cache it under the temp dir, keyed by seed,
// size and schema, so repeated runs (-count 5) reuse it.
//
//	go test -run '^$' -bench . -count 5 -benchtime 2000x ./graph/sqlite
//
// MNEMO_BENCH_N overrides the corpus size (default 100000).
const benchSeed = 42

var benchScope = graph.Scope{TenantID: "bench"}

func benchN(b *testing.B) int {
	if v := os.Getenv("MNEMO_BENCH_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("MNEMO_BENCH_N=%q: want a positive integer", v)
		}
		return n
	}
	return 100000
}

// load writes the corpus in batches of 500 and returns the elapsed time.
func load(ctx context.Context, b *testing.B, s *sqlite.Store, c storetest.SyntheticCorpus) time.Duration {
	const batch = 500
	start := time.Now()
	for i := 0; i < len(c.Inputs); i += batch {
		if _, err := s.CreateMemories(ctx, c.Inputs[i:min(i+batch, len(c.Inputs))]); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkCreateMemories measures batched ingest of the whole corpus into
// a fresh store (one op = the whole corpus; see memories/s).
func BenchmarkCreateMemories(b *testing.B) {
	n := benchN(b)
	c := storetest.Corpus(benchScope, benchSeed, n)
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		s, err := sqlite.Open(b.Context(), dir, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		total += load(b.Context(), b, s, c)
		b.StopTimer()
		_ = s.Close()
		_ = os.RemoveAll(dir)
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "memories/s")
}

// cachedStore opens the benchmark dataset, building it on first use.
func cachedStore(b *testing.B) (*sqlite.Store, storetest.SyntheticCorpus) {
	b.Helper()
	n := benchN(b)
	c := storetest.Corpus(benchScope, benchSeed, n)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mnemo-sqlite-bench-s%d-n%d-v4", benchSeed, n))
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err != nil {
		_ = os.RemoveAll(dir)
		s, err := sqlite.Open(b.Context(), dir, sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d := load(b.Context(), b, s, c)
		b.Logf("built %d memories in %v (%.0f/s) at %s", n, d, float64(n)/d.Seconds(), dir)
		_ = s.Close()
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := sqlite.Open(b.Context(), dir, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s, c
}

// reportLatency reports p50_ms, p95_ms and p99_ms of the per-query
// latencies.
func reportLatency(b *testing.B, lat []time.Duration) { stats.Report(b, lat) }

// timeLoop runs op once per benchmark iteration (i counts from 0) and
// reports the latency percentiles.
func timeLoop(b *testing.B, op func(i int) error) {
	lat := make([]time.Duration, 0, 4096)
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		err := op(i)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	reportLatency(b, lat)
}

// BenchmarkCandidates asks for 20 candidates of 1-3 entity names drawn
// with the corpus's own Zipf distribution (popular entities most often).
func BenchmarkCandidates(b *testing.B) {
	s, c := cachedStore(b)
	qs := c.EntityQueries(4096)
	f := graph.Filter{Scope: benchScope, Reader: graph.System}
	timeLoop(b, func(i int) error {
		q := qs[i%len(qs)]
		got, err := s.Candidates(b.Context(), f, q, 20)
		if err != nil || len(got) == 0 {
			return fmt.Errorf("candidates %v: %d results, err %v", q, len(got), err)
		}
		return nil
	})
}

// BenchmarkKeywordSearch ranks 20 memories (a caller's page) and 100 (the
// engine's keyword pool) for 2-3 word queries drawn with the corpus's word
// distribution, for a reader of every memory (reader=all: the tenant's
// statistics are the reader's) and for one of the corpus's 20 users
// (reader=user: statistics over what that user may read, counted on the
// postings).
func BenchmarkKeywordSearch(b *testing.B) {
	for _, bc := range []struct {
		reader string
		limit  int
	}{{"all", 20}, {"all", 100}, {"user", 20}, {"user", 100}} {
		b.Run(fmt.Sprintf("reader=%s/limit=%d", bc.reader, bc.limit), func(b *testing.B) {
			s, c := cachedStore(b)
			qs := c.KeywordQueries(4096)
			limit := bc.limit
			f := graph.Filter{Scope: benchScope, Reader: graph.System}
			if bc.reader == "user" {
				f.Reader = graph.Reader{UserID: "u1"}
			}
			// The first search builds the in-memory index: its time and
			// the heap it adds.
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			if _, err := s.KeywordSearch(b.Context(), f, qs[0], limit); err != nil {
				b.Fatal(err)
			}
			build := time.Since(start)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ResetTimer()
			timeLoop(b, func(i int) error {
				if _, err := s.KeywordSearch(b.Context(), f, qs[i%len(qs)], limit); err != nil {
					return fmt.Errorf("keyword %q: %w", qs[i%len(qs)], err)
				}
				return nil
			})
			b.ReportMetric(build.Seconds(), "build-s")
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "index-MiB")
		})
	}
}

// BenchmarkNeighbours walks the neighbours of 10 seeds (a page of results:
// the candidates of a 1-3 entity query), 13 per seed, as the engine's
// appendix does; only the Neighbours call is timed.
func BenchmarkNeighbours(b *testing.B) {
	s, c := cachedStore(b)
	qs := c.EntityQueries(256)
	f := graph.Filter{Scope: benchScope, Reader: graph.System}
	seeds := make([][]string, len(qs))
	for i, q := range qs {
		got, err := s.Candidates(b.Context(), f, q, 10)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range got {
			seeds[i] = append(seeds[i], g.Memory.ID)
		}
	}
	timeLoop(b, func(i int) error {
		if _, err := s.Neighbours(b.Context(), f, seeds[i%len(seeds)], 13); err != nil {
			return fmt.Errorf("neighbours %v: %w", qs[i%len(qs)], err)
		}
		return nil
	})
}

// BenchmarkWalk runs the personalized PageRank of a 1-3 entity query
// drawn with the corpus's Zipf distribution, seeded at its entities
// (seeds=entities) and also at its 10 first candidates, as the engine
// seeds from its best dense and keyword hits (seeds=entities+memories);
// 20 memories returned, for a reader of every memory.
func BenchmarkWalk(b *testing.B) {
	for _, withMemories := range []bool{false, true} {
		name := "seeds=entities"
		if withMemories {
			name = "seeds=entities+memories"
		}
		b.Run(name, func(b *testing.B) {
			s, c := cachedStore(b)
			qs := c.EntityQueries(256)
			f := graph.Filter{Scope: benchScope, Reader: graph.System}
			reqs := make([]graph.WalkRequest, len(qs))
			for i, q := range qs {
				reqs[i] = graph.WalkRequest{Entities: map[string]float64{}, Memories: map[string]float64{}, Limit: 20}
				for _, n := range q {
					reqs[i].Entities[n] = 1
				}
				if !withMemories {
					continue
				}
				got, err := s.Candidates(b.Context(), f, q, 10)
				if err != nil {
					b.Fatal(err)
				}
				for _, g := range got {
					reqs[i].Memories[g.Memory.ID] = 1
				}
			}
			timeLoop(b, func(i int) error {
				if _, err := s.Walk(b.Context(), f, reqs[i%len(reqs)]); err != nil {
					return fmt.Errorf("walk %v: %w", qs[i%len(qs)], err)
				}
				return nil
			})
		})
	}
}
