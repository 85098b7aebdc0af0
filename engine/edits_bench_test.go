package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
)

// BenchmarkSearchEdits measures what the effective view (approved edits
// applied, issue 13's target: <= 2 ms p95 at 100k memories with 10k edits)
// adds to engine.Search. One store holds the same synthetic corpus
// (storetest.Corpus, n memories) in two tenants; one of them gets n/10
// (MNEMO_BENCH_EDIT_RATIO) approved edits on random memories (40% amend, 30% attenuate by delta,
// 10% each quarantine, block on "public", retract). The loop alternates
// the same query between the two tenants, so both see the same machine
// load; it reports p50 and p95 of each and their difference in
// milliseconds. Sizes: MNEMO_BENCH_SIZES (comma-separated), default 10000;
// MNEMO_BENCH_EDIT_RATIO sets the edits per memory (default 0.1; 0 is the
// A/A control: what the two tenants differ by without any edit).
func BenchmarkSearchEdits(b *testing.B) {
	ratio := 0.1
	if v := os.Getenv("MNEMO_BENCH_EDIT_RATIO"); v != "" {
		var err error
		ratio, err = strconv.ParseFloat(v, 64)
		require.NoError(b, err, "MNEMO_BENCH_EDIT_RATIO")
	}
	sizes := []int{10_000}
	if v := os.Getenv("MNEMO_BENCH_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(b, err, "MNEMO_BENCH_SIZES")
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		nEdits := int(float64(n) * ratio)
		b.Run(fmt.Sprintf("store=%s/n=%d/edits=%d", graphtest.Backend(), n, nEdits), func(b *testing.B) {
			ctx := context.Background()
			store := graphtest.Open(b)
			plain, edited := graph.Scope{TenantID: "plain"}, graph.Scope{TenantID: "edited"}
			var targets []graph.Created
			var queries []string
			for _, s := range []graph.Scope{plain, edited} {
				corpus := storetest.Corpus(s, 42, n)
				start := time.Now()
				for i := 0; i < len(corpus.Inputs); i += 1000 {
					cs, err := store.CreateMemories(ctx, corpus.Inputs[i:min(i+1000, len(corpus.Inputs))])
					require.NoError(b, err)
					if s == edited {
						targets = append(targets, cs...)
					}
				}
				b.Logf("%s: loaded %d memories in %s", s.TenantID, n, time.Since(start).Round(time.Second))
				if queries == nil {
					ents, words := corpus.EntityQueries(200), corpus.KeywordQueries(200)
					for i := range ents {
						queries = append(queries, "what about "+strings.Join(ents[i], " and ")+" "+words[i])
					}
				}
			}
			start := time.Now()
			r := rand.New(rand.NewPCG(7, 7))
			at := time.Now().UTC()
			for i := range nEdits {
				ed := graph.Edit{Scope: edited, Status: graph.EditApproved, TargetMemoryID: targets[r.IntN(len(targets))].Memory.ID,
					Reason: "bench", CreatedBy: "lib", DecidedBy: "lib", DecidedAt: at}
				imp, delta := 0.3, -0.2
				switch k := r.IntN(10); {
				case k < 4:
					ed.Kind, ed.Importance = graph.EditAmend, &imp
					if k < 2 {
						ed.Content = fmt.Sprintf("amended text %d", i)
					}
				case k < 7:
					ed.Kind, ed.Delta = graph.EditAttenuate, &delta
				case k < 8:
					ed.Kind = graph.EditQuarantine
				case k < 9:
					ed.Kind, ed.Channel = graph.EditBlock, "public"
				default:
					ed.Kind = graph.EditRetract
				}
				_, err := store.CreateEdit(ctx, ed)
				require.NoError(b, err)
			}
			b.Logf("wrote %d approved edits in %s", nEdits, time.Since(start).Round(time.Second))
			pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
			require.NoError(b, err)
			holder, err := policy.NewHolder(pol)
			require.NoError(b, err)
			eng, err := engine.New(engine.Options{Store: store, Policy: holder})
			require.NoError(b, err)
			for _, mode := range []string{"graph", "hybrid"} {
				b.Run("mode="+mode, func(b *testing.B) {
					lat := map[graph.Scope][]time.Duration{}
					found := map[graph.Scope]int{}
					for i := 0; b.Loop(); i++ {
						for _, s := range []graph.Scope{plain, edited} {
							// The corpus is private to 20 users: read_all_users (admin) reads it all.
							p := graph.Principal{ID: "bench", Roles: []string{"admin"}, Scope: s}
							var (
								resp engine.SearchResponse
								err  error
							)
							t0 := time.Now()
							// Labelled, so a CPU profile tells the tenants apart
							// (go tool pprof -tagfocus tenant=edited).
							pprof.Do(ctx, pprof.Labels("tenant", s.TenantID), func(ctx context.Context) {
								resp, err = eng.Search(ctx, p, engine.SearchRequest{Query: queries[i%len(queries)], Mode: mode})
							})
							lat[s] = append(lat[s], time.Since(t0))
							if err != nil {
								b.Fatal(err)
							}
							found[s] += len(resp.Results)
						}
					}
					if found[plain] == 0 || found[edited] == 0 {
						b.Fatalf("searches found nothing (plain %d, edited %d results): nothing measured", found[plain], found[edited])
					}
					b.Logf("results per search: plain %.1f, edited %.1f", float64(found[plain])/float64(len(lat[plain])),
						float64(found[edited])/float64(len(lat[edited])))
					pl, ed := stats.Percentiles(lat[plain]), stats.Percentiles(lat[edited])
					b.ReportMetric(stats.Milliseconds(pl.P50), "plain_p50_ms")
					b.ReportMetric(stats.Milliseconds(pl.P95), "plain_p95_ms")
					b.ReportMetric(stats.Milliseconds(ed.P50), "edited_p50_ms")
					b.ReportMetric(stats.Milliseconds(ed.P95), "edited_p95_ms")
					b.ReportMetric(stats.Milliseconds(ed.P95-pl.P95), "added_p95_ms")
				})
			}
		})
	}
}
