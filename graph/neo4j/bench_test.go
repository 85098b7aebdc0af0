package neo4j_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// BenchmarkStore loads storetest's synthetic corpus (MNEMO_BENCH_MEMORIES
// memories, default 10000, 3-5 entities each, seed 42) into a wiped Neo4j,
// then measures batched ingest and the three read paths. Run it with
//
//	NEO4J_URI=bolt://127.0.0.1:7687 MNEMO_BENCH_MEMORIES=100000 \
//	  go test -run '^$' -bench BenchmarkStore -benchtime 100x ./graph/neo4j/
//
// MNEMO_BENCH_REUSE=1 keeps a corpus an earlier run loaded (no wipe, no
// reload), to iterate on the read paths.
func BenchmarkStore(b *testing.B) {
	cfg := neo4jtest.Config(b)
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_BENCH_MEMORIES")); err == nil && v > 0 {
		n = v
	}
	scope := graph.Scope{TenantID: "bench"}
	c := storetest.Corpus(scope, 42, n)
	const batch = 500
	s, ids := reuseCorpus(b, cfg, scope, n)
	if s == nil {
		s = neo4jtest.Open(b, cfg)
	}
	reused := len(ids)
	start := time.Now()
	for i := reused; i < n; i += batch {
		out, err := s.CreateMemories(b.Context(), c.Inputs[i:min(i+batch, n)])
		if err != nil {
			b.Fatalf("load batch at %d: %v", i, err)
		}
		for _, o := range out {
			ids = append(ids, o.Memory.ID)
		}
	}
	load := time.Since(start)
	if len(ids) > n {
		ids = ids[:n]
	}
	if loaded := n - reused; loaded > 0 {
		b.Logf("loaded %d memories in %s (%.0f memories/s, batches of %d)", loaded, load.Round(time.Millisecond), float64(loaded)/load.Seconds(), batch)
	}
	f := graph.Filter{Scope: scope, Reader: graph.System}

	b.Run("CreateMemories/batch=500", func(b *testing.B) {
		extra := storetest.Corpus(graph.Scope{TenantID: "bench-ingest"}, 7, batch*b.N)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if _, err := s.CreateMemories(b.Context(), extra.Inputs[i*batch:(i+1)*batch]); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "memories/s")
		reportLatency(b, lat)
	})
	b.Run("Candidates/limit=50", func(b *testing.B) {
		qs := c.EntityQueries(1000)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if _, err := s.Candidates(b.Context(), f, qs[i%len(qs)], 50); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		reportLatency(b, lat)
	})
	b.Run("Neighbours/seeds=5,perSeed=5", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			seeds := make([]string, 5)
			for j := range seeds {
				seeds[j] = ids[(i*7919+j*104729)%len(ids)]
			}
			t0 := time.Now()
			if _, err := s.Neighbours(b.Context(), f, seeds, 5); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		reportLatency(b, lat)
	})
	// Walk: the personalized PageRank of a 1-3 entity query drawn with the
	// corpus's Zipf distribution, seeded at its entities and at its 10
	// first candidates (as the engine seeds from its best hits), 20
	// memories returned.
	b.Run("Walk/limit=20", func(b *testing.B) {
		qs := c.EntityQueries(256)
		reqs := make([]graph.WalkRequest, len(qs))
		for i, q := range qs {
			reqs[i] = graph.WalkRequest{Entities: map[string]float64{}, Memories: map[string]float64{}, Limit: 20}
			for _, n := range q {
				reqs[i].Entities[n] = 1
			}
			got, err := s.Candidates(b.Context(), f, q, 10)
			if err != nil {
				b.Fatal(err)
			}
			for _, g := range got {
				reqs[i].Memories[g.Memory.ID] = 1
			}
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if _, err := s.Walk(b.Context(), f, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		reportLatency(b, lat)
	})
	// KeywordSearch reads as a reader of every memory (the tenant's
	// statistics), and as one of the corpus's 20 users (statistics over
	// that user's memories: the df query walks the tenant's matches too).
	for _, rc := range []struct {
		name   string
		reader graph.Reader
	}{{"KeywordSearch/limit=50", graph.System}, {"KeywordSearch/user/limit=50", graph.Reader{UserID: "u1"}}} {
		b.Run(rc.name, func(b *testing.B) {
			qs := c.KeywordQueries(1000)
			g := f
			g.Reader = rc.reader
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := s.KeywordSearch(b.Context(), g, qs[i%len(qs)], 50); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			reportLatency(b, lat)
		})
	}
}

// reportLatency reports p50_ms, p95_ms and p99_ms of lat.
func reportLatency(b *testing.B, lat []time.Duration) { stats.Report(b, lat) }

// reuseCorpus opens the store without wiping it when MNEMO_BENCH_REUSE=1
// and the corpus tenant already holds n memories (from an earlier run of
// this benchmark), and returns their ids; otherwise it returns nil.
func reuseCorpus(b *testing.B, cfg neo4j.Config, scope graph.Scope, n int) (*neo4j.Store, []string) {
	b.Helper()
	if os.Getenv("MNEMO_BENCH_REUSE") != "1" {
		return nil, nil
	}
	s, err := neo4j.Open(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	p := graph.Page{Limit: 1000}
	for {
		l, err := s.ListMemories(b.Context(), graph.Filter{Scope: scope, Reader: graph.System}, p)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range l.Memories {
			ids = append(ids, m.ID)
		}
		if l.NextCursor == "" || len(ids) >= n {
			break
		}
		p.Cursor = l.NextCursor
	}
	if len(ids) < n {
		_ = s.Close()
		return nil, nil
	}
	b.Cleanup(func() { _ = s.Close() })
	b.Logf("reusing %d memories already loaded in tenant %s", len(ids), scope.TenantID)
	return s, ids
}

// BenchmarkFirstSearch measures the first search after a Neo4j start: the
// store reads of one search (the engine's order: keyword search, walk,
// neighbours, versions, edits, relations), each timed on its first call,
// then the same reads for another query. Run it once per fresh Neo4j
// (docs/benchmarks.md, "Neo4j's first search after a restart"):
//
//	NEO4J_URI=bolt://127.0.0.1:7687 go test -run '^$' -bench BenchmarkFirstSearch -benchtime 1x ./graph/neo4j/
//
// The first run loads MNEMO_BENCH_MEMORIES memories (default 2000) into
// tenant bench-first and skips: restart Neo4j, then measure. With
// MNEMO_BENCH_WARM=1 the store runs Warm first (warm-s) and the search
// waits for it; otherwise there is no warm-up, as before Warm existed.
func BenchmarkFirstSearch(b *testing.B) {
	if b.N != 1 {
		b.Fatal("run with -benchtime 1x: only the first search after a start is measured")
	}
	cfg := neo4jtest.Config(b)
	cfg.WarmUp = -1
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_BENCH_MEMORIES")); err == nil && v > 0 {
		n = v
	}
	scope := graph.Scope{TenantID: "bench-first"}
	c := storetest.Corpus(scope, 42, n)
	s, err := neo4j.Open(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if os.Getenv("MNEMO_BENCH_WARM") == "1" {
		t0 := time.Now()
		if _, err := s.Warm(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "warm-s")
	}
	f := graph.Filter{Scope: scope, Reader: graph.Reader{UserID: "u1"}}
	queries := c.KeywordQueries(2)
	names := c.EntityQueries(2)
	for round, q := range queries {
		times := map[string]time.Duration{}
		step := func(name string, read func() error) {
			t0 := time.Now()
			if err := read(); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			times[name] += time.Since(t0)
		}
		var hits []graph.Scored
		step("keyword", func() (err error) { hits, err = s.KeywordSearch(ctx, f, q, 50); return err })
		if round == 0 && len(hits) == 0 {
			l, err := s.ListMemories(ctx, graph.Filter{Scope: scope, Reader: graph.System}, graph.Page{Limit: 1})
			if err != nil {
				b.Fatal(err)
			}
			if len(l.Memories) == 0 {
				for i := 0; i < n; i += 500 {
					if _, err := s.CreateMemories(ctx, c.Inputs[i:min(i+500, n)]); err != nil {
						b.Fatal(err)
					}
				}
				b.Skipf("loaded %d memories into tenant %s: restart Neo4j, then run again", n, scope.TenantID)
			}
			b.Fatal("the keyword query found nothing")
		}
		seeds, versions := make([]string, 0, 10), make([]string, 0, 10)
		walk := graph.WalkRequest{Entities: map[string]float64{}, Memories: map[string]float64{}, Limit: 20, Damping: 0.5}
		for _, h := range hits[:min(10, len(hits))] {
			seeds = append(seeds, h.Memory.ID)
			versions = append(versions, h.Memory.CurrentVersionID)
			walk.Memories[h.Memory.ID] = 1
		}
		for _, e := range names[round] {
			walk.Entities[e] = 1
		}
		step("walk", func() error { _, err := s.Walk(ctx, f, walk); return err })
		step("neighbours", func() error { _, err := s.Neighbours(ctx, f, seeds[:min(5, len(seeds))], 6); return err })
		step("versions", func() error { _, err := s.GetVersions(ctx, f, versions); return err })
		step("memories", func() error { _, err := s.GetMemories(ctx, f, seeds); return err })
		step("edits", func() error {
			_, err := s.ListEdits(ctx, f, graph.EditQuery{MemoryIDs: seeds, Statuses: []graph.EditStatus{graph.EditApproved}})
			return err
		})
		step("relations", func() error { _, err := s.RelationsOf(ctx, f, seeds[:min(5, len(seeds))], 4); return err })
		var total time.Duration
		for name, d := range times {
			total += d
			if round == 0 {
				b.ReportMetric(float64(d.Milliseconds()), name+"-ms")
			}
		}
		b.ReportMetric(float64(total.Milliseconds()), []string{"first-search-ms", "second-search-ms"}[round])
	}
	// plans: the statements (text and parameter types) in Neo4j's plan
	// cache now, read by clearing it: with Warm, its own plus any the
	// searches compiled that it did not.
	res, err := neo4jdrv.ExecuteQuery(ctx, neo4jtest.Driver(b, cfg), "CALL db.clearQueryCaches()", nil, neo4jdrv.EagerResultTransformer)
	if err != nil {
		b.Fatal(err)
	}
	var plans int
	_, _ = fmt.Sscanf(strings.TrimPrefix(fmt.Sprint(res.Records[0].Values[0]), "Query caches successfully cleared of "), "%d", &plans)
	b.ReportMetric(float64(plans), "plans")
}
