package neo4j

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
	"github.com/mnemo-dev/mnemo/graph/kwindex"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// BenchmarkMentionIndex measures the mention index of one tenant holding
// storetest's synthetic corpus (MNEMO_BENCH_MEMORIES memories, default
// 100,000; 3-5 entities each, seed 42; with each memory's filter
// attributes, memAttrs, as the catch-up reads them), no Neo4j needed: the heap it holds
// (heap_mib, and bytes per MENTIONS edge, the ids' and names' bytes
// included, though the keyword index shares the ids), the first catch-up
// that builds it (build_ms), and a catch-up of one new memory mentioning
// three entities (the op):
//
//	go test ./graph/neo4j -run '^$' -bench BenchmarkMentionIndex -benchtime 200x
func BenchmarkMentionIndex(b *testing.B) {
	c, n := benchMentionCorpus()
	// The heap from here on holds the rows' strings (ids and norm names,
	// as the catch-up reads them) and, once the rows are dropped, only
	// what the index keeps of them.
	h0 := heapAlloc()
	rows := make([]mentionRow, n)
	edges := 0
	for i, in := range c.Inputs {
		m := in.Memory
		rows[i] = mentionRow{key: kwKey{at: m.CreatedAt.UnixNano(), id: fmt.Sprintf("%08d-0000-7000-8000-000000000000", i)},
			attrs: attrsOf(map[string]any{ // as the catch-up reads them: fresh strings, interned
				"org_id": strings.Clone(m.Scope.OrgID), "repo_id": strings.Clone(m.Scope.RepoID),
				"user_id": strings.Clone(m.UserID), "visibility": "global", "status": strings.Clone("active"),
				"type": strings.Clone(m.Type), "subject_type": "", "subject_id": "", "project_id": "", "session_id": "",
				"tags": []any{strings.Clone(m.Tags[0])},
			})}
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
	held := heapAlloc() - h0
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

// BenchmarkTenantIndexes measures what one memory costs the process in the
// keyword and mention indexes together, which Config.IndexMemories counts:
// storetest's synthetic corpus (MNEMO_BENCH_MEMORIES memories, default
// 100,000, seed 42) in one tenant, each memory read back from the keyword
// properties a write stores (kw_tf, kw_len) and its entities' norm names,
// as a catch-up reads them; no Neo4j needed. It reports the heap held per
// memory (B/memory, ids and strings included) and the time to build both
// (build_ms: the in-process part of a dropped tenant's next search; Neo4j's
// read of its memories comes on top). The op is what the bound adds to
// every search: a pin of its tenant and its release (keywords.pin).
//
//	go test ./graph/neo4j -run '^$' -bench BenchmarkTenantIndexes -benchtime 1000x
func BenchmarkTenantIndexes(b *testing.B) {
	c, n := benchMentionCorpus()
	type row struct {
		key      kwKey
		tf       string
		n        int64
		user     string
		entities []string
	}
	var stems bm25.Stems
	rows := make([]row, n)
	for i, in := range c.Inputs {
		p := map[string]any{}
		keywordProps(p, in.Memory.Title, in.Version.Content, stems.Stem)
		rows[i] = row{key: kwKey{at: in.Memory.CreatedAt.UnixNano(), id: fmt.Sprintf("%08d-0000-7000-8000-000000000000", i)},
			tf: p["kw_tf"].(string), n: p["kw_len"].(int64), user: in.Memory.UserID}
		for _, e := range in.Version.Entities {
			rows[i].entities = append(rows[i].entities, graph.NormName(e.Name))
		}
	}
	runtime.KeepAlive(c)
	h0 := heapAlloc()
	k := newKeywords(-1)
	start := time.Now()
	mrows := make([]mentionRow, n)
	k.Update(func(w kwindex.Writer[kwKey]) {
		for i, r := range rows {
			// Copies, as the rows a catch-up decodes are the index's own.
			id := strings.Clone(r.key.id)
			mrows[i] = mentionRow{key: kwKey{at: r.key.at, id: id}}
			for _, e := range r.entities {
				mrows[i].entities = append(mrows[i].entities, strings.Clone(e))
			}
			w.Put(mrows[i].key, graph.Scope{TenantID: "bench"}, strings.Clone(r.user), graph.VisibilityProject, kwDoc(r.tf, r.n))
		}
	})
	k.mentions.apply("bench", mrows)
	build := time.Since(start)
	mrows = nil
	k.mu.Lock()
	k.applied["bench"], k.held["bench"] = 1, held{memories: k.Live("bench"), units: k.Live("bench")}
	k.mu.Unlock()
	held := heapAlloc() - h0
	runtime.KeepAlive(rows)
	for b.Loop() {
		k.pin("bench")()
	}
	runtime.KeepAlive(k)
	b.ReportMetric(float64(held)/float64(n), "B/memory")
	b.ReportMetric(float64(held)/(1<<20), "heap_mib")
	b.ReportMetric(float64(build.Microseconds())/1e3, "build_ms")
}

// benchMentionCorpus is the corpus of the benchmarks here: storetest's,
// seed 42, MNEMO_BENCH_MEMORIES memories (default 100,000) in one tenant.
func benchMentionCorpus() (storetest.SyntheticCorpus, int) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_BENCH_MEMORIES")); err == nil && v > 0 {
		n = v
	}
	return storetest.Corpus(graph.Scope{TenantID: "bench"}, 42, n), n
}

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
