package engine_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/embed"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// benchNotes generates n short notes, deterministic from seed, with
// varied subjects so most get distinct canonical keys.
func benchNotes(seed uint64, n int) []engine.IngestRequest {
	r := rand.New(rand.NewPCG(seed, 1))
	tools := []string{"PostgreSQL", "Kubernetes", "Docker", "Neo4j", "Qdrant", "SQLite", "Go", "Python"}
	verbs := []string{"listens on port %d", "keeps backups for %d days", "runs %d replicas", "times out after %d seconds", "uses %d workers"}
	out := make([]engine.IngestRequest, n)
	for i := range out {
		svc := fmt.Sprintf("svc%d", r.IntN(100000))
		out[i] = engine.IngestRequest{Type: "note", Content: fmt.Sprintf("The %s service on %s %s.",
			svc, tools[r.IntN(len(tools))], fmt.Sprintf(verbs[r.IntN(len(verbs))], 1+r.IntN(9000)))}
	}
	return out
}

// benchDocs generates n markdown documents of about 1.5 KB with three
// sections each.
func benchDocs(seed uint64, n int) []engine.IngestRequest {
	r := rand.New(rand.NewPCG(seed, 2))
	out := make([]engine.IngestRequest, n)
	for i := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "# Runbook %d\n\nThis runbook covers service svc%d on Kubernetes.\n\n", i, r.IntN(100000))
		for _, h := range []string{"Install", "Operate", "Rollback"} {
			fmt.Fprintf(&b, "## %s\n\n", h)
			for j := 0; j < 4; j++ {
				fmt.Fprintf(&b, "Step %d: run `make %s-%d` against PostgreSQL %d.%d and check the dashboard on host mon-%d.\n",
					j, strings.ToLower(h), r.IntN(100), 12+r.IntN(5), r.IntN(10), r.IntN(50))
			}
			b.WriteString("\n")
		}
		out[i] = engine.IngestRequest{
			Type: "document", Content: b.String(), SourceKind: graph.SourceIngestedEvidence,
			Provenance: graph.Provenance{SourceRepo: "bench", Path: fmt.Sprintf("docs/%d/runbook-%d.md", seed, i)},
		}
	}
	return out
}

// benchEmbedder opens the ONNX embedder installed by vector/embed/install.sh,
// or skips (fails with MNEMO_REQUIRE_MODEL=1).
func benchEmbedder(b *testing.B) *embed.ONNX {
	b.Helper()
	cfg := embed.InstalledConfig("../.cache/mnemo")
	if v := os.Getenv("MNEMO_ORT_LIB"); v != "" {
		cfg.LibraryPath = v
	}
	if v := os.Getenv("MNEMO_MODEL_DIR"); v != "" {
		cfg.ModelDir = v
	}
	e, err := embed.OpenONNX(cfg)
	if err != nil {
		if os.Getenv("MNEMO_REQUIRE_MODEL") == "1" {
			b.Fatalf("embedding model required: %v", err)
		}
		b.Skipf("no embedding model (run bash vector/embed/install.sh): %v", err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}

// BenchmarkIngest measures end-to-end ingest throughput on the embedded
// backend (SQLite graph, local vector index): each op ingests one batch,
// through IngestBatch, or item by item through Ingest. It reports items/s
// and the process's CPU per item (cpu_ms/item).
//
//	go test ./engine -run '^$' -bench BenchmarkIngest -benchtime 5x -count 3
func BenchmarkIngest(b *testing.B) {
	const batch = 64
	for _, kind := range []string{"notes", "docs"} {
		for _, vectors := range []bool{false, true} {
			for _, mode := range []string{"batch", "single"} {
				name := fmt.Sprintf("%s/vectors=%v/%s", kind, vectors, mode)
				b.Run(name, func(b *testing.B) {
					f := newIngFixture(b, ingOpts{})
					if vectors {
						emb := benchEmbedder(b)
						idx, err := local.Open(b.TempDir(), local.Options{Dimensions: emb.Dimensions()})
						require.NoError(b, err)
						b.Cleanup(func() { _ = idx.Close() })
						f.eng, err = engine.New(engine.Options{Store: f.store, Policy: policyOf(b), Index: vector.Index(idx), Embedder: emb})
						require.NoError(b, err)
					}
					w := f.as("writer")
					ctx := ingCtx(b)
					// Warm up: the NER model loads on the first ingest.
					_, err := f.eng.Ingest(ctx, w, engine.IngestRequest{Type: "note", Content: "warm up"})
					require.NoError(b, err)
					var items int
					var lat []time.Duration
					b.ResetTimer()
					cpu0 := stats.CPUTime()
					for i := 0; i < b.N; i++ {
						var reqs []engine.IngestRequest
						if kind == "notes" {
							reqs = benchNotes(uint64(i), batch)
						} else {
							reqs = benchDocs(uint64(i), batch)
						}
						start := time.Now()
						if mode == "batch" {
							_, err = f.eng.IngestBatch(ctx, w, reqs)
							require.NoError(b, err)
						} else {
							for _, r := range reqs {
								_, err = f.eng.Ingest(ctx, w, r)
								require.NoError(b, err)
							}
						}
						lat = append(lat, time.Since(start)/time.Duration(len(reqs)))
						items += len(reqs)
					}
					b.ReportMetric(float64(items)/b.Elapsed().Seconds(), "items/s")
					// The process's CPU per item (all threads: the model's
					// too) compares runs on a loaded machine, where items/s
					// mostly measures the other jobs.
					b.ReportMetric(stats.Milliseconds(stats.CPUTime()-cpu0)/float64(items), "cpu_ms/item")
					stats.Report(b, lat) // per item
				})
			}
		}
	}
}

func policyOf(b *testing.B) *policy.Holder {
	b.Helper()
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(b, err)
	h, err := policy.NewHolder(pol)
	require.NoError(b, err)
	return h
}
