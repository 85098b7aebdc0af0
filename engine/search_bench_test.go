package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/embed"
	"github.com/mnemo-dev/mnemo/vector/embed/embedtest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// benchCorpus is one loaded synthetic corpus.
type benchCorpus struct {
	store graph.Store
	eng   *engine.Engine
	// noGraph is eng under the default policy with the graph's fusion
	// weight 0: hybrid search without the walk, measured in the same run.
	noGraph *engine.Engine
	p       graph.Principal
	queries []string
	vectors bool
	touchID string // the memory touch counts reads of
}

// loadBenchCorpus stores storetest.Corpus(n) in the graph store graphtest
// selects (SQLite, or Neo4j with MNEMO_TEST_STORE=neo4j) and, when the ONNX
// embedder is installed, indexes one vector per memory in vector/local
// (MNEMO_ORT_LIB=/missing turns the embedder off: graph + keyword only).
// Queries are embedded with the real model on every search, so query
// embedding is measured. The corpus vectors are, by MNEMO_BENCH_VECTORS:
//
//   - random (the default): seeded random unit vectors, the worst case for
//     HNSW (no structure: a search visits a large part of the graph) and
//     vectors no query is near;
//   - model: the model's own vector of each memory's opening, its first
//     benchModelTokens tokens (title, then the start of the content): the
//     distribution a real store has, where a query's vector hits share its
//     words. Embedding whole texts (~40 ms each here) would take an hour
//     at 100k; the openings take minutes, once (cached on SQLite).
//
// On SQLite the loaded store and vector index are cached (benchCache:
// search-*; minutes to build at 100k) and each run opens a copy.
func loadBenchCorpus(b *testing.B, n int) *benchCorpus {
	b.Helper()
	ctx := context.Background()
	scope := graph.Scope{TenantID: "bench"}
	corpus := storetest.Corpus(scope, 42, n)
	emb := embedtest.ONNX(b, filepath.Join("..", ".cache", "mnemo"))
	dims := 0
	if emb != nil {
		dims = emb.Dimensions()
	}
	var (
		store graphtest.Store
		idx   vector.Index
	)
	if graphtest.Backend() == "sqlite" {
		// Bump the version when the corpus, the SQLite migrations, the
		// vector payload or the index format change.
		run := benchCache(b, fmt.Sprintf("search-v1-n%d-d%d%s", n, dims, benchVectorsSuffix(b)), func(dir string) {
			s, err := sqlite.Open(ctx, filepath.Join(dir, "graph"), sqlite.Options{})
			require.NoError(b, err)
			created := loadBenchMemories(b, s, corpus)
			if dims > 0 {
				x, err := local.Open(filepath.Join(dir, "vectors"), local.Options{Dimensions: dims})
				require.NoError(b, err)
				indexBenchVectors(b, x, created, dims, corpus)
				// A snapshot holds the HNSW graph: opening it does not rebuild.
				require.NoError(b, x.Compact(ctx))
				require.NoError(b, x.Close())
			}
			require.NoError(b, s.Close())
		})
		s, err := sqlite.Open(ctx, filepath.Join(run, "graph"), sqlite.Options{})
		require.NoError(b, err)
		b.Cleanup(func() { _ = s.Close() })
		store = s
		if dims > 0 {
			x, err := local.Open(filepath.Join(run, "vectors"), local.Options{Dimensions: dims})
			require.NoError(b, err)
			b.Cleanup(func() { _ = x.Close() })
			idx = x
		}
	} else {
		s, created := reuseBenchCorpus(b, scope, n)
		if s == nil {
			s = graphtest.Open(b)
			created = loadBenchMemories(b, s, corpus)
		}
		store = s
		if dims > 0 {
			x, err := local.Open(b.TempDir(), local.Options{Dimensions: dims})
			require.NoError(b, err)
			b.Cleanup(func() { _ = x.Close() })
			indexBenchVectors(b, x, created, dims, corpus)
			idx = x
		}
	}
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(b, err)
	// With random corpus vectors no result is relevant to a query and the
	// default policy would abstain on every search (it does so after all
	// the work measured here): abstention off, with model vectors too, so
	// that the two variants run the same steps.
	pol.Retrieval.AbstentionThreshold = 0
	if !benchModelVectors(b) {
		// Random vectors are near no query: under the default calibration
		// the vector floor would cut every hit, and hybrid would run
		// without its vector signal.
		embedtest.Uncalibrated(&pol.Retrieval)
	}
	holder, err := policy.NewHolder(pol)
	require.NoError(b, err)
	opts := engine.Options{Store: store, Policy: holder}
	// storetest.Corpus writes every memory private to one of 20 users, so
	// the searcher reads every user's memories (admin holds read_all_users):
	// the largest admitted set, and no search that finds nothing.
	c := &benchCorpus{store: store, p: graph.Principal{ID: "bench", Roles: []string{"admin"}, Scope: scope}}
	if idx != nil {
		opts.Index, opts.Embedder, c.vectors = idx, emb, true
	}
	c.eng, err = engine.New(opts)
	require.NoError(b, err)
	noGraph := *pol
	noGraph.Retrieval.FusionWeights = map[string]float64{}
	for s, w := range pol.Retrieval.FusionWeights {
		noGraph.Retrieval.FusionWeights[s] = w
	}
	noGraph.Retrieval.FusionWeights["graph"] = 0
	if opts.Policy, err = policy.NewHolder(&noGraph); err != nil {
		b.Fatal(err)
	}
	c.noGraph, err = engine.New(opts)
	require.NoError(b, err)
	// Queries name 1-3 entities and a few words, as a user would.
	ents, words := corpus.EntityQueries(200), corpus.KeywordQueries(200)
	for i := range ents {
		c.queries = append(c.queries, "what about "+strings.Join(ents[i], " and ")+" "+words[i])
	}
	return c
}

// loadBenchMemories writes corpus into store in batches and returns what
// was created, oldest first.
func loadBenchMemories(b *testing.B, store graph.Store, corpus storetest.SyntheticCorpus) []graph.Created {
	b.Helper()
	const batch = 1000
	start := time.Now()
	var created []graph.Created
	for i := 0; i < len(corpus.Inputs); i += batch {
		cs, err := store.CreateMemories(context.Background(), corpus.Inputs[i:min(i+batch, len(corpus.Inputs))])
		require.NoError(b, err)
		created = append(created, cs...)
	}
	b.Logf("%s: loaded %d memories in %s", graphtest.Backend(), len(created), time.Since(start).Round(time.Second))
	return created
}

// benchModelTokens caps the tokens of a corpus text embedded under
// MNEMO_BENCH_VECTORS=model ([CLS] and [SEP] included).
const benchModelTokens = 32

// benchModelVectors reports whether MNEMO_BENCH_VECTORS asks for the
// model's vectors of the corpus rather than random ones.
func benchModelVectors(b *testing.B) bool {
	switch v := os.Getenv("MNEMO_BENCH_VECTORS"); v {
	case "", "random":
		return false
	case "model":
		return true
	default:
		b.Fatalf("MNEMO_BENCH_VECTORS=%q: want random or model", v)
		return false
	}
}

// benchVectorsSuffix names the corpus vectors in a cache entry's name.
func benchVectorsSuffix(b *testing.B) string {
	if benchModelVectors(b) {
		return fmt.Sprintf("-model%d", benchModelTokens)
	}
	return ""
}

// indexBenchVectors upserts one vector per created memory (corpus.Inputs
// in the same order): seeded random ones drawn in creation order, or under
// MNEMO_BENCH_VECTORS=model the model's vector of each memory's opening.
func indexBenchVectors(b *testing.B, idx vector.Index, created []graph.Created, dims int, corpus storetest.SyntheticCorpus) {
	b.Helper()
	const batch = 1000
	r := rand.New(rand.NewPCG(42, 1))
	var emb *embed.ONNX
	if benchModelVectors(b) {
		cfg := embedtest.Config(filepath.Join("..", ".cache", "mnemo"))
		cfg.MaxLength = benchModelTokens
		var err error
		emb, err = embed.OpenONNX(cfg)
		require.NoError(b, err)
		defer emb.Close()
	}
	start := time.Now()
	for i := 0; i < len(created); i += batch {
		cs := created[i:min(i+batch, len(created))]
		pts := benchPoints(r, cs, dims)
		if emb != nil {
			texts := make([]string, len(cs))
			for j := range cs {
				in := corpus.Inputs[i+j]
				require.Equal(b, in.Memory.Title, cs[j].Memory.Title, "the corpus and the created memories in one order")
				texts[j] = in.Memory.Title + "\n" + in.Version.Content
			}
			vs, err := emb.Embed(context.Background(), texts)
			require.NoError(b, err)
			for j := range pts {
				pts[j].Vector = vs[j]
			}
			progress("embedded %d of %d corpus texts in %s", i+len(cs), len(created), time.Since(start).Round(time.Second))
		}
		require.NoError(b, idx.Upsert(context.Background(), pts))
	}
}

// reuseBenchCorpus, on Neo4j with MNEMO_BENCH_REUSE=1, opens the test
// database without wiping it and, when the corpus tenant holds exactly n
// memories (an earlier run's load of the same corpus: storetest.Corpus is
// seeded), returns the store and the memories oldest first, so that a
// rerun skips the load (minutes at 10k); otherwise nil, and the caller
// loads into a wiped database. The memories' vectors are drawn again from
// the same seed, in the listing order (ties of created_at by id).
func reuseBenchCorpus(b *testing.B, scope graph.Scope, n int) (graphtest.Store, []graph.Created) {
	b.Helper()
	if graphtest.Backend() != "neo4j" || os.Getenv("MNEMO_BENCH_REUSE") != "1" {
		return nil, nil
	}
	s, err := neo4j.Open(b.Context(), neo4jtest.Config(b))
	require.NoError(b, err)
	var ms []graph.Memory
	p := graph.Page{Limit: 1000}
	for len(ms) <= n {
		l, err := s.ListMemories(b.Context(), graph.Filter{Scope: scope, Reader: graph.System}, p)
		require.NoError(b, err)
		for _, m := range l.Memories {
			if m.Type != benchWriteType { // what the cold variants wrote
				ms = append(ms, m)
			}
		}
		if l.NextCursor == "" {
			break
		}
		p.Cursor = l.NextCursor
	}
	if len(ms) != n {
		_ = s.Close()
		return nil, nil
	}
	b.Cleanup(func() { _ = s.Close() })
	slices.Reverse(ms) // newest first -> creation order
	created := make([]graph.Created, len(ms))
	for i, m := range ms {
		created[i] = graph.Created{Memory: m, Version: graph.Version{ID: m.CurrentVersionID}}
	}
	b.Logf("neo4j: reusing the %d memories already loaded in tenant %s", n, scope.TenantID)
	return s, created
}

// BenchmarkSearch measures engine.Search latency (query embedding included)
// at 10k and 100k memories (MNEMO_BENCH_SIZES, comma-separated, overrides)
// on the store graphtest selects, and reports p50, p95 and p99 in
// milliseconds; mode=hybrid/known_at is a search as known at a past time. Each size loads its corpus once per run; the modes share it.
func BenchmarkSearch(b *testing.B) {
	sizes := benchSizes(b, 10_000, 100_000)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("store=%s/n=%d", graphtest.Backend(), n), func(b *testing.B) {
			c := loadBenchCorpus(b, n)
			// Each variant starts after a write in the corpus's tenant, so
			// that no variant finds the store's caches warmed by the one
			// before on the same queries (the SQLite walk cache lasts until
			// a write in the tenant). The cold variants write there before
			// every search, untimed: every walk reads its whole
			// neighbourhood; other_tenant writes in another tenant before
			// every search, as a server shared by tenants sees. known_at: a search as known
			// at a time after the load (the same memories), which scans for
			// keyword text (docs/time.md). after_read counts a read of one
			// memory before every search, untimed, as each read_context
			// does after it answers (Store.Touch).
			known := engine.TimeTravel{KnownAt: time.Now().UTC()}
			// The first search builds the keyword index (about 1.4 s per
			// 100k memories): not part of what is measured.
			_, err := c.eng.Search(context.Background(), c.p, engine.SearchRequest{Query: c.queries[0], Mode: "keyword"})
			require.NoError(b, err)
			for _, v := range []struct {
				name, mode string
				eng        *engine.Engine
				tt         engine.TimeTravel
				before     func(*testing.B) // runs untimed before each search
			}{
				{"mode=graph", "graph", c.eng, engine.TimeTravel{}, nil},
				{"mode=hybrid", "hybrid", c.eng, engine.TimeTravel{}, nil},
				{"mode=hybrid/graph_weight=0", "hybrid", c.noGraph, engine.TimeTravel{}, nil},
				{"mode=graph/cold", "graph", c.eng, engine.TimeTravel{}, c.write},
				{"mode=hybrid/cold", "hybrid", c.eng, engine.TimeTravel{}, c.write},
				{"mode=hybrid/after_read", "hybrid", c.eng, engine.TimeTravel{}, c.touch},
				{"mode=hybrid/other_tenant", "hybrid", c.eng, engine.TimeTravel{}, c.writeElsewhere},
				{"mode=hybrid/known_at", "hybrid", c.eng, known, nil},
			} {
				if !benchMode(v.name) {
					continue
				}
				b.Run(v.name, func(b *testing.B) {
					ctx := context.Background()
					lat := make([]time.Duration, 0, b.N)
					found := 0
					var cpu time.Duration
					c.write(b)
					for i := 0; b.Loop(); i++ {
						if v.before != nil {
							b.StopTimer()
							v.before(b)
							b.StartTimer()
						}
						start, c0 := time.Now(), stats.CPUTime()
						var (
							resp engine.SearchResponse
							err  error
						)
						// Labelled, so one CPU profile tells the variants
						// apart (go tool pprof -tagfocus variant=mode=graph).
						pprof.Do(ctx, pprof.Labels("variant", v.name), func(ctx context.Context) {
							resp, err = v.eng.Search(ctx, c.p, engine.SearchRequest{Query: c.queries[i%len(c.queries)], Mode: v.mode, TimeTravel: v.tt})
						})
						lat = append(lat, time.Since(start))
						cpu += stats.CPUTime() - c0
						if err != nil {
							b.Fatal(err)
						}
						if len(resp.Results) > 0 {
							found++
						}
					}
					if found == 0 {
						b.Fatal("no search found anything: the benchmark would time empty searches")
					}
					reportPercentiles(b, lat)
					// CPU time per search (the process's, user + system),
					// which the machine's load inflates far less than the
					// wall-clock percentiles.
					b.ReportMetric(stats.Milliseconds(cpu)/float64(len(lat)), "cpu_ms")
				})
			}
		})
	}
}

// benchMode reports whether MNEMO_BENCH_MODES (comma-separated variant
// names, e.g. "mode=graph,mode=hybrid/graph_weight=0") selects variant, or
// is unset. A -bench pattern cannot select mode=graph without its
// children's names matching too (the names hold slashes), and a partial
// match leaves a benchmark unreported.
func benchMode(variant string) bool {
	v := os.Getenv("MNEMO_BENCH_MODES")
	return v == "" || slices.Contains(strings.Split(v, ","), variant)
}

// touch counts a read of one memory of the corpus, as read_context does
// for the memories it returns.
func (c *benchCorpus) touch(b *testing.B) {
	if c.touchID == "" {
		l, err := c.store.ListMemories(context.Background(), graph.Filter{Scope: c.p.Scope, Reader: graph.System}, graph.Page{Limit: 1})
		if err != nil || len(l.Memories) == 0 {
			b.Fatalf("a memory to touch: %v", err)
		}
		c.touchID = l.Memories[0].ID
	}
	if err := c.store.Touch(context.Background(), c.p.Scope, []string{c.touchID}, time.Now().UTC()); err != nil {
		b.Fatal(err)
	}
}

// benchWriteType is the type of the memories the benchmark writes between
// searches, which no corpus memory has.
const benchWriteType = "bench-write"

// write writes one memory in the corpus's tenant, of a type of its own,
// which ends whatever the store caches for the tenant until the next
// write; the searches can find it only by its words, which no query holds.
func (c *benchCorpus) write(b *testing.B) {
	c.writeIn(b, c.p.Scope)
}

// writeElsewhere writes one memory in a tenant of its own: a write the
// searches cannot see.
func (c *benchCorpus) writeElsewhere(b *testing.B) {
	c.writeIn(b, graph.Scope{TenantID: "bench-writes"})
}

func (c *benchCorpus) writeIn(b *testing.B, sc graph.Scope) {
	in := graph.MemoryInput{Memory: graph.Memory{Scope: sc, UserID: "bench-writer", Type: benchWriteType, Title: "a write"},
		Version: graph.VersionInput{Content: "a write between searches"}}
	if _, err := c.store.CreateMemories(context.Background(), []graph.MemoryInput{in}); err != nil {
		b.Fatal(err)
	}
}

// reportPercentiles reports p50_ms, p95_ms and p99_ms of lat.
func reportPercentiles(b *testing.B, lat []time.Duration) { stats.Report(b, lat) }
