package neo4j

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// BenchmarkMentionIndex measures the mention index of one tenant holding
// storetest's synthetic corpus (MNEMO_BENCH_MEMORIES memories, default
// 100,000; 3-5 entities each, seed 42), no Neo4j needed: the heap it holds
// (heap_mib, and bytes per MENTIONS edge, the ids' and names' bytes
// included, though the keyword index shares the ids), the first catch-up
// that builds it (build_ms), and a catch-up of one new memory mentioning
// three entities (the op):
//
//	go test ./graph/neo4j -run '^$' -bench BenchmarkMentionIndex -benchtime 200x
func BenchmarkMentionIndex(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_BENCH_MEMORIES")); err == nil && v > 0 {
		n = v
	}
	c := storetest.Corpus(graph.Scope{TenantID: "bench"}, 42, n)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// The heap from here on holds the rows' strings (ids and norm names,
	// as the catch-up reads them) and, once the rows are dropped, only
	// what the index keeps of them.
	h0 := heap()
	rows := make([]mentionRow, n)
	edges := 0
	for i, in := range c.Inputs {
		rows[i] = mentionRow{key: kwKey{at: in.Memory.CreatedAt.UnixNano(), id: fmt.Sprintf("%08d-0000-7000-8000-000000000000", i)}}
		for _, e := range in.Version.Entities {
			rows[i].entities = append(rows[i].entities, graph.NormName(e.Name))
		}
		edges += len(rows[i].entities)
	}
	x := newMentionIndex()
	start := time.Now()
	x.apply("bench", rows)
	build := time.Since(start)
	last := rows[n-1].key.at
	one := []mentionRow{{entities: []string{rows[0].entities[0], rows[1].entities[0], rows[2].entities[0]}}}
	rows = nil
	held := heap() - h0
	runtime.KeepAlive(c)
	for i := 0; b.Loop(); i++ {
		one[0].key = kwKey{at: last + int64(i+1), id: fmt.Sprintf("new-%08d", i)}
		x.apply("bench", one)
	}
	b.ReportMetric(float64(held)/(1<<20), "heap_mib")
	b.ReportMetric(float64(held)/float64(edges), "B/edge")
	b.ReportMetric(float64(build.Microseconds())/1e3, "build_ms")
	b.ReportMetric(float64(edges)/float64(n), "edges/memory")
}
